//! A git revision of the control repo as a file system: trees and blobs read straight from
//! the object database (loose objects and packs) with gix, no checkout, nothing written.
//!
//! The whole revision is listed once, bounded ([`MAX_TREE_ENTRIES`], [`MAX_TREE_PATH_BYTES`]:
//! a small repository can name 10^8 paths), and every object's size is read from its header
//! before it is inflated ([`MAX_FILE_SIZE`]). A submodule is read from its own repository
//! (the checkout's, or `.git/modules/…`) when its commit is there; when it is not, what lies
//! under it cannot be read: reading there is an error saying so, and `diff` refuses to
//! compare a side whose hierarchies may read there (`GitFs::missing_submodules`).

use hiera_engine::fs::{Fs, Kind};
use hiera_value::limits::{
    MAX_FILE_SIZE, MAX_SUBMODULE_DEPTH, MAX_TREE_ENTRIES, MAX_TREE_PATH_BYTES,
};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::{Component, Path, PathBuf};

/// One entry of a revision's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// A file: its object id, and the repository holding it (an index into
    /// [`GitFs::repos`]: 0 is the main one, submodules follow).
    Blob(gix::ObjectId, usize),
    /// A symbolic link, whose blob is its target.
    Link(gix::ObjectId, usize),
    Dir,
    /// A submodule whose commit no repository at hand holds (an index into
    /// [`GitFs::missing`]).
    Missing(usize),
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
        let mut walk = Walk {
            rev,
            workdir: &self.workdir,
            entries: HashMap::from([(String::new(), Entry::Dir)]),
            dirs: HashMap::new(),
            repos: vec![Source {
                repo: self.repo.clone(),
                git_dir: repo.git_dir().to_path_buf(),
                prefix: String::new(),
            }],
            missing: Vec::new(),
            bytes: 0,
        };
        walk.tree(0, tree_id, 0)?;
        Ok(GitFs {
            repos: walk.repos.into_iter().map(|s| s.repo).collect(),
            root: self.workdir.clone(),
            rev: rev.to_string(),
            entries: walk.entries,
            dirs: walk.dirs,
            missing: walk.missing,
        })
    }
}

/// A repository whose objects a revision's files come from.
struct Source {
    repo: gix::ThreadSafeRepository,
    git_dir: PathBuf,
    /// Where its tree is mounted, relative to the main work tree ("" for the main one).
    prefix: String,
}

/// A submodule of the revision whose commit is not at hand.
#[derive(Debug, Clone)]
struct Missing {
    path: String,
    commit: gix::ObjectId,
}

/// The listing of a revision in progress.
struct Walk<'a> {
    rev: &'a str,
    workdir: &'a Path,
    entries: HashMap<String, Entry>,
    dirs: HashMap<String, Vec<String>>,
    repos: Vec<Source>,
    missing: Vec<Missing>,
    /// Bytes of the paths listed so far.
    bytes: usize,
}

