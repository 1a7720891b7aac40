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

/// The non-comment, non-blank lines of a file.
fn entries(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// A count as the documents write it: `5,242`.
fn figure(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What tests/conformance/ holds: (queries recorded, of them in the `independent` and `p8-*`
/// cases written without reading the engine).
fn recorded_queries() -> (usize, usize) {
    let conformance = root().join("tests/conformance");
    let (mut total, mut independent) = (0, 0);
    for suite in std::fs::read_dir(&conformance).unwrap().flatten() {
        let Ok(cases) = std::fs::read_dir(suite.path()) else {
            continue;
        };
        for case in cases.flatten() {
            let queries = case.path().join("queries");
            if !queries.is_file() {
                continue;
            }
            let n = entries(&queries).len();
            total += n;
            let name = case.file_name().to_string_lossy().into_owned();
            if name.starts_with("independent") || name.starts_with("p8-") {
                independent += n;
            }
        }
    }
    (total, independent)
}

/// README's and CONTRIBUTING's figures about the conformance suite are the tree's: the queries
/// recorded, how many match, the known differences (known-differences.txt), the recordings
/// Debian's deep_merge 1.1.1 would answer otherwise (deep-merge-1.1.1.txt), the share written
/// by testers who never read the engine. Recording a case or fixing a difference means
/// updating the documents in the same change.
#[test]
fn documented_figures_are_the_trees() {
    let conformance = root().join("tests/conformance");
    let (total, independent) = recorded_queries();
    let known = entries(&conformance.join("known-differences.txt")).len();
    let deep_merge = entries(&conformance.join("deep-merge-1.1.1.txt")).len();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    // Sentences are wrapped anywhere: compare with single spaces.
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let share = match independent * 6 / total {
        0..=1 => "About a quarter",
        2 => "About a third",
        3 => "About half",
        _ => "About two thirds",
    };
    for claim in [
        format!("{} queries in case directories recorded", figure(total)),
        format!(
            "{} match; the {known} others are listed",
            figure(total - known)
        ),
        format!("deep-merge-1.1.1.txt` lists the {deep_merge} where"),
        format!("{share} were written by separate testers"),
    ] {
        assert!(
            readme.contains(&claim),
            "README.md should say \"{claim}\" (the tree: {total} queries recorded, {known} known \
             differences, {deep_merge} deep_merge 1.1.1 answers, {independent} queries by \
             independent testers)"
        );
    }
    // Any count of queries or differences CONTRIBUTING or ARCHITECTURE states must be one of
    // those.
    let allowed = [figure(total), figure(total - known), known.to_string()];
    for doc in ["CONTRIBUTING.md", "ARCHITECTURE.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in words.windows(2) {
            let number = w[0].trim_matches(|c: char| !c.is_ascii_digit());
            let counted = ["queries", "differences", "recorded"]
                .iter()
                .any(|k| w[1].starts_with(k));
            if counted && !number.is_empty() && w[0].starts_with(|c: char| c.is_ascii_digit()) {
                assert!(
                    allowed.contains(&number.to_string()),
                    "{doc} says \"{} {}\": the tree has {total} queries recorded, {known} known differences",
                    w[0],
                    w[1]
                );
            }
        }
    }
}
