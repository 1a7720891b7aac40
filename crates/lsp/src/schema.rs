//! Class parameters as the schema of Hiera data: which parameter a key feeds, where it is
//! declared, where the manifests look keys up.
//!
//! Everything the server asks goes through the [`Schema`] trait. Today's implementation,
//! [`Provisional`], is built from what `hiera_lint::editor` offers (class names, parameter
//! names, the line of `class`) plus a text scan of the manifests for a parameter's `$name`
//! and for `lookup('key')` calls; the Schema API of `hiera_lint::schema` (types, defaults,
//! exact positions) replaces it behind the same trait.

use std::path::{Path, PathBuf};

/// A class parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The class (`ntp`).
    pub class: String,
    /// The parameter, without `$` (`servers`).
    pub name: String,
    /// Its Puppet type as written, when known.
    pub ty: Option<String>,
    /// Its default as written, when known.
    pub default: Option<String>,
    /// The manifest.
    pub file: PathBuf,
    /// 1-based line and character column of `$name` (or of `class` when not found).
    pub pos: (usize, usize),
}

impl Param {
    /// The Hiera key that feeds it (`ntp::servers`).
    pub fn key(&self) -> String {
        format!("{}::{}", self.class, self.name)
    }
}

/// A literal key looked up by the code (`lookup('k')`, `hiera('k')`).
#[derive(Debug, Clone, PartialEq)]
pub struct LookupCall {
    /// The key as written.
    pub key: String,
    /// The manifest.
    pub file: PathBuf,
    /// 1-based line and character column of the key's string.
    pub pos: (usize, usize),
    /// Length of the quoted key in characters (quotes included).
    pub len: usize,
}

/// What the server asks about the code.
pub trait Schema {
    /// Every class parameter on the modulepath.
    fn params(&self) -> &[Param];
    /// The parameter `key` feeds.
    fn param(&self, key: &str) -> Option<&Param> {
        self.params().iter().find(|p| p.key() == key)
    }
    /// Every literal lookup of `key` in the manifests.
    fn lookups(&self, key: &str) -> Vec<&LookupCall>;
    /// The parameter whose declaration is at 1-based `line` of `file`, with the columns of its
    /// `$name` (for hovers and references in a manifest).
    fn param_at(&self, file: &Path, line: usize) -> Option<&Param> {
        self.params()
            .iter()
            .find(|p| p.file == file && p.pos.0 == line)
    }
}

/// The schema from `hiera_lint::editor` and a scan of the manifests' text.
#[derive(Debug, Default)]
pub struct Provisional {
    params: Vec<Param>,
    lookups: Vec<LookupCall>,
}

/// Manifests scanned at most (a repo with more is read in part).
const MAX_MANIFESTS: usize = 20_000;

impl Provisional {
    /// From the classes lint found and the manifests under `dirs` (`manifests/` of the
    /// environment and of each module).
    pub fn new(classes: &[hiera_lint::editor::ClassInfo], dirs: &[PathBuf]) -> Provisional {
        let mut out = Provisional::default();
        let mut texts: std::collections::HashMap<PathBuf, String> = Default::default();
        for c in classes {
            let text = texts
                .entry(c.file.clone())
                .or_insert_with(|| hiera_value::limits::read_text(&c.file).unwrap_or_default());
            for name in &c.params {
                let (pos, ty, default) = declaration(text, c.line, name);
                out.params.push(Param {
                    class: c.name.clone(),
                    name: name.clone(),
                    ty,
                    default,
                    file: c.file.clone(),
                    pos: pos.unwrap_or((c.line, 1)),
                });
            }
        }
        let mut files = Vec::new();
        for d in dirs {
            pp_files(d, &mut files, 0);
        }
        files.sort();
        files.truncate(MAX_MANIFESTS);
        for f in files {
            let text = match texts.get(&f) {
                Some(t) => t.clone(),
                None => hiera_value::limits::read_text(&f).unwrap_or_default(),
            };
            scan_lookups(&f, &text, &mut out.lookups);
        }
        out
    }
}

