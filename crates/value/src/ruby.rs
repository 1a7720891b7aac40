//! Ruby's own rules, where Puppet's answers depend on them: one home for each.
//!
//! - regexps: a Ruby regexp source translated for the `regex` crate (`pattern`), used by
//!   lookup_options `^pattern` keys, knockout prefixes and `Pattern[...]` types;
//! - `String#to_i` (`str_to_i`), for hiera.yaml's `version` and YAML's sexagesimals;
//! - `to_s` / `inspect` ([`to_s`], [`inspect`], [`float_to_s`]): the renderer's, which are
//!   Ruby's, re-exported here so that every message takes them from this one home.
//! - `Regexp#inspect` / `#to_s` and `Regexp.escape`, for Regexp values made by `convert_to`;
//! - Ruby's base64 library (strict, lenient and URL-safe), for Binary values and YAML's
//!   `!!binary` and eyaml's ciphertexts;
//! - `Kernel#Integer` and `Kernel#Float` of a String ([`integer`], [`float`]), for YAML's and
//!   HOCON's numbers and `Integer.new`, `Float.new`, `Numeric.new`.

use regex::Regex;

pub(crate) mod base64;

pub use crate::text::{float_to_s, inspect, to_s};
pub use base64::{decode64, strict_decode64, strict_encode64, urlsafe_decode64};

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

#[cfg(test)]
mod regexp_tests {
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
}

// ---- Kernel#Integer and Kernel#Float of a String ----

/// Ruby's `ISSPACE`: the whitespace its number parsers skip.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Ruby's `Integer(str)` (`radix` None) and `Integer(str, radix)` (bignum.c's
/// `rb_int_parse_cstr`, strict): surrounding whitespace, one sign, then a base prefix (`0x`,
/// `0b`, `0o`, `0d`, or a bare leading `0` for octal; with a radix, only that radix's own
/// prefix), digits with single `_`s between them. None where Ruby raises `invalid value for
/// Integer()` (and for a radix outside 2..=36). An Int, or a BigInt beyond 64 bits. The one
/// port: YAML's integers, `Integer.new`, `Float.new` of `0b` text and HOCON's numbers use it.
pub fn integer(s: &str, radix: Option<u32>) -> Option<crate::value::Value> {
    let b = s.as_bytes();
    if b.contains(&0) {
        return None;
    }
    let at = |k: usize| b.get(k).map(u8::to_ascii_lowercase);
    let mut i = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let base = match radix {
        None if at(i) == Some(b'0') && i + 1 < b.len() => match at(i + 1) {
            Some(b'x') => (i += 2, 16).1,
            Some(b'b') => (i += 2, 2).1,
            Some(b'o') => (i += 2, 8).1,
            Some(b'd') => (i += 2, 10).1,
            _ => 8,
        },
        None => 10,
        Some(r @ 2..=36) => {
            let prefix = match r {
                2 => Some(b'b'),
                8 => Some(b'o'),
                10 => Some(b'd'),
                16 => Some(b'x'),
                _ => None,
            };
            if at(i) == Some(b'0') && prefix.is_some() && at(i + 1) == prefix {
                i += 2;
            }
            r
        }
        Some(_) => return None,
    };
    let rest = &b[i..];
    // Leading zeros are squeezed, with single `_`s among them (`0_7` is 7).
    let mut k = 0;
    if rest.len() > 1 && rest[0] == b'0' {
        let mut underscores = 0;
        loop {
            k += 1;
            match rest.get(k) {
                Some(b'0') => underscores = 0,
                Some(b'_') => {
                    underscores += 1;
                    if underscores >= 2 {
                        break;
                    }
                }
                _ => break,
            }
        }
        if rest.get(k).is_none_or(|&c| is_space(c)) {
            k -= 1;
        }
    }
    let digits = &rest[k..];
    let digit = |c: u8| char::from(c).to_digit(base);
    digits.first().and_then(|&c| digit(c))?;
    let mut clean = String::with_capacity(digits.len());
    let mut j = 0;
    let mut after_underscore = false;
    while let Some(&c) = digits.get(j) {
        if c == b'_' {
            if after_underscore {
                return None;
            }
            after_underscore = true;
        } else if digit(c).is_some() {
            after_underscore = false;
            clean.push(char::from(c));
        } else {
            break;
        }
        j += 1;
    }
    if after_underscore || !digits[j..].iter().all(|&c| is_space(c)) {
        return None;
    }
    Some(crate::value::integer_from_digits(neg, base, &clean))
}

