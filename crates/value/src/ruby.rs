//! Ruby's own rules, where Puppet's answers depend on them: one home for each.
//!
//! - regexps: a Ruby regexp source translated for the `regex` crate (`pattern`), used by
//!   lookup_options `^pattern` keys, knockout prefixes and `Pattern[...]` types;
//! - `String#to_i` (`str_to_i`), for hiera.yaml's `version` and YAML's sexagesimals;
//! - `to_s` / `inspect` ([`to_s`], [`inspect`], [`float_to_s`]): the renderer's, which are
//!   Ruby's, re-exported here so that every message takes them from this one home.
//! - `Regexp#inspect` / `#to_s` and `Regexp.escape`, for Regexp values made by `convert_to`;
//! - Ruby's base64 library (strict, lenient and URL-safe), for Binary values.

use regex::Regex;

pub use crate::text::{float_to_s, inspect, to_s};

/// Ruby's `String#to_i`: leading ASCII whitespace, an optional sign, then digits with single
/// `_`s between them; anything else ends the number (`"12ab"` is 12, `"x"` is 0). `None`
/// when the number does not fit an `i128` (Ruby would make a Bignum).
pub fn str_to_i(s: &str) -> Option<i128> {
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, d) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i128 = 0;
    let b = d.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            if b.get(i + 1).is_some_and(u8::is_ascii_digit) && i > 0 {
                continue;
            }
            break;
        }
        if !c.is_ascii_digit() {
            break;
        }
        v = v.checked_mul(10)?.checked_add(i128::from(c - b'0'))?;
    }
    Some(if neg { -v } else { v })
}

/// A Ruby regexp source as a regex-crate pattern (Ruby's `^`/`$` match at every line start
/// and end). Errors carry Ruby's message for the mistakes a pattern is likely to contain.
pub fn pattern(pattern: &str) -> Result<Regex, String> {
    let source = pattern_source(pattern)?;
    Regex::new(&source).map_err(|e| format!("invalid pattern: /{pattern}/ ({e})"))
}

/// [`pattern`]'s translation alone: the regex-crate source for a Ruby regexp.
pub fn pattern_source(pattern: &str) -> Result<String, String> {
    let ruby_err = |what: &str| Err(format!("{what}: /{pattern}/"));
    let (mut out, body) = match pattern.strip_prefix('^') {
        // `(?:^)` so that a leading quantifier applies to the anchor, as in Ruby (`/^+x/`).
        Some(rest) => (String::from("(?m)(?:^)"), rest),
        None => (String::from("(?m)"), pattern),
    };
    let chars: Vec<char> = body.chars().collect();
    let (mut depth, mut in_class, mut i) = (0i32, false, 0usize);
    while let Some(&c) = chars.get(i) {
        let at_start = i == 0;
        i += 1;
        // Ruby's lone trailing backslash message has no pattern suffix.
        if c == '\\' && i == chars.len() {
            return Err("too short escape sequence".to_string());
        }
        match c {
            '\\' => match chars.get(i) {
                None => return ruby_err("too short escape sequence"),
                Some(&n) => {
                    i += 1;
                    match n {
                        'h' => out.push_str("[0-9a-fA-F]"),
                        'H' => out.push_str("[^0-9a-fA-F]"),
                        'Z' => out.push_str("(?:\\n?\\z)"),
                        // A property (`\p{Alpha}`, negated `\p{^Alpha}`), copied whole.
                        'p' | 'P' if chars.get(i) == Some(&'{') => {
                            let name: String =
                                chars[i + 1..].iter().take_while(|&&ch| ch != '}').collect();
                            if chars.get(i + 1 + name.chars().count()) != Some(&'}') {
                                return ruby_err("invalid character property name {");
                            }
                            i += name.chars().count() + 2;
                            let (neg, name) = match name.strip_prefix('^') {
                                Some(rest) => (n == 'p', rest.to_string()),
                                None => (n == 'P', name),
                            };
                            out.push_str(if neg { "\\P{" } else { "\\p{" });
                            out.push_str(&name);
                            out.push('}');
                        }
                        n => {
                            out.push('\\');
                            out.push(n);
                        }
                    }
                }
            },
            _ if in_class => {
                if c == ']' {
                    in_class = false;
                }
                out.push(c);
            }
            '[' => {
                in_class = true;
                out.push(c);
            }
            '(' => {
                depth += 1;
                out.push(c);
            }
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return ruby_err("unmatched close parenthesis");
                }
                out.push(c);
            }
            '{' => {
                // Ruby takes `{` literally unless it starts a valid interval.
                let body: String = chars[i..].iter().take_while(|&&ch| ch != '}').collect();
                let closed = chars.get(i + body.chars().count()) == Some(&'}');
                let valid = closed
                    && !at_start
                    && body.split(',').count() <= 2
                    && body.chars().all(|ch| ch.is_ascii_digit() || ch == ',')
                    && body.chars().any(|ch| ch.is_ascii_digit());
                if valid {
                    out.push('{');
                    out.push_str(&body);
                    out.push('}');
                    i += body.chars().count() + 1;
                } else {
                    out.push_str("\\{");
                }
            }
            '}' => out.push_str("\\}"),
            c => out.push(c),
        }
    }
    if in_class {
        return ruby_err("premature end of char-class");
    }
    if depth > 0 {
        return ruby_err("end pattern with unmatched parenthesis");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_i_as_ruby() {
        for (s, want) in [
            ("5", 5),
            ("5x", 5),
            ("x", 0),
            ("", 0),
            ("-12", -12),
            ("+7", 7),
            ("  42", 42),
            ("1_000", 1000),
            ("1__0", 1),
            ("_1", 0),
            ("1_", 1),
            ("--1", 0),
        ] {
            assert_eq!(str_to_i(s), Some(want), "{s:?}.to_i");
        }
        assert_eq!(str_to_i(&"9".repeat(40)), None);
    }

    #[test]
    fn regexps_as_ruby() {
        assert_eq!(pattern_source("^a{2}").unwrap(), "(?m)(?:^)a{2}");
        assert_eq!(pattern_source("{x").unwrap(), "(?m)\\{x");
        assert_eq!(pattern_source("\\h").unwrap(), "(?m)[0-9a-fA-F]");
        assert_eq!(
            pattern_source("(").unwrap_err(),
            "end pattern with unmatched parenthesis: /(/"
        );
        assert!(pattern("^ab$").unwrap().is_match("x\nab\ny"));
    }
}