impl Schema for Provisional {
    fn params(&self) -> &[Param] {
        &self.params
    }
    fn lookups(&self, key: &str) -> Vec<&LookupCall> {
        let root = key.split('.').next().unwrap_or(key);
        self.lookups
            .iter()
            .filter(|l| l.key == key || l.key.split('.').next() == Some(root))
            .collect()
    }
}

/// Where `$name` is declared after line `from` (1-based line and column), with the type
/// written before it and the default after `=` on the same line.
#[allow(clippy::type_complexity)]
fn declaration(
    text: &str,
    from: usize,
    name: &str,
) -> (Option<(usize, usize)>, Option<String>, Option<String>) {
    let needle = format!("${name}");
    for (i, line) in text
        .lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .take(400)
    {
        let mut start = 0;
        while let Some(at) = line[start..].find(&needle) {
            let at = start + at;
            let end = at + needle.len();
            let next = line[end..].chars().next();
            if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                let before = line[..at].trim();
                let before = before.strip_prefix("class").map_or(before, |_| "");
                let before = before.rsplit(['(', ',']).next().unwrap_or("").trim();
                let ty = (!before.is_empty()).then(|| before.to_string());
                let after = line[end..].trim_start();
                let default = after.strip_prefix('=').map(|d| {
                    d.trim()
                        .trim_end_matches(',')
                        .trim_end_matches(')')
                        .trim()
                        .to_string()
                });
                let col = line[..at].chars().count() + 1;
                return (Some((i + 1, col)), ty, default.filter(|d| !d.is_empty()));
            }
            start = end;
        }
    }
    (None, None, None)
}

const LOOKUP_FUNCTIONS: &[&str] = &[
    "lookup",
    "hiera",
    "hiera_array",
    "hiera_hash",
    "hiera_include",
];

/// Every `f('key'` / `f("key"` of a lookup function in a manifest's text (comments skipped).
fn scan_lookups(file: &Path, text: &str, out: &mut Vec<LookupCall>) {
    for (i, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        for f in LOOKUP_FUNCTIONS {
            let mut start = 0;
            while let Some(at) = code[start..].find(f) {
                let at = start + at;
                start = at + f.len();
                let before_ok = code[..at]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
                let rest = &code[at + f.len()..];
                let Some(args) = rest.trim_start().strip_prefix('(') else {
                    continue;
                };
                if !before_ok {
                    continue;
                }
                let args_trim = args.trim_start();
                let Some(q) = args_trim.chars().next().filter(|c| *c == '\'' || *c == '"') else {
                    continue;
                };
                let Some(end) = args_trim[1..].find(q) else {
                    continue;
                };
                let key = &args_trim[1..1 + end];
                if key.is_empty() || key.contains("${") {
                    continue;
                }
                let byte = code.len() - args_trim.len();
                out.push(LookupCall {
                    key: key.to_string(),
                    file: file.to_path_buf(),
                    pos: (i + 1, code[..byte].chars().count() + 1),
                    len: key.chars().count() + 2,
                });
            }
        }
    }
}

fn pp_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 16 || out.len() >= MAX_MANIFESTS {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            pp_files(&p, out, depth + 1);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "pp") {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_and_lookups_by_text() {
        let text = "class ntp (\n  Array[String] $servers = ['a'],\n  Boolean $iburst,\n) {\n  $x = lookup('ntp::extra', Array, 'unique', [])\n  # lookup('commented')\n  $y = hiera(\"legacy::key\")\n}\n";
        assert_eq!(
            declaration(text, 1, "servers"),
            (
                Some((2, 17)),
                Some("Array[String]".into()),
                Some("['a']".into())
            )
        );
        assert_eq!(
            declaration(text, 1, "iburst"),
            (Some((3, 11)), Some("Boolean".into()), None)
        );
        let mut calls = Vec::new();
        scan_lookups(Path::new("init.pp"), text, &mut calls);
        let keys: Vec<_> = calls.iter().map(|c| (c.key.as_str(), c.pos)).collect();
        assert_eq!(keys, [("ntp::extra", (5, 15)), ("legacy::key", (7, 14))]);
    }
}
