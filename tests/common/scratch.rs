//! Scratch trees for the integration tests that run the binary on files they write.

use std::path::{Path, PathBuf};

/// A scratch directory, removed with everything in it when the test is done with it.
pub struct Tree(PathBuf);

impl std::ops::Deref for Tree {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Tree {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `<temp dir>/hiera-lookup-<suite>-<pid>-<name>`, emptied, holding `files` (path, text).
pub fn tree(suite: &str, name: &str, files: &[(&str, &str)]) -> Tree {
    let dir = std::env::temp_dir().join(format!(
        "hiera-lookup-{suite}-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    Tree(dir)
}
