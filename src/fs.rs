//! The one seam through which a lookup reads files: hiera.yaml of every layer,
//! environment.conf, module discovery, data files, existence checks, globs and eyaml keys.
//! [`RealFs`] is the disk (the default); `diff` reads a git revision through
//! `crate::diff::git::GitFs` with the same engine, without a checkout.

use std::fmt::Debug;
use std::io;
use std::path::Path;
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
    /// The whole file, bounded as `crate::limits::read_file` bounds it.
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
        crate::limits::read_file(path)
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
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Ok(std::fs::read_dir(path)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }
}

/// The default file system: the disk.
pub(crate) fn disk() -> Arc<dyn Fs> {
    Arc::new(RealFs)
}
