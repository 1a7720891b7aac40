//! The data files a node does not reach: every file under the datadirs of its hierarchy
//! entries that its interpolated locations do not name.

use crate::engine::reach::Reached;
use hiera_formats::format::{DataFormat, EYAML_LOOKUP_KEY};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// At most this many files are looked at per report, so that a datadir of `/` stays cheap.
const MAX_FILES: usize = 20_000;
/// Directory depth below a datadir.
const MAX_DEPTH: usize = 12;

/// Files under the datadirs of `reachable` that no reached location names, each with the
/// first entry whose datadir holds it and whose backend reads its format.
pub(super) fn unreached_files<'r>(
    reachable: &'r [Reached],
    reached: &HashSet<&str>,
    warnings: &mut Vec<String>,
) -> Vec<(&'r Reached, String)> {
    let mut out = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut roots: Vec<(PathBuf, &Reached)> = Vec::new();
    for r in reachable {
        if r.location.as_ref().is_none_or(|l| l.uri) {
            continue;
        }
        let dir = static_prefix(&r.datadir);
        if !roots
            .iter()
            .any(|(d, x)| *d == dir && x.function == r.function && x.layer == r.layer)
        {
            roots.push((dir, r));
        }
    }
    let mut budget = MAX_FILES;
    for (dir, r) in roots {
        let mut files = Vec::new();
        walk(&dir, 0, &mut files, &mut budget);
        files.sort();
        for f in files {
            let Some(format) = DataFormat::of_path(&f) else {
                continue;
            };
            if Some(format) != DataFormat::of_function(&r.function) {
                continue;
            }
            // `.eyaml` files hold encrypted values only eyaml_lookup_key reads.
            if f.extension().is_some_and(|e| e == "eyaml") && r.function != EYAML_LOOKUP_KEY {
                continue;
            }
            let s = f.display().to_string();
            if reached.contains(s.as_str()) || !seen.insert(f.clone()) {
                continue;
            }
            out.push((r, s));
        }
    }
    if budget == 0 {
        warnings.push(format!(
            "more than {MAX_FILES} files under the datadirs: unreached definitions are incomplete"
        ));
    }
    out
}

/// The directory part of a datadir before its first interpolation.
fn static_prefix(datadir: &str) -> PathBuf {
    match datadir.find("%{") {
        None => PathBuf::from(datadir),
        Some(i) => {
            let head = &datadir[..i];
            match head.rfind('/') {
                Some(j) => PathBuf::from(&head[..j.max(1)]),
                None => PathBuf::from("."),
            }
        }
    }
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, budget: &mut usize) {
    if depth > MAX_DEPTH || *budget == 0 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        // Symbolic links to directories are not followed (no loops).
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            walk(&p, depth + 1, out, budget);
        } else if ft.is_file() || ft.is_symlink() && p.is_file() {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_prefix_stops_at_interpolation() {
        assert_eq!(static_prefix("/a/b/data"), PathBuf::from("/a/b/data"));
        assert_eq!(
            static_prefix("/code/environments/%{environment}/data"),
            PathBuf::from("/code/environments")
        );
        assert_eq!(static_prefix("/%{x}"), PathBuf::from("/"));
    }
}