impl Walk<'_> {
    fn too_large(&self) -> String {
        format!(
            "revision '{}' has more than {MAX_TREE_ENTRIES} files and directories, or more than {} MiB of path names (the limits): diff cannot list it",
            self.rev,
            MAX_TREE_PATH_BYTES >> 20
        )
    }

    /// Lists tree `id` of repository `src` (mounted at its prefix), breadth first, and the
    /// submodules in it.
    fn tree(&mut self, src: usize, id: gix::ObjectId, depth: usize) -> Result<(), String> {
        let repo = self.repos[src].repo.to_thread_local();
        let mut queue = VecDeque::from([(self.repos[src].prefix.clone(), id)]);
        while let Some((dir, id)) = queue.pop_front() {
            let rev = self.rev;
            let fail = move |e: String| format!("revision '{rev}': cannot read its tree: {e}");
            checked(&repo, id, gix::objs::Kind::Tree).map_err(fail)?;
            let tree = repo
                .find_tree(id)
                .map_err(|e| fail(format!("git object {id}: {e}")))?;
            for e in tree.iter() {
                let e = e.map_err(|e| fail(format!("git object {id}: {e}")))?;
                let Ok(name) = std::str::from_utf8(e.filename()) else {
                    continue;
                };
                let path = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                self.bytes += path.len();
                if self.entries.len() >= MAX_TREE_ENTRIES || self.bytes > MAX_TREE_PATH_BYTES {
                    return Err(self.too_large());
                }
                let oid = e.object_id();
                let entry = match e.mode().kind() {
                    gix::objs::tree::EntryKind::Tree => {
                        queue.push_back((path.clone(), oid));
                        Entry::Dir
                    }
                    gix::objs::tree::EntryKind::Link => Entry::Link(oid, src),
                    gix::objs::tree::EntryKind::Commit => self.submodule(src, &path, oid, depth)?,
                    _ => Entry::Blob(oid, src),
                };
                self.dirs
                    .entry(dir.clone())
                    .or_default()
                    .push(name.to_string());
                self.entries.insert(path, entry);
            }
        }
        Ok(())
    }

    /// The submodule at `path` (relative to the main work tree) of repository `src`, at
    /// `commit`: read from its checkout's repository or from `.git/modules/…` when the
    /// commit is there, else [`Entry::Missing`].
    fn submodule(
        &mut self,
        src: usize,
        path: &str,
        commit: gix::ObjectId,
        depth: usize,
    ) -> Result<Entry, String> {
        let own = &self.repos[src];
        let inner = path
            .strip_prefix(own.prefix.as_str())
            .unwrap_or(path)
            .trim_start_matches('/');
        let candidates = [
            self.workdir.join(path),
            own.git_dir.join("modules").join(inner),
        ];
        if depth < MAX_SUBMODULE_DEPTH {
            for dir in candidates {
                let Ok(sub) = gix::open(&dir) else { continue };
                let Ok(tree) = commit_tree(&sub, commit) else {
                    continue;
                };
                self.repos.push(Source {
                    git_dir: sub.git_dir().to_path_buf(),
                    repo: sub.into_sync(),
                    prefix: path.to_string(),
                });
                self.tree(self.repos.len() - 1, tree, depth + 1)?;
                return Ok(Entry::Dir);
            }
        }
        self.missing.push(Missing {
            path: path.to_string(),
            commit,
        });
        Ok(Entry::Missing(self.missing.len() - 1))
    }
}

/// Checks an object's kind and size from its header, before anything inflates it: a 10 MB
/// object may inflate to gigabytes.
fn checked(repo: &gix::Repository, id: gix::ObjectId, kind: gix::objs::Kind) -> Result<(), String> {
    let h = repo
        .find_header(id)
        .map_err(|e| format!("git object {id}: {e}"))?;
    if h.kind() != kind {
        return Err(format!("git object {id} is a {}, not a {kind}", h.kind()));
    }
    if h.size() > MAX_FILE_SIZE {
        return Err(format!(
            "git object {id} is larger than {} MiB (the file size limit)",
            MAX_FILE_SIZE >> 20
        ));
    }
    Ok(())
}

/// The tree of `commit` in `repo`.
fn commit_tree(repo: &gix::Repository, commit: gix::ObjectId) -> Result<gix::ObjectId, String> {
    checked(repo, commit, gix::objs::Kind::Commit)?;
    let tree = repo
        .find_commit(commit)
        .map_err(|e| e.to_string())?
        .tree_id()
        .map_err(|e| e.to_string())?;
    Ok(tree.detach())
}

/// A revision's files, seen at the paths they have in the work tree. Paths outside the work
/// tree (eyaml keys under /etc, a basemodulepath) are read from the disk, as a checkout of
/// the revision would see them.
pub(crate) struct GitFs {
    /// The main repository, then each submodule's.
    repos: Vec<gix::ThreadSafeRepository>,
    root: PathBuf,
    rev: String,
    entries: HashMap<String, Entry>,
    dirs: HashMap<String, Vec<String>>,
    missing: Vec<Missing>,
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
    /// The work tree this revision is mounted at.
    pub(crate) fn workdir(&self) -> &Path {
        &self.root
    }

