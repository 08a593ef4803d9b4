//! JavaScript's `JSON.parse` as pi 1.5.2 runs it (node 22, V8's `JsonParser`), for the options
//! line: what it accepts, and the exact `SyntaxError` message it throws otherwise (the position,
//! line and column of the error in UTF-16 code units, the unexpected character and context).
//! Only what pi's checks read is kept of the value: whether it is an object, and its keys
//! (in `Object.keys` order) with the values that are numbers. The parser is iterative, as
//! V8's is, so deep nesting cannot exhaust the stack.

use std::collections::HashMap;

/// What `JSON.parse` made of the text, as far as pi's checks look.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Parsed {
    /// An object: its keys in `Object.keys` order (array indices ascending, then the rest in
    /// order of first appearance), each with its (last) value if that is a number.
    Object(Vec<(String, Option<f64>)>),
    /// Anything else.
    Other,
}

/// V8's `JsonToken`: what a character starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Number,
    String,
    LeftBrace,
    RightBrace,
    LeftBracket,
    RightBracket,
    True,
    False,
    Null,
    Whitespace,
    Colon,
    Comma,
    Illegal,
    End,
}

/// V8's one-character tokens (characters above U+00FF are illegal).
fn token_of(c: u16) -> Token {
    let Ok(c) = u8::try_from(c) else {
        return Token::Illegal;
    };
    match c {
        b'"' => Token::String,
        b'0'..=b'9' | b'-' => Token::Number,
        b'[' => Token::LeftBracket,
        b'{' => Token::LeftBrace,
        b']' => Token::RightBracket,
        b'}' => Token::RightBrace,
        b't' => Token::True,
        b'f' => Token::False,
        b'n' => Token::Null,
        b' ' | b'\t' | b'\r' | b'\n' => Token::Whitespace,
        b':' => Token::Colon,
        b',' => Token::Comma,
        _ => Token::Illegal,
    }
}

/// Whether `c` is an ASCII digit.
fn is_digit(c: u16) -> bool {
    (u16::from(b'0')..=u16::from(b'9')).contains(&c)
}

