//! The extensions' command-line flags at start-up (pi's `registerFlag`): resolving the ones
//! given against the extensions loaded, and listing them for `pith --help`.

use crate::cli::Args;

/// Resolves the extensions' flags given on the command line (`args.extension_flags`) against
/// the extensions `host` loaded: their values go to `args.flags`, and a word a boolean flag took
/// goes back among the prompts. `Err` is the message for stderr.
pub fn apply_flags(args: &mut Args, host: &crate::plugin_host::PluginHost) -> Result<(), String> {
    let plugins = host.plugins();
    let extensions = plugins.iter().filter_map(|p| p.meta.extension.as_ref());
    let resolved = crate::agent::extensions::flags::resolve(&args.extension_flags, extensions)
        .map_err(|err| err.to_string())?;
    args.flags = resolved.flags;
    if resolved.given_back.is_empty() {
        return Ok(());
    }
    match &mut args.command {
        Some(crate::cli::Command::Print { words, .. }) => {
            // Later words first, so the earlier positions stay right.
            for (at, word) in resolved.given_back.into_iter().rev() {
                words.insert(at.min(words.len()), word);
            }
            Ok(())
        }
        _ => {
            let (_, word) = &resolved.given_back[0];
            Err(format!(
                "{word:?} follows a switch flag, which takes no value, and this mode takes no \
                 prompt words: drop it, or give the flag as --name=value"
            ))
        }
    }
}

/// The extensions' flags for `pith --help` (pi's `Extension CLI Flags:` section): empty when no
/// extension registers one.
pub fn flags_help(host: &crate::plugin_host::PluginHost) -> String {
    let mut lines = String::new();
    for plugin in host.plugins().iter() {
        let Some(meta) = &plugin.meta.extension else {
            continue;
        };
        for flag in &meta.flags {
            let takes = match flag.kind {
                crate::plugin_host::resources::FlagKind::Text => " <value>",
                crate::plugin_host::resources::FlagKind::Boolean => "",
            };
            let what = flag
                .description
                .clone()
                .unwrap_or_else(|| format!("Registered by {}", plugin.manifest.id));
            lines.push_str(&format!(
                "  {:<28}{what}\n",
                format!("--{}{takes}", flag.name)
            ));
        }
    }
    if lines.is_empty() {
        lines
    } else {
        format!("\nExtension CLI Flags:\n{lines}")
    }
}