/// Ruby's `Float(str)` (object.c's `rb_cstr_to_dbl` with its bad-input check, over the
/// `strtod` of Ruby's missing/dtoa.c), with Ruby's messages as the error: surrounding
/// whitespace, a sign, decimal digits with an optional fraction (digits on both sides of the
/// `.`, or none before it) and exponent, or hexadecimal `0x` digits with an optional fraction
/// that then needs a `p` exponent; `_` only between two decimal digits; no `inf` or `nan`. A
/// number too large is ±Infinity, as in Ruby. The one port: YAML's floats and `Float.new` use it.
pub fn float(s: &str) -> Result<f64, String> {
    let bad = || {
        format!(
            "invalid value for Float(): {}",
            inspect(&crate::value::Value::String(s.to_string()))
        )
    };
    let b = s.as_bytes();
    if b.contains(&0) {
        return Err("string for Float contains null byte".into());
    }
    let p = &b[b.iter().position(|&c| !is_space(c)).unwrap_or(b.len())..];
    let (d, end) = strtod(p);
    if end == 0 {
        return Err(bad());
    }
    if end >= p.len() {
        return Ok(d);
    }
    // Text after what strtod read: Ruby copies the number into a buffer of 70 bytes, dropping
    // the underscores that stand between two digits and checking what else follows, then
    // reads the buffer again. Past 60 bytes (69 once an exponent letter is copied) digits are
    // dropped, as Ruby drops them.
    const MANTISSA_ROOM: usize = 60;
    const EXPONENT_ROOM: usize = 69;
    let mut room = MANTISSA_ROOM;
    let mut buf: Vec<u8> = Vec::with_capacity(EXPONENT_ROOM + 1);
    let (mut i, mut prev, mut dot_seen) = (0, 0u8, false);
    if let Some(&c @ (b'+' | b'-')) = p.first() {
        (prev, i) = (c, 1);
        buf.push(c);
    }
    let squeeze_zeros = |i: &mut usize, prev: &mut u8, buf: &mut Vec<u8>| {
        if p.get(*i) == Some(&b'0') {
            buf.push(b'0');
            *prev = b'0';
            while p.get(*i) == Some(&b'0') {
                *i += 1;
            }
        }
    };
    squeeze_zeros(&mut i, &mut prev, &mut buf);
    while i < end && buf.len() < room {
        prev = p[i];
        buf.push(prev);
        i += 1;
    }
    while i < p.len() {
        if p[i] == b'_' {
            if buf.is_empty()
                || !prev.is_ascii_digit()
                || !p.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                return Err(bad());
            }
            i += 1;
        }
        prev = p[i];
        i += 1;
        if room == MANTISSA_ROOM && matches!(prev, b'e' | b'E' | b'p' | b'P') {
            room = EXPONENT_ROOM;
            buf.push(prev);
            if let Some(&c @ (b'+' | b'-')) = p.get(i) {
                buf.push(c);
                prev = c;
                i += 1;
            }
            squeeze_zeros(&mut i, &mut prev, &mut buf);
            continue;
        } else if is_space(prev) {
            while p.get(i).copied().is_some_and(is_space) {
                i += 1;
            }
            if i < p.len() {
                return Err(bad());
            }
        } else if prev == b'.' {
            if dot_seen {
                return Err(bad());
            }
            dot_seen = true;
        } else if !prev.is_ascii_digit() {
            return Err(bad());
        }
        if buf.len() < room {
            buf.push(prev);
        }
    }
    let (d, end) = strtod(&buf);
    if end == 0 || !buf[end.min(buf.len())..].iter().all(|&c| is_space(c)) {
        return Err(bad());
    }
    Ok(d)
}