/// V8's `IsNumberPart`: a character that may continue a number.
fn is_number_part(c: u16) -> bool {
    matches!(
        u8::try_from(c),
        Ok(b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+')
    )
}

/// The value of a hex digit.
fn hex_value(c: u16) -> Option<u16> {
    let digit = char::from_u32(u32::from(c))?.to_digit(16)?;
    u16::try_from(digit).ok()
}

/// `c` as a UTF-16 code unit.
fn unit(c: u8) -> u16 {
    u16::from(c)
}

/// Text from UTF-16 code units (a lone surrogate becomes U+FFFD, as node prints it).
fn lossy(units: &[u16]) -> String {
    String::from_utf16_lossy(units)
}

/// V8's `SyntaxError` messages that name a position (`… in JSON at position N (line L column C)`).
const UNTERMINATED_STRING: &str = "Unterminated string in JSON";
const BAD_CONTROL_CHARACTER: &str = "Bad control character in string literal in JSON";
const BAD_ESCAPED_CHARACTER: &str = "Bad escaped character in JSON";
const BAD_UNICODE_ESCAPE: &str = "Bad Unicode escape in JSON";
const NO_NUMBER_AFTER_MINUS: &str = "No number after minus sign in JSON";
const UNTERMINATED_FRACTION: &str = "Unterminated fractional number in JSON";
const EXPONENT_WITHOUT_NUMBER: &str = "Exponent part is missing a number in JSON";
const EXPECTED_NAME_OR_BRACE: &str = "Expected property name or '}' in JSON";
const EXPECTED_DOUBLE_QUOTED_NAME: &str = "Expected double-quoted property name in JSON";
const EXPECTED_COLON: &str = "Expected ':' after property name in JSON";
const EXPECTED_COMMA_OR_BRACE: &str = "Expected ',' or '}' after property value in JSON";
const EXPECTED_COMMA_OR_BRACKET: &str = "Expected ',' or ']' after array element in JSON";
const TRAILING_CHARACTERS: &str = "Unexpected non-whitespace character after JSON";
/// Texts V8 quotes whole rather than naming a token (V8's `IsSpecialString`).
const SPECIAL_TEXTS: [&str; 4] = ["[object Object]", "undefined", "Infinity", "NaN"];
/// How many characters of context V8 shows on each side of an unexpected token.
const CONTEXT_CHARS: usize = 10;

/// A container being parsed.
enum Frame {
    /// An object, with the key whose value comes next.
    Object(Vec<u16>),
    /// An array.
    Array,
}

/// A parsed value, as far as it matters (a number's value, whether it is an object).
#[derive(Clone, Copy)]
enum Produced {
    Number(f64),
    Object,
    Other,
}

/// The top-level object's properties, as JavaScript keeps them: a repeated key keeps its
/// place and takes the later value.
#[derive(Default)]
struct Properties {
    entries: Vec<(Vec<u16>, Option<f64>)>,
    places: HashMap<Vec<u16>, usize>,
}

impl Properties {
    /// Sets `key` to `value`.
    fn set(&mut self, key: Vec<u16>, value: Option<f64>) {
        match self.places.get(&key) {
            Some(&place) => self.entries[place].1 = value,
            None => {
                self.places.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    /// The properties in `Object.keys` order.
    fn into_keys(self) -> Vec<(String, Option<f64>)> {
        let (mut indexed, named): (Vec<_>, Vec<_>) = self
            .entries
            .into_iter()
            .partition(|(key, _)| array_index(key).is_some());
        indexed.sort_by_key(|(key, _)| array_index(key));
        indexed
            .into_iter()
            .chain(named)
            .map(|(key, value)| (lossy(&key), value))
            .collect()
    }
}

/// The array index a key is, if it is one (`0`, or digits without a leading zero, below
/// 2^32 - 1): JavaScript lists those keys first.
fn array_index(key: &[u16]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || !key.iter().all(|c| is_digit(*c)) {
        return None;
    }
    if key.len() > 1 && key[0] == unit(b'0') {
        return None;
    }
    let index: u64 = lossy(key).parse().ok()?;
    u32::try_from(index).ok().filter(|index| *index != u32::MAX)
}

/// `JSON.parse(text)`: what pi's checks need of the value, or V8's error message.
pub(super) fn parse(text: &str) -> Result<Parsed, String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let parser = Parser {
        text: &units,
        at: 0,
        next: Token::End,
    };
    parser.parse()
}

/// V8's `JsonParser` over UTF-16 code units.
struct Parser<'a> {
    text: &'a [u16],
    /// The cursor.
    at: usize,
    /// The token at the cursor after skipping white space.
    next: Token,
}

impl Parser<'_> {
    /// The character at the cursor (`None` at the end).
    fn current(&self) -> Option<u16> {
        self.text.get(self.at).copied()
    }

    /// Advances the cursor; the character there.
    fn next_char(&mut self) -> Option<u16> {
        self.at += 1;
        self.current()
    }

    /// Skips white space; the token after it becomes `next`.
    fn skip_whitespace(&mut self) {
        self.next = Token::End;
        while let Some(c) = self.current() {
            let token = token_of(c);
            if token != Token::Whitespace {
                self.next = token;
                return;
            }
            self.at += 1;
        }
    }

    /// Consumes `token` if it comes next.
    fn check(&mut self, token: Token) -> bool {
        self.skip_whitespace();
        if self.next != token {
            return false;
        }
        self.at += 1;
        true
    }

    /// Consumes `token` (already skipped to), or fails with `message`.
    fn expect(&mut self, token: Token, message: &str) -> Result<(), String> {
        if self.next == token {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(message))
        }
    }

    /// Skips white space, then [`Self::expect`]s `token`.
    fn expect_next(&mut self, token: Token, message: &str) -> Result<(), String> {
        self.skip_whitespace();
        self.expect(token, message)
    }

    /// ` at position N (line L column C)` for the cursor (`\r\n`, `\r` and `\n` end lines).
    fn location(&self) -> String {
        let end = self.at.min(self.text.len());
        let (mut line, mut line_start, mut at) = (1, 0, 0);
        while at < end {
            if self.text[at] == unit(b'\r') && at + 1 < end && self.text[at + 1] == unit(b'\n') {
                at += 1;
            }
            if self.text[at] == unit(b'\r') || self.text[at] == unit(b'\n') {
                line += 1;
                line_start = at + 1;
            }
            at += 1;
        }
        let column = 1 + at - line_start;
        format!(" at position {} (line {line} column {column})", self.at)
    }

    /// The error `message` at the cursor.
    fn error(&self, message: &str) -> String {
        format!("{message}{}", self.location())
    }

    /// V8's message for an unexpected `token` at the cursor.
    fn unexpected(&self, token: Token) -> String {
        match token {
            Token::End => "Unexpected end of JSON input".into(),
            Token::Number => self.error("Unexpected number in JSON"),
            Token::String => self.error("Unexpected string in JSON"),
            _ => {
                let source = lossy(self.text);
                if SPECIAL_TEXTS.contains(&source.as_str()) {
                    return format!("\"{source}\" is not valid JSON");
                }
                let at = self.at;
                let length = self.text.len();
                let slice = |from: usize, to: usize| lossy(self.text.get(from..to).unwrap_or(&[]));
                let token = slice(at, at + 1);
                if length <= 2 * CONTEXT_CHARS {
                    format!("Unexpected token '{token}', \"{source}\" is not valid JSON")
                } else if at < CONTEXT_CHARS {
                    let context = slice(0, at + CONTEXT_CHARS);
                    format!("Unexpected token '{token}', \"{context}\"... is not valid JSON")
                } else if at + CONTEXT_CHARS < length {
                    let context = slice(at - CONTEXT_CHARS, at + CONTEXT_CHARS);
                    format!("Unexpected token '{token}', ...\"{context}\"... is not valid JSON")
                } else {
                    let context = slice(at - CONTEXT_CHARS, length);
                    format!("Unexpected token '{token}', ...\"{context}\" is not valid JSON")
                }
            }
        }
    }

    /// V8's message for the unexpected character `c` (`None`: the end).
    fn unexpected_char(&self, c: Option<u16>) -> String {
        self.unexpected(c.map_or(Token::End, token_of))
    }

    /// Scans a string whose opening quote is consumed; its code units.
    fn scan_string(&mut self) -> Result<Vec<u16>, String> {
        let mut units = Vec::new();
        loop {
            let Some(c) = self.current() else {
                return Err(self.error(UNTERMINATED_STRING));
            };
            if c == unit(b'"') {
                self.at += 1;
                return Ok(units);
            }
            if c == unit(b'\\') {
                let escaped = self.next_char();
                let Some(kind) = escaped.and_then(|e| u8::try_from(e).ok()) else {
                    return Err(self.unexpected_char(escaped));
                };
                match kind {
                    b'"' | b'\\' | b'/' => units.push(unit(kind)),
                    b'b' => units.push(0x08),
                    b't' => units.push(0x09),
                    b'n' => units.push(0x0A),
                    b'f' => units.push(0x0C),
                    b'r' => units.push(0x0D),
                    b'u' => {
                        let mut value: u16 = 0;
                        for _ in 0..4 {
                            let Some(digit) = self.next_char().and_then(hex_value) else {
                                return Err(self.error(BAD_UNICODE_ESCAPE));
                            };
                            value = value * 16 + digit;
                        }
                        units.push(value);
                    }
                    _ => return Err(self.error(BAD_ESCAPED_CHARACTER)),
                }
                self.at += 1;
                continue;
            }
            if c < 0x20 {
                return Err(self.error(BAD_CONTROL_CHARACTER));
            }
            units.push(c);
            self.at += 1;
        }
    }

    /// Advances past ASCII digits.
    fn skip_digits(&mut self) {
        while self.current().is_some_and(is_digit) {
            self.at += 1;
        }
    }

    /// V8's `ParseJsonNumber`, from the cursor (a digit or `-`).
    fn number(&mut self) -> Result<f64, String> {
        let start = self.at;
        let mut c = self.current();
        let negative = c == Some(unit(b'-'));
        if negative {
            c = self.next_char();
        }
        // Whether the number ended already (V8's early returns for `0` and short integers).
        let mut ended = false;
        if c == Some(unit(b'0')) {
            let after = self.next_char();
            if after.is_some_and(is_number_part) {
                if after.is_some_and(is_digit) {
                    return Err(self.unexpected(Token::Number));
                }
            } else {
                ended = !negative;
            }
        } else {
            let digits = self.at;
            self.skip_digits();
            if self.at == digits {
                return Err(self.error(NO_NUMBER_AFTER_MINUS));
            }
            ended = self.at - digits <= 9 && !self.current().is_some_and(is_number_part);
        }
        if !ended {
            if self.current() == Some(unit(b'.')) {
                if !self.next_char().is_some_and(is_digit) {
                    return Err(self.error(UNTERMINATED_FRACTION));
                }
                self.skip_digits();
            }
            if matches!(self.current(), Some(e) if e == unit(b'e') || e == unit(b'E')) {
                let mut after = self.next_char();
                if matches!(after, Some(s) if s == unit(b'-') || s == unit(b'+')) {
                    after = self.next_char();
                }
                if !after.is_some_and(is_digit) {
                    return Err(self.error(EXPONENT_WITHOUT_NUMBER));
                }
                self.skip_digits();
            }
        }
        let text = lossy(self.text.get(start..self.at).unwrap_or(&[]));
        Ok(text.parse().unwrap_or(f64::NAN))
    }

    /// V8's `ScanLiteral`: `word` (`true`, `false`, `null`), whose first letter is at the cursor.
    fn literal(&mut self, word: &str) -> Result<(), String> {
        let word: Vec<u16> = word.encode_utf16().collect();
        let remaining = self.text.len().saturating_sub(self.at);
        let rest = self.text.get(self.at + 1..self.at + word.len());
        if remaining >= word.len() && rest == word.get(1..) {
            self.at += word.len();
            return Ok(());
        }
        self.at += 1;
        for expected in word.iter().skip(1).take(remaining.saturating_sub(1)) {
            let c = self.current();
            if c != Some(*expected) {
                return Err(self.unexpected_char(c));
            }
            self.at += 1;
        }
        Err(self.unexpected(Token::End))
    }

    /// V8's `ParseJsonValue` and the check for trailing characters.
    fn parse(mut self) -> Result<Parsed, String> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut properties = Properties::default();
        loop {
            // Produce a value (containers are entered until one yields a value).
            let mut value = loop {
                self.skip_whitespace();
                match self.next {
                    Token::String => {
                        self.at += 1;
                        self.scan_string()?;
                        break Produced::Other;
                    }
                    Token::Number => break Produced::Number(self.number()?),
                    Token::LeftBrace => {
                        self.at += 1;
                        if self.check(Token::RightBrace) {
                            break Produced::Object;
                        }
                        self.expect_next(Token::String, EXPECTED_NAME_OR_BRACE)?;
                        let key = self.scan_string()?;
                        self.expect_next(Token::Colon, EXPECTED_COLON)?;
                        stack.push(Frame::Object(key));
                    }
                    Token::LeftBracket => {
                        self.at += 1;
                        if self.check(Token::RightBracket) {
                            break Produced::Other;
                        }
                        stack.push(Frame::Array);
                    }
                    Token::True | Token::False | Token::Null => {
                        let word = match self.next {
                            Token::True => "true",
                            Token::False => "false",
                            _ => "null",
                        };
                        self.literal(word)?;
                        break Produced::Other;
                    }
                    _ => return Err(self.unexpected_char(self.current())),
                }
            };
            // Consume it (containers are left while they end).
            loop {
                let depth = stack.len();
                let (closing, message) = match stack.last_mut() {
                    None => {
                        if !self.check(Token::End) {
                            return Err(self.error(TRAILING_CHARACTERS));
                        }
                        return Ok(match value {
                            Produced::Object => Parsed::Object(properties.into_keys()),
                            _ => Parsed::Other,
                        });
                    }
                    Some(Frame::Object(key)) => {
                        if depth == 1 {
                            let number = if let Produced::Number(n) = value {
                                Some(n)
                            } else {
                                None
                            };
                            properties.set(std::mem::take(key), number);
                        }
                        if self.check(Token::Comma) {
                            self.expect_next(Token::String, EXPECTED_DOUBLE_QUOTED_NAME)?;
                            *key = self.scan_string()?;
                            self.expect_next(Token::Colon, EXPECTED_COLON)?;
                            break;
                        }
                        (Token::RightBrace, EXPECTED_COMMA_OR_BRACE)
                    }
                    Some(Frame::Array) => {
                        if self.check(Token::Comma) {
                            break;
                        }
                        (Token::RightBracket, EXPECTED_COMMA_OR_BRACKET)
                    }
                };
                self.expect(closing, message)?;
                stack.pop();
                value = if stack.is_empty() && closing == Token::RightBrace {
                    Produced::Object
                } else {
                    Produced::Other
                };
            }
        }
    }
}
