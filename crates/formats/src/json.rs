//! JSON as Puppet 8 reads it (data files, facts): MultiJson over the json gem 2.7's parser, whose
//! Ragel grammar is looser than RFC 8259 in places users notice and words its errors by where
//! its state machine stopped.
//!
//! * `/* ... */` and `// ...\n` comments count as whitespace.
//! * Any escaped character stands for itself (`"\x"` is `"x"`).
//! * A high surrogate escape takes the next `\uXXXX`, whatever it is, as its pair; followed by
//!   anything else it becomes `?` and eats one character, or fails near the end of the string
//!   (`incomplete surrogate pair at '...'`, from the string's start).
//! * `NaN`, `Infinity` and `-Infinity` are recognised only to be refused.
//! * A failing array element or separator raises at once (`unexpected token at '<rest>'`);
//!   a failing object gives up silently, so the enclosing array or document reports the object's
//!   start. More than 100 nested arrays/objects: `nesting of 101 is too deep`. Blank input is
//!   MultiJson's `JSON::ParserError`. (json 2.7 dropped 2.6's C line numbers from messages.)
//! * Integers keep all their digits (Bignums); `-0` is 0.
//!
//! The expectations in the tests were printed by `JSON.parse` (json 2.6.1, where the positions
//! are the same; 2.7.2 under Puppet 8 prints them without the line numbers).

use hiera_value::value::{Map, Value};

mod fast;
pub mod index;
pub mod positions;
pub mod write;

/// [`parse`], faster for the JSON Facter and PuppetDB write: serde_json decodes what it reads
/// exactly as [`parse`] would, and [`parse`] reads everything else (see `json/fast.rs` for
/// where they could differ and how that is left to [`parse`]). The same value, or the same
/// error, for every input.
pub fn parse_fast(text: &str) -> Result<Value, String> {
    match fast::parse(text) {
        Some(v) => Ok(v),
        None => parse(text),
    }
}

/// [`parse_fast`], the error with the byte offset where the parser stopped ([`parse_at`]).
pub fn parse_fast_at(text: &str) -> Result<Value, (String, Option<usize>)> {
    match fast::parse(text) {
        Some(v) => Ok(v),
        None => parse_at(text),
    }
}

/// `Puppet::Util::Json.load(text)`, or its error message: MultiJson refuses blank input with
/// the bare class name, then the json gem parses.
pub fn parse(text: &str) -> Result<Value, String> {
    parse_at(text).map_err(|(m, _)| m)
}

/// [`parse`], the error with the byte offset where the text stops being JSON (`None` for
/// blank input): the json gem's messages name no line, our own can. The gem reports a value
/// that does not parse at its start (a truncated file: at its first `{`); the offset is where
/// a strict reader (serde_json's) stopped, when it stopped on the text itself.
pub fn parse_at(text: &str) -> Result<Value, (String, Option<usize>)> {
    parse_gem(text).map_err(|(m, at)| (m, strict_stop(text).or(at)))
}

/// Where serde_json's reader stops on `text`, if on a syntax error (not at a value the gem
/// would take and serde would not, such as `NaN` with allow_nan, which the gem refuses too).
fn strict_stop(text: &str) -> Option<usize> {
    let e = serde_json::from_str::<serde::de::IgnoredAny>(text).err()?;
    if !(e.is_syntax() || e.is_eof()) || e.line() == 0 {
        return None;
    }
    let lines = crate::lines::LineIndex::new(text);
    let start = lines.line_start(e.line())?;
    // serde counts the column in bytes, 1 the first.
    let mut at = (start + e.column().saturating_sub(1)).min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    Some(at)
}

