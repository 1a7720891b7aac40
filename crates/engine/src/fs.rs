//! The one seam through which a lookup reads files: hiera.yaml of every layer,
//! environment.conf, module discovery, data files, existence checks, globs and eyaml keys.
//! [`RealFs`] is the disk (the default); `diff` reads a git revision through
//! `hiera_diff::git::GitFs` with the same engine, without a checkout.

use std::fmt::Debug;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A device, FIFO or socket: it exists, but is neither.
    Other,
}

/// Read-only access to a file tree. Paths are absolute (or relative to the process's working
/// directory), as the engine builds them.
pub trait Fs: Debug + Send + Sync {
    /// The whole file, bounded as `hiera_value::limits::read_file` bounds it.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// What `path` is (symbolic links followed), `None` when it does not exist.
    fn kind(&self, path: &Path) -> Option<Kind>;
    /// Whether `path` itself is a symbolic link.
    fn is_symlink(&self, path: &Path) -> bool;
    /// The names in a directory, in no particular order.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// `File.exist?`: true for directories and devices too.
    fn exists(&self, path: &Path) -> bool {
        self.kind(path).is_some()
    }
    /// Whether `path` is a regular file (links followed).
    fn is_file(&self, path: &Path) -> bool {
        self.kind(path) == Some(Kind::File)
    }
    /// Whether `path` is a directory (links followed).
    fn is_dir(&self, path: &Path) -> bool {
        self.kind(path) == Some(Kind::Dir)
    }
    /// The one name of the file `path` names: symbolic links and `.`/`..` resolved as far as
    /// the path exists, the rest lexically. Two names of the same file (through a linked
    /// directory, through `..`) give the same path.
    fn canonical(&self, path: &Path) -> PathBuf {
        lexical(path)
    }
    /// [`read`](Self::read) as UTF-8 text (invalid UTF-8 is `InvalidData`).
    fn read_text(&self, path: &Path) -> io::Result<String> {
        String::from_utf8(self.read(path)?).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    }
}

/// The disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Fs for RealFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        hiera_value::limits::read_file(path)
    }
    fn kind(&self, path: &Path) -> Option<Kind> {
        let m = std::fs::metadata(path).ok()?;
        Some(if m.is_file() {
            Kind::File
        } else if m.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        })
    }
    fn is_symlink(&self, path: &Path) -> bool {
        path.is_symlink()
    }
    fn canonical(&self, path: &Path) -> PathBuf {
        // The longest part that exists, resolved by the system; the rest as written.
        let mut missing = Vec::new();
        let mut at = path;
        loop {
            if let Ok(c) = std::fs::canonicalize(at) {
                return lexical(&missing.iter().rev().fold(c, |p, name| p.join(name)));
            }
            match (at.parent(), at.file_name()) {
                (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
                    missing.push(name);
                    at = parent;
                }
                _ => return lexical(path),
            }
        }
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Ok(std::fs::read_dir(path)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }
}

/// `path` with `.` and `..` resolved lexically (a `..` at the root stays).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The default file system: the disk.
pub fn disk() -> Arc<dyn Fs> {
    Arc::new(RealFs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_dots_lexically() {
        assert_eq!(
            lexical(Path::new("/r/data/../data/./x.yaml")),
            Path::new("/r/data/x.yaml")
        );
        assert_eq!(lexical(Path::new("../a/./b")), Path::new("../a/b"));
    }

    #[test]
    fn the_disk_names_a_file_through_links_once() {
        let d = std::env::temp_dir().join(format!("hl-fs-canonical-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("hieradata/sub")).unwrap();
        std::fs::write(d.join("hieradata/common.yaml"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink("hieradata", d.join("data")).unwrap();
        std::os::unix::fs::symlink("hieradata/sub", d.join("deep")).unwrap();
        let real = std::fs::canonicalize(&d).unwrap();
        let fs = RealFs;
        let file = real.join("hieradata/common.yaml");
        assert_eq!(fs.canonical(&d.join("data/common.yaml")), file);
        assert_eq!(fs.canonical(&d.join("hieradata/./x/../common.yaml")), file);
        // `..` after a link leaves the link's target, not the link.
        assert_eq!(fs.canonical(&d.join("deep/../common.yaml")), file);
        // A file that does not exist (yet): its directory resolved, its name kept.
        assert_eq!(
            fs.canonical(&d.join("data/nodes/new.yaml")),
            real.join("hieradata/nodes/new.yaml")
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
