//! `hiera-lookup diff`: what a change to the control repo does to the fleet. Two trees (git
//! revisions read through `git::GitFs`, or directories) are looked up with the same engine
//! for every node × key the change can touch (`impact`), and the answers that differ are
//! grouped by key with a diff by path (`paths`), printed by [`output`].
#![warn(missing_docs)]

pub mod git;
pub(crate) mod impact;
pub mod output;
pub(crate) mod paths;

use hiera_engine::backend::DataFiles;
use hiera_engine::batch::Node;
use hiera_engine::engine::{Outcome, Session, Settings};
use hiera_engine::environment::EnvOptions;
use hiera_engine::error::{Error, Result};
use hiera_engine::fs::Fs;
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
    /// The files a lookup may read ([`impact::role`]), relative to `root`, with their git
    /// object ids (computed for files on disk).
    pub(crate) listing: BTreeMap<String, gix::ObjectId>,
    /// `root` relative to the git work tree ("" at its top, or outside git), for the file
    /// names of annotations.
    pub prefix: String,
}

/// Directory entries a listing may visit: a runaway tree is an error, not a hang.
const MAX_LISTING: usize = 1_000_000;

impl Tree {
    /// A directory on disk.
    pub fn dir(root: &Path, label: impl Into<String>) -> Result<Tree> {
        let root = std::fs::canonicalize(root)
            .map_err(|e| Error::run(format!("{}: {e}", root.display())))?;
        if !root.is_dir() {
            return Err(Error::run(format!("{} is not a directory", root.display())));
        }
        let mut listing = BTreeMap::new();
        let mut seen = 0usize;
        let mut stack = vec![String::new()];
        while let Some(rel) = stack.pop() {
            let dir = if rel.is_empty() {
                root.clone()
            } else {
                root.join(&rel)
            };
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.filter_map(|e| e.ok()) {
                seen += 1;
                if seen > MAX_LISTING {
                    return Err(Error::run(format!(
                        "{} has more than {MAX_LISTING} entries",
                        root.display()
                    )));
                }
                let name = e.file_name().to_string_lossy().into_owned();
                let path = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_dir() {
                    if name != ".git" {
                        stack.push(path);
                    }
                } else if impact::role(&path).is_some() {
                    let bytes = hiera_value::limits::read_file(e.path()).unwrap_or_default();
                    if let Some(id) = git::blob_id(&bytes) {
                        listing.insert(path, id);
                    }
                }
            }
        }
        Ok(Tree {
            label: label.into(),
            root,
            fs: hiera_engine::fs::disk(),
            listing,
            prefix: String::new(),
        })
    }