/// [`parse_at`] as the gem's parser stops.
fn parse_gem(text: &str) -> Result<Value, (String, Option<usize>)> {
    if text
        .bytes()
        .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
    {
        return Err(("JSON::ParserError".to_string(), None));
    }
    let mut p = Parser {
        s: text,
        b: text.as_bytes(),
        depth: 0,
    };
    let start = match p.ignore(0) {
        Ok(i) => i,
        Err(stop) => return Err((p.unexpected(stop), Some(stop))),
    };
    let (v, end) = match p.value(start) {
        Ok(r) => r,
        Err(Fail::Silent) => return Err((p.unexpected(start), Some(start))),
        Err(Fail::Raise(m, at)) => return Err((m, Some(at))),
    };
    match p.ignore(end) {
        Ok(i) if i == p.b.len() => Ok(v),
        Ok(i) | Err(i) => Err((p.unexpected(i), Some(i))),
    }
}

const MAX_NESTING: usize = hiera_value::limits::MAX_JSON_NESTING;

enum Fail {
    /// The value did not parse; the caller decides where to report it.
    Silent,
    /// Raised: the whole parse fails with this message, at this byte.
    Raise(String, usize),
}

type R<T> = Result<T, Fail>;

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    depth: usize,
}

/// Where a number token starting at `i` ends, by the gem's grammar: the integer part
/// `-? (0 | [1-9][0-9]*)`, and, when a fraction `\.[0-9]+` and/or an exponent
/// `[eE][+-]?[0-9]+` follows, the end of that Float part. What may follow is the caller's rule.
/// Shared by the parser and the structural pass (src/json/index.rs).
pub(crate) fn number_extent(b: &[u8], i: usize) -> Option<NumberExtent> {
    let digits = |mut j: usize| {
        let s = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        (j > s).then_some(j)
    };
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let int_end = match b.get(j) {
        Some(b'0') => j + 1,
        Some(b'1'..=b'9') => digits(j)?,
        _ => return None,
    };
    let mut f = int_end;
    let mut float_end = None;
    if b.get(f) == Some(&b'.') {
        if let Some(e) = digits(f + 1) {
            f = e;
            float_end = Some(f);
        }
    }
    if matches!(b.get(f), Some(b'e' | b'E')) {
        let mut k = f + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if let Some(e) = digits(k) {
            float_end = Some(e);
        }
    }
    Some(NumberExtent { int_end, float_end })
}

/// See [`number_extent`].
pub(crate) struct NumberExtent {
    /// The end of `-? (0 | [1-9][0-9]*)`.
    pub int_end: usize,
    /// The end of the fraction and/or exponent, when there is one.
    pub float_end: Option<usize>,
}

/// Characters of the input an error message quotes, at most (more is cut, ending in '…').
/// Longer than a printed message may be (`limits::MAX_MESSAGE_CHARS`), so that what is
/// printed is unchanged; the bound is for messages kept whole, as in diff's reports.
const MAX_QUOTED_CHARS: usize = hiera_value::limits::MAX_MESSAGE_CHARS;

/// The input from `at` as the gem's messages quote it: its C `%s` stops at the first NUL
/// byte (a file of NUL-separated records, such as /proc/self/environ, is quoted up to its
/// first one), and at most [`MAX_QUOTED_CHARS`] characters.
fn quoted(rest: &str) -> std::borrow::Cow<'_, str> {
    let rest = rest.split('\0').next().unwrap_or("");
    match rest.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &rest[..cut])),
        None => std::borrow::Cow::Borrowed(rest),
    }
}