// ---- Regexp#inspect / #to_s, Regexp.escape ----

/// `rb_reg_expr_str` with `/` as the terminator: the body of `Regexp#inspect` and `#to_s`.
/// An unescaped `/` gets a backslash; control characters other than spaces print as `\xHH`.
pub fn regexp_expr(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 2);
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '/' => out.push_str("\\/"),
            c if c.is_ascii_control()
                && !matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r') =>
            {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// `Regexp#to_s` of `Regexp.new(source)` (no options): `(?-mix:source)`, where leading
/// `(?flags)` / a whole-pattern `(?flags:...)` group are folded into the flags, as
/// `rb_reg_str_with_term` does.
pub fn regexp_to_s(source: &str) -> String {
    const I: u8 = 1;
    const X: u8 = 2;
    const M: u8 = 4;
    let opt = |c: u8| match c {
        b'i' => I,
        b'x' => X,
        b'm' => M,
        _ => 0,
    };
    let (mut options, mut body) = (0u8, source);
    let mut ok = true;
    loop {
        let b = body.as_bytes();
        if !(b.len() >= 4 && b.starts_with(b"(?")) {
            break;
        }
        let mut p = 2;
        let mut o = options;
        while p < b.len() && opt(b[p]) != 0 {
            o |= opt(b[p]);
            p += 1;
        }
        if b.len() - p > 1 && b[p] == b'-' {
            p += 1;
            while p < b.len() && opt(b[p]) != 0 {
                o &= !opt(b[p]);
                p += 1;
            }
        }
        match b.get(p) {
            Some(b')') => {
                options = o;
                body = &body[p + 1..];
                continue;
            }
            Some(b':') if b.last() == Some(&b')') && p + 1 < b.len() => {
                let inner = &body[p + 1..body.len() - 1];
                if pattern_source(inner).is_ok() {
                    options = o;
                    body = inner;
                } else {
                    ok = false;
                }
            }
            _ => ok = false,
        }
        break;
    }
    if !ok {
        (options, body) = (0, source);
    }
    let flags = |set: u8| {
        let mut s = String::new();
        for (f, c) in [(M, 'm'), (I, 'i'), (X, 'x')] {
            if set & f != 0 {
                s.push(c);
            }
        }
        s
    };
    let mut out = format!("(?{}", flags(options));
    if options != I | X | M {
        out.push('-');
        out.push_str(&flags(!options & (I | X | M)));
    }
    out.push(':');
    out.push_str(&regexp_expr(body));
    out.push(')');
    out
}

/// `Regexp.escape`.
pub fn regexp_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '[' | ']' | '{' | '}' | '(' | ')' | '|' | '-' | '*' | '.' | '\\' | '?' | '+' | '^'
            | '$' | '#' => {
                out.push('\\');
                out.push(c);
            }
            ' ' => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out
}

