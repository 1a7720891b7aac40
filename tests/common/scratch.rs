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

/// `command` with its home and XDG base directories in `dir/home` (created): what a browser or
/// an editor writes for itself (a profile, crash reports, caches, logs, dconf) lands in the
/// test's scratch tree, never in the `$HOME` of whoever runs the tests. Returns that home.
pub fn own_home(command: &mut std::process::Command, dir: &Path) -> PathBuf {
    let home = dir.join("home");
    let xdg = [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
    ];
    for (var, sub) in xdg {
        std::fs::create_dir_all(home.join(sub)).unwrap();
        command.env(var, home.join(sub));
    }
    // A runtime directory must be private to its user.
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    command.env("HOME", &home).env("XDG_RUNTIME_DIR", &runtime);
    home
}

/// The files under `dir`, relative to it, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}
