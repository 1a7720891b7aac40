//! `hiera-lookup diff`: what a change to the control repo does to the fleet. Two trees (git
//! revisions read through `git::GitFs`, or directories) are looked up with the same engine
//! for every node × key the change can touch (`impact`), and the answers that differ are
//! grouped by key with a diff by path (`paths`), printed by [`output`].
#![warn(missing_docs)]

/// The `diff` fuzz target's body (a random repo and change, checked against single lookups),
/// behind the `fuzzing` feature: not part of the API.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod git;
pub(crate) mod impact;
pub mod output;
pub(crate) mod paths;

use hiera_engine::batch::{Node, NodeSource};
use hiera_engine::engine::{Exec, Outcome, Session, Settings};
use hiera_engine::environment::EnvOptions;
use hiera_engine::error::{Error, Result};
use hiera_engine::fs::Fs;
use hiera_engine::redact::Redactor;
use hiera_engine::workspace::Workspace;
use hiera_value::value::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One side of a diff: a control repo's files.
#[derive(Debug, Clone)]
pub struct Tree {
    /// How the user named it: a revision, a directory, or `work tree`.
    pub(crate) label: String,
    /// The control repo's directory as lookups see it (its hiera.yaml is the environment
    /// layer, as in control-repo mode).
    pub(crate) root: PathBuf,
    pub(crate) fs: Arc<dyn Fs>,
    /// The revision read, when the tree is one.
    pub(crate) git: Option<Arc<git::GitFs>>,
    /// The files a lookup may read ([`impact::role`]), relative to `root` (`../` first for
    /// those outside it), with the git object ids of their contents (computed for files on
    /// disk; a symbolic link has its target's).
    pub(crate) listing: BTreeMap<String, gix::ObjectId>,
    /// `root` relative to the git work tree ("" at its top, or outside git), for the file
    /// names of annotations.
    pub prefix: String,
}

impl Tree {
    /// A directory on disk.
    pub fn dir(root: &Path, label: impl Into<String>) -> Result<Tree> {
        let root = std::fs::canonicalize(root)
            .map_err(|e| Error::run(format!("{}: {e}", root.display())))?;
        if !root.is_dir() {
            return Err(Error::run(format!("{} is not a directory", root.display())));
        }
        let mut listing = BTreeMap::new();
        list_dir(&root, &root, None, &mut listing, &mut Budget::default())?;
        Ok(Tree {
            label: label.into(),
            root,
            fs: hiera_engine::fs::disk(),
            git: None,
            listing,
            prefix: String::new(),
        })
    }

    /// Revision `rev` of `repo`, with the control repo at `root` (in the work tree).
    pub fn revision(repo: &git::Repo, rev: &str, root: &Path) -> Result<Tree> {
        let fs = Arc::new(repo.revision(rev).map_err(Error::run)?);
        let root = std::fs::canonicalize(root)
            .map_err(|e| Error::run(format!("{}: {e}", root.display())))?;
        let prefix = fs.relative(&root).ok_or_else(|| {
            Error::run(format!(
                "{} is outside the git work tree {}",
                root.display(),
                repo.workdir().display()
            ))
        })?;
        let listing = fs
            .files()
            .into_iter()
            .filter_map(|(p, id)| {
                let rel = if prefix.is_empty() {
                    p
                } else {
                    p.strip_prefix(&format!("{prefix}/"))?.to_string()
                };
                impact::role(&rel).map(|_| (rel, id))
            })
            .collect();
        Ok(Tree {
            label: rev.to_string(),
            root,
            fs: fs.clone(),
            git: Some(fs),
            listing,
            prefix,
        })
    }

    /// Adds to the listing the files under `dirs` (absolute, canonical) that are outside
    /// the control repo: what its hierarchies and modulepath read elsewhere in the
    /// repository (`datadir: ../shared`, `modulepath = ../modules`).
    fn list_outside(&mut self, dirs: &[PathBuf]) -> Result<()> {
        let outside = |abs: &Path| -> Option<String> {
            if abs.starts_with(&self.root) || !dirs.iter().any(|d| abs.starts_with(d)) {
                return None;
            }
            let rel = relative_path(&self.root, abs);
            let name = rel.rsplit('/').next().unwrap_or_default();
            (name != "environment.conf" && impact::role(&rel).is_some()).then_some(rel)
        };
        match &self.git {
            Some(git) => {
                let workdir = git.workdir().to_path_buf();
                for (p, id) in git.files() {
                    if let Some(rel) = outside(&workdir.join(&p)) {
                        self.listing.insert(rel, id);
                    }
                }
            }
            None => {
                let mut budget = Budget::default();
                let mut found = BTreeMap::new();
                for d in dirs {
                    list_dir(d, &self.root, Some(&self.root), &mut found, &mut budget)?;
                }
                for (rel, id) in found {
                    if outside(&lexical(&self.root.join(&rel))).is_some() {
                        self.listing.insert(rel, id);
                    }
                }
            }
        }
        Ok(())
    }

    /// A file of the tree, by its path relative to the root.
    pub(crate) fn read(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        self.fs.read(&self.root.join(rel))
    }

    /// Error messages name files relative to the control repo, so that both sides (two
    /// directories) say the same thing for the same file.
    fn relative_message(&self, m: &str) -> String {
        let prefix = format!("{}/", self.root.display());
        m.replace(&prefix, "")
    }
}

/// Entries and path bytes a listing may take
/// ([`MAX_TREE_ENTRIES`](hiera_value::limits::MAX_TREE_ENTRIES),
/// [`MAX_TREE_PATH_BYTES`](hiera_value::limits::MAX_TREE_PATH_BYTES)): a runaway tree is an
/// error, not a hang or an abort.
#[derive(Default)]
struct Budget {
    entries: usize,
    bytes: usize,
}

