//! The repository's own layout and documents, checked against what the tree holds.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir`, skipping build output and version control.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() => files(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

/// A `src/` directory holds Rust source only: data, documents and assets a crate embeds live
/// beside it (`crates/serve/assets/`), where a reader of the code does not trip over them.
#[test]
fn only_rust_under_src() {
    let mut all = Vec::new();
    files(&root(), &mut all);
    let stray: Vec<_> = all
        .iter()
        .filter_map(|p| p.strip_prefix(root()).ok())
        .filter(|p| p.components().any(|c| c.as_os_str() == "src"))
        .filter(|p| p.extension().is_none_or(|e| e != "rs"))
        .collect();
    assert!(stray.is_empty(), "non-Rust files under a src/: {stray:?}");
}