    /// Revision `rev` of `repo`, with the control repo at `root` (in the work tree).
    pub fn revision(repo: &git::Repo, rev: &str, root: &Path) -> Result<Tree> {
        let fs = repo.revision(rev).map_err(Error::run)?;
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
            .files_under(&prefix)
            .into_iter()
            .filter(|(p, _)| impact::role(p).is_some())
            .collect();
        Ok(Tree {
            label: rev.to_string(),
            root,
            fs: Arc::new(fs),
            listing,
            prefix,
        })
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

/// One side's answer for a node and key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    Found(Value),
    NotFound,
    /// The error a lookup gives, with paths relative to the control repo.
    Error(String),
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
}

impl Report {
    /// Whether any key's answers changed on any node (the command's exit status 1).
    pub fn has_changes(&self) -> bool {
        !self.changes.is_empty()
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

/// What `diff` needs.
#[derive(Debug, Clone)]
pub struct Request {
    /// The side before the change.
    pub base: Tree,
    /// The side after the change.
    pub head: Tree,
    /// The nodes to compare (each looked up on both sides).
    pub nodes: Vec<Node>,
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
}

/// One side, ready for lookups.
struct Side<'a> {
    tree: &'a Tree,
    layers: hiera_engine::engine::Layers,
    files: DataFiles,
}

impl<'a> Side<'a> {
    /// The tree's layers, in control-repo mode (its root is the environment), with the
    /// request's global hiera.yaml and modulepath.
    fn new(tree: &'a Tree, req: &Request) -> Result<Side<'a>> {
        let env = EnvOptions {
            cwd: tree.root.clone(),
            modulepath: req.modulepath.clone(),
            ..Default::default()
        };
        let mut layers = env.layers_in(&*tree.fs)?;
        if let Some(global) = &req.hiera_config {
            layers.global = Some(global.clone());
        }
        Ok(Side {
            tree,
            layers,
            files: DataFiles::with_fs(tree.fs.clone()),
        })
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
            .map(|(rel, _)| other.tree.root.join(rel).display().to_string())
            .collect();
        other.files = other.files.clone().sharing_with(&self.files, same);
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

    fn session(&self, node: &Node, settings: &Settings) -> Session {
        Session::with_files(
            node.scope.clone(),
            self.layers.clone(),
            settings.clone(),
            self.files.clone(),
        )
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
}

/// Compares the two trees for every node.
pub fn run(req: &Request) -> Result<Report> {
    if let Some(n) = req.nodes.iter().find(|n| n.facts_error.is_some()) {
        let e = n
            .facts_error
            .as_ref()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err(Error::run(format!("node {}: {e}", n.name)));
    }
    let impact = impact::analyse(&req.base, &req.head);
    let (base, mut head) = (Side::new(&req.base, req)?, Side::new(&req.head, req)?);
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
        // Nothing the change touches: no lookup at all.
        let given = match &req.keys {
            Keys::List(k) => k.len(),
            Keys::All => impact.universe.len(),
        };
        return Ok(Report {
            base: req.base.label.clone(),
            head: req.head.label.clone(),
            changes: Vec::new(),
            nodes: req.nodes.len(),
            keys_recomputed: 0,
            keys_skipped: given,
            lookups: 0,
            nodes_skipped: 0,
            pairs_skipped: given * req.nodes.len(),
            path_prefix: req.head.prefix.clone(),
            impact,
        });
    }
    // A node whose hierarchies reach no changed file on either side gets the same answers
    // on both: the keys that interpolate changed keys look those up in the node's own
    // hierarchies too, a data file that does not load or a changed lookup_options pattern
    // is read only by the nodes reaching it, and every other change (hiera.yaml, modules,
    // eyaml keys) recomputes everything. HOCON files may `include` others, which no
    // hierarchy names.
    let skip_unreached = !everywhere && !impact.changed.iter().any(|f| f.path.ends_with(".conf"));
    let (changed_base, changed_head) = (base.changed(&impact), head.changed(&impact));

    // Each node on a worker (batch mode's design); the results are grouped in node order, so
    // the report is the same whatever the threads.
    let mut by_key: BTreeMap<String, Vec<Group>> = BTreeMap::new();
    let mut looked_up: rustc_hash::FxHashSet<String> = Default::default();
    let (mut lookups, mut nodes_skipped) = (0usize, 0usize);
    let compare = |node: &Node| -> NodeDiff {
        let mut sb = base.session(node, &req.settings);
        let mut sh = head.session(node, &req.settings);
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
            };
        }
        let mut changes = Vec::new();
        let lookups = node_keys.len() * 2;
        for key in node_keys {
            let before = base.answer(&mut sb, &key);
            let after = head.answer(&mut sh, &key);
            if before != after {
                let edits = match (&before, &after) {
                    (Resolved::Found(a), Resolved::Found(b)) => paths::diff(a, b),
                    _ => Vec::new(),
                };
                changes.push((key, before, after, edits));
            }
        }
        NodeDiff {
            seen,
            skipped: false,
            lookups,
            changes,
        }
    };
    hiera_engine::workers::in_order(&req.nodes, req.threads, compare, |i, d| {
        for k in d.seen {
            if !looked_up.contains(&k) {
                looked_up.insert(k);
            }
        }
        nodes_skipped += usize::from(d.skipped);
        lookups += d.lookups;
        // Group by key, then by identical change.
        let name = &req.nodes[i].name;
        for (key, before, after, edits) in d.changes {
            let groups = by_key.entry(key).or_default();
            let same = |g: &&mut Group| {
                if edits.is_empty() {
                    g.edits.is_empty() && g.before == before && g.after == after
                } else {
                    g.edits == edits
                }
            };
            match groups.iter_mut().find(same) {
                Some(g) => g.nodes.push(name.clone()),
                None => groups.push(Group {
                    nodes: vec![name.clone()],
                    before,
                    after,
                    edits,
                }),
            }
        }
    });
    let changes = by_key
        .into_iter()
        .map(|(key, mut groups)| {
            groups.sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
            let sites = sites_of(&req.base, &req.head, &impact, &key);
            KeyChange { key, groups, sites }
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
    let pairs_skipped = skipped * req.nodes.len() + recomputed * nodes_skipped;
    Ok(Report {
        base: req.base.label.clone(),
        head: req.head.label.clone(),
        changes,
        nodes: req.nodes.len(),
        keys_recomputed: recomputed,
        keys_skipped: skipped,
        lookups,
        nodes_skipped,
        pairs_skipped,
        path_prefix: req.head.prefix.clone(),
        impact,
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
            let pos = head
                .read(&f.path)
                .ok()
                .and_then(|new| changed_position(base.read(&f.path).ok(), &new, &f.path, &root));
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
) -> Option<hiera_formats::position::Pos> {
    use hiera_formats::position::{positions_of, DataFormat};
    let tree = positions_of(DataFormat::of_path(Path::new(rel))?, new).ok()??;
    let value_of = |bytes: &[u8]| {
        impact::parse(rel, bytes)
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

    fn at(old: &str, new: &str, rel: &str, root: &str) -> Option<(usize, usize)> {
        changed_position(Some(old.as_bytes().to_vec()), new.as_bytes(), rel, root)
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
            changed_position(None, b"c: 1\n", "d.yaml", "c").map(|p| p.line),
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