impl Parser<'_> {
    fn unexpected(&self, pos: usize) -> String {
        let rest = self.s.get(pos.min(self.b.len())..).unwrap_or("");
        format!("unexpected token at '{}'", quoted(rest))
    }

    fn raise(&self, pos: usize) -> Fail {
        Fail::Raise(self.unexpected(pos), pos)
    }

    /// Whitespace and comments from `i`; `Err` is where a broken comment stopped the machine.
    fn ignore(&self, mut i: usize) -> Result<usize, usize> {
        let b = self.b;
        loop {
            match b.get(i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => i += 1,
                Some(b'/') => match b.get(i + 1) {
                    Some(b'*') => {
                        let body = i + 2;
                        match b[body..].windows(2).position(|w| w == b"*/") {
                            Some(k) => i = body + k + 2,
                            None => return Err(b.len()),
                        }
                    }
                    Some(b'/') => match b[i + 2..].iter().position(|&c| c == b'\n') {
                        Some(k) => i = i + 2 + k + 1,
                        None => return Err(b.len()),
                    },
                    _ => return Err(i + 1),
                },
                _ => return Ok(i),
            }
        }
    }

    fn value(&mut self, i: usize) -> R<(Value, usize)> {
        let b = self.b;
        let rest = &b[i..];
        match rest.first() {
            Some(b'"') => self.string(i).map(|(s, e)| (Value::String(s), e)),
            Some(b'{') => self.nested(i, Self::object),
            Some(b'[') => self.nested(i, Self::array),
            Some(b'n') if rest.starts_with(b"null") => Ok((Value::Null, i + 4)),
            Some(b't') if rest.starts_with(b"true") => Ok((Value::Bool(true), i + 4)),
            Some(b'f') if rest.starts_with(b"false") => Ok((Value::Bool(false), i + 5)),
            Some(b'N') if rest.starts_with(b"NaN") => Err(self.raise(i)),
            // The gem reports this one a character early.
            Some(b'I') if rest.starts_with(b"Infinity") => Err(match i.checked_sub(1) {
                Some(p) => self.raise(p),
                None => self.raise(b.len()),
            }),
            Some(b'-') if rest.starts_with(b"-Infinity") => Err(self.raise(i)),
            Some(b'-' | b'0'..=b'9') => self.number(i).ok_or(Fail::Silent),
            _ => Err(Fail::Silent),
        }
    }

    fn nested(
        &mut self,
        i: usize,
        f: fn(&mut Self, usize) -> R<(Value, usize)>,
    ) -> R<(Value, usize)> {
        if self.depth >= MAX_NESTING {
            return Err(Fail::Raise(
                format!("nesting of {} is too deep", self.depth + 1),
                i,
            ));
        }
        self.depth += 1;
        let r = f(self, i);
        self.depth -= 1;
        r
    }

    fn object(&mut self, i: usize) -> R<(Value, usize)> {
        let mut m = Map::default();
        let skip = |p: &Self, j: usize| p.ignore(j).map_err(|_| Fail::Silent);
        let mut j = skip(self, i + 1)?;
        if self.b.get(j) == Some(&b'}') {
            return Ok((Value::Hash(m), j + 1));
        }
        loop {
            if self.b.get(j) != Some(&b'"') {
                return Err(Fail::Silent);
            }
            let (k, e) = self.string(j)?;
            j = skip(self, e)?;
            if self.b.get(j) != Some(&b':') {
                return Err(Fail::Silent);
            }
            j = skip(self, j + 1)?;
            let (v, e) = self.value(j)?;
            m.insert(Value::String(k), v);
            j = skip(self, e)?;
            match self.b.get(j) {
                Some(b',') => j = skip(self, j + 1)?,
                Some(b'}') => return Ok((Value::Hash(m), j + 1)),
                _ => return Err(Fail::Silent),
            }
        }
    }

    fn array(&mut self, i: usize) -> R<(Value, usize)> {
        let mut a = Vec::new();
        let skip = |p: &Self, j: usize| p.ignore(j).map_err(|stop| p.raise(stop));
        let mut j = skip(self, i + 1)?;
        if self.b.get(j) == Some(&b']') {
            return Ok((Value::Array(a), j + 1));
        }
        loop {
            let (v, e) = match self.value(j) {
                Ok(r) => r,
                Err(Fail::Silent) => return Err(self.raise(j)),
                Err(r) => return Err(r),
            };
            a.push(v);
            j = skip(self, e)?;
            match self.b.get(j) {
                Some(b',') => j = skip(self, j + 1)?,
                Some(b']') => return Ok((Value::Array(a), j + 1)),
                _ => return Err(self.raise(j)),
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*)`, then a fraction and/or exponent for a Float. A Float must not be
    /// followed by `[0-9Ee.-]`, an Integer not by a digit (so `012` is no number at all).
    fn number(&self, i: usize) -> Option<(Value, usize)> {
        let b = self.b;
        let NumberExtent { int_end, float_end } = number_extent(b, i)?;
        let (is_float, f) = match float_end {
            Some(f) => (true, f),
            None => (false, int_end),
        };
        let text = &self.s[i..];
        if is_float && !matches!(b.get(f), Some(b'0'..=b'9' | b'E' | b'e' | b'.' | b'-')) {
            let v = text[..f - i].parse::<f64>().ok()?;
            return Some((Value::Float(v), f));
        }
        if b.get(int_end).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        let t = &text[..int_end - i];
        let v = match t.parse::<i64>() {
            Ok(n) => Value::Int(n),
            Err(_) => Value::BigInt(t.to_string()),
        };
        Some((v, int_end))
    }

    /// A string token at `i` (the opening quote), unescaped as the gem does.
    fn string(&self, i: usize) -> R<(String, usize)> {
        let b = self.b;
        // The grammar first: the token's extent.
        let mut j = i + 1;
        loop {
            match b.get(j) {
                None => return Err(Fail::Silent),
                Some(b'"') => break,
                Some(c) if *c < 0x20 => return Err(Fail::Silent),
                Some(b'\\') => match b.get(j + 1) {
                    Some(b'u') => {
                        let hex = b.get(j + 2..j + 6).ok_or(Fail::Silent)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(Fail::Silent);
                        }
                        j += 6;
                    }
                    Some(c) if *c >= 0x20 => j += 2,
                    _ => return Err(Fail::Silent),
                },
                Some(_) => j += 1,
            }
        }
        let (start, end) = (i + 1, j);
        let s = &self.s[start..end];
        if !s.contains('\\') {
            return Ok((s.to_string(), end + 1));
        }
        // Then json_string_unescape over the token's bytes.
        let hex4 = |k: usize| {
            std::str::from_utf8(&b[k..k + 4])
                .ok()
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .unwrap_or(0)
        };
        let mut out = String::with_capacity(s.len());
        let mut k = start;
        while k < end {
            let Some(rel) = self.s[k..end].find('\\') else {
                out.push_str(&self.s[k..end]);
                break;
            };
            out.push_str(&self.s[k..k + rel]);
            k += rel;
            // b[k] is the backslash; the grammar guarantees a character after it.
            let c = self.s[k + 1..].chars().next().unwrap_or('\\');
            match c {
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'u' => {
                    let mut ch = hex4(k + 2);
                    // The escape's last hex digit.
                    let mut pe = k + 5;
                    if ch & 0xFC00 == 0xD800 {
                        if end - pe <= 6 {
                            return Err(Fail::Raise(
                                format!(
                                    "incomplete surrogate pair at '{}'",
                                    quoted(&self.s[start..])
                                ),
                                start,
                            ));
                        }
                        pe += 1;
                        if b[pe] == b'\\' && b[pe + 1] == b'u' {
                            let sur = hex4(pe + 2);
                            ch = ((ch & 0x3F) << 10)
                                | ((((ch >> 6) & 0xF) + 1) << 16)
                                | (sur & 0x3FF);
                            pe += 5;
                            out.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                        } else {
                            out.push('?');
                            // The gem skips one byte; we skip the whole character.
                            let len = self.s[pe..].chars().next().map_or(1, char::len_utf8);
                            pe += len - 1;
                        }
                    } else {
                        // A lone low surrogate is invalid UTF-8 in Ruby; the nearest we hold.
                        out.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
                    }
                    k = pe + 1;
                    continue;
                }
                other => out.push(other),
            }
            k += 1 + c.len_utf8();
        }
        Ok((out, end + 1))
    }
}

/// A value as a `serde_json` value (the `command` backend's requests, HOCON's debug texts): non-string hash keys become their text (JSON keys are strings),
/// non-finite floats null, Sensitive its content (the program is trusted with secrets).
pub fn to_serde(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        // arbitrary_precision: the digits go out as a JSON number.
        Value::BigInt(d) => d.parse::<serde_json::Number>().map_or(J::Null, J::Number),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::String(s) => J::String(s.clone()),
        Value::Array(a) => J::Array(a.iter().map(to_serde).collect()),
        Value::Hash(h) => J::Object(
            h.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Value::String(s) => s.clone(),
                        other => match to_serde(other) {
                            J::String(s) => s,
                            j => j.to_string(),
                        },
                    };
                    (key, to_serde(v))
                })
                .collect(),
        ),
        Value::Sensitive(inner) => to_serde(inner),
        Value::Object(o) => J::String(o.to_s.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(t: &str) -> String {
        parse(t).unwrap_err()
    }

    fn ok(t: &str) -> String {
        hiera_value::ruby::inspect(&parse(t).unwrap())
    }

    #[test]
    fn values_as_ruby_reads_them() {
        assert_eq!(
            ok(r#"{"b": 1, "a": [true, null, 1.5E+3, -0, -0.0]}"#),
            r#"{"b"=>1, "a"=>[true, nil, 1500.0, 0, -0.0]}"#
        );
        assert_eq!(ok("12"), "12");
        assert_eq!(ok(r#""str""#), r#""str""#);
        assert_eq!(
            ok("[123456789012345678901234567890]"),
            "[123456789012345678901234567890]"
        );
        assert_eq!(ok(r#"{"a": 1, "a": 2, "b": 3}"#), r#"{"a"=>2, "b"=>3}"#);
        assert_eq!(ok(r#"{"v": 1e400}"#), r#"{"v"=>Infinity}"#);
    }

    #[test]
    fn comments_are_whitespace() {
        assert_eq!(ok("{\"v\": 1 // c\n}"), r#"{"v"=>1}"#);
        assert_eq!(ok("// lead\n{\"v\": 1}"), r#"{"v"=>1}"#);
        assert_eq!(
            ok(r#"/* x */ {"a" /*c*/ : /* b */ 2} /* y */"#),
            r#"{"a"=>2}"#
        );
        assert_eq!(ok("[1, // c\n2]"), "[1, 2]");
        assert_eq!(ok(r#"{"a":1 /* x * / */}"#), r#"{"a"=>1}"#);
        assert_eq!(err(r#"{"v": 1} // c"#), "unexpected token at ''");
        assert_eq!(err("// only"), "unexpected token at ''");
        assert_eq!(err("[1 /* x"), "unexpected token at ''");
        assert_eq!(err("[1 /x]"), "unexpected token at 'x]'");
        assert_eq!(err(r#"{"a":1}/x"#), "unexpected token at 'x'");
        assert_eq!(
            err(r#"{"v": 1 /* unterminated }"#),
            r#"unexpected token at '{"v": 1 /* unterminated }'"#
        );
    }

    #[test]
    fn quotes_stop_at_the_first_nul_and_are_bounded() {
        // /proc/self/environ as a data file: the gem's C `%s` ends at the first NUL.
        assert_eq!(
            err("HOME=/root\0SECRET=hunter2\0PATH=/bin\0"),
            "unexpected token at 'HOME=/root'"
        );
        assert_eq!(err("[1, x\0y]"), "unexpected token at 'x'");
        assert_eq!(
            err("{\"v\": \"a\0b\"}"),
            "unexpected token at '{\"v\": \"a'"
        );
        assert_eq!(
            err("{\"v\": \"a\\ud800\"}\0SECRET=hunter2"),
            "incomplete surrogate pair at 'a\\ud800\"}'"
        );
        // Bounded: a huge file is not quoted whole.
        let big = format!("[x{}]", "y".repeat(100_000));
        let m = err(&big);
        assert_eq!(
            m.chars().count(),
            "unexpected token at ''".len() + MAX_QUOTED_CHARS + 1
        );
        assert!(m.ends_with("yyy…'"), "{m}");
    }

    #[test]
    fn escapes_and_surrogates() {
        assert_eq!(ok(r#"{"v": "\x\/\u0041\t"}"#), r#"{"v"=>"x/A\t"}"#);
        assert_eq!(ok(r#"["\ud800\u0041"]"#), "[\"\u{10041}\"]");
        assert_eq!(ok(r#"["\uD834\uDD1E"]"#), "[\"\u{1D11E}\"]");
        assert_eq!(ok(r#"["\ud800xxxxxx"]"#), r#"["?xxxxx"]"#);
        assert_eq!(ok(r#"["\ud800\\xxxxxxx"]"#), r#"["?xxxxxxx"]"#);
        assert_eq!(
            err(r#"{"v": "\ud800xxxxx"}"#),
            r#"incomplete surrogate pair at '\ud800xxxxx"}'"#
        );
        assert_eq!(
            err(r#"{"v": "a\ud800"}"#),
            r#"incomplete surrogate pair at 'a\ud800"}'"#
        );
        assert_eq!(
            err(r#"{"v": "\u12"}"#),
            r#"unexpected token at '{"v": "\u12"}'"#
        );
        assert_eq!(
            err("{\"v\": \"a\u{1}\"}"),
            "unexpected token at '{\"v\": \"a\u{1}\"}'"
        );
    }

    #[test]
    fn errors_where_the_gem_stops() {
        assert_eq!(err(""), "JSON::ParserError");
        assert_eq!(err("  "), "JSON::ParserError");
        assert_eq!(err(r#"{"v": 012}"#), r#"unexpected token at '{"v": 012}'"#);
        assert_eq!(err("[012]"), "unexpected token at '012]'");
        assert_eq!(err(r#"{"v": NaN}"#), "unexpected token at 'NaN}'");
        assert_eq!(err("[Infinity]"), "unexpected token at '[Infinity]'");
        assert_eq!(
            err(r#"{"v": -Infinity}"#),
            "unexpected token at '-Infinity}'"
        );
        assert_eq!(
            err(r#"{"a": {"b": x}}"#),
            r#"unexpected token at '{"a": {"b": x}}'"#
        );
        assert_eq!(err(r#"[{"b": x}]"#), r#"unexpected token at '{"b": x}]'"#);
        assert_eq!(err(r#"{"a": [1 2]}"#), "unexpected token at '2]}'");
        assert_eq!(err("[1,]"), "unexpected token at ']'");
        assert_eq!(err("[nullx]"), "unexpected token at 'x]'");
        assert_eq!(err("[1] x"), "unexpected token at 'x'");
        assert_eq!(err(r#"{"a":1,}"#), r#"unexpected token at '{"a":1,}'"#);
        assert_eq!(
            err(r#"{"v": 1.5e3e}"#),
            r#"unexpected token at '{"v": 1.5e3e}'"#
        );
        assert_eq!(err(r#"{"v": 1.}"#), r#"unexpected token at '{"v": 1.}'"#);
        assert_eq!(err(r#"  {"a":x}"#), r#"unexpected token at '{"a":x}'"#);
        assert_eq!(
            err(&format!("{}{}", "[".repeat(101), "]".repeat(101))),
            "nesting of 101 is too deep"
        );
        assert!(parse(&format!("{}{}", "[".repeat(100), "]".repeat(100))).is_ok());
    }

    #[test]
    fn never_panics() {
        // JSON-ish text from a small alphabet, multibyte characters included.
        let alphabet: Vec<char> = r#"{}[]",:\/*u0123456789abcdefDEnNIi.-+eE tlsr 
	é€"#
        .chars()
        .collect();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..50_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (seed >> 58) as usize;
            let text: String = (0..len)
                .map(|k| {
                    let x = seed.rotate_left(k as u32 * 7) >> 40;
                    alphabet[x as usize % alphabet.len()]
                })
                .collect();
            let _ = parse(&text);
            let _ = parse(&format!("[\"\\ud800{text}\"]"));
        }
    }
}
