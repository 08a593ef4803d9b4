//! A small backtracking matcher for the JavaScript regular expressions of pi's `utils.ts`, so
//! the port keeps pi's patterns verbatim: literals, `.`, classes (`[^<]`, `[.)]`, `[dD]`),
//! `\s \S \d \D \w \W \b \B`, groups (capturing, `(?:…)`, `(?!…)`), alternation, greedy
//! quantifiers (`? * + {m,n}`), `^`/`$` and the flags `i` and `m`, with JavaScript's meanings
//! (`\s` is JavaScript's white space, `\b`/`\w` are ASCII, `i` folds as a non-unicode regex).
//! Positions are `char` indices. A repeat of one character never recurses per character, so a
//! long line cannot exhaust the stack.

use crate::regex_syntax::{Item, Node, parse};

type Caps = Vec<Option<(usize, usize)>>;

/// A compiled pattern.
pub struct Regex {
    node: Node,
    groups: usize,
    ignore_case: bool,
    multiline: bool,
}

/// One match: its span and its groups (`group(0)` is the whole match), in `char` indices.
pub struct Captures {
    pub start: usize,
    pub end: usize,
    groups: Vec<Option<String>>,
}

impl Captures {
    /// Group `i`'s text; empty when it did not take part (as `$i` in JavaScript's `replace`).
    pub fn group(&self, i: usize) -> &str {
        self.groups.get(i).and_then(Option::as_deref).unwrap_or("")
    }
}

/// JavaScript's `\s`: Unicode's white space without U+0085, with U+FEFF.
fn is_js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// JavaScript's `Canonicalize` for a regex without the `u` flag.
fn canonical(c: char) -> char {
    if c as u32 > 0xFFFF {
        return c;
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if !(c as u32 >= 128 && (u as u32) < 128) && (u as u32) <= 0xFFFF => u,
        _ => c,
    }
}

impl Regex {
    /// Compiles `pattern` (JavaScript's source) with `flags` (`i`, `m`; `g` is the caller's
    /// choice of [`Regex::captures_all`] or [`Regex::replace`]).
    pub fn new(pattern: &str, flags: &str) -> Regex {
        let (node, groups) = parse(pattern);
        Regex {
            node,
            groups,
            ignore_case: flags.contains('i'),
            multiline: flags.contains('m'),
        }
    }

    /// `regex.test(text)`.
    pub fn is_match(&self, text: &str) -> bool {
        let input: Vec<char> = text.chars().collect();
        self.find(&input, 0).is_some()
    }

    /// `text.matchAll(regex)` (a global regex), over `char`s.
    pub fn captures_all(&self, input: &[char]) -> Vec<Captures> {
        let mut all = Vec::new();
        let mut from = 0;
        while from <= input.len() {
            let Some(found) = self.find(input, from) else {
                break;
            };
            from = if found.end == found.start {
                found.end + 1
            } else {
                found.end
            };
            all.push(found);
        }
        all
    }

    /// `text.replace(regex, fn)`: every match when `global`, else the first.
    pub fn replace(&self, text: &str, global: bool, with: impl Fn(&Captures) -> String) -> String {
        let input: Vec<char> = text.chars().collect();
        let found = if global {
            self.captures_all(&input)
        } else {
            self.find(&input, 0).into_iter().collect()
        };
        let mut out = String::new();
        let mut last = 0;
        for m in found {
            out.extend(&input[last..m.start]);
            out.push_str(&with(&m));
            last = m.end;
        }
        out.extend(&input[last..]);
        out
    }

    /// The first match starting at or after `from`.
    fn find(&self, input: &[char], from: usize) -> Option<Captures> {
        let matcher = Matcher { re: self, input };
        (from..=input.len()).find_map(|start| {
            let mut caps: Caps = vec![None; self.groups + 1];
            let mut end = None;
            // A match returns through every continuation without undoing its captures.
            let found = matcher.node(&self.node, start, &mut caps, &mut |e, _| {
                end = Some(e);
                true
            });
            let end = end.filter(|_| found)?;
            caps[0] = Some((start, end));
            Some(Captures {
                start,
                end,
                groups: caps
                    .iter()
                    .map(|g| g.map(|(s, e)| input[s..e].iter().collect()))
                    .collect(),
            })
        })
    }
}

struct Matcher<'a> {
    re: &'a Regex,
    input: &'a [char],
}

type Next<'k> = &'k mut dyn FnMut(usize, &mut Caps) -> bool;

