//! The one seam through which a lookup reads files: hiera.yaml of every layer,
//! environment.conf, module discovery, data files, existence checks, globs and eyaml keys.
//! [`RealFs`] is the disk (the default); `diff` reads a git revision through
//! `hiera_diff::git::GitFs` with the same engine, without a checkout.
//!
//! # File names that are not UTF-8
//!
//! The engine's paths are text, and a file name need not be UTF-8 (a Latin-1 `café.yaml`),
//! while Ruby globs and reads it by its bytes. So a name read from the disk is held as text
//! with each byte that is not UTF-8 written as the private-use character U+10FF00 + byte
//! (U+10FF80 … U+10FFFF), and a real name's own characters of that range as their bytes the
//! same way ([`name_text`]): every name converts to text and back ([`name_bytes`]) exactly.
//! [`RealFs`] converts a path back before each system call ([`os_path`]). Only a name that
//! holds such bytes or characters is changed; such a byte shows as its character wherever a
//! path is printed (Puppet prints the byte itself).

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fmt::Debug;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The character a byte that is not UTF-8 stands as is this plus the byte.
const BYTE_CHARS: u32 = 0x10FF00;

/// Whether `c` stands for a byte (U+10FF80 … U+10FFFF).
fn is_byte_char(c: char) -> bool {
    (BYTE_CHARS + 0x80..=BYTE_CHARS + 0xFF).contains(&(c as u32))
}

/// The character that stands for byte `b` (0x80 or above: every byte that is not UTF-8 is).
fn byte_char(b: u8) -> char {
    char::from_u32(BYTE_CHARS + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// A file name or path as the engine's text holds it: see the [module](self).
pub fn name_text(name: &OsStr) -> String {
    let bytes = name.as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.chars().any(is_byte_char) {
            return text.to_string();
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_byte_char(c) {
                let mut buf = [0u8; 4];
                out.extend(c.encode_utf8(&mut buf).bytes().map(byte_char));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().map(|&b| byte_char(b)));
    }
    out
}

/// The bytes of the name or path `text` holds ([`name_text`] undone).
pub fn name_bytes(text: &str) -> Cow<'_, [u8]> {
    if !text.chars().any(is_byte_char) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if is_byte_char(c) {
            out.push((c as u32 - BYTE_CHARS) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

/// The path the system knows for the engine's `path` ([`name_bytes`]).
pub fn os_path(path: &Path) -> Cow<'_, Path> {
    match path.to_str().map(name_bytes) {
        Some(Cow::Owned(bytes)) => Cow::Owned(PathBuf::from(OsString::from_vec(bytes))),
        _ => Cow::Borrowed(path),
    }
}

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
        hiera_value::limits::read_file(os_path(path))
    }
    fn kind(&self, path: &Path) -> Option<Kind> {
        let m = std::fs::metadata(os_path(path)).ok()?;
        Some(if m.is_file() {
            Kind::File
        } else if m.is_dir() {
            Kind::Dir
        } else {
            Kind::Other
        })
    }
    fn is_symlink(&self, path: &Path) -> bool {
        os_path(path).is_symlink()
    }
    fn canonical(&self, path: &Path) -> PathBuf {
        // The longest part that exists, resolved by the system; the rest as written.
        let mut missing = Vec::new();
        let mut at = path;
        loop {
            if let Ok(c) = std::fs::canonicalize(os_path(at)) {
                let c = PathBuf::from(name_text(c.as_os_str()));
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
        Ok(std::fs::read_dir(os_path(path))?
            .filter_map(|e| e.ok())
            .map(|e| name_text(&e.file_name()))
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
    fn every_file_name_converts_to_text_and_back() {
        let names: [&[u8]; 6] = [
            b"common.yaml",
            "caf\u{e9}.yaml".as_bytes(),
            b"caf\xe9.yaml",
            b"a\x80\xff\xc3",
            // Characters of the range a byte stands as, in a real name.
            "x\u{10FFE9}y".as_bytes(),
            b"\xf4\x8f\xbf\xa9\xe9",
        ];
        for bytes in names {
            let text = name_text(OsStr::from_bytes(bytes));
            assert_eq!(&*name_bytes(&text), bytes, "{text:?}");
            assert_eq!(
                os_path(Path::new(&text)).as_os_str().as_bytes(),
                bytes,
                "{text:?}"
            );
        }
        assert_eq!(name_text(OsStr::new("caf\u{e9}")), "caf\u{e9}");
        assert_eq!(name_text(OsStr::from_bytes(b"caf\xe9")), "caf\u{10FFE9}");
        assert!(matches!(os_path(Path::new("/a/b.yaml")), Cow::Borrowed(_)));
    }

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
