//! Rule group 3: data keys that no class parameter matches. `CLASS::PARAM` keys whose class
//! exists but has no such parameter (with the closest parameter as a suggestion), keys in the
//! namespace of a module with code whose class does not exist, and module data keys outside
//! the module's namespace (Puppet 8 warns and ignores them). Keys the code or the data looks
//! up explicitly are never flagged.

use super::manifests::Code;
use super::repo::Repo;
use super::Sink;
use std::collections::HashSet;

pub(crate) fn check(repo: &Repo, code: &Code, data_refs: &HashSet<String>, sink: &mut Sink) {
    for f in &repo.files {
        let module = f.module(repo);
        for k in f.data.keys() {
            let Some(key) = k.as_str() else { continue };
            if key == "lookup_options" {
                continue;
            }
            if let Some(m) = module {
                if !key.starts_with(&format!("{m}::")) {
                    sink.add(
                        &f.path,
                        f.key_pos(key),
                        "module-key-outside-namespace",
                        format!(
                            "key '{key}' is in the data of module '{m}' but outside its namespace: Puppet warns that module data must use keys qualified with the name of the module, and ignores it"
                        ),
                    );
                    continue;
                }
            }
            let key = key.trim_start_matches("::");
            if code.lookups.contains(key) || data_refs.contains(key) {
                continue;
            }
            let Some((class, param)) = key.rsplit_once("::") else {
                continue;
            };
            if let Some(c) = code.classes.get(class) {
                if !c.params.iter().any(|p| p == param) {
                    let hint = closest(param, c.params.iter().map(String::as_str))
                        .map(|s| format!("; did you mean '{class}::{s}'?"))
                        .unwrap_or_else(|| {
                            if c.params.is_empty() {
                                " (it has no parameters)".to_string()
                            } else {
                                String::new()
                            }
                        });
                    sink.add(
                        &f.path,
                        f.key_pos(key),
                        "unknown-class-parameter",
                        format!(
                            "class '{class}' ({}:{}) has no parameter '{param}', so nothing looks up '{key}'{hint}",
                            sink.display(&c.file),
                            c.line
                        ),
                    );
                }
                continue;
            }
            let module_name = key.split("::").next().unwrap_or("");
            if code.modules_with_code.contains(module_name) {
                let in_module: Vec<&str> = code
                    .classes
                    .keys()
                    .filter(|c| *c == module_name || c.starts_with(&format!("{module_name}::")))
                    .map(String::as_str)
                    .collect();
                let hint = closest(class, in_module.iter().copied())
                    .map(|s| format!("; did you mean '{s}::{param}'?"))
                    .unwrap_or_default();
                sink.add(
                    &f.path,
                    f.key_pos(key),
                    "unknown-class",
                    format!(
                        "module '{module_name}' defines no class '{class}', so nothing looks up '{key}'{hint}"
                    ),
                );
            }
        }
    }
}

/// The candidate closest to `word` by edit distance, if close enough to be a typo.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .map(|c| (levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

pub(crate) fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(levenshtein("user", "users"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(
            closest("user", ["users", "packages"].into_iter()),
            Some("users")
        );
        assert_eq!(closest("zzzzzz", ["users", "packages"].into_iter()), None);
    }
}