/// Ruby's `strtod` (missing/dtoa.c) over `s`: the value and how many bytes it read (0: no
/// number). Decimal values are rounded correctly from the digits Ruby keeps (it ignores
/// fraction digits past the 60th significant one and caps exponents at 19999); hexadecimal
/// ones are summed digit by digit in a double, as Ruby sums them.
fn strtod(s: &[u8]) -> (f64, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let mut neg = false;
    loop {
        match at(i) {
            c @ (b'-' | b'+') => {
                neg = c == b'-';
                i += 1;
                if at(i) == 0 {
                    return (0.0, 0);
                }
                break;
            }
            0 => return (0.0, 0),
            c if is_space(c) => i += 1,
            _ => break,
        }
    }
    let signed = |v: f64, end: usize| (if neg { -v } else { v }, end);
    let mut leading_zero = false;
    if at(i) == b'0' {
        if matches!(at(i + 1), b'x' | b'X') {
            return match strtod_hex(s, i + 2) {
                Some((v, end)) => signed(v, end),
                None => (0.0, 0),
            };
        }
        leading_zero = true;
        while at(i) == b'0' {
            i += 1;
        }
        if at(i) == 0 {
            return signed(0.0, i);
        }
    }
    let int_start = i;
    while at(i).is_ascii_digit() {
        i += 1;
    }
    let mut digits = String::from("0");
    digits.push_str(std::str::from_utf8(&s[int_start..i]).unwrap_or("0"));
    digits.push('.');
    let mut nd = i - int_start;
    let mut zeros_only = false;
    if at(i) == b'.' && at(i + 1).is_ascii_digit() {
        i += 1;
        if nd == 0 {
            while at(i) == b'0' {
                digits.push('0');
                zeros_only = true;
                i += 1;
            }
        }
        let mut pending_zeros = 0;
        while at(i).is_ascii_digit() {
            let c = at(i);
            i += 1;
            pending_zeros += 1;
            if nd > 60 {
                continue;
            }
            if c != b'0' {
                digits.extend(std::iter::repeat_n('0', pending_zeros - 1));
                digits.push(char::from(c));
                nd += pending_zeros;
                pending_zeros = 0;
            }
        }
    }
    let mut e: i64 = 0;
    if matches!(at(i), b'e' | b'E') {
        if nd == 0 && !zeros_only && !leading_zero {
            return (0.0, 0);
        }
        let save = i;
        i += 1;
        let eneg = at(i) == b'-';
        if matches!(at(i), b'+' | b'-') {
            i += 1;
        }
        if at(i).is_ascii_digit() {
            while at(i) == b'0' {
                i += 1;
            }
            let first = i;
            let mut l: i64 = 0;
            while at(i).is_ascii_digit() {
                l = (l * 10 + i64::from(at(i) - b'0')).min(1_000_000_000);
                i += 1;
            }
            e = if i - first > 8 || l > 19999 { 19999 } else { l };
            if eneg {
                e = -e;
            }
        } else {
            i = save;
        }
    }
    if nd == 0 {
        if !zeros_only && !leading_zero {
            return (0.0, 0);
        }
        return signed(0.0, i);
    }
    digits.push_str(&format!("e{e}"));
    signed(digits.parse().unwrap_or(0.0), i)
}

/// The hexadecimal part of Ruby's `strtod`, from just after `0x`: the magnitude and where it
/// ends, or None where Ruby reads no number at all (no digit after `0x` or after the `.`, a
/// fraction without a `p` exponent, a `p` without digits).
fn strtod_hex(s: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let hex = |c: u8| char::from(c).to_digit(16).map(f64::from);
    hex(at(i))?;
    let (mut adj, mut aadj, mut exp) = (0f64, 1f64, -4i64);
    while at(i) == b'0' {
        i += 1;
    }
    while let Some(d) = hex(at(i)) {
        adj += aadj * d;
        exp += 4;
        aadj /= 16.0;
        i += 1;
    }
    let fraction = at(i) == b'.';
    if fraction {
        i += 1;
        hex(at(i))?;
        if exp < 0 {
            while at(i) == b'0' {
                i += 1;
                exp -= 4;
            }
        }
        while let Some(d) = hex(at(i)) {
            adj += aadj * d;
            i += 1;
            aadj /= 16.0;
            if aadj == 0.0 {
                while hex(at(i)).is_some() {
                    i += 1;
                }
                break;
            }
        }
    }
    if matches!(at(i), b'p' | b'P') {
        i += 1;
        let sign: i64 = match at(i) {
            b'+' => (i += 1, 1).1,
            b'-' => (i += 1, -1).1,
            _ => 1,
        };
        if !at(i).is_ascii_digit() {
            return None;
        }
        let mut n: i64 = 0;
        while at(i).is_ascii_digit() {
            n = n * 10 + i64::from(at(i) - b'0');
            i += 1;
            if n + sign * exp > 2095 {
                while at(i).is_ascii_digit() {
                    i += 1;
                }
                break;
            }
        }
        exp += n * sign;
    } else if fraction {
        return None;
    }
    Some((ldexp(adj, exp), i))
}

