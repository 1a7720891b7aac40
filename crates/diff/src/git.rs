//! A git revision of the control repo as a file system: trees and blobs read straight from
//! the object database (loose objects and packs) with gix, no checkout, nothing written.

use hiera_engine::fs::{Fs, Kind};
use std::collections::HashMap;
use std::io;
use std::path::{Component, Path, PathBuf};

/// One entry of a revision's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Blob(gix::ObjectId),
    Link(gix::ObjectId),
    Dir,
    /// A submodule: a directory whose content this repository does not hold.
    Submodule,
}

/// The repository a `diff` reads revisions from.
pub struct Repo {
    repo: gix::ThreadSafeRepository,
    /// The work tree's root (absolute): paths under it are read from the revision.
    workdir: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Repo({})", self.workdir.display())
    }
}

impl Repo {
    /// The git repository holding `dir` (searched upwards, as git does).
    pub fn discover(dir: &Path) -> Result<Repo, String> {
        let repo = gix::discover(dir)
            .map_err(|e| format!("{} is not in a git repository: {e}", dir.display()))?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| format!("{}: a bare repository has no work tree", dir.display()))?;
        let workdir =
            std::fs::canonicalize(workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
        Ok(Repo {
            repo: repo.into_sync(),
            workdir,
        })
    }

    pub(crate) fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Whether `rev` names a commit (or a tree) here.
    pub fn resolves(&self, rev: &str) -> bool {
        self.tree_id(rev).is_ok()
    }

    fn tree_id(&self, rev: &str) -> Result<gix::ObjectId, String> {
        let repo = self.repo.to_thread_local();
        let id = repo
            .rev_parse_single(rev)
            .map_err(|_| self.unknown_revision(rev))?;
        let tree = id
            .object()
            .map_err(|e| format!("revision '{rev}': {e}"))?
            .peel_to_tree()
            .map_err(|e| format!("revision '{rev}' has no tree: {e}"))?;
        Ok(tree.id)
    }

    /// Why `rev` names nothing, in git's terms and without gix's internals: a revision whose
    /// history is too short (`HEAD~5` in a shallow clone), or a name that does not exist.
    fn unknown_revision(&self, rev: &str) -> String {
        let base = rev.split(['~', '^']).next().unwrap_or(rev);
        let repo = self.repo.to_thread_local();
        if base != rev && !base.is_empty() && repo.rev_parse_single(base).is_ok() {
            format!(
                "unknown revision '{rev}': '{base}' exists, but its history does not go back that far (a shallow clone? `git fetch --unshallow`, or `fetch-depth: 0` in CI)"
            )
        } else {
            format!(
                "unknown revision '{rev}': no branch, tag or commit of {} is named so (`git branch -a` and `git log --oneline` list them; a remote's branch needs `git fetch` first)",
                self.workdir.display()
            )
        }
    }

    /// The files of revision `rev` (anything `git rev-parse` takes), mounted at the work tree.
    pub(crate) fn revision(&self, rev: &str) -> Result<GitFs, String> {
        let tree_id = self.tree_id(rev)?;
        let repo = self.repo.to_thread_local();
        let tree = repo
            .find_tree(tree_id)
            .map_err(|e| format!("revision '{rev}': {e}"))?;
        let records = tree
            .traverse()
            .breadthfirst
            .files()
            .map_err(|e| format!("revision '{rev}': cannot read its tree: {e}"))?;
        let mut entries = HashMap::with_capacity(records.len() + 1);
        let mut dirs: HashMap<String, Vec<String>> = HashMap::new();
        entries.insert(String::new(), Entry::Dir);
        for r in records {
            let Ok(path) = String::from_utf8(r.filepath.to_vec()) else {
                continue;
            };
            let e = match r.mode.kind() {
                gix::objs::tree::EntryKind::Tree => Entry::Dir,
                gix::objs::tree::EntryKind::Link => Entry::Link(r.oid),
                gix::objs::tree::EntryKind::Commit => Entry::Submodule,
                _ => Entry::Blob(r.oid),
            };
            let (parent, name) = match path.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string()),
                None => (String::new(), path.clone()),
            };
            dirs.entry(parent).or_default().push(name);
            entries.insert(path, e);
        }
        Ok(GitFs {
            repo: self.repo.clone(),
            root: self.workdir.clone(),
            rev: rev.to_string(),
            entries,
            dirs,
        })
    }
}

/// A revision's files, seen at the paths they have in the work tree. Paths outside the work
/// tree (eyaml keys under /etc, a basemodulepath) are read from the disk, as a checkout of
/// the revision would see them.
pub(crate) struct GitFs {
    repo: gix::ThreadSafeRepository,
    root: PathBuf,
    rev: String,
    entries: HashMap<String, Entry>,
    dirs: HashMap<String, Vec<String>>,
}

impl std::fmt::Debug for GitFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GitFs({} at {})", self.rev, self.root.display())
    }
}

/// Where a path leads: inside the revision (a path relative to the tree's root) or outside.
enum At {
    Tree(String),
    Disk(PathBuf),
}

const MAX_LINKS: usize = 8;