impl Matcher<'_> {
    fn same(&self, a: char, b: char) -> bool {
        a == b || (self.re.ignore_case && canonical(a) == canonical(b))
    }

    fn in_class(&self, items: &[Item], c: char) -> bool {
        items.iter().any(|item| match *item {
            Item::Range(lo, hi) => {
                let hit = |x: char| lo <= x && x <= hi;
                hit(c)
                    || (self.re.ignore_case && {
                        let canon = canonical(c);
                        let mut lower = canon.to_lowercase();
                        let lower = match (lower.next(), lower.next()) {
                            (Some(l), None) => l,
                            _ => canon,
                        };
                        [canon, lower]
                            .into_iter()
                            .any(|x| hit(x) && canonical(x) == canon)
                    })
            }
            Item::Space(want) => is_js_space(c) == want,
            Item::Digit(want) => c.is_ascii_digit() == want,
            Item::Word(want) => is_word(c) == want,
        })
    }

    /// Whether `node` (one character wide) takes `c`; `None` when it is not one character.
    fn single(&self, node: &Node, c: char) -> Option<bool> {
        Some(match node {
            Node::Char(x) => self.same(c, *x),
            Node::Any => !is_line_terminator(c),
            Node::Class { negated, items } => self.in_class(items, c) != *negated,
            _ => return None,
        })
    }

    fn node(&self, node: &Node, pos: usize, caps: &mut Caps, next: Next) -> bool {
        let input = self.input;
        let at = |i: usize| input.get(i).copied();
        match node {
            Node::Char(_) | Node::Any | Node::Class { .. } => {
                at(pos).is_some_and(|c| self.single(node, c) == Some(true)) && next(pos + 1, caps)
            }
            Node::Start => {
                (pos == 0 || (self.re.multiline && is_line_terminator(input[pos - 1])))
                    && next(pos, caps)
            }
            Node::End => {
                at(pos).is_none_or(|c| self.re.multiline && is_line_terminator(c))
                    && next(pos, caps)
            }
            Node::WordBoundary(want) => {
                let before = pos > 0 && is_word(input[pos - 1]);
                let after = at(pos).is_some_and(is_word);
                (before != after) == *want && next(pos, caps)
            }
            Node::Group(None, inner) => self.node(inner, pos, caps, next),
            Node::Group(Some(index), inner) => {
                let index = *index;
                self.node(inner, pos, caps, &mut |end, caps: &mut Caps| {
                    let old = caps[index];
                    caps[index] = Some((pos, end));
                    if next(end, caps) {
                        return true;
                    }
                    caps[index] = old;
                    false
                })
            }
            Node::NotFollowedBy(inner) => {
                let mut scratch = caps.clone();
                !self.node(inner, pos, &mut scratch, &mut |_, _| true) && next(pos, caps)
            }
            Node::Seq(items) => self.sequence(items, pos, caps, next),
            Node::Alt(alternatives) => alternatives
                .iter()
                .any(|alternative| self.node(alternative, pos, caps, &mut *next)),
            Node::Repeat(inner, min, max) => {
                let (min, max) = (*min, max.unwrap_or(usize::MAX));
                if self.single(inner, ' ').is_some() {
                    // One character at a time: count the run, then give back from its end.
                    let mut run = 0;
                    while run < max
                        && at(pos + run).is_some_and(|c| self.single(inner, c) == Some(true))
                    {
                        run += 1;
                    }
                    (min..=run).rev().any(|n| next(pos + n, caps))
                } else {
                    self.repeat(inner, min, max, 0, pos, caps, next)
                }
            }
        }
    }

    fn sequence(&self, items: &[Node], pos: usize, caps: &mut Caps, next: Next) -> bool {
        match items.split_first() {
            None => next(pos, caps),
            Some((first, rest)) => self.node(first, pos, caps, &mut |p, c: &mut Caps| {
                self.sequence(rest, p, c, &mut *next)
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn repeat(
        &self,
        inner: &Node,
        min: usize,
        max: usize,
        count: usize,
        pos: usize,
        caps: &mut Caps,
        next: Next,
    ) -> bool {
        if count < max
            && self.node(inner, pos, caps, &mut |p, c: &mut Caps| {
                // An empty iteration past the minimum ends the loop (as JavaScript's).
                !(p == pos && count >= min)
                    && self.repeat(inner, min, max, count + 1, p, c, &mut *next)
            })
        {
            return true;
        }
        count >= min && next(pos, caps)
    }
}