/// C's `ldexp`: `x` times 2 to the `n`, rounded once (to nearest, ties to even).
fn ldexp(x: f64, n: i64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let (mantissa, e) = if biased == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), biased - 1075)
    };
    // x = mantissa * 2^e; the result is mantissa * 2^(e + n).
    let e = e.saturating_add(n);
    let top = e + 64 - i64::from(mantissa.leading_zeros()); // bits above 2^0
    if top > 1024 {
        return f64::INFINITY.copysign(x);
    }
    if e >= -1074 {
        // Exact: a normal (or subnormal with room) value.
        let m = mantissa as f64;
        let mut v = m;
        let mut k = e;
        while k > 0 {
            let step = k.min(1000);
            v *= 2f64.powi(step as i32);
            k -= step;
        }
        while k < 0 {
            let step = (-k).min(1000);
            v /= 2f64.powi(step as i32);
            k += step;
        }
        return v.copysign(x);
    }
    // Below the smallest subnormal step: shift right with round-half-even.
    let shift = -1074 - e;
    if shift > 60 {
        return 0f64.copysign(x);
    }
    let kept = mantissa >> shift;
    let rest = mantissa & ((1 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let rounded = if rest > half || (rest == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    };
    f64::from_bits(rounded).copysign(x)
}

#[cfg(test)]
mod number_tests {
    use super::*;
    use crate::value::Value;

    #[test]
    fn integer_is_rubys() {
        // Every row checked with Ruby 3.3's `Integer()` (Puppet 8.10's Ruby); None: it raised.
        let big = || Value::BigInt("123456789012345678901234567890".into());
        let rows: &[(&str, Option<u32>, Option<Value>)] = &[
            ("0", None, Some(Value::Int(0))),
            ("00", None, Some(Value::Int(0))),
            ("010", None, Some(Value::Int(8))),
            ("0_7", None, Some(Value::Int(7))),
            ("0x1f", None, Some(Value::Int(31))),
            ("0X1F", None, Some(Value::Int(31))),
            ("0x_1f", None, None),
            ("0x1_f", None, Some(Value::Int(31))),
            ("0x1__f", None, None),
            ("0b101", None, Some(Value::Int(5))),
            ("0B101", None, Some(Value::Int(5))),
            ("0o17", None, Some(Value::Int(15))),
            ("0d19", None, Some(Value::Int(19))),
            ("-0x1f", None, Some(Value::Int(-31))),
            ("+0b1", None, Some(Value::Int(1))),
            ("- 5", None, None),
            (" 5 ", None, Some(Value::Int(5))),
            ("\t5\n", None, Some(Value::Int(5))),
            ("\x0b5", None, Some(Value::Int(5))),
            ("5_000", None, Some(Value::Int(5000))),
            ("5__000", None, None),
            ("_5", None, None),
            ("5_", None, None),
            ("0x", None, None),
            ("0b", None, None),
            ("0o", None, None),
            ("0d", None, None),
            ("", None, None),
            ("-", None, None),
            ("1e5", None, None),
            ("12a", None, None),
            ("099", None, None),
            ("0_", None, None),
            ("1 2", None, None),
            ("+-1", None, None),
            ("-0", None, Some(Value::Int(0))),
            ("0b2", None, None),
            ("5\0", None, None),
            ("１", None, None),
            ("123456789012345678901234567890", None, Some(big())),
            ("1f", Some(16), Some(Value::Int(31))),
            ("0x1f", Some(16), Some(Value::Int(31))),
            ("0b1", Some(16), Some(Value::Int(177))),
            ("0b1", Some(2), Some(Value::Int(1))),
            ("101", Some(2), Some(Value::Int(5))),
            ("0o17", Some(8), Some(Value::Int(15))),
            ("017", Some(8), Some(Value::Int(15))),
            ("0d17", Some(10), Some(Value::Int(17))),
            ("0x1f", Some(10), None),
            ("0_7", Some(8), Some(Value::Int(7))),
            ("0b_1", Some(2), None),
            (" 0x1f ", Some(16), Some(Value::Int(31))),
            ("08", Some(8), None),
            ("0x", Some(16), None),
            ("z", Some(36), Some(Value::Int(35))),
        ];
        for (text, radix, want) in rows {
            assert_eq!(integer(text, *radix), *want, "Integer({text:?}, {radix:?})");
        }
    }

    #[test]
    fn float_is_rubys() {
        // Every row checked with Ruby 3.3's `Float()` (Puppet 8.10's Ruby); None: it raised
        // `invalid value for Float()`.
        let rows: &[(&str, Option<f64>)] = &[
            ("1", Some(1.0)),
            ("1.5", Some(1.5)),
            ("1.", None),
            (".5", Some(0.5)),
            ("-.5", Some(-0.5)),
            ("1e5", Some(100000.0)),
            ("1E5", Some(100000.0)),
            ("1e+5", Some(100000.0)),
            ("1e-5", Some(1e-5)),
            ("1e", None),
            ("1.e5", None),
            ("1_000.5", Some(1000.5)),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("1._5", None),
            ("1.5_5", Some(1.55)),
            ("1e5_0", Some(1e50)),
            ("1e_5", None),
            ("1_0e1_0", Some(1e11)),
            ("0_1", Some(1.0)),
            ("0x1f", Some(31.0)),
            ("0X1F", Some(31.0)),
            ("0x1.8p1", Some(3.0)),
            ("0x1p-2", Some(0.25)),
            ("0x1P2", Some(4.0)),
            ("0x1.fp1", Some(3.875)),
            ("0x1.8", None),
            ("0x", None),
            ("0x1.p1", None),
            ("0x.8p1", None),
            ("0x1_0", Some(16.0)),
            ("0x1_f", None),
            ("0xf_f", None),
            ("0x1_0p1", Some(32.0)),
            ("0x1.8_0p1", None),
            ("0x1p1_0", Some(1024.0)),
            ("0xFFFFFFFFFFFFFFFFFFFF", Some(1.2089258196146292e24)),
            ("0b101", None),
            ("0o17", None),
            ("017", Some(17.0)),
            ("-017", Some(-17.0)),
            (" 1 ", Some(1.0)),
            ("\n1\t", Some(1.0)),
            ("1 2", None),
            ("", None),
            ("-", None),
            ("+0b101", None),
            ("- 1", None),
            ("inf", None),
            ("Infinity", None),
            ("NaN", None),
            ("1e400", Some(f64::INFINITY)),
            ("-1e400", Some(f64::NEG_INFINITY)),
            ("1e-400", Some(0.0)),
            ("4.9e-324", Some(5e-324)),
            ("0x3p-1076", Some(5e-324)),
            ("12345678901234567890123", Some(1.2345678901234568e22)),
            ("1.5e3.2", None),
            ("5e-", None),
            ("0.5e", None),
        ];
        for (text, want) in rows {
            let got = float(text);
            match want {
                Some(f) => assert_eq!(got, Ok(*f), "Float({text:?})"),
                None => assert_eq!(
                    got,
                    Err(format!(
                        "invalid value for Float(): {}",
                        inspect(&Value::String(text.to_string()))
                    )),
                    "Float({text:?})"
                ),
            }
        }
        assert_eq!(
            float("1\0"),
            Err("string for Float contains null byte".into())
        );
        // Ruby keeps 60 bytes of the number when it has to copy it (here for the `_`).
        assert_eq!(
            float(&format!("{}_1", "1".repeat(70))).map(f64::to_bits),
            Ok(0x4c31b37620ad4a04)
        );
    }
}
