//! Command-line flags that extensions register (pi's `registerFlag`/`getFlag`). The command line
//! is read before the extensions are loaded, so an option pith does not know is kept as given
//! ([`GivenFlag`]) and resolved once the extensions have said which flags they take
//! ([`resolve`]). pi's rules, with one fix: a boolean flag does not swallow the word after it
//! (pi reads `pi -p --plan "do X"` as `--plan` with the value `do X` and loses the prompt; pith
//! gives the word back).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::plugin_host::resources::{ExtensionMeta, FlagKind, FlagValue};

/// An option the command line gave that is none of pith's own: an extension's flag, once one
/// registers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenFlag {
    /// The name, without the dashes.
    pub name: String,
    /// `--name=value`'s value, or the word after `--name` when it starts with neither `-` nor
    /// `@`.
    pub value: Option<String>,
    /// True for `--name=value` (the value cannot be a word given back).
    pub inline: bool,
    /// How many plain words (prompts) came before it: where a word it took is given back.
    pub word_at: usize,
}

/// Why the flags given do not fit the extensions loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// No extension registers these (pi's `Unknown option(s)`).
    #[error(
        "unknown option(s): {} (not pith's, and no extension loaded registers it: check the \
         spelling, `pith --help` lists the options and the extensions' flags)",
        names.iter().map(|n| format!("--{n}")).collect::<Vec<_>>().join(", ")
    )]
    Unknown {
        /// The names, as given.
        names: Vec<String>,
    },
    /// A text flag given without a value (pi's text).
    #[error("Extension flag \"--{0}\" requires a value (--{0} <value> or --{0}=<value>)")]
    NeedsValue(String),
    /// A boolean flag given a value that is not true or false.
    #[error(
        "--{name} is a switch: give it alone, or as --{name}=true / --{name}=false (not {value:?})"
    )]
    NotBoolean {
        /// The flag.
        name: String,
        /// What it was given.
        value: String,
    },
}

/// The flags given on the command line, with their values as the extensions declared them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliFlags(Arc<BTreeMap<String, FlagValue>>);

/// What [`resolve`] made of the given flags.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resolved {
    /// The values.
    pub flags: CliFlags,
    /// Words a boolean flag took that are prompts after all, with the number of prompt words
    /// that came before each.
    pub given_back: Vec<(usize, String)>,
}

/// Resolves `given` against the flags of `extensions` (in load order): every flag must be
/// registered by one of them; when several register a name, the last one's kind decides (as
/// pi's). Text flags need a value; boolean flags are true when given.
pub fn resolve<'a>(
    given: &[GivenFlag],
    extensions: impl IntoIterator<Item = &'a ExtensionMeta>,
) -> Result<Resolved, FlagError> {
    let mut kinds: BTreeMap<&str, FlagKind> = BTreeMap::new();
    for meta in extensions {
        for flag in &meta.flags {
            kinds.insert(flag.name.as_str(), flag.kind);
        }
    }
    let unknown: Vec<String> = given
        .iter()
        .filter(|flag| !kinds.contains_key(flag.name.as_str()))
        .map(|flag| flag.name.clone())
        .collect();
    if !unknown.is_empty() {
        return Err(FlagError::Unknown { names: unknown });
    }
    let mut values = BTreeMap::new();
    let mut given_back = Vec::new();
    for flag in given {
        let value = match (kinds[flag.name.as_str()], &flag.value) {
            (FlagKind::Text, Some(value)) => FlagValue::Text(value.clone()),
            (FlagKind::Text, None) => return Err(FlagError::NeedsValue(flag.name.clone())),
            (FlagKind::Boolean, None) => FlagValue::Boolean(true),
            (FlagKind::Boolean, Some(value)) if !flag.inline => {
                given_back.push((flag.word_at, value.clone()));
                FlagValue::Boolean(true)
            }
            (FlagKind::Boolean, Some(value)) => match value.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => FlagValue::Boolean(true),
                "false" | "0" | "no" | "off" => FlagValue::Boolean(false),
                _ => {
                    return Err(FlagError::NotBoolean {
                        name: flag.name.clone(),
                        value: value.clone(),
                    });
                }
            },
        };
        // The last occurrence wins, as pi's.
        values.insert(flag.name.clone(), value);
    }
    Ok(Resolved {
        flags: CliFlags(Arc::new(values)),
        given_back,
    })
}

