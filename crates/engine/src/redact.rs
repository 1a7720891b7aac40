//! `--redact`: what a lookup decrypted never reaches the output.
//!
//! The lookup itself runs on the real values: interpolation, merges, `convert_to` and
//! `--type` see the plaintext, so an error stays an error and a type check checks the real
//! value. Only printing changes: the backends report each plaintext they decrypt
//! (`Host::decrypted`), and every occurrence of
//! one in what is printed — values and hash keys, `--explain` traces, batch lines, error and
//! warning messages — becomes `[redacted]`.

use crate::error::Error;
use aho_corasick::{AhoCorasick, MatchKind};
use hiera_value::value::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// What a redacted plaintext prints as.
pub const REDACTED: &str = "[redacted]";

/// The plaintexts a session decrypted, and the rewriting of printed text and values.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Each plaintext as it is, and as JSON and Ruby's `inspect` escape it inside quotes
    /// (how a message or a trace may quote it).
    patterns: Vec<String>,
    /// The plaintexts themselves: a number whose digits are one is redacted too.
    plaintexts: Vec<String>,
    matcher: OnceLock<Option<AhoCorasick>>,
}

impl Redactor {
    /// Hides `plaintext` from now on (and without its line break, which eyaml chomps).
    pub(crate) fn add(&mut self, plaintext: &str) {
        for p in [plaintext, plaintext.trim_end_matches(['\r', '\n'])] {
            if p.is_empty() || self.plaintexts.iter().any(|q| q == p) {
                continue;
            }
            self.plaintexts.push(p.to_string());
            let quoted = [
                hiera_formats::render::to_json(&Value::str(p)).ok(),
                Some(hiera_value::text::inspect(&Value::str(p))),
            ];
            let inner = quoted.into_iter().flatten().filter_map(|q| {
                q.strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .map(str::to_string)
            });
            for form in std::iter::once(p.to_string()).chain(inner) {
                if !form.is_empty() && !self.patterns.contains(&form) {
                    self.patterns.push(form);
                }
            }
            self.matcher = OnceLock::new();
        }
    }

    /// Hides what `other` hides too (the plaintexts of several sessions, in one report).
    pub fn merge(&mut self, other: &Redactor) {
        for p in &other.plaintexts {
            self.add(p);
        }
    }

    /// True when nothing was decrypted: printing is unchanged.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    fn matcher(&self) -> Option<&AhoCorasick> {
        self.matcher
            .get_or_init(|| {
                if self.patterns.is_empty() {
                    return None;
                }
                // The longest match wins: a whole decrypted string over a token inside it.
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&self.patterns)
                    .ok()
            })
            .as_ref()
    }

    /// `text` with every plaintext replaced by `[redacted]`.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.matcher() {
            Some(m) if m.is_match(text) => {
                Cow::Owned(m.replace_all(text, &vec![REDACTED; self.patterns.len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }

    /// `e` with its message redacted (its kind unchanged).
    pub fn error(&self, e: &Error) -> Error {
        let t = |m: &str| self.text(m).into_owned();
        match e {
            Error::Lookup { message, issue } => Error::Lookup {
                message: t(message),
                issue: *issue,
            },
            Error::Puppet(m) => Error::Puppet(t(m)),
            Error::Run(m) => Error::Run(t(m)),
            Error::UndefinedVariable(m) => Error::UndefinedVariable(t(m)),
            Error::Usage(m) => Error::Usage(t(m)),
            Error::SettingsFile(p) => Error::SettingsFile(t(p)),
        }
    }

    /// `v` as it may be printed: plaintexts in strings and hash keys replaced by
    /// `[redacted]`, and a number that is a plaintext (made by `convert_to`) by the string
    /// `[redacted]`.
    pub fn value(&self, v: &Value) -> Value {
        if self.is_empty() {
            return v.clone();
        }
        self.value_in(v)
    }

    fn value_in(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => match self.text(s) {
                Cow::Borrowed(_) => v.clone(),
                Cow::Owned(s) => Value::String(s),
            },
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {
                let digits = hiera_value::text::to_s(v);
                if self.plaintexts.contains(&digits) {
                    Value::str(REDACTED)
                } else {
                    v.clone()
                }
            }
            Value::Array(a) => Value::Array(a.iter().map(|e| self.value_in(e)).collect()),
            Value::Hash(h) => {
                let mut m =
                    hiera_value::value::Map::with_capacity_and_hasher(h.len(), Default::default());
                for (k, e) in h {
                    // Two keys that differ only in a secret: the first stays.
                    m.entry(self.value_in(k))
                        .or_insert_with(|| self.value_in(e));
                }
                Value::Hash(m)
            }
            Value::Sensitive(inner) => Value::Sensitive(Box::new(self.value_in(inner))),
            Value::Object(o) => {
                let mut o = o.clone();
                o.to_s = self.text(&o.to_s).into_owned();
                for (_, f) in o.fields.iter_mut() {
                    *f = self.value_in(f);
                }
                Value::Object(o)
            }
            Value::Null | Value::Bool(_) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(secrets: &[&str]) -> Redactor {
        let mut r = Redactor::default();
        for s in secrets {
            r.add(s);
        }
        r
    }

    #[test]
    fn text_replaces_every_occurrence_longest_first() {
        let r = redactor(&["hunter2", "user hunter2 end"]);
        assert_eq!(r.text("a hunter2 b hunter2"), "a [redacted] b [redacted]");
        assert_eq!(r.text("x user hunter2 end y"), "x [redacted] y");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        // eyaml chomps a plaintext's line break: the chomped form is hidden too.
        let r = redactor(&["s3cret\n"]);
        assert_eq!(r.text("is s3cret."), "is [redacted].");
    }

    #[test]
    fn quoted_forms_are_hidden_too() {
        let r = redactor(&["pa\"ss\nword"]);
        assert_eq!(r.text(r#"value: "pa\"ss\nword""#), r#"value: "[redacted]""#);
    }

    #[test]
    fn values_keys_and_numbers() {
        let r = redactor(&["hunter2", "4242"]);
        let v = hiera_formats::yaml::load(
            "{a: 'pw=hunter2', hunter2: [1, 4242, x], s: 4242x, n: ~, t: true}",
        )
        .unwrap();
        let want =
            hiera_formats::yaml::load("{a: 'pw=[redacted]', '[redacted]': [1, '[redacted]', x], s: '[redacted]x', n: ~, t: true}")
                .unwrap();
        assert_eq!(r.value(&v), want);
        let nothing = Redactor::default();
        assert_eq!(nothing.value(&v), v);
        assert_eq!(nothing.text("hunter2"), "hunter2");
    }
}