    /// Every file of the revision (relative to the work tree) with the git object id of its
    /// content: a symbolic link has its target's (followed in the revision, or read from
    /// the disk for a target outside it), so that a change to the target is a change to
    /// every name of it; a link to a directory, or one that leads nowhere, is left out.
    pub(crate) fn files(&self) -> Vec<(String, gix::ObjectId)> {
        let mut out: Vec<(String, gix::ObjectId)> = self
            .entries
            .iter()
            .filter_map(|(p, e)| match e {
                Entry::Blob(id, _) => Some((p.clone(), *id)),
                Entry::Link(..) => match self.locate(&self.root.join(p)) {
                    At::Tree(rel) => match self.entries.get(&rel) {
                        Some(Entry::Blob(id, _)) => Some((p.clone(), *id)),
                        _ => None,
                    },
                    At::Disk(d) => hiera_value::limits::read_file(d)
                        .ok()
                        .and_then(|b| blob_id(&b))
                        .map(|id| (p.clone(), id)),
                },
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
                if let Some(Entry::Link(id, src)) = self.entries.get(&prefix) {
                    let target = self.blob(*id, *src).unwrap_or_default();
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

    fn blob(&self, id: gix::ObjectId, src: usize) -> io::Result<Vec<u8>> {
        let repo = self.repos[src].to_thread_local();
        checked(&repo, id, gix::objs::Kind::Blob).map_err(io::Error::other)?;
        let mut blob = repo
            .find_blob(id)
            .map_err(|e| io::Error::other(format!("git object {id}: {e}")))?;
        Ok(blob.take_data())
    }

    /// The missing submodule `rel` is in (or is).
    fn missing_above(&self, rel: &str) -> Option<usize> {
        let mut at = rel;
        loop {
            if let Some(Entry::Missing(i)) = self.entries.get(at) {
                return Some(*i);
            }
            at = at.rsplit_once('/')?.0;
        }
    }

    fn missing_error(&self, i: usize) -> io::Error {
        io::Error::other(self.missing_message(i))
    }

    /// Why what the revision holds under missing submodule `i` is unknown.
    pub(crate) fn missing_message(&self, i: usize) -> String {
        let m = &self.missing[i];
        format!(
            "{} is a git submodule whose commit {} is not in this clone (`git submodule update --init {}` fetches it): diff cannot compare what revision '{}' holds there",
            m.path, m.commit, m.path, self.rev
        )
    }

    /// The submodules whose commits are not at hand: (index, path relative to the work
    /// tree, commit).
    pub(crate) fn missing_submodules(&self) -> Vec<(usize, &str, gix::ObjectId)> {
        (self.missing.iter().enumerate())
            .map(|(i, m)| (i, m.path.as_str(), m.commit))
            .collect()
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
                Some(Entry::Blob(id, src)) => self.blob(*id, *src),
                Some(Entry::Dir | Entry::Missing(_)) => {
                    Err(io::Error::from_raw_os_error(libc::EISDIR))
                }
                Some(Entry::Link(..)) => Err(not_found()),
                None => match self.missing_above(&rel) {
                    Some(i) => Err(self.missing_error(i)),
                    None => Err(not_found()),
                },
            },
        }
    }

    fn kind(&self, path: &Path) -> Option<Kind> {
        match self.locate(path) {
            At::Disk(p) => hiera_engine::fs::RealFs.kind(&p),
            At::Tree(rel) => match self.entries.get(&rel) {
                Some(Entry::Blob(..)) => Some(Kind::File),
                Some(Entry::Dir | Entry::Missing(_)) => Some(Kind::Dir),
                Some(Entry::Link(..)) | None => None,
            },
        }
    }

    fn is_symlink(&self, path: &Path) -> bool {
        match self.relative(path) {
            Some(rel) => matches!(self.entries.get(&rel), Some(Entry::Link(..))),
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
                Some(Entry::Missing(_)) | None => match self.missing_above(&rel) {
                    Some(i) => Err(self.missing_error(i)),
                    None => Err(not_found()),
                },
                Some(_) => Err(io::Error::from_raw_os_error(libc::ENOTDIR)),
            },
        }
    }
}

/// The git object id of a blob with `data`, as `git hash-object` computes it (to compare a
/// work-tree file with a revision's without reading the revision's copy).
pub(crate) fn blob_id(data: &[u8]) -> Option<gix::ObjectId> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data).ok()
}