/// Lists the files of directory `dir` on disk that a lookup may read, keyed by their path
/// relative to `root`, skipping `.git` and `skip` (a tree listed already). Links to
/// directories are not followed (their targets are listed where they are); a link to a
/// file has its target's content.
fn list_dir(
    dir: &Path,
    root: &Path,
    skip: Option<&Path>,
    listing: &mut BTreeMap<String, gix::ObjectId>,
    budget: &mut Budget,
) -> Result<()> {
    use hiera_value::limits::{MAX_TREE_ENTRIES, MAX_TREE_PATH_BYTES};
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&at) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let path = e.path();
            budget.entries += 1;
            budget.bytes += path.as_os_str().len();
            if budget.entries > MAX_TREE_ENTRIES || budget.bytes > MAX_TREE_PATH_BYTES {
                return Err(Error::run(format!(
                    "{} has more than {MAX_TREE_ENTRIES} files and directories, or more than {} MiB of path names (the limits): diff cannot list it",
                    dir.display(),
                    MAX_TREE_PATH_BYTES >> 20
                )));
            }
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if e.file_name() != ".git" && skip != Some(path.as_path()) {
                    stack.push(path);
                }
                continue;
            }
            let rel = relative_path(root, &path);
            if impact::role(&rel).is_none() {
                continue;
            }
            match hiera_value::limits::read_file(&path) {
                // A link to a directory.
                Err(e) if e.raw_os_error() == Some(libc::EISDIR) => {}
                bytes => {
                    if let Some(id) = git::blob_id(&bytes.unwrap_or_default()) {
                        listing.insert(rel, id);
                    }
                }
            }
        }
    }
    Ok(())
}

