//! Ruby's own rules, where Puppet's answers depend on them: one home for each.
//!
//! - regexps: a Ruby regexp source translated for the `regex` crate (`pattern`), used by
//!   lookup_options `^pattern` keys, knockout prefixes and `Pattern[...]` types;
//! - `String#to_i` (`str_to_i`), for hiera.yaml's `version` and YAML's sexagesimals;
//! - `to_s` / `inspect` ([`to_s`], [`inspect`], [`float_to_s`]): the renderer's, which are
//!   Ruby's, re-exported here so that every message takes them from this one home.

use regex::Regex;

pub(crate) use crate::render::{float_to_s, inspect, to_s};

/// Ruby's `String#to_i`: leading ASCII whitespace, an optional sign, then digits with single
/// `_`s between them; anything else ends the number (`"12ab"` is 12, `"x"` is 0). `None`
/// when the number does not fit an `i128` (Ruby would make a Bignum).
pub(crate) fn str_to_i(s: &str) -> Option<i128> {
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
pub(crate) fn pattern(pattern: &str) -> Result<Regex, String> {
    let source = pattern_source(pattern)?;
    Regex::new(&source).map_err(|e| format!("invalid pattern: /{pattern}/ ({e})"))
}

/// [`pattern`]'s translation alone: the regex-crate source for a Ruby regexp.
pub(crate) fn pattern_source(pattern: &str) -> Result<String, String> {
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
