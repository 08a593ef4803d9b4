//! The syntax of [`crate::regex`]: JavaScript's pattern source parsed into a tree.

/// A pattern, or a part of one.
pub enum Node {
    /// A literal character.
    Char(char),
    /// `.`: any character but a line terminator.
    Any,
    /// `[…]`, `[^…]`, or an escape such as `\s`.
    Class { negated: bool, items: Vec<Item> },
    /// `^`.
    Start,
    /// `$`.
    End,
    /// `\b` (true) or `\B` (false).
    WordBoundary(bool),
    /// `(…)` with its group number, or `(?:…)`.
    Group(Option<usize>, Box<Node>),
    /// `(?!…)`.
    NotFollowedBy(Box<Node>),
    /// One part after another.
    Seq(Vec<Node>),
    /// `…|…`.
    Alt(Vec<Node>),
    /// A greedy repeat: at least `min`, at most `max` (none: no limit).
    Repeat(Box<Node>, usize, Option<usize>),
}

/// One member of a character class.
pub enum Item {
    /// A character range (one character: `lo == hi`).
    Range(char, char),
    /// `\s` (true) or `\S` (false).
    Space(bool),
    /// `\d` or `\D`.
    Digit(bool),
    /// `\w` or `\W`.
    Word(bool),
}

/// Parses `pattern`; also says how many capturing groups it has.
pub fn parse(pattern: &str) -> (Node, usize) {
    let mut parser = Parser {
        src: pattern.chars().collect(),
        pos: 0,
        groups: 0,
    };
    let node = parser.alternation();
    (node, parser.groups)
}

struct Parser {
    src: Vec<char>,
    pos: usize,
    groups: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.src.get(self.pos).copied()
    }

    fn next(&mut self) -> char {
        let c = self.src.get(self.pos).copied().unwrap_or(')');
        self.pos += 1;
        c
    }

    fn eat(&mut self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        if self.src[self.pos.min(self.src.len())..].starts_with(&text) {
            self.pos += text.len();
            return true;
        }
        false
    }

    fn alternation(&mut self) -> Node {
        let mut alternatives = vec![self.sequence()];
        while self.peek() == Some('|') {
            self.pos += 1;
            alternatives.push(self.sequence());
        }
        if alternatives.len() == 1 {
            alternatives.remove(0)
        } else {
            Node::Alt(alternatives)
        }
    }

    fn sequence(&mut self) -> Node {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom();
            items.push(self.quantified(atom));
        }
        Node::Seq(items)
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.src[start..self.pos]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    }

    fn quantified(&mut self, atom: Node) -> Node {
        let (min, max) = match self.peek() {
            Some('?') => (0, Some(1)),
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('{') => {
                let save = self.pos;
                self.pos += 1;
                let Some(min) = self.number() else {
                    self.pos = save;
                    return atom;
                };
                let max = if self.eat(",") {
                    self.number()
                } else {
                    Some(min)
                };
                if self.peek() != Some('}') {
                    self.pos = save;
                    return atom;
                }
                (min, max)
            }
            _ => return atom,
        };
        self.pos += 1;
        Node::Repeat(Box::new(atom), min, max)
    }

    fn atom(&mut self) -> Node {
        match self.next() {
            '(' => {
                let node = if self.eat("?:") {
                    Node::Group(None, Box::new(self.alternation()))
                } else if self.eat("?!") {
                    Node::NotFollowedBy(Box::new(self.alternation()))
                } else {
                    self.groups += 1;
                    let index = self.groups;
                    Node::Group(Some(index), Box::new(self.alternation()))
                };
                self.eat(")");
                node
            }
            '[' => self.class(),
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '\\' => match self.next() {
                'b' => Node::WordBoundary(true),
                'B' => Node::WordBoundary(false),
                c => match class_escape(c) {
                    Some(item) => Node::Class {
                        negated: false,
                        items: vec![item],
                    },
                    None => Node::Char(char_escape(c)),
                },
            },
            c => Node::Char(c),
        }
    }

    fn class(&mut self) -> Node {
        let negated = self.eat("^");
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == ']' {
                break;
            }
            let lo = if c == '\\' {
                let e = self.next();
                if let Some(item) = class_escape(e) {
                    items.push(item);
                    continue;
                }
                if e == 'b' { '\u{8}' } else { char_escape(e) }
            } else {
                c
            };
            if self.peek() == Some('-') && self.src.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let hi = match self.next() {
                    '\\' => char_escape(self.next()),
                    hi => hi,
                };
                items.push(Item::Range(lo, hi));
            } else {
                items.push(Item::Range(lo, lo));
            }
        }
        Node::Class { negated, items }
    }
}

fn class_escape(c: char) -> Option<Item> {
    Some(match c {
        's' => Item::Space(true),
        'S' => Item::Space(false),
        'd' => Item::Digit(true),
        'D' => Item::Digit(false),
        'w' => Item::Word(true),
        'W' => Item::Word(false),
        _ => return None,
    })
}

fn char_escape(c: char) -> char {
    match c {
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '0' => '\0',
        c => c,
    }
}
