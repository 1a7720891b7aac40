//! The data files a node does not reach: every file under the datadirs of its hierarchy
//! entries that its interpolated locations do not name.

use crate::engine::reach::Reached;
use hiera_formats::format::{DataFormat, EYAML_LOOKUP_KEY};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// At most this many files are looked at per report, so that a datadir of `/` stays cheap.
const MAX_FILES: usize = 20_000;
/// Directory depth below a datadir.
const MAX_DEPTH: usize = 12;

/// Files under the datadirs of `reachable` that no reached location names, each with the
/// first entry whose datadir holds it and whose backend reads its format.
pub(super) fn unreached_files<'r>(
    reachable: &'r [Reached],
    reached: &HashSet<&str>,
    listings: &mut Listings,
    warnings: &mut Vec<String>,
) -> Vec<(&'r Reached, Arc<str>)> {
    let mut out = Vec::new();
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
    let lists: Vec<(Arc<Vec<Listed>>, &Reached)> = roots
        .into_iter()
        .map(|(dir, r)| (listing(listings, &dir, &mut budget), r))
        .collect();
    let mut seen: HashSet<&Path> = HashSet::new();
    for (files, r) in &lists {
        let read = DataFormat::of_function(&r.function);
        for f in files.iter() {
            if f.format.is_none() || f.format != read {
                continue;
            }
            // `.eyaml` files hold encrypted values only eyaml_lookup_key reads.
            if f.eyaml && r.function != EYAML_LOOKUP_KEY {
                continue;
            }
            if reached.contains(&*f.shown) || !seen.insert(&f.path) {
                continue;
            }
            out.push((*r, f.shown.clone()));
        }
    }
    if budget == 0 {
        warnings.push(format!(
            "more than {MAX_FILES} files under the datadirs: unreached definitions are incomplete"
        ));
    }
    out
}

/// The files under each directory walked, sorted, with the entries the walk looked at: a
/// [`Reporter`](super::Reporter) walks each datadir once for all its reports (a key across
/// thousands of nodes), not once per node.
pub(super) type Listings = std::collections::HashMap<PathBuf, (Arc<Vec<Listed>>, usize)>;

/// A file of a listing, with what every report asks of it.
pub(super) struct Listed {
    path: PathBuf,
    /// Its name as reports show it.
    shown: Arc<str>,
    /// The data format its extension names.
    format: Option<DataFormat>,
    /// Whether it is an `.eyaml` file.
    eyaml: bool,
}

/// The files under `dir` ([`walk`]), from `listings` when walked already and the walk fits
/// in what is left of `budget`.
fn listing(listings: &mut Listings, dir: &Path, budget: &mut usize) -> Arc<Vec<Listed>> {
    if let Some((files, looked_at)) = listings.get(dir) {
        if *looked_at <= *budget {
            *budget -= looked_at;
            return files.clone();
        }
    }
    let before = *budget;
    let mut files = Vec::new();
    walk(dir, 0, &mut files, budget);
    files.sort();
    let files: Arc<Vec<Listed>> = Arc::new(
        files
            .into_iter()
            .map(|path| Listed {
                shown: Arc::from(path.display().to_string()),
                format: DataFormat::of_path(&path),
                eyaml: path.extension().is_some_and(|e| e == "eyaml"),
                path,
            })
            .collect(),
    );
    // A walk the budget cut short is not the directory's listing.
    if *budget > 0 {
        listings.insert(dir.to_path_buf(), (files.clone(), before - *budget));
    }
    files
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

    #[test]
    fn a_listing_is_walked_once_and_counted_against_each_budget() {
        let d = std::env::temp_dir().join(format!("hl-scan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for f in ["b.yaml", "a.yaml", "sub/c.json"] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x: 1\n").unwrap();
        }
        let names = |l: &[Listed]| -> Vec<String> {
            l.iter()
                .map(|f| f.path.strip_prefix(&d).unwrap().display().to_string())
                .collect()
        };
        let mut listings = Listings::new();
        let mut budget = 100;
        let first = listing(&mut listings, &d, &mut budget);
        assert_eq!(names(&first), ["a.yaml", "b.yaml", "sub/c.json"]);
        let looked_at = 100 - budget;
        assert_eq!(looked_at, 4, "three files and a directory");
        // Kept: the same listing, counted again.
        std::fs::write(d.join("new.yaml"), "x: 1\n").unwrap();
        let mut budget = 100;
        let again = listing(&mut listings, &d, &mut budget);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(100 - budget, looked_at);
        // A budget smaller than the kept walk walks again (and is cut short, so not kept).
        let mut budget = 2;
        let cut = listing(&mut listings, &d, &mut budget);
        assert_eq!(budget, 0);
        assert!(cut.len() < 3);
        assert!(Arc::ptr_eq(&listings[&d].0, &first));
        // A new reporter lists again.
        let mut budget = 100;
        let fresh = listing(&mut Listings::new(), &d, &mut budget);
        assert_eq!(fresh.len(), 4);
        assert!(fresh
            .iter()
            .any(|f| f.format == Some(DataFormat::Json) && !f.eyaml));
        let _ = std::fs::remove_dir_all(&d);
    }
}