impl CliFlags {
    /// The value of the flag `name` for the extension `own`, among the session's `extensions`
    /// in load order: `None` when `own` does not register it (pi's `getFlag` answers only the
    /// extension's own flags); else the command line's value, else the first registrant's
    /// default.
    pub fn value<'a>(
        &self,
        own: &ExtensionMeta,
        extensions: impl IntoIterator<Item = &'a ExtensionMeta>,
        name: &str,
    ) -> Option<FlagValue> {
        if !own.flags.iter().any(|flag| flag.name == name) {
            return None;
        }
        if let Some(given) = self.0.get(name) {
            return Some(given.clone());
        }
        extensions
            .into_iter()
            .flat_map(|meta| &meta.flags)
            .find(|flag| flag.name == name && flag.default.is_some())
            .and_then(|flag| flag.default.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin_host::resources::FlagMeta;

    fn extension(flags: &[(&str, FlagKind, Option<FlagValue>)]) -> ExtensionMeta {
        ExtensionMeta {
            flags: flags
                .iter()
                .map(|(name, kind, default)| FlagMeta {
                    name: name.to_string(),
                    description: None,
                    kind: *kind,
                    default: default.clone(),
                })
                .collect(),
            ..ExtensionMeta::default()
        }
    }

    fn given(name: &str, value: Option<&str>, inline: bool, word_at: usize) -> GivenFlag {
        GivenFlag {
            name: name.into(),
            value: value.map(str::to_string),
            inline,
            word_at,
        }
    }

    #[test]
    fn a_boolean_flag_gives_back_the_word_it_took_and_a_text_flag_keeps_it() {
        let plan = extension(&[("plan", FlagKind::Boolean, Some(FlagValue::Boolean(false)))]);
        let preset = extension(&[("preset", FlagKind::Text, None)]);
        let resolved = resolve(
            &[
                given("plan", Some("do X"), false, 0),
                given("preset", Some("fast"), false, 1),
            ],
            [&plan, &preset],
        )
        .unwrap();
        assert_eq!(resolved.given_back, vec![(0, "do X".to_string())]);
        let all = [&plan, &preset];
        assert_eq!(
            resolved.flags.value(&plan, all, "plan"),
            Some(FlagValue::Boolean(true))
        );
        assert_eq!(
            resolved.flags.value(&preset, all, "preset"),
            Some(FlagValue::Text("fast".into()))
        );
        // Only an extension's own flags.
        assert_eq!(resolved.flags.value(&plan, all, "preset"), None);
    }

    #[test]
    fn defaults_unknown_names_and_missing_values() {
        let first = extension(&[("mode", FlagKind::Text, Some(FlagValue::Text("a".into())))]);
        let second = extension(&[("mode", FlagKind::Text, Some(FlagValue::Text("b".into())))]);
        let none = resolve(&[], [&first, &second]).unwrap();
        assert_eq!(
            none.flags.value(&second, [&first, &second], "mode"),
            Some(FlagValue::Text("a".into()))
        );
        assert_eq!(
            resolve(&[given("nope", None, false, 0)], [&first]),
            Err(FlagError::Unknown {
                names: vec!["nope".into()]
            })
        );
        assert_eq!(
            resolve(&[given("mode", None, false, 0)], [&first]),
            Err(FlagError::NeedsValue("mode".into()))
        );
        let switch = extension(&[("plan", FlagKind::Boolean, None)]);
        let off = resolve(&[given("plan", Some("false"), true, 0)], [&switch]).unwrap();
        assert_eq!(
            off.flags.value(&switch, [&switch], "plan"),
            Some(FlagValue::Boolean(false))
        );
        assert!(matches!(
            resolve(&[given("plan", Some("maybe"), true, 0)], [&switch]),
            Err(FlagError::NotBoolean { .. })
        ));
    }
}
