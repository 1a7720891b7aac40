//! Two values compared by path: `ntp::servers[1]: "a" → "b"`, `users.alice.uid: 1 → 2`,
//! `+ packages[3]: "vim"`. Hashes are compared key by key, arrays element by element when
//! their lengths agree, else by their longest common subsequence (an insertion reads as one
//! `+`, not as every later element changed).

use hiera_value::value::Value;

/// One difference inside a value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    Changed {
        path: String,
        before: Value,
        after: Value,
    },
    Added {
        path: String,
        value: Value,
    },
    Removed {
        path: String,
        value: Value,
    },
}

impl Edit {
    pub(crate) fn path(&self) -> &str {
        match self {
            Edit::Changed { path, .. } | Edit::Added { path, .. } | Edit::Removed { path, .. } => {
                path
            }
        }
    }

    /// One line: `path: before → after`, `+ path: value`, `- path: value`; a change that
    /// redaction made invisible (a secret decrypted from eyaml changed) is `path: changed
    /// (encrypted value)`.
    pub(crate) fn line(&self, key: &str) -> String {
        let at = |p: &str| format!("{key}{p}");
        match self {
            Edit::Changed { path, .. } if self.redacted_away() => {
                format!("{}: changed (encrypted value)", at(path))
            }
            Edit::Changed { path, .. } if self.opaque_changed() => {
                format!("{}: encrypted value changed", at(path))
            }
            Edit::Changed {
                path,
                before,
                after,
            } => format!("{}: {} → {}", at(path), compact(before), compact(after)),
            Edit::Added { path, value } => format!("+ {}: {}", at(path), compact(value)),
            Edit::Removed { path, value } => format!("- {}: {}", at(path), compact(value)),
        }
    }
}

impl Edit {
    /// The edit as `r` prints it (path and values).
    pub(crate) fn redact(&mut self, r: &hiera_engine::redact::Redactor) {
        match self {
            Edit::Changed {
                path,
                before,
                after,
            } => {
                *path = r.text(path).into_owned();
                *before = r.value(before);
                *after = r.value(after);
            }
            Edit::Added { path, value } | Edit::Removed { path, value } => {
                *path = r.text(path).into_owned();
                *value = r.value(value);
            }
        }
    }

    /// A change whose two sides print the same: they differed only in what was redacted.
    fn redacted_away(&self) -> bool {
        matches!(self, Edit::Changed { before, after, .. } if before == after)
    }

    /// A change of an opaque secret (no private key): the stand-ins of two ciphertexts
    /// differ (the only difference when the rest of the string is the same).
    pub(crate) fn opaque_changed(&self) -> bool {
        use hiera_engine::backend::eyaml::{contains_opaque, opaque_markers};
        let Edit::Changed { before, after, .. } = self else {
            return false;
        };
        if !contains_opaque(before) || !contains_opaque(after) {
            return false;
        }
        match (before.as_str(), after.as_str()) {
            // The same text around the secrets: only a ciphertext changed.
            (Some(a), Some(b)) => {
                let strip = |s: &str| {
                    let mut s = s.to_string();
                    for m in opaque_markers(&s.clone()) {
                        s = s.replacen(m, "ENC[…]", 1);
                    }
                    s
                };
                strip(a) == strip(b)
            }
            _ => false,
        }
    }
}

/// Arrays longer than this (on either side) are not aligned by LCS; they are compared
/// element by element (an insertion then shows every later element changed).
const MAX_LCS: usize = 512;

/// At most this many edits are listed for one value; the rest are counted.
pub(crate) const MAX_EDITS: usize = 50;

/// The edits that turn `before` into `after` (empty when equal).
pub(crate) fn diff(before: &Value, after: &Value) -> Vec<Edit> {
    let mut out = Vec::new();
    walk(before, after, &mut String::new(), &mut out);
    out
}

fn walk(a: &Value, b: &Value, path: &mut String, out: &mut Vec<Edit>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Value::Hash(x), Value::Hash(y)) => {
            for (k, va) in x.iter() {
                let len = path.len();
                push_key(path, k);
                match y.get(k) {
                    Some(vb) => walk(va, vb, path, out),
                    None => out.push(Edit::Removed {
                        path: path.clone(),
                        value: va.clone(),
                    }),
                }
                path.truncate(len);
            }
            for (k, vb) in y.iter() {
                if !x.contains_key(k) {
                    let len = path.len();
                    push_key(path, k);
                    out.push(Edit::Added {
                        path: path.clone(),
                        value: vb.clone(),
                    });
                    path.truncate(len);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() == y.len() || x.len() > MAX_LCS || y.len() > MAX_LCS {
                for i in 0..x.len().max(y.len()) {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    match (x.get(i), y.get(i)) {
                        (Some(va), Some(vb)) => walk(va, vb, path, out),
                        (Some(va), None) => out.push(Edit::Removed {
                            path: path.clone(),
                            value: va.clone(),
                        }),
                        (None, Some(vb)) => out.push(Edit::Added {
                            path: path.clone(),
                            value: vb.clone(),
                        }),
                        (None, None) => {}
                    }
                    path.truncate(len);
                }
            } else {
                lcs_edits(x, y, path, out);
            }
        }
        _ => out.push(Edit::Changed {
            path: path.clone(),
            before: a.clone(),
            after: b.clone(),
        }),
    }
}