impl GitFs {
    /// Every file (blob or link) under `dir` (relative to the tree's root, "" for all), with
    /// its object id, paths relative to `dir`.
    pub(crate) fn files_under(&self, dir: &str) -> Vec<(String, gix::ObjectId)> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut out: Vec<(String, gix::ObjectId)> = self
            .entries
            .iter()
            .filter_map(|(p, e)| match e {
                Entry::Blob(id) | Entry::Link(id) => p
                    .strip_prefix(prefix.as_str())
                    .map(|rel| (rel.to_string(), *id)),
                _ => None,
            })
            .collect();
        out.sort();
        out
    }

    /// The path of `p` relative to the tree's root, lexically (`.` and `..` resolved), or
    /// `None` when it is outside the work tree.
    pub(crate) fn relative(&self, p: &Path) -> Option<String> {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().ok()?.join(p)
        };
        let rest = p.strip_prefix(&self.root).ok()?;
        let mut parts: Vec<String> = Vec::new();
        for c in rest.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_str()?.to_string()),
                Component::ParentDir => {
                    parts.pop()?;
                }
                Component::CurDir => {}
                _ => return None,
            }
        }
        Some(parts.join("/"))
    }

    /// Follows symbolic links (in the tree) to where `p` leads.
    fn locate(&self, p: &Path) -> At {
        let Some(mut rel) = self.relative(p) else {
            return At::Disk(p.to_path_buf());
        };
        for _ in 0..MAX_LINKS {
            // A link anywhere along the path: its target replaces that prefix.
            let mut redirected = None;
            let mut prefix = String::new();
            for part in rel.split('/').filter(|s| !s.is_empty()) {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                if let Some(Entry::Link(id)) = self.entries.get(&prefix) {
                    let target = self.blob(*id).unwrap_or_default();
                    let target = String::from_utf8_lossy(&target).into_owned();
                    let parent = self.root.join(prefix.rsplit_once('/').map_or("", |x| x.0));
                    let tail = &rel[prefix.len()..];
                    let resolved = parent.join(target);
                    let full = PathBuf::from(format!("{}{tail}", resolved.display()));
                    redirected = Some(full);
                    break;
                }
            }
            match redirected {
                None => return At::Tree(rel),
                Some(full) => match self.relative(&full) {
                    Some(r) => rel = r,
                    None => return At::Disk(full),
                },
            }
        }
        At::Tree(String::from("\0loop"))
    }

    fn blob(&self, id: gix::ObjectId) -> io::Result<Vec<u8>> {
        let repo = self.repo.to_thread_local();
        let mut blob = repo
            .find_blob(id)
            .map_err(|e| io::Error::other(format!("git object {id}: {e}")))?;
        Ok(blob.take_data())
    }
}

fn not_found() -> io::Error {
    io::Error::from(io::ErrorKind::NotFound)
}

impl Fs for GitFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        match self.locate(path) {
            At::Disk(p) => hiera_value::limits::read_file(p),
            At::Tree(rel) => match self.entries.get(&rel) {
                Some(Entry::Blob(id)) => {
                    let data = self.blob(*id)?;
                    if data.len() as u64 > hiera_value::limits::MAX_FILE_SIZE {
                        return Err(io::Error::other(format!(
                            "larger than {} MiB (the file size limit)",
                            hiera_value::limits::MAX_FILE_SIZE >> 20
                        )));
                    }
                    Ok(data)
                }
                Some(Entry::Dir | Entry::Submodule) => {
                    Err(io::Error::from_raw_os_error(libc::EISDIR))
                }
                _ => Err(not_found()),
            },
        }
    }

    fn kind(&self, path: &Path) -> Option<Kind> {
        match self.locate(path) {
            At::Disk(p) => hiera_engine::fs::RealFs.kind(&p),
            At::Tree(rel) => match self.entries.get(&rel)? {
                Entry::Blob(_) => Some(Kind::File),
                Entry::Dir | Entry::Submodule => Some(Kind::Dir),
                Entry::Link(_) => None,
            },
        }
    }

    fn is_symlink(&self, path: &Path) -> bool {
        match self.relative(path) {
            Some(rel) => matches!(self.entries.get(&rel), Some(Entry::Link(_))),
            None => path.is_symlink(),
        }
    }

    /// Where [`read`](Fs::read) would read: links in the revision followed (and then the
    /// disk's, for a link out of it).
    fn canonical(&self, path: &Path) -> PathBuf {
        match self.locate(path) {
            At::Disk(p) => hiera_engine::fs::RealFs.canonical(&p),
            At::Tree(rel) if rel.is_empty() => self.root.clone(),
            At::Tree(rel) => self.root.join(rel),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        match self.locate(path) {
            At::Disk(p) => hiera_engine::fs::RealFs.read_dir(&p),
            At::Tree(rel) => match self.entries.get(&rel) {
                Some(Entry::Dir) => Ok(self.dirs.get(&rel).cloned().unwrap_or_default()),
                Some(Entry::Submodule) => Ok(Vec::new()),
                Some(_) => Err(io::Error::from_raw_os_error(libc::ENOTDIR)),
                None => Err(not_found()),
            },
        }
    }
}

/// The git object id of a blob with `data`, as `git hash-object` computes it (to compare a
/// work-tree file with a revision's without reading the revision's copy).
pub(crate) fn blob_id(data: &[u8]) -> Option<gix::ObjectId> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data).ok()
}