/// `path` relative to `root` (both absolute), `/`-separated, with `..` for each directory
/// of `root` it is outside of.
fn relative_path(root: &Path, path: &Path) -> String {
    let (r, p): (Vec<_>, Vec<_>) = (root.components().collect(), path.components().collect());
    let common = r.iter().zip(&p).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_string(), r.len() - common);
    let downs = p[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

/// `path` with `.` and `..` resolved lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The directories lookups with `layers` may read in `tree`: module directories of the
/// modulepath, and the data directories of every level of the environment's and the
/// modules' hiera.yaml (up to the first interpolation or glob character of each path).
/// Canonical: a directory reached through a link is named where it is.
fn read_dirs(tree: &Tree, layers: &hiera_engine::engine::Layers) -> Vec<PathBuf> {
    use hiera_engine::config::{HieraConfig, Layer, LoadContext, Locations};
    let fs = &*tree.fs;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut configs = Vec::new();
    if let Some(d) = &layers.environment_dir {
        configs.push((Layer::Environment, d.join("hiera.yaml")));
    }
    for (_, d) in &layers.modules {
        dirs.push(d.clone());
        configs.push((Layer::Module, d.join("hiera.yaml")));
    }
    for (layer, path) in configs {
        let ctx = LoadContext {
            layer,
            codedir: layers.codedir.clone(),
            strict_off: true,
        };
        let Ok(cfg) = HieraConfig::load_in(fs, &path, &ctx, &mut Vec::new()) else {
            continue;
        };
        for e in cfg
            .hierarchy
            .iter()
            .chain(cfg.default_hierarchy.iter().flatten())
        {
            let templates: Vec<&String> = match &e.locations {
                Locations::Paths(v) | Locations::Globs(v) => v.iter().collect(),
                Locations::Mapped(_, _, t) => vec![t],
                Locations::None | Locations::Uris(_) => Vec::new(),
            };
            if templates.is_empty() {
                dirs.push(static_dir(&e.datadir));
            }
            for t in templates {
                let full = Path::new(&e.datadir).join(t);
                dirs.push(static_dir(&full.to_string_lossy()));
            }
        }
    }
    let mut out: Vec<PathBuf> = (dirs.iter().filter(|d| d.is_absolute()))
        .map(|d| fs.canonical(d))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Of `dirs`, the parts outside `root` and inside the git work tree `git_root` (a directory
/// above the work tree reads only the work tree's part of it), none inside another.
fn outside(dirs: &[PathBuf], root: &Path, git_root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs
        .iter()
        .map(|d| {
            if git_root.starts_with(d) {
                git_root.to_path_buf()
            } else {
                d.clone()
            }
        })
        .filter(|d| d.starts_with(git_root) && !d.starts_with(root))
        .collect();
    out.sort();
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in out {
        if !kept.iter().any(|k| d.starts_with(k)) {
            kept.push(d);
        }
    }
    kept
}

/// The first submodule of `tree` whose commit is not at hand where lookups may read (a
/// directory of `dirs` in it, or it in one, or the control repo in it), unless `other` is
/// a revision missing the same commit there (the same unknown content on both sides).
fn unreadable_submodule(tree: &Tree, other: &Tree, dirs: &[PathBuf]) -> Option<String> {
    let git = tree.git.as_ref()?;
    let same_in_other = |path: &str, commit| {
        (other.git.as_ref()).is_some_and(|o| {
            (o.missing_submodules().iter()).any(|(_, p, c)| *p == path && *c == commit)
        })
    };
    git.missing_submodules()
        .into_iter()
        .find(|(_, path, commit)| {
            let abs = git.workdir().join(path);
            let read = tree.root.starts_with(&abs)
                || dirs
                    .iter()
                    .any(|d| d.starts_with(&abs) || abs.starts_with(d));
            read && !same_in_other(path, *commit)
        })
        .map(|(i, _, _)| git.missing_message(i))
}

/// The directory a path template names before its first interpolation or glob character.
fn static_dir(template: &str) -> PathBuf {
    let cut = template
        .find(['%', '*', '?', '[', '{'])
        .unwrap_or(template.len());
    match template[..cut].rfind('/') {
        Some(0) => PathBuf::from("/"),
        Some(i) => PathBuf::from(&template[..i]),
        None => PathBuf::from("."),
    }
}

/// One side's answer for a node and key.
#[derive(Debug, Clone)]
pub(crate) enum Resolved {
    Found(Value),
    NotFound,
    /// The error a lookup gives, with paths relative to the control repo.
    Error(String),
}

/// Two errors are the same when only the lines they name moved: an edit above a broken
/// value changes the `(file: F, line: N)` of its error, not the error.
impl PartialEq for Resolved {
    fn eq(&self, other: &Resolved) -> bool {
        match (self, other) {
            (Resolved::Found(a), Resolved::Found(b)) => a == b,
            (Resolved::NotFound, Resolved::NotFound) => true,
            (Resolved::Error(a), Resolved::Error(b)) => a == b || unlined(a) == unlined(b),
            _ => false,
        }
    }
}

/// `m` without the line and column numbers of its `(file: F, line: N, column: M)` places.
fn unlined(m: &str) -> String {
    let mut out = String::with_capacity(m.len());
    let mut rest = m;
    while let Some(i) = rest.find("(file: ") {
        let (head, place) = rest.split_at(i);
        out.push_str(head);
        let end = place.find(')').map_or(place.len(), |e| e + 1);
        let (group, tail) = place.split_at(end);
        // Keep the file; drop each `, line: N` and `, column: N`.
        let mut parts = group.split(", ");
        out.push_str(parts.next().unwrap_or(""));
        for part in parts {
            let number = |p: &str, name: &str| {
                p.strip_prefix(name)
                    .map(|n| n.trim_end_matches(')'))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            };
            if number(part, "line: ") || number(part, "column: ") {
                if part.ends_with(')') {
                    out.push(')');
                }
            } else {
                out.push_str(", ");
                out.push_str(part);
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Nodes whose answers for a key changed the same way: the same edits (both sides found a
/// value; the values themselves may differ elsewhere, as with a merge of per-node data), or
/// else the same answers.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub nodes: Vec<String>,
    /// The first node's answers.
    pub before: Resolved,
    pub after: Resolved,
    /// The differences by path, when both sides found a value.
    pub edits: Vec<paths::Edit>,
}

/// Where a changed key is defined on the new side, for annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// Everything that changed for one key.
#[derive(Debug, Clone)]
pub(crate) struct KeyChange {
    pub key: String,
    pub groups: Vec<Group>,
    /// The changed files that define the key (with the line on the new side).
    pub sites: Vec<Site>,
}

impl KeyChange {
    pub(crate) fn node_count(&self) -> usize {
        self.groups.iter().map(|g| g.nodes.len()).sum()
    }

    /// Everything the report shows of the change as `r` prints it: the key, the answers
    /// and error messages of each side, each edit's path and values. (Grouping was done on
    /// the real values: two nodes whose secrets differ stay apart.)
    fn redact(&mut self, r: &Redactor) {
        let resolved = |x: &Resolved| match x {
            Resolved::Found(v) => Resolved::Found(r.value(v)),
            Resolved::NotFound => Resolved::NotFound,
            Resolved::Error(e) => Resolved::Error(r.text(e).into_owned()),
        };
        self.key = r.text(&self.key).into_owned();
        for g in &mut self.groups {
            g.before = resolved(&g.before);
            g.after = resolved(&g.after);
            for e in &mut g.edits {
                e.redact(r);
            }
        }
    }
}

/// What `diff` found: render it with [`output::Format::render`].
#[derive(Debug, Clone)]
pub struct Report {
    pub(crate) base: String,
    pub(crate) head: String,
    pub(crate) changes: Vec<KeyChange>,
    pub(crate) impact: impact::Impact,
    pub(crate) nodes: usize,
    /// Distinct keys looked up (on both sides, for every node).
    pub(crate) keys_recomputed: usize,
    /// Keys of the data that were not looked up, because the change cannot touch them
    /// (`None` when keys were given and all were looked up).
    pub(crate) keys_skipped: usize,
    /// Lookups made (both sides).
    pub(crate) lookups: usize,
    /// Nodes whose hierarchies reach no changed file on either side: none of their keys was
    /// looked up.
    pub(crate) nodes_skipped: usize,
    /// The node × key pairs not looked up: those of skipped keys on every node, and every
    /// pair of the skipped nodes.
    pub(crate) pairs_skipped: usize,
    /// The new side's [`Tree::prefix`].
    pub(crate) path_prefix: String,
    /// The nodes whose facts could not be read, each `node NAME: why` (the others are
    /// compared; the command fails at the end).
    pub unreadable: Vec<String>,
    /// Answers (node × key × side) that held an opaque secret: no private key decrypted
    /// it, and it was compared by its ciphertext.
    pub(crate) opaque: usize,
}

impl Report {
    /// Whether any key's answers changed on any node (the command's exit status 1).
    pub fn has_changes(&self) -> bool {
        !self.changes.is_empty()
    }

    /// How many node × key lookups the change makes fail (an error on the new side where
    /// the old side answered or found nothing): a CI job must not pass such a change as an
    /// ordinary one.
    pub fn new_errors(&self) -> usize {
        self.changes
            .iter()
            .flat_map(|c| &c.groups)
            .filter(|g| {
                matches!(g.after, Resolved::Error(_)) && !matches!(g.before, Resolved::Error(_))
            })
            .map(|g| g.nodes.len())
            .sum()
    }

    pub(crate) fn changed_nodes(&self) -> usize {
        let set: BTreeSet<&str> = self
            .changes
            .iter()
            .flat_map(|c| {
                c.groups
                    .iter()
                    .flat_map(|g| g.nodes.iter().map(String::as_str))
            })
            .collect();
        set.len()
    }
}

/// Which keys to compare.
#[derive(Debug, Clone)]
pub enum Keys {
    /// These keys.
    List(Vec<String>),
    /// Every key either side can see.
    All,
}

/// What [`run`] tells its caller while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A warning reading the nodes gave (a facts file's, a node name given twice).
    Warning(String),
    /// So many nodes compared, of about so many ([`NodeSource::expected`]).
    Progress {
        /// Nodes compared so far.
        done: usize,
        /// Nodes expected.
        expected: usize,
    },
}

/// What `diff` needs.
pub struct Request<'a> {
    /// The side before the change.
    pub base: Tree,
    /// The side after the change.
    pub head: Tree,
    /// The nodes to compare (each looked up on both sides), read as they are compared.
    pub nodes: NodeSource<'a>,
    /// Told of warnings and progress as the nodes are compared.
    pub events: Box<dyn FnMut(Event) + Send + 'a>,
    /// The keys to compare.
    pub keys: Keys,
    /// The session settings of every lookup.
    pub settings: Settings,
    /// Worker threads (at least 1).
    pub threads: usize,
    /// Look up every key even where the change cannot touch it (a check of the analysis).
    pub no_skip: bool,
    /// A global hiera.yaml (absolute) over both sides, as a lookup's `--hiera_config`.
    pub hiera_config: Option<PathBuf>,
    /// Both sides' modulepath instead of their environment.conf's (`:`-separated; entries
    /// under the control repo are read from each side).
    pub modulepath: Option<String>,
    /// Print what eyaml decrypted. By default every plaintext a lookup decrypted (on either
    /// side, for any node) is `[redacted]` wherever the report would show it (values, edits,
    /// error messages), as `--redact` does for a lookup; a secret that changed reads
    /// "changed (encrypted value)". The comparison itself is on the real values.
    pub show_secrets: bool,
    /// Run the programs of `lookup_key: command` levels (`--allow-exec`). Off, a lookup
    /// reaching one fails the diff: the trees compared are a branch nobody may have read,
    /// and nothing they name runs unless the user says so.
    pub allow_exec: bool,
}

/// What the refusal to run a `command` level adds to its error.
const HOW_TO_ALLOW: &str = "diff runs no program a compared tree names unless given --allow-exec";

/// One side, ready for lookups: a workspace over the side's tree.
struct Side<'a> {
    tree: &'a Tree,
    workspace: Workspace,
}

impl<'a> Side<'a> {
    fn new(tree: &'a Tree, layers: hiera_engine::engine::Layers, settings: &Settings) -> Side<'a> {
        Side {
            tree,
            workspace: Workspace::with_fs(layers, settings.clone(), tree.fs.clone()),
        }
    }

    /// The other side, taking this side's parse of every file whose git object id (its
    /// bytes) is the same on both sides at the same path.
    fn share_unchanged(&self, other: &mut Side) {
        if self.tree.root != other.tree.root {
            // Two directories: errors name each side's own paths.
            return;
        }
        let same = other
            .tree
            .listing
            .iter()
            .filter(|(rel, id)| self.tree.listing.get(*rel) == Some(id))
            // A HOCON file may include others, which may have changed.
            .filter(|(rel, _)| !rel.ends_with(".conf"))
            .map(|(rel, _)| other.tree.root.join(rel).display().to_string())
            .collect();
        other.workspace.share_parses_with(&self.workspace, same);
    }

    /// The changed files, as this side's canonical paths.
    fn changed(&self, impact: &impact::Impact) -> std::collections::HashSet<PathBuf> {
        impact
            .changed
            .iter()
            .map(|f| self.tree.fs.canonical(&self.tree.root.join(&f.path)))
            .collect()
    }

    /// Whether the node's hierarchies on this side name any of `changed` (an error, or an
    /// entry that names no location, counts as yes). Paths are compared canonical: a level
    /// may name a changed file through a linked directory or `..`.
    fn reaches(&self, session: &mut Session, changed: &std::collections::HashSet<PathBuf>) -> bool {
        match session.reached_locations() {
            Ok(Some(locations)) => locations
                .iter()
                .any(|l| changed.contains(&self.tree.fs.canonical(Path::new(l)))),
            _ => true,
        }
    }

    fn session(&self, node: &Node, allow_exec: bool) -> Session {
        let mut s = self.workspace.session_unrefreshed(node.scope.clone());
        if !allow_exec {
            s.set_exec(Exec::Refused {
                how_to_allow: HOW_TO_ALLOW,
            });
        }
        s
    }

    fn answer(&self, session: &mut Session, key: &str) -> Resolved {
        let r = match session.lookup(&[key.to_string()], None) {
            Ok(Outcome::Found(v)) => Resolved::Found(v),
            Ok(Outcome::NotFound) => Resolved::NotFound,
            Err(e) => Resolved::Error(self.tree.relative_message(&e.to_string())),
        };
        session.take_warnings();
        r
    }
}

/// One node's comparison.
struct NodeDiff {
    /// The keys the node sees on either side (when every key is compared).
    seen: Vec<String>,
    /// Whether the node reaches no changed file (nothing looked up).
    skipped: bool,
    lookups: usize,
    /// The keys whose answers differ: before, after, and the edits by path.
    changes: Vec<(String, Resolved, Resolved, Vec<paths::Edit>)>,
    /// What the node's lookups decrypted, on both sides.
    secrets: Redactor,
    /// Its answers that held an opaque secret ([`Report::opaque`]).
    opaque: usize,
    /// A `command` level a lookup reached and did not run: the diff fails with it.
    refused: Option<String>,
}

/// Compares the two trees for every node. The analysis recurses over the data as lookups
/// do (parsing, comparing and locating values nested up to
/// [`MAX_VALUE_DEPTH`](hiera_value::limits::MAX_VALUE_DEPTH)), so it runs on a stack of the
/// lookups' size, [`LOOKUP_STACK_SIZE`](hiera_value::limits::LOOKUP_STACK_SIZE), whatever
/// the caller's thread has (`ulimit -s 512`).
pub fn run(req: Request) -> Result<Report> {
    let Request {
        base,
        head,
        nodes,
        mut events,
        keys,
        settings,
        threads,
        no_skip,
        show_secrets,
        allow_exec,
        hiera_config,
        modulepath,
    } = req;
    let req = Options {
        base,
        head,
        keys,
        settings,
        threads,
        no_skip,
        show_secrets,
        allow_exec,
        hiera_config,
        modulepath,
    };
    stacker::grow(hiera_value::limits::LOOKUP_STACK_SIZE, || {
        let mut nodes = Some(nodes);
        match diff_trees(&req, &mut nodes, &mut *events) {
            // A node whose facts cannot be read is the error, whatever else failed first.
            Err(e) => Err(match nodes {
                Some(nodes) => first_facts_error(nodes, req.threads).unwrap_or(e),
                None => e,
            }),
            ok => ok,
        }
    })
}

/// [`Request`] without its nodes and events.
struct Options {
    base: Tree,
    head: Tree,
    keys: Keys,
    settings: Settings,
    threads: usize,
    no_skip: bool,
    show_secrets: bool,
    allow_exec: bool,
    hiera_config: Option<PathBuf>,
    modulepath: Option<String>,
}

/// Why `node`'s facts cannot be read (`node NAME: why`), if they cannot.
fn node_error(node: &Node) -> Option<String> {
    let e = node.facts_error.as_ref()?;
    Some(format!("node {}: {e}", node.name))
}

/// [`node_error`] of the first node of `nodes` that has one, read on `threads` workers.
fn first_facts_error(nodes: NodeSource<'_>, threads: usize) -> Option<Error> {
    let mut first = None;
    hiera_engine::workers::in_order(
        nodes.into_units(),
        threads,
        |unit| unit().nodes.iter().find_map(node_error).map(Error::run),
        |_, e| match e {
            Some(e) => {
                first = Some(e);
                std::ops::ControlFlow::Break(())
            }
            None => std::ops::ControlFlow::Continue(()),
        },
    );
    first
}

/// A group of a key's change before its nodes are named: their indices, the values before
/// and after, and the edits between them.
type IndexedGroup = (Vec<usize>, Resolved, Resolved, Vec<paths::Edit>);

/// One unit's nodes compared, and why those whose facts cannot be read were not.
struct UnitDiff {
    /// Each node's name, source (the source's value) and comparison.
    nodes: Vec<(String, Option<String>, NodeDiff)>,
    warnings: Vec<String>,
    unreadable: Vec<String>,
}

fn diff_trees(
    req: &Options,
    node_source: &mut Option<NodeSource<'_>>,
    events: &mut (dyn FnMut(Event) + Send),
) -> Result<Report> {
    // Each side's layers, in control-repo mode (its root is the environment), with the
    // request's global hiera.yaml and modulepath.
    let layers_of = |tree: &Tree| -> Result<hiera_engine::engine::Layers> {
        let mut layers = EnvOptions {
            cwd: tree.root.clone(),
            modulepath: req.modulepath.clone(),
            ..Default::default()
        }
        .layers_in(&*tree.fs)?;
        if let Some(global) = &req.hiera_config {
            layers.global = Some(global.clone());
        }
        Ok(layers)
    };
    let (base_layers, head_layers) = (layers_of(&req.base)?, layers_of(&req.head)?);
    let mut dirs = read_dirs(&req.base, &base_layers);
    dirs.extend(read_dirs(&req.head, &head_layers));
    // A submodule neither side can read, where lookups read: its change cannot be seen.
    if let Some(m) = unreadable_submodule(&req.base, &req.head, &dirs)
        .or_else(|| unreadable_submodule(&req.head, &req.base, &dirs))
    {
        return Err(Error::run(m));
    }
    // What the hierarchies read elsewhere in the same git work tree is compared too.
    let (mut base_tree, mut head_tree) = (req.base.clone(), req.head.clone());
    let git_root = (req.base.git.as_ref().or(req.head.git.as_ref())).map(|g| g.workdir());
    if let (Some(git_root), true) = (git_root, base_tree.root == head_tree.root) {
        let elsewhere = outside(&dirs, &base_tree.root, git_root);
        if !elsewhere.is_empty() {
            base_tree.list_outside(&elsewhere)?;
            head_tree.list_outside(&elsewhere)?;
        }
    }
    // Each side's modules, named as the listings name files.
    let modules: Vec<(String, String)> = [(&base_tree, &base_layers), (&head_tree, &head_layers)]
        .into_iter()
        .flat_map(|(tree, layers)| {
            (layers.modules.iter()).map(|(name, dir)| {
                (
                    name.clone(),
                    relative_path(&tree.root, &tree.fs.canonical(dir)),
                )
            })
        })
        .collect();
    let impact = impact::analyse(&base_tree, &head_tree, &modules);
    // Decrypted plaintexts are recorded (and later hidden) unless asked for.
    let settings = Settings {
        redact: !req.show_secrets,
        ..req.settings.clone()
    };
    let (base, mut head) = (
        Side::new(&base_tree, base_layers, &settings),
        Side::new(&head_tree, head_layers, &settings),
    );
    base.share_unchanged(&mut head);
    // Every key on every node, or every key on the nodes that reach a changed file.
    let everywhere =
        req.no_skip || (impact.everything.is_some() && !impact.everything_where_reached);
    let every_key = req.no_skip || impact.everything.is_some();
    // The keys to look up: `None` is every key either side can see, per node.
    let keys: Option<Vec<String>> = match (&req.keys, every_key) {
        (Keys::List(k), true) => Some(k.clone()),
        (Keys::List(k), false) => Some(
            k.iter()
                .filter(|k| {
                    hiera_engine::key::LookupKey::parse(k)
                        .map(|l| impact.keys.contains(&l.root))
                        .unwrap_or(true)
                })
                .cloned()
                .collect(),
        ),
        (Keys::All, true) => None,
        (Keys::All, false) => Some(impact.keys.iter().cloned().collect()),
    };
    if keys.as_ref().is_some_and(|k| k.is_empty()) {
        // Nothing the change touches: no lookup at all (the nodes are read, to count them
        // and to fail on one whose facts cannot be read).
        let given = match &req.keys {
            Keys::List(k) => k.len(),
            Keys::All => impact.universe.len(),
        };
        let nodes = node_source.take().map(|n| n.into_units());
        let (mut count, mut unreadable) = (0usize, Vec::new());
        hiera_engine::workers::in_order(
            nodes.into_iter().flatten(),
            req.threads,
            |unit| {
                let r = unit();
                let errors: Vec<String> = r.nodes.iter().filter_map(node_error).collect();
                (r.nodes.len() - errors.len(), r.warnings, errors)
            },
            |_, (n, warnings, errors)| {
                for w in warnings {
                    events(Event::Warning(w));
                }
                count += n;
                unreadable.extend(errors);
                std::ops::ControlFlow::Continue(())
            },
        );
        return Ok(Report {
            unreadable,
            base: req.base.label.clone(),
            head: req.head.label.clone(),
            changes: Vec::new(),
            nodes: count,
            keys_recomputed: 0,
            keys_skipped: given,
            lookups: 0,
            nodes_skipped: 0,
            pairs_skipped: given * count,
            path_prefix: req.head.prefix.clone(),
            impact,
            opaque: 0,
        });
    }
    // A node whose hierarchies reach no changed file on either side gets the same answers
    // on both: the keys that interpolate changed keys look those up in the node's own
    // hierarchies too, a data file that does not load or a changed lookup_options pattern
    // is read only by the nodes reaching it, and every other change (hiera.yaml, modules,
    // eyaml keys) recomputes everything. A HOCON file whose includes changed is a changed
    // file itself ([`impact::analyse`]): the nodes reaching it are asked.
    let skip_unreached = !everywhere;
    let (changed_base, changed_head) = (base.changed(&impact), head.changed(&impact));

    // Each unit of nodes (a facts file) read and compared on a worker (batch mode's design);
    // the results are grouped in node order, so the report is the same whatever the threads.
    let mut looked_up: rustc_hash::FxHashSet<String> = Default::default();
    let (mut lookups, mut nodes_skipped) = (0usize, 0usize);
    let compare = |node: Node| -> NodeDiff {
        let mut sb = base.session(&node, req.allow_exec);
        let mut sh = head.session(&node, req.allow_exec);
        let (node_keys, seen) = match &keys {
            Some(k) => (k.clone(), Vec::new()),
            None => {
                let mut set: indexmap::IndexSet<String, rustc_hash::FxBuildHasher> =
                    Default::default();
                for k in [sb.all_keys(), sh.all_keys()].into_iter().flatten() {
                    set.extend(k);
                }
                let all: Vec<String> = set.into_iter().collect();
                (all.clone(), all)
            }
        };
        if skip_unreached
            && !base.reaches(&mut sb, &changed_base)
            && !head.reaches(&mut sh, &changed_head)
        {
            return NodeDiff {
                seen,
                skipped: true,
                lookups: 0,
                changes: Vec::new(),
                secrets: Redactor::default(),
                opaque: 0,
                refused: None,
            };
        }
        let mut changes = Vec::new();
        let mut opaque = 0;
        let lookups = node_keys.len() * 2;
        for key in node_keys {
            let before = base.answer(&mut sb, &key);
            let after = head.answer(&mut sh, &key);
            for r in [&before, &after] {
                if let Resolved::Found(v) = r {
                    opaque += usize::from(hiera_engine::backend::eyaml::contains_opaque(v));
                }
            }
            let refused = (sb.refused_exec().map(|m| base.tree.relative_message(m)))
                .or_else(|| sh.refused_exec().map(|m| head.tree.relative_message(m)));
            if refused.is_some() {
                return NodeDiff {
                    seen,
                    skipped: false,
                    lookups,
                    changes,
                    secrets: Redactor::default(),
                    opaque,
                    refused,
                };
            }
            if before != after {
                let edits = match (&before, &after) {
                    (Resolved::Found(a), Resolved::Found(b)) => paths::diff(a, b),
                    _ => Vec::new(),
                };
                changes.push((key, before, after, edits));
            }
        }
        let mut secrets = Redactor::default();
        for r in [sb.redactor(), sh.redactor()].into_iter().flatten() {
            secrets.merge(r);
        }
        NodeDiff {
            seen,
            skipped: false,
            lookups,
            changes,
            secrets,
            opaque,
            refused: None,
        }
    };
    let mut secrets = Redactor::default();
    let mut opaque = 0usize;
    // The first refusal, in node order (the same whatever the threads).
    let mut refused: Option<String> = None;
    let mut unreadable: Vec<String> = Vec::new();
    // Every node's name and source, in order; groups hold their indices until the names
    // are told apart (two facts files of one certname), which needs them all.
    let mut all_nodes: Vec<(String, Option<String>)> = Vec::new();
    let mut by_key_nodes: BTreeMap<String, Vec<IndexedGroup>> = BTreeMap::new();
    let expected = node_source.as_ref().map_or(0, |n| n.expected);
    let units = node_source.take().map(|n| n.into_units());
    hiera_engine::workers::in_order(
        units.into_iter().flatten(),
        req.threads,
        |unit| {
            let r = unit();
            let mut unreadable = Vec::new();
            let nodes = r
                .nodes
                .into_iter()
                .filter_map(|n| {
                    if let Some(e) = node_error(&n) {
                        unreadable.push(e);
                        return None;
                    }
                    let (name, source) = (n.name.clone(), n.source.clone().map(|(_, v)| v));
                    Some((name, source, compare(n)))
                })
                .collect();
            UnitDiff {
                nodes,
                warnings: r.warnings,
                unreadable,
            }
        },
        |_, u| {
            for w in u.warnings {
                events(Event::Warning(w));
            }
            unreadable.extend(u.unreadable);
            for (name, source, d) in u.nodes {
                let i = all_nodes.len();
                all_nodes.push((name, source));
                if refused.is_none() {
                    refused = d.refused;
                }
                for k in d.seen {
                    if !looked_up.contains(&k) {
                        looked_up.insert(k);
                    }
                }
                nodes_skipped += usize::from(d.skipped);
                lookups += d.lookups;
                opaque += d.opaque;
                secrets.merge(&d.secrets);
                // Group by key, then by identical change.
                for (key, before, after, edits) in d.changes {
                    let groups = by_key_nodes.entry(key).or_default();
                    let same = |g: &&mut (Vec<usize>, Resolved, Resolved, Vec<paths::Edit>)| {
                        if edits.is_empty() {
                            g.3.is_empty() && g.1 == before && g.2 == after
                        } else {
                            g.3 == edits
                        }
                    };
                    match groups.iter_mut().find(same) {
                        Some(g) => g.0.push(i),
                        None => groups.push((vec![i], before, after, edits)),
                    }
                }
            }
            events(Event::Progress {
                done: all_nodes.len(),
                expected,
            });
            std::ops::ControlFlow::Continue(())
        },
    );
    for w in hiera_engine::batch::duplicate_warnings(
        all_nodes
            .iter()
            .map(|(n, s)| (n.as_str(), s.as_deref().unwrap_or_default())),
    ) {
        events(Event::Warning(w));
    }
    // Nodes of the same name (two facts files of one certname) are told apart by source.
    let names = hiera_engine::batch::distinct_names_of(
        all_nodes.iter().map(|(n, s)| (n.as_str(), s.as_deref())),
    );
    let mut by_key: BTreeMap<String, Vec<Group>> = BTreeMap::new();
    for (key, groups) in by_key_nodes {
        by_key.insert(
            key,
            groups
                .into_iter()
                .map(|(nodes, before, after, edits)| Group {
                    nodes: nodes.into_iter().map(|i| names[i].clone()).collect(),
                    before,
                    after,
                    edits,
                })
                .collect(),
        );
    }
    if let Some(m) = refused {
        return Err(Error::run(m));
    }
    let changes = by_key
        .into_iter()
        .map(|(key, mut groups)| {
            groups.sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
            let sites = sites_of(&base_tree, &head_tree, &impact, &key);
            let mut change = KeyChange { key, groups, sites };
            if !secrets.is_empty() {
                change.redact(&secrets);
            }
            change
        })
        .collect();
    let recomputed = match &keys {
        Some(k) => k.len(),
        None => looked_up.len(),
    };
    let skipped = match &req.keys {
        Keys::List(k) => k.len() - recomputed.min(k.len()),
        Keys::All => impact.universe.len().saturating_sub(recomputed),
    };
    let pairs_skipped = skipped * all_nodes.len() + recomputed * nodes_skipped;
    Ok(Report {
        base: req.base.label.clone(),
        head: req.head.label.clone(),
        changes,
        nodes: all_nodes.len(),
        keys_recomputed: recomputed,
        keys_skipped: skipped,
        lookups,
        nodes_skipped,
        pairs_skipped,
        path_prefix: req.head.prefix.clone(),
        impact,
        unreadable,
        opaque,
    })
}

/// The changed files defining `key` (its root) on the new side, each at the first place
/// inside the key's value that changed (the parsers' positions: block or flow style, quoted
/// keys, aliases at their alias site); else the old side's files that defined it (a
/// removal), without a line.
fn sites_of(base: &Tree, head: &Tree, impact: &impact::Impact, key: &str) -> Vec<Site> {
    let root = hiera_engine::key::LookupKey::parse(key)
        .map(|k| k.root)
        .unwrap_or_else(|_| key.to_string());
    impact
        .changed
        .iter()
        .filter(|f| f.keys.contains(&root))
        .map(|f| {
            let pos = head.read(&f.path).ok().and_then(|new| {
                changed_position(base.read(&f.path).ok(), &new, &f.path, &root, &*head.fs)
            });
            Site {
                file: f.path.clone(),
                line: pos.map(|p| p.line),
                column: pos.map(|p| p.column),
            }
        })
        .collect()
}

/// Where `root`'s value in file `rel` (new bytes `new`, old bytes `old`) first differs: the
/// deepest key or element that changed, else the key itself; `None` when the new file does
/// not hold the key or has no positions.
fn changed_position(
    old: Option<Vec<u8>>,
    new: &[u8],
    rel: &str,
    root: &str,
    fs: &dyn Fs,
) -> Option<hiera_formats::position::Pos> {
    use hiera_formats::position::{positions_of, DataFormat};
    let tree = match DataFormat::of_path(Path::new(rel))? {
        // Includes from the side's own files.
        DataFormat::Hocon => {
            let includes = impact::hocon_includes(fs);
            hiera_formats::hocon::positions_with(&String::from_utf8_lossy(new), &includes).ok()?
        }
        format => positions_of(format, new).ok()??,
    };
    let value_of = |bytes: &[u8]| {
        impact::parse(rel, bytes, fs)
            .ok()
            .and_then(|m| m.get(&Value::str(root)).cloned())
    };
    let mut path = vec![Value::str(root)];
    if let (Some(before), Some(after)) = (old.as_deref().and_then(value_of), value_of(new)) {
        first_change(&before, &after, &mut path);
    }
    // The deepest part of the path the new file writes.
    (1..=path.len())
        .rev()
        .find_map(|n| tree.locate(&path[..n]))
        .map(|l| l.pos)
}

/// Extends `path` to the first place where `after` differs from `before`: a changed or added
/// hash key or array element (a removal points at its parent).
fn first_change(before: &Value, after: &Value, path: &mut Vec<Value>) {
    match (before, after) {
        (Value::Hash(a), Value::Hash(b)) => {
            if let Some((k, v)) = b.iter().find(|(k, v)| a.get(*k) != Some(*v)) {
                path.push(k.clone());
                if let Some(old) = a.get(k) {
                    first_change(old, v, path);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            let i = (0..a.len().min(b.len()))
                .find(|&i| a[i] != b[i])
                .unwrap_or(a.len().min(b.len()));
            if i < b.len() {
                path.push(Value::Int(i as i64));
                if i < a.len() && a.len() == b.len() {
                    first_change(&a[i], &b[i], path);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose place only moved is the same error; another file, another word or
    /// another answer is a change.
    #[test]
    fn errors_are_the_same_when_only_their_lines_moved() {
        let e = |m: &str| Resolved::Error(m.to_string());
        let at5 = e("Unknown interpolation method 'x' (file: data/a.yaml, line: 5)");
        assert_eq!(
            at5,
            e("Unknown interpolation method 'x' (file: data/a.yaml, line: 4)")
        );
        assert_eq!(
            e("Hierarchy name 'b' defined more than once. First defined at (line: 6) (file: h.yaml, line: 8, column: 3)"),
            e("Hierarchy name 'b' defined more than once. First defined at (line: 6) (file: h.yaml, line: 9, column: 1)"),
        );
        assert_ne!(
            at5,
            e("Unknown interpolation method 'x' (file: data/b.yaml, line: 5)")
        );
        assert_ne!(
            at5,
            e("Unknown interpolation method 'y' (file: data/a.yaml, line: 5)")
        );
        assert_ne!(at5, Resolved::NotFound);
        assert_eq!(unlined("no place"), "no place");
        assert_eq!(unlined("(file: a, line: x)"), "(file: a, line: x)");
        assert_eq!(unlined("(file: a, line: 1"), "(file: a");
    }

    /// A change inside a value nested 1,490 deep (legal: the limit is 1,500), compared from
    /// a thread with a 128 KiB stack: the analysis does not run on the caller's stack.
    #[test]
    fn deep_data_is_compared_on_the_lookup_stack() {
        let t = std::env::temp_dir().join(format!("hl-diff-deep-{}", std::process::id()));
        let nested = |leaf: &str| format!("k: {}{leaf}{}\n", "[".repeat(1490), "]".repeat(1490));
        for (side, leaf) in [("old", "1"), ("new", "2")] {
            let d = t.join(side);
            std::fs::create_dir_all(d.join("data")).unwrap();
            std::fs::write(
                d.join("hiera.yaml"),
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            )
            .unwrap();
            std::fs::write(d.join("data/common.yaml"), nested(leaf)).unwrap();
        }
        let req = Request {
            base: Tree::dir(&t.join("old"), "old").unwrap(),
            head: Tree::dir(&t.join("new"), "new").unwrap(),
            nodes: NodeSource::from_nodes(vec![Node {
                name: "n".into(),
                source: None,
                scope: hiera_engine::scope::Scope::from_facts(Default::default(), "production"),
                facts_error: None,
                workspace: None,
            }]),
            events: Box::new(|_| ()),
            keys: Keys::List(vec!["k".into()]),
            settings: Settings::default(),
            threads: 1,
            no_skip: false,
            show_secrets: false,
            allow_exec: false,
            hiera_config: None,
            modulepath: None,
        };
        let report = std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn(move || {
                let r = run(req);
                let changed = match &r {
                    Ok(r) => Ok(r.changed_nodes()),
                    Err(e) => Err(e.to_string()),
                };
                // Dropping the deep values is the caller's business (the binary runs the
                // whole command on the lookup stack); not on this thread.
                std::mem::forget(r);
                changed
            })
            .unwrap()
            .join()
            .unwrap();
        std::fs::remove_dir_all(&t).unwrap();
        assert_eq!(report.unwrap(), 1);
    }

    /// Found by the diff fuzz target: a module's data file given a lookup_options entry
    /// for a key outside the module makes every lookup of the module's keys fail (Puppet
    /// refuses the module's lookup_options), a key the file does not name.
    #[test]
    fn a_module_lookup_options_entry_for_another_key_touches_every_module_key() {
        let t = std::env::temp_dir().join(format!("hl-diff-module-lo-{}", std::process::id()));
        let module_data = [
            "profile::x: 1\n",
            "profile::x: 1\nlookup_options:\n  a:\n    merge: unique\n",
        ];
        for (side, data) in [("old", module_data[0]), ("new", module_data[1])] {
            let d = t.join(side);
            std::fs::create_dir_all(d.join("data")).unwrap();
            std::fs::create_dir_all(d.join("modules/profile/data")).unwrap();
            std::fs::write(
                d.join("hiera.yaml"),
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            )
            .unwrap();
            std::fs::write(d.join("data/common.yaml"), "a: 1\n").unwrap();
            std::fs::write(
                d.join("modules/profile/hiera.yaml"),
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            )
            .unwrap();
            std::fs::write(d.join("modules/profile/data/common.yaml"), data).unwrap();
        }
        let req = |keys: Keys| Request {
            base: Tree::dir(&t.join("old"), "old").unwrap(),
            head: Tree::dir(&t.join("new"), "new").unwrap(),
            nodes: NodeSource::from_nodes(vec![Node {
                name: "n".into(),
                source: None,
                scope: hiera_engine::scope::Scope::from_facts(Default::default(), "production"),
                facts_error: None,
                workspace: None,
            }]),
            events: Box::new(|_| ()),
            keys,
            settings: Settings::default(),
            threads: 1,
            no_skip: false,
            show_secrets: false,
            allow_exec: false,
            hiera_config: None,
            modulepath: None,
        };
        let changed = |keys: Keys| -> Vec<(String, String)> {
            let r = run(req(keys)).unwrap();
            (r.changes.iter())
                .map(|c| (c.key.clone(), format!("{:?}", c.groups[0].after)))
                .collect()
        };
        let list = changed(Keys::List(vec!["profile::x".into(), "a".into()]));
        let all = changed(Keys::All);
        std::fs::remove_dir_all(&t).unwrap();
        for got in [list, all] {
            assert_eq!(got.len(), 1, "{got:?}");
            assert_eq!(got[0].0, "profile::x");
            assert!(
                got[0].1.contains("must start with module name 'profile'"),
                "{got:?}"
            );
        }
    }

    fn at(old: &str, new: &str, rel: &str, root: &str) -> Option<(usize, usize)> {
        changed_position(
            Some(old.as_bytes().to_vec()),
            new.as_bytes(),
            rel,
            root,
            &hiera_engine::fs::RealFs,
        )
        .map(|p| (p.line, p.column))
    }

    #[test]
    fn a_change_is_placed_where_the_parser_saw_it() {
        let old = "---\na: 1\nlist:\n  - x\n  - y\nb: 2\n";
        // The changed element, the key of a removal, a changed scalar.
        assert_eq!(
            at(
                old,
                "---\na: 1\nlist:\n  - x\n  - z\nb: 2\n",
                "d.yaml",
                "list"
            ),
            Some((5, 5))
        );
        assert_eq!(
            at(old, "---\na: 1\nlist:\n  - x\nb: 2\n", "d.yaml", "list"),
            Some((3, 1))
        );
        assert_eq!(
            at(old, "---\na: 3\nlist:\n  - x\n  - y\nb: 2\n", "d.yaml", "a"),
            Some((2, 1))
        );
        // A new key; no old file.
        assert_eq!(
            changed_position(None, b"c: 1\n", "d.yaml", "c", &hiera_engine::fs::RealFs)
                .map(|p| p.line),
            Some(1)
        );
        // Flow style and quoted keys: the element inside the line.
        assert_eq!(
            at(
                "'k': {a: 1, b: [1, 2]}\n",
                "'k': {a: 1, b: [1, 3]}\n",
                "d.yaml",
                "k"
            ),
            Some((1, 20))
        );
        // Through an alias: the alias site.
        let old = "base: &b {x: 1}\nk: *b\n";
        let new = "base: &b {x: 2}\nk: *b\n";
        assert_eq!(at(old, new, "d.yaml", "k"), Some((2, 4)));
        // JSON, nested hashes.
        assert_eq!(
            at(
                "{\"k\": {\"a\": 1,\n \"b\": 2}}",
                "{\"k\": {\"a\": 1,\n \"b\": 3}}",
                "d.json",
                "k"
            ),
            Some((2, 2))
        );
        // A file without positions (not a data format) or without the key.
        assert_eq!(at("k: 1\n", "k: 2\n", "d.txt", "k"), None);
        assert_eq!(at("k: 1\n", "j: 2\n", "d.yaml", "k"), None);
    }
}