/// Aligns two arrays by their longest common subsequence: unmatched elements become
/// removals (at their index before) and additions (at their index after); a removal and an
/// addition at the same place are one change.
fn lcs_edits(x: &[Value], y: &[Value], path: &mut String, out: &mut Vec<Edit>) {
    let (n, m) = (x.len(), y.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[at(i, j)] = if x[i] == y[j] {
                t[at(i + 1, j + 1)] + 1
            } else {
                t[at(i + 1, j)].max(t[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut removed: Vec<usize> = Vec::new();
    let mut added: Vec<usize> = Vec::new();
    let flush = |removed: &mut Vec<usize>,
                 added: &mut Vec<usize>,
                 path: &mut String,
                 out: &mut Vec<Edit>| {
        let pairs = removed.len().min(added.len());
        for k in 0..removed.len().max(added.len()) {
            let len = path.len();
            if k < pairs {
                path.push_str(&format!("[{}]", added[k]));
                walk(&x[removed[k]], &y[added[k]], path, out);
            } else if k < removed.len() {
                path.push_str(&format!("[{}]", removed[k]));
                out.push(Edit::Removed {
                    path: path.clone(),
                    value: x[removed[k]].clone(),
                });
            } else {
                path.push_str(&format!("[{}]", added[k]));
                out.push(Edit::Added {
                    path: path.clone(),
                    value: y[added[k]].clone(),
                });
            }
            path.truncate(len);
        }
        removed.clear();
        added.clear();
    };
    while i < n || j < m {
        if i < n && j < m && x[i] == y[j] {
            flush(&mut removed, &mut added, path, out);
            i += 1;
            j += 1;
        } else if j < m && (i == n || t[at(i, j + 1)] >= t[at(i + 1, j)]) {
            added.push(j);
            j += 1;
        } else {
            removed.push(i);
            i += 1;
        }
    }
    flush(&mut removed, &mut added, path, out);
}

/// `.name`, or `."odd key"` for keys that are not plain words, or `[1]` for numbers.
fn push_key(path: &mut String, k: &Value) {
    match k {
        Value::String(s)
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':')) =>
        {
            path.push('.');
            path.push_str(s);
        }
        Value::String(s) => {
            path.push('.');
            path.push_str(
                &hiera_formats::render::to_json(&Value::str(s.as_str())).unwrap_or_default(),
            );
        }
        other => {
            path.push('[');
            path.push_str(&compact(other));
            path.push(']');
        }
    }
}

/// Longest rendering of one value in an edit line, in characters.
const MAX_SHOWN: usize = 120;

/// A value on one line, as JSON (Puppet's `undef` is `null`), cut at [`MAX_SHOWN`] characters.
pub(crate) fn compact(v: &Value) -> String {
    let s = hiera_formats::render::to_json(v).unwrap_or_else(|_| hiera_value::text::inspect(v));
    if s.chars().count() > MAX_SHOWN {
        let mut cut: String = s.chars().take(MAX_SHOWN - 1).collect();
        cut.push('…');
        cut
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(s: &str) -> Value {
        hiera_formats::yaml::load(s).unwrap()
    }

    fn lines(a: &str, b: &str) -> Vec<String> {
        diff(&y(a), &y(b)).iter().map(|e| e.line("k")).collect()
    }

    #[test]
    fn equal_values_have_no_edits() {
        assert!(lines("{a: [1, 2]}", "{a: [1, 2]}").is_empty());
    }

    #[test]
    fn array_element_changed_in_place() {
        assert_eq!(lines("[a, b, c]", "[a, x, c]"), ["k[1]: \"b\" → \"x\""]);
    }

    #[test]
    fn insertion_is_one_addition() {
        assert_eq!(lines("[a, b, c]", "[a, n, b, c]"), ["+ k[1]: \"n\""]);
        assert_eq!(lines("[a, b, c]", "[a, c]"), ["- k[1]: \"b\""]);
    }

    #[test]
    fn nested_hashes_by_path() {
        assert_eq!(
            lines(
                "{users: {alice: {uid: 1}, bob: {uid: 2}}}",
                "{users: {alice: {uid: 3}, carol: {uid: 4}}}"
            ),
            [
                "k.users.alice.uid: 1 → 3",
                "- k.users.bob: {\"uid\":2}",
                "+ k.users.carol: {\"uid\":4}"
            ]
        );
    }

    #[test]
    fn type_change_is_whole() {
        assert_eq!(lines("{a: 1}", "{a: [1]}"), ["k.a: 1 → [1]"]);
        assert_eq!(lines("x", "{a: 1}"), ["k: \"x\" → {\"a\":1}"]);
    }

    #[test]
    fn odd_keys_are_quoted() {
        assert_eq!(lines("{'a b': 1}", "{'a b': 2}"), ["k.\"a b\": 1 → 2"]);
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(500);
        let l = &lines("a", &long)[0];
        assert!(l.ends_with('…') && l.chars().count() < 200, "{l}");
    }
}
