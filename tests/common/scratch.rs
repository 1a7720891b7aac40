//! Scratch trees for the integration tests that run the binary on files they write.

use std::path::PathBuf;

/// `<temp dir>/hiera-lookup-<suite>-<pid>-<name>`, emptied, holding `files` (path, text).
pub fn tree(suite: &str, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hiera-lookup-{suite}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}