// ---- Base64 (Ruby's base64 library) ----

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `Base64.strict_encode64`.
pub fn strict_encode64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b64_value(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// `Base64.strict_decode64` (`unpack1("m0")`): None where Ruby raises `invalid base64`.
pub fn strict_decode64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (k, q) in b.chunks(4).enumerate() {
        let last = k == b.len() / 4 - 1;
        let pads = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pads > 2 || (pads > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in q[..4 - pads].iter().enumerate() {
            n |= b64_value(c)? << (18 - 6 * i);
        }
        // Bits beyond the decoded bytes must be zero.
        let keep = 3 - pads;
        if pads > 0 && n & ((1 << (8 * (3 - keep))) - 1) != 0 {
            return None;
        }
        for i in 0..keep {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// `Base64.decode64` (`unpack1("m")`, Ruby's pack.c): lenient. Characters outside the
/// alphabet are skipped; a `=` (or the end) where the third or fourth character of a quantum is
/// due ends the data, keeping the bytes the quantum's first two or three characters make, while a
/// `=` where its first or second is due is skipped like any other character. So `QUJD=RA==` is
/// `ABCD` and `QU=JD` is `A`. The one port: YAML's `!!binary`, eyaml's ciphertexts and
/// `Binary.new(s, '%b')` all decode through it.
pub fn decode64(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4 * 3 + 2);
    let mut i = 0;
    // The next alphabet character's value; None at the end, or at a `=` when `pad_ends`.
    let mut next = |pad_ends: bool| -> Option<u32> {
        while let Some(&c) = b.get(i) {
            if pad_ends && c == b'=' {
                return None;
            }
            i += 1;
            if let Some(v) = b64_value(c) {
                return Some(v);
            }
        }
        None
    };
    while let Some(a) = next(false) {
        let Some(b1) = next(false) else { break };
        let Some(c) = next(true) else {
            out.push((a << 2 | b1 >> 4) as u8);
            break;
        };
        let Some(d) = next(true) else {
            out.extend_from_slice(&[(a << 2 | b1 >> 4) as u8, (b1 << 4 | c >> 2) as u8]);
            break;
        };
        out.extend_from_slice(&[
            (a << 2 | b1 >> 4) as u8,
            (b1 << 4 | c >> 2) as u8,
            (c << 6 | d) as u8,
        ]);
    }
    out
}

/// `Base64.urlsafe_decode64`: padding added when missing, `-_` read as `+/`, then strict.
pub fn urlsafe_decode64(s: &str) -> Option<Vec<u8>> {
    let mut t: String = s
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    if !s.ends_with('=') && s.len() % 4 != 0 {
        while t.len() % 4 != 0 {
            t.push('=');
        }
    }
    strict_decode64(&t)
}

#[cfg(test)]
mod regexp_base64_tests {
    use super::*;

    #[test]
    fn regexp_texts_are_rubys() {
        assert_eq!(regexp_to_s("a.b"), "(?-mix:a.b)");
        assert_eq!(regexp_to_s("a/b"), "(?-mix:a\\/b)");
        assert_eq!(regexp_to_s("(?i:ab)"), "(?i-mx:ab)");
        assert_eq!(regexp_to_s("(?i)ab"), "(?i-mx:ab)");
        assert_eq!(regexp_expr("a\\/b/c"), "a\\/b\\/c");
        assert_eq!(regexp_escape("a.b c"), "a\\.b\\ c");
    }

    #[test]
    fn base64_like_ruby() {
        assert_eq!(strict_encode64(b"hello"), "aGVsbG8=");
        assert_eq!(strict_encode64(b""), "");
        assert_eq!(strict_encode64(b"ab"), "YWI=");
        assert_eq!(strict_decode64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(strict_decode64("aGVsbG8"), None);
        assert_eq!(strict_decode64("aGVsbG9="), None);
        assert_eq!(strict_decode64("aGV sbG8="), None);
        assert_eq!(urlsafe_decode64("aGVsbG8").unwrap(), b"hello");
    }

    #[test]
    fn decode64_is_rubys() {
        // Every row checked with Ruby 3.3's `Base64.decode64` (Puppet 8.10's Ruby).
        let rows: &[(&str, &[u8])] = &[
            ("QUJD=RA==", b"ABCD"),
            ("QUJDRA==", b"ABCD"),
            ("QUJDRA", b"ABCD"),
            ("QUJDR", b"ABC"),
            ("QUJDRA=", b"ABCD"),
            ("Q=UJD", b"ABC"),
            ("QU=JD", b"A"),
            ("QUJ=D", b"AB"),
            ("", b""),
            ("=", b""),
            ("==QUJD", b"ABC"),
            ("QU JD\nRA", b"ABCD"),
            ("QU!J@D#", b"ABC"),
            ("aGVsbG8", b"hello"),
            ("aGVsbG8=", b"hello"),
            ("aGVsbG9=", b"hello"),
            ("QUJDRA==QUJD", b"ABCD"),
            ("QUI=QUI=", b"AB"),
            ("Q", b""),
            ("QQ", b"A"),
            ("QQ=", b"A"),
            ("QQ==", b"A"),
            ("QUI", b"AB"),
            ("QUI=", b"AB"),
            ("QUJD\0RA", b"ABCD"),
            ("=Q=U=J=D=", b"A"),
            ("QU=", b"A"),
            ("Q=U=JD", b"A"),
            ("-_-_", b""),
            ("QUJDRA=x", b"ABCD"),
            ("/w==", &[0xff]),
            ("aGVs\nbG8=", b"hello"),
        ];
        for (text, bytes) in rows {
            assert_eq!(decode64(text), *bytes, "{text:?}");
        }
    }
}
