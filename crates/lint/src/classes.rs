//! Rule group 3: data keys and the classes they feed (and the manifests Puppet cannot read,
//! `manifest-not-utf8`). `CLASS::PARAM` keys whose class exists
//! but has no such parameter (with the closest parameter as a suggestion), keys in the
//! namespace of a module with code whose class does not exist, module data keys outside the
//! module's namespace (Puppet 8 warns and ignores them), and keys nothing uses at all
//! (`unused-key`). Keys the code or the data looks up explicitly are never flagged. The
//! values' types are `types.rs`'s.

use super::repo::{DataFile, Repo};
use super::schema::Schema;
use super::{Fix, Region, Sink, TextEdit};
use hiera_formats::lines::LineIndex;
use hiera_formats::DataFormat;
use hiera_value::value::Value;
use std::collections::HashSet;
use std::path::Path;

/// What else uses data keys, besides class parameters and the code's literal lookups.
pub(crate) struct Uses<'a> {
    /// The keys data interpolations look up (root keys), in data and hiera.yaml.
    pub data_refs: &'a HashSet<String>,
    /// Whether a file is the repo's own (not vendored, not excluded by the settings).
    pub own: &'a dyn Fn(&Path) -> bool,
}

pub(crate) fn check(repo: &Repo, schema: &Schema, uses: &Uses, sink: &mut Sink) {
    for m in schema.files() {
        if let Some((at, byte)) = m.invalid_utf8 {
            sink.add(
                &m.file,
                at.line_col(),
                "manifest-not-utf8",
                format!(
                    "byte 0x{byte:02X} is not UTF-8: Puppet refuses to parse the file (\"invalid byte sequence in UTF-8\"), so every node using its classes fails; save it as UTF-8"
                ),
            );
        }
    }
    let modules_with_code: HashSet<&str> = schema.modules_with_code().collect();
    let unused = Unused::new(repo, schema, uses);
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
                        f.key_region(key),
                        "module-key-outside-namespace",
                        format!(
                            "key '{key}' is in the data of module '{m}' but outside its namespace: Puppet warns that module data must use keys qualified with the name of the module, and ignores it"
                        ),
                    );
                    continue;
                }
            }
            // Hiera 5 never finds a key written with `::` before it (`leading-colons`; Psych
            // reads a plain `::a` as the Symbol `:a`).
            if key.starts_with(':') {
                continue;
            }
            if schema.is_looked_up(key) || uses.data_refs.contains(key) {
                continue;
            }
            let Some((class, param)) = key.rsplit_once("::") else {
                unused.check(f, key, sink);
                continue;
            };
            if let Some(c) = schema.class(class) {
                if c.param(param).is_none() {
                    let names = c.params.iter().map(|p| p.name.as_str());
                    let suggestion = closest(param, names).map(|s| format!("{class}::{s}"));
                    let hint = match &suggestion {
                        Some(s) => format!("; did you mean '{s}'?"),
                        None if c.params.is_empty() => " (it has no parameters)".to_string(),
                        None => String::new(),
                    };
                    let region = f.key_region(key);
                    sink.add_fixed(
                        &f.path,
                        region,
                        "unknown-class-parameter",
                        format!(
                            "class '{class}' ({}:{}) has no parameter '{param}', so nothing looks up '{key}'{hint}",
                            sink.display(&c.file),
                            c.span.start.line
                        ),
                        suggestion.and_then(|s| rename_fix(f, region, &s)),
                    );
                }
                continue;
            }
            let module_name = key.split("::").next().unwrap_or("");
            if modules_with_code.contains(module_name) {
                let in_module: Vec<&str> = schema
                    .classes()
                    .map(|c| c.name.as_str())
                    .filter(|c| *c == module_name || c.starts_with(&format!("{module_name}::")))
                    .collect();
                let suggestion =
                    closest(class, in_module.iter().copied()).map(|s| format!("{s}::{param}"));
                let hint = suggestion
                    .as_ref()
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default();
                let region = f.key_region(key);
                sink.add_fixed(
                    &f.path,
                    region,
                    "unknown-class",
                    format!(
                        "module '{module_name}' defines no class '{class}', so nothing looks up '{key}'{hint}"
                    ),
                    suggestion.and_then(|s| rename_fix(f, region, &s)),
                );
                continue;
            }
            unused.check(f, key, sink);
        }
    }
}

/// `unused-key`: what is left once class parameters, lookups and interpolations are ruled
/// out, and `unknown-class-parameter`/`unknown-class` have not already said it.
struct Unused<'a> {
    /// Off when the repo's own code defines no class: the code that reads the data is
    /// elsewhere, and every key would be reported.
    on: bool,
    /// The first name segment of every class the repo's own code defines.
    own_namespaces: HashSet<&'a str>,
    /// Keys named by some `lookup_options` (patterns excluded).
    options: HashSet<&'a str>,
    /// The literal prefixes of lookups of keys built at run time (`lookup("x::${y}")`).
    prefixes: Vec<&'a str>,
}

impl<'a> Unused<'a> {
    fn new(repo: &'a Repo, schema: &'a Schema, uses: &Uses) -> Unused<'a> {
        let own_namespaces: HashSet<&str> = schema
            .files()
            .iter()
            .filter(|m| (uses.own)(&m.file))
            .flat_map(|m| m.classes.iter())
            .map(|c| c.name.split("::").next().unwrap_or(""))
            .collect();
        let mut options = HashSet::new();
        for f in &repo.files {
            if let Some(Value::Hash(lo)) = f.data.get(&Value::str("lookup_options")) {
                options.extend(
                    lo.keys()
                        .filter_map(Value::as_str)
                        .filter(|k| !k.starts_with('^')),
                );
            }
        }
        let prefixes = schema
            .dynamic_lookups()
            .map(|d| d.prefix.as_str())
            .filter(|p| !p.is_empty())
            .collect();
        Unused {
            on: !own_namespaces.is_empty(),
            own_namespaces,
            options,
            prefixes,
        }
    }

    fn check(&self, f: &super::repo::DataFile, key: &str, sink: &mut Sink) {
        if !self.on || self.options.contains(key) {
            return;
        }
        if self.prefixes.iter().any(|p| key.starts_with(p)) {
            return;
        }
        let what = match key.split_once("::") {
            Some((ns, _)) if !self.own_namespaces.contains(ns) => return,
            Some((ns, _)) => format!(
                "no class parameter of the repo's '{ns}' classes is '{key}', and no lookup() in the manifests, interpolation or lookup_options uses it"
            ),
            None => format!(
                "'{key}' is not a class parameter (it has no namespace), and no lookup() in the manifests, interpolation or lookup_options uses it"
            ),
        };
        sink.add(
            &f.path,
            f.key_region(key),
            "unused-key",
            format!("{what}: nothing reads this value"),
        );
    }
}

/// The fix renaming the top-level key written at `region` of `f` to `new`: the key's text
/// replaced, in the quotes it is written in (none unless the format needs them). `None`
/// when the reader does not say where the key's text ends.
fn rename_fix(f: &DataFile, region: Region, new: &str) -> Option<Fix> {
    if region.end == region.start {
        return None;
    }
    let lines = LineIndex::new(f.text.as_str());
    let written = f
        .text
        .get(lines.offset(region.start)..lines.offset(region.end))?;
    let new_text = match written.chars().next() {
        Some('\'') => format!("'{}'", new.replace('\'', "''")),
        Some('"') => DataFormat::Json.written_key(new),
        _ => f.format.written_key(new),
    };
    Some(Fix {
        title: format!("Rename to '{new}'"),
        edits: vec![TextEdit { region, new_text }],
    })
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
