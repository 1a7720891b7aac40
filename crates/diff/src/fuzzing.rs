//! The body of the `diff` fuzz target: a random small control repo and a random change to
//! it, both read from the fuzzer's bytes, compared by [`run`](crate::run) and checked against
//! single lookups on each side. `fuzz/fuzz_targets/diff.rs` (cargo-fuzz, nightly) calls
//! [`run`], and so does `tests/fuzz_smoke.rs` on stable, on the seeds in `fuzz/corpus/diff/`
//! and a few hundred deterministic byte strings.
//!
//! The repo: a v5 hiera.yaml of one to four levels (a node's file, `%{facts.role}`, a JSON
//! level, a glob, `mapped_paths`, `paths`, common), YAML and JSON data files whose values are
//! scalars, arrays, hashes and interpolations (`%{facts.x}`, `%{lookup('k')}`,
//! `%{alias('k')}`…), `lookup_options` (merge strategies, `convert_to`, a `^pattern`),
//! sometimes a module with data of its own, and one to three nodes. The change: one to three
//! edits among a value changed, a key added or removed, a file added, removed or renamed,
//! hiera.yaml's levels added, removed or reordered, lookup_options changed, a file broken
//! (bad YAML or JSON, not a hash, empty) or rewritten to the same data.
//!
//! The sides are two directories, or a commit and the work tree, or two commits (git, when
//! a `git` program is on PATH). The check (the oracle is a [`Workspace`] per side on its own
//! copy of the files, one fresh lookup per node × key): a node × key is in the report exactly
//! when its answers differ (value, found or not, error or not, the error's words), with that
//! node's answers or edits; with and without `no_skip`; for `--all` (every key either side
//! lists for the node) and for a list of keys (dotted ones too). A failure panics with the
//! two trees' files and the disagreement.

use crate::{paths, Group, Keys, Report, Request, Resolved, Tree};
use hiera_engine::batch::Node;
use hiera_engine::engine::{Outcome, Settings};
use hiera_engine::environment::EnvOptions;
use hiera_engine::scope::Scope;
use hiera_engine::workspace::Workspace;
use hiera_value::value::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Choices read from the fuzzer's bytes; zeros once they run out.
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    /// Choices from `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, at: 0 }
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number below `n` (0 when `n` is 0 or 1).
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.byte() as usize % n
    }

    /// True `percent` times in a hundred (of uniform bytes).
    fn chance(&mut self, percent: usize) -> bool {
        (self.byte() as usize) * 100 < percent * 256
    }

    fn pick<'s>(&mut self, xs: &[&'s str]) -> &'s str {
        xs[self.below(xs.len())]
    }
}

/// A value in a data file, written as YAML or JSON.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Int(i64),
    Bool(bool),
    Str(String),
    Arr(Vec<V>),
    Hash(Vec<(String, V)>),
}

impl V {
    fn json(&self) -> String {
        match self {
            V::Int(i) => i.to_string(),
            V::Bool(b) => b.to_string(),
            V::Str(s) => format!("\"{s}\""),
            V::Arr(a) => format!("[{}]", a.iter().map(V::json).collect::<Vec<_>>().join(", ")),
            V::Hash(h) => format!(
                "{{{}}}",
                h.iter()
                    .map(|(k, v)| format!("\"{k}\": {}", v.json()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The value after `key:` in block style, at `indent`.
    fn yaml(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self {
            V::Hash(h) if !h.is_empty() => {
                out.push('\n');
                for (k, v) in h {
                    if k.contains([':', '^']) {
                        out.push_str(&format!("{pad}\"{k}\":"));
                    } else {
                        out.push_str(&format!("{pad}{k}:"));
                    }
                    v.yaml(indent + 2, out);
                }
            }
            V::Arr(a) if !a.is_empty() => {
                out.push('\n');
                for v in a {
                    out.push_str(&format!("{pad}- {}\n", v.json()));
                }
            }
            other => out.push_str(&format!(" {}\n", other.json())),
        }
    }
}

/// Top-level keys of the environment's data; `profile::` keys are also a module's.
const KEYS: &[&str] = &["a", "b", "c", "hash", "list", "profile::x", "profile::y"];
/// Keys a list-of-keys diff asks for beyond [`KEYS`]: dotted, and one nobody defines.
const DOTTED: &[&str] = &["hash.x", "list.0", "profile::y.y", "nothing"];
const SUBKEYS: &[&str] = &["x", "y", "z"];
const ROLES: &[&str] = &["web", "db", "app"];
const FAMILIES: &[&str] = &["Debian", "RedHat"];
const SERVICES: &[&str] = &["ssh", "ntp", "www"];
const SITES: &[&str] = &["ams", "par"];

/// The environment's levels: each a name, its YAML lines (after `- name: …`) and the start
/// of the paths of the files it reads.
const LEVELS: &[(&str, &str, &str)] = &[
    (
        "nodes",
        "    path: \"nodes/%{trusted.certname}.yaml\"\n",
        "data/nodes/",
    ),
    (
        "role",
        "    path: \"roles/%{facts.role}.yaml\"\n",
        "data/roles/",
    ),
    (
        "os",
        "    data_hash: json_data\n    path: \"os/%{facts.os.family}.json\"\n",
        "data/os/",
    ),
    ("extra", "    glob: \"extra/*.yaml\"\n", "data/extra/"),
    (
        "services",
        "    mapped_paths: [facts.services, svc, \"services/%{svc}.yaml\"]\n",
        "data/services/",
    ),
    (
        "site",
        "    paths:\n      - \"site/%{facts.site}.yaml\"\n      - \"site/default.yaml\"\n",
        "data/site/",
    ),
    ("common", "    path: common.yaml\n", "data/common.yaml"),
];

/// Every data file a level can name (and one none names), relative to the control repo.
const FILES: &[&str] = &[
    "data/nodes/n1.yaml",
    "data/nodes/n2.yaml",
    "data/nodes/n3.yaml",
    "data/roles/web.yaml",
    "data/roles/db.yaml",
    "data/roles/app.yaml",
    "data/os/Debian.json",
    "data/os/RedHat.json",
    "data/extra/one.yaml",
    "data/extra/two.yaml",
    "data/services/ssh.yaml",
    "data/services/ntp.yaml",
    "data/services/www.yaml",
    "data/site/ams.yaml",
    "data/site/default.yaml",
    "data/common.yaml",
    "data/unused.yaml",
    "modules/profile/data/common.yaml",
    "modules/profile/data/roles/db.yaml",
];

/// How a data file is broken.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Broken {
    /// A syntax error.
    Syntax,
    /// A list, not a hash.
    NotAHash,
    /// Empty.
    Empty,
    /// The last key written twice (Psych and the json gem keep the second).
    Duplicate,
}

#[derive(Debug, Clone, PartialEq)]
struct DataFile {
    entries: Vec<(String, V)>,
    options: Vec<(String, V)>,
    broken: Option<Broken>,
    /// A comment or quoted keys: the same data in other bytes.
    variant: u8,
}

impl DataFile {
    fn render(&self, path: &str) -> String {
        let json = path.ends_with(".json");
        let mut entries = self.entries.clone();
        if !self.options.is_empty() {
            entries.push(("lookup_options".into(), V::Hash(self.options.clone())));
        }
        if self.broken == Some(Broken::Duplicate) {
            if let Some((k, _)) = entries.first().cloned() {
                entries.push((k, V::Str("second".into())));
            }
        }
        match self.broken {
            Some(Broken::Empty) => return String::new(),
            Some(Broken::NotAHash) => return "[1, 2]\n".into(),
            _ => {}
        }
        let mut out = String::new();
        if json {
            out.push_str(&V::Hash(entries).json());
            out.push('\n');
            if self.broken == Some(Broken::Syntax) {
                out.truncate(out.len() / 2);
            }
        } else {
            if self.variant % 2 == 1 {
                out.push_str("# a comment\n");
            }
            out.push_str("---\n");
            for (k, v) in &entries {
                if self.variant >= 2 {
                    out.push_str(&format!("\"{k}\":"));
                } else {
                    out.push_str(&format!("{k}:"));
                }
                v.yaml(2, &mut out);
            }
            if self.broken == Some(Broken::Syntax) {
                out.push_str("oops: [1, 2\n");
            }
        }
        out
    }
}

/// A control repo.
#[derive(Debug, Clone, PartialEq)]
struct Repo {
    /// Indices into [`LEVELS`], in hierarchy order.
    levels: Vec<usize>,
    /// hiera.yaml does not parse.
    config_broken: bool,
    /// The module `profile` has a hiera.yaml (its data files are in `files`).
    module: bool,
    files: BTreeMap<String, DataFile>,
}

impl Repo {
    fn hiera_yaml(&self) -> String {
        let mut s = String::from(
            "---\nversion: 5\ndefaults:\n  datadir: data\n  data_hash: yaml_data\nhierarchy:\n",
        );
        for &i in &self.levels {
            let (name, body, _) = LEVELS[i];
            s.push_str(&format!("  - name: {name}\n{body}"));
        }
        if self.config_broken {
            s.push_str("  - name: [broken\n");
        }
        s
    }

    /// Every file, path → text.
    fn render(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        out.insert("hiera.yaml".to_string(), self.hiera_yaml());
        if self.module {
            out.insert(
                "modules/profile/hiera.yaml".to_string(),
                "---\nversion: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: common\n    path: common.yaml\n"
                    .to_string(),
            );
        }
        for (path, f) in &self.files {
            out.insert(path.clone(), f.render(path));
        }
        out
    }
}

fn gen_str(b: &mut Bytes) -> V {
    let s = match b.below(12) {
        0 => "%{facts.role}".to_string(),
        1 => "%{trusted.certname}-x".to_string(),
        2 | 3 => format!("%{{lookup('{}')}}", pick_key(b, true)),
        4 => format!("v-%{{hiera('{}')}}", pick_key(b, true)),
        5 | 6 => format!("%{{alias('{}')}}", pick_key(b, false)),
        7 => "%{facts.nope}".to_string(),
        8 => "%{facts.os.family}/%{facts.site}".to_string(),
        _ => format!("s{}", b.below(4)),
    };
    V::Str(s)
}

fn pick_key(b: &mut Bytes, dotted: bool) -> String {
    if dotted && b.chance(20) {
        b.pick(DOTTED).to_string()
    } else {
        b.pick(KEYS).to_string()
    }
}

fn gen_value(b: &mut Bytes, depth: usize) -> V {
    match b.below(if depth < 2 { 7 } else { 4 }) {
        0 => V::Int(b.below(5) as i64),
        1 => V::Bool(b.chance(50)),
        2 | 3 => gen_str(b),
        4 => V::Arr((0..b.below(4)).map(|_| gen_value(b, depth + 1)).collect()),
        _ => {
            let mut h: Vec<(String, V)> = Vec::new();
            for _ in 0..b.below(4) {
                let k = b.pick(SUBKEYS).to_string();
                let v = gen_value(b, depth + 1);
                if !h.iter().any(|(x, _)| *x == k) {
                    h.push((k, v));
                }
            }
            V::Hash(h)
        }
    }
}

fn gen_option(b: &mut Bytes) -> V {
    let merge = match b.below(6) {
        0 => V::Str("first".into()),
        1 => V::Str("unique".into()),
        2 => V::Str("hash".into()),
        3 => V::Hash(vec![
            ("strategy".into(), V::Str("deep".into())),
            ("merge_hash_arrays".into(), V::Bool(true)),
        ]),
        _ => V::Str("deep".into()),
    };
    let mut o = vec![("merge".to_string(), merge)];
    if b.chance(15) {
        o.push(("convert_to".into(), V::Str("Array".into())));
    }
    V::Hash(o)
}

/// A file's keys: a module's file holds its own keys (and, rarely, one it may not).
fn gen_entry(b: &mut Bytes, path: &str) -> (String, V) {
    let key = if path.starts_with("modules/") && !b.chance(10) {
        b.pick(&["profile::x", "profile::y"]).to_string()
    } else {
        b.pick(KEYS).to_string()
    };
    (key, gen_value(b, 0))
}

fn gen_file(b: &mut Bytes, path: &str) -> DataFile {
    let mut f = DataFile {
        entries: Vec::new(),
        options: Vec::new(),
        broken: None,
        variant: 0,
    };
    for _ in 0..1 + b.below(4) {
        let (k, v) = gen_entry(b, path);
        if !f.entries.iter().any(|(x, _)| *x == k) {
            f.entries.push((k, v));
        }
    }
    if b.chance(30) {
        add_option(b, &mut f, path);
    }
    f
}

/// Sets a lookup_options entry (a module's are for its own keys, but rarely).
fn add_option(b: &mut Bytes, f: &mut DataFile, path: &str) {
    let k = if b.chance(15) {
        "^profile::".to_string()
    } else if path.starts_with("modules/") && !b.chance(10) {
        b.pick(&["profile::x", "profile::y"]).to_string()
    } else {
        b.pick(KEYS).to_string()
    };
    let o = gen_option(b);
    match f.options.iter_mut().find(|(x, _)| *x == k) {
        Some(e) => e.1 = o,
        None => f.options.push((k, o)),
    }
}

fn gen_repo(b: &mut Bytes) -> Repo {
    let mut levels: Vec<usize> = Vec::new();
    for _ in 0..1 + b.below(4) {
        let l = b.below(LEVELS.len());
        if !levels.contains(&l) {
            levels.push(l);
        }
    }
    if b.chance(50) && !levels.contains(&(LEVELS.len() - 1)) {
        levels.push(LEVELS.len() - 1);
    }
    let mut files = BTreeMap::new();
    for _ in 0..2 + b.below(7) {
        // Mostly files a level reads (or the module's).
        let mut path = b.pick(FILES);
        let read = |p: &str| {
            p.starts_with("modules/") || levels.iter().any(|&l| p.starts_with(LEVELS[l].2))
        };
        if !read(path) {
            path = b.pick(FILES);
        }
        let f = gen_file(b, path);
        files.insert(path.to_string(), f);
    }
    Repo {
        levels,
        config_broken: false,
        module: b.chance(40),
        files,
    }
}

/// Applies one random change to `repo`, saying what it did.
fn change(b: &mut Bytes, repo: &mut Repo) -> String {
    let paths: Vec<String> = repo.files.keys().cloned().collect();
    let some_file = |b: &mut Bytes| -> Option<String> {
        (!paths.is_empty()).then(|| paths[b.below(paths.len())].clone())
    };
    match b.below(13) {
        0 | 1 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let f = repo.files.get_mut(&p).unwrap();
            if f.entries.is_empty() {
                return "nothing".into();
            }
            let i = b.below(f.entries.len());
            f.entries[i].1 = gen_value(b, 0);
            format!("edit {p} {}", f.entries[i].0)
        }
        2 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let (k, v) = gen_entry(b, &p);
            let f = repo.files.get_mut(&p).unwrap();
            f.entries.retain(|(x, _)| *x != k);
            f.entries.push((k.clone(), v));
            format!("add {p} {k}")
        }
        3 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let f = repo.files.get_mut(&p).unwrap();
            if f.entries.is_empty() {
                return "nothing".into();
            }
            let (k, _) = f.entries.remove(b.below(f.entries.len()));
            format!("remove {p} {k}")
        }
        4 => {
            let p = b.pick(FILES);
            let f = gen_file(b, p);
            repo.files.insert(p.to_string(), f);
            format!("write file {p}")
        }
        5 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            repo.files.remove(&p);
            format!("delete file {p}")
        }
        6 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let to = b.pick(FILES);
            let f = repo.files.remove(&p).unwrap();
            repo.files.insert(to.to_string(), f);
            format!("rename {p} {to}")
        }
        7 => {
            let l = b.below(LEVELS.len());
            if let Some(i) = repo.levels.iter().position(|&x| x == l) {
                repo.levels.remove(i);
                format!("hiera.yaml: remove level {}", LEVELS[l].0)
            } else {
                let at = b.below(repo.levels.len() + 1);
                repo.levels.insert(at, l);
                format!("hiera.yaml: add level {} at {at}", LEVELS[l].0)
            }
        }
        8 => {
            if repo.levels.len() < 2 {
                return "nothing".into();
            }
            let i = b.below(repo.levels.len() - 1);
            repo.levels.swap(i, i + 1);
            format!("hiera.yaml: swap levels {i} and {}", i + 1)
        }
        9 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let f = repo.files.get_mut(&p).unwrap();
            if !f.options.is_empty() && b.chance(40) {
                let (k, _) = f.options.remove(b.below(f.options.len()));
                format!("lookup_options: remove {k} in {p}")
            } else {
                add_option(b, f, &p);
                format!("lookup_options: set in {p}")
            }
        }
        10 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let f = repo.files.get_mut(&p).unwrap();
            f.broken = Some(match b.below(4) {
                0 => Broken::NotAHash,
                1 => Broken::Empty,
                2 => Broken::Duplicate,
                _ => Broken::Syntax,
            });
            format!("break {p}: {:?}", f.broken.unwrap())
        }
        11 => {
            let Some(p) = some_file(b) else {
                return "nothing".into();
            };
            let f = repo.files.get_mut(&p).unwrap();
            f.variant = 1 + b.below(3) as u8;
            f.entries.reverse();
            format!("rewrite {p} (same data)")
        }
        _ => {
            if b.chance(30) {
                repo.config_broken = true;
                "break hiera.yaml".into()
            } else {
                repo.module = !repo.module;
                format!(
                    "module hiera.yaml: {}",
                    if repo.module { "add" } else { "remove" }
                )
            }
        }
    }
}

fn gen_nodes(b: &mut Bytes) -> Vec<(String, Map)> {
    let n = 1 + b.below(3);
    (1..=n)
        .map(|i| {
            let name = format!("n{i}");
            let mut facts = Map::default();
            facts.insert(Value::str("clientcert"), Value::str(&name));
            facts.insert(Value::str("role"), Value::str(b.pick(ROLES)));
            let mut os = Map::default();
            os.insert(Value::str("family"), Value::str(b.pick(FAMILIES)));
            facts.insert(Value::str("os"), Value::Hash(os));
            let services = SERVICES
                .iter()
                .filter(|_| b.chance(50))
                .map(|s| Value::str(*s))
                .collect();
            facts.insert(Value::str("services"), Value::Array(services));
            if b.chance(80) {
                facts.insert(Value::str("site"), Value::str(b.pick(SITES)));
            }
            (name, facts)
        })
        .collect()
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch() -> Scratch {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "hiera-diff-fuzz-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch directory");
    Scratch(std::fs::canonicalize(&d).expect("a scratch directory"))
}

/// Writes `files` into `dir`, after removing everything there but `.git`.
fn write_tree(dir: &Path, files: &BTreeMap<String, String>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name() != ".git" {
                let _ = std::fs::remove_dir_all(e.path());
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).expect("a directory");
        std::fs::write(p, text).expect("a file");
    }
}

fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=fuzz",
            "-c",
            "user.email=fuzz@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// How the two sides are read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sides {
    /// Two directories.
    Dirs,
    /// A commit and the work tree (`diff HEAD`).
    WorkTree,
    /// Two commits (`diff HEAD~1 HEAD`).
    Commits,
}

/// The single lookups of one side: a workspace on its own copy of the files.
struct Oracle {
    ws: Workspace,
    root: PathBuf,
}

impl Oracle {
    fn new(root: &Path) -> Oracle {
        let ws = Workspace::open(
            EnvOptions {
                cwd: root.to_path_buf(),
                ..Default::default()
            },
            Settings {
                redact: true,
                ..Default::default()
            },
        )
        .expect("a workspace");
        Oracle {
            ws,
            root: root.to_path_buf(),
        }
    }

    fn answer(&self, scope: &Scope, key: &str) -> Resolved {
        // A fresh session per lookup (nothing carried from one key to the next); the files
        // do not change under the workspace, so no refresh.
        let mut session = self.ws.session_unrefreshed(scope.clone());
        match session.lookup(&[key.to_string()], None) {
            Ok(Outcome::Found(v)) => Resolved::Found(v),
            Ok(Outcome::NotFound) => Resolved::NotFound,
            Err(e) => Resolved::Error(
                e.to_string()
                    .replace(&format!("{}/", self.root.display()), ""),
            ),
        }
    }

    fn keys(&self, scope: &Scope) -> Vec<String> {
        (self.ws.session_unrefreshed(scope.clone()).all_keys()).unwrap_or_default()
    }
}

/// What one case did, for the smoke test's totals.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Node × key pairs whose answers differ.
    pub changed_pairs: usize,
    /// Node × key pairs compared by the oracle.
    pub pairs: usize,
    /// Whether git read a side.
    pub git: bool,
    /// Whether some answer was an error on one side.
    pub errors: bool,
}

/// Runs one case from the fuzzer's bytes on a thread with the lookup stack; a disagreement
/// between `diff` and the single lookups panics, naming it.
pub fn run(data: &[u8]) -> Stats {
    let data = data.to_vec();
    let r = std::thread::Builder::new()
        .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
        .spawn(move || case(&data))
        .expect("a fuzz thread")
        .join();
    match r {
        Ok(Ok(stats)) => stats,
        Ok(Err(m)) => panic!("{m}"),
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// One case: `Err` describes a disagreement (with the trees, for a reproduction).
pub fn case(data: &[u8]) -> Result<Stats, String> {
    let mut b = Bytes::new(data);
    let base = gen_repo(&mut b);
    let mut head = base.clone();
    let mut changes = Vec::new();
    for _ in 0..1 + b.below(3) {
        changes.push(change(&mut b, &mut head));
    }
    let nodes = gen_nodes(&mut b);
    // git costs a few processes: one case in ten.
    let mut sides = match b.below(20) {
        0 => Sides::WorkTree,
        1 => Sides::Commits,
        _ => Sides::Dirs,
    };
    let list = b.chance(35).then(|| {
        let mut keys: Vec<String> = KEYS.iter().map(|k| k.to_string()).collect();
        keys.extend(DOTTED.iter().map(|k| k.to_string()));
        keys
    });
    let threads = 1 + b.below(2);

    let (base_files, head_files) = (base.render(), head.render());
    let tmp = scratch();
    let (dir_base, dir_head, dir_git) = (
        tmp.0.join("base"),
        tmp.0.join("head"),
        tmp.0.join("git").join("repo"),
    );
    for (d, f) in [(&dir_base, &base_files), (&dir_head, &head_files)] {
        std::fs::create_dir_all(d).expect("a directory");
        write_tree(d, f);
    }
    if sides != Sides::Dirs {
        std::fs::create_dir_all(&dir_git).expect("a directory");
        write_tree(&dir_git, &base_files);
        let committed = git(&dir_git, &["init", "-q"])
            && git(&dir_git, &["add", "-A"])
            && git(&dir_git, &["commit", "-q", "--allow-empty", "-m", "base"]);
        write_tree(&dir_git, &head_files);
        let committed = committed
            && (sides == Sides::WorkTree
                || (git(&dir_git, &["add", "-A"])
                    && git(&dir_git, &["commit", "-q", "--allow-empty", "-m", "head"])));
        if !committed {
            // No git here: two directories.
            sides = Sides::Dirs;
        }
    }
    let describe = |what: &str| -> String {
        let mut s = format!(
            "diff fuzz: {what}\nsides: {sides:?}, keys: {}, threads: {threads}\nchange: {}\nnodes: {:?}\n",
            if list.is_some() { "list" } else { "all" },
            changes.join("; "),
            nodes
                .iter()
                .map(|(n, f)| format!("{n} {}", hiera_formats::render::to_json(&Value::Hash(f.clone())).unwrap_or_default()))
                .collect::<Vec<_>>()
        );
        for (label, files) in [("base", &base_files), ("head", &head_files)] {
            for (p, t) in files {
                let other = if label == "base" {
                    &head_files
                } else {
                    &base_files
                };
                if label == "head" && other.get(p) == Some(t) {
                    continue;
                }
                s.push_str(&format!("--- {label}: {p}\n{t}"));
            }
        }
        s
    };

    let (tree_base, tree_head) = match sides {
        Sides::Dirs => (Tree::dir(&dir_base, "base"), Tree::dir(&dir_head, "head")),
        _ => {
            let repo = crate::git::Repo::discover(&dir_git).map_err(|e| describe(&e))?;
            let (old, new) = if sides == Sides::Commits {
                ("HEAD~1", Some("HEAD"))
            } else {
                ("HEAD", None)
            };
            let base = Tree::revision(&repo, old, &dir_git);
            let head = match (new, &base) {
                (Some(rev), _) => Tree::revision(&repo, rev, &dir_git),
                (None, Ok(base)) => Tree::dir(&dir_git, "work tree").map(|mut t| {
                    t.prefix = base.prefix.clone();
                    t
                }),
                (None, Err(_)) => Tree::dir(&dir_git, "work tree"),
            };
            (base, head)
        }
    };
    let (tree_base, tree_head) = (
        tree_base.map_err(|e| describe(&format!("base tree: {e}")))?,
        tree_head.map_err(|e| describe(&format!("head tree: {e}")))?,
    );

    let node_list: Vec<Node> = nodes
        .iter()
        .map(|(name, facts)| Node {
            name: name.clone(),
            source: None,
            scope: Scope::from_facts(facts.clone(), "production"),
            facts_error: None,
            workspace: None,
        })
        .collect();

    // The truth: single lookups on each side, per node.
    let (ob, oh) = (Oracle::new(&dir_base), Oracle::new(&dir_head));
    let mut stats = Stats {
        git: sides != Sides::Dirs,
        ..Default::default()
    };
    // node → key → (before, after), for every key compared or reported.
    let mut truth: BTreeMap<String, BTreeMap<String, (Resolved, Resolved)>> = BTreeMap::new();
    // node → the keys a diff of this kind must compare.
    let mut compared: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let vocabulary: Vec<String> = KEYS.iter().chain(DOTTED).map(|k| k.to_string()).collect();
    for node in &node_list {
        let listed: BTreeSet<String> = match &list {
            Some(k) => k.iter().cloned().collect(),
            None => (ob.keys(&node.scope).into_iter())
                .chain(oh.keys(&node.scope))
                .collect(),
        };
        let answers = truth.entry(node.name.clone()).or_default();
        for key in listed.iter().chain(&vocabulary) {
            if answers.contains_key(key) {
                continue;
            }
            let pair = (ob.answer(&node.scope, key), oh.answer(&node.scope, key));
            stats.pairs += 1;
            stats.errors |=
                matches!(pair.0, Resolved::Error(_)) || matches!(pair.1, Resolved::Error(_));
            // `--all` compares the keys either side lists: a key found on one side (and
            // answered otherwise on the other) although neither lists it is one `--all`
            // cannot see.
            let found =
                matches!(pair.0, Resolved::Found(_)) || matches!(pair.1, Resolved::Found(_));
            if list.is_none()
                && !listed.contains(key)
                && !key.contains('.')
                && found
                && pair.0 != pair.1
            {
                return Err(describe(&format!(
                    "node {}: key {key} differs ({:?} → {:?}) but neither side's all_keys lists it",
                    node.name, pair.0, pair.1
                )));
            }
            answers.insert(key.clone(), pair);
        }
        compared.insert(node.name.clone(), listed);
    }
    for (node, keys) in &compared {
        stats.changed_pairs += keys
            .iter()
            .filter(|k| {
                let (a, b) = &truth[node][*k];
                a != b
            })
            .count();
    }

    for no_skip in [false, true] {
        let req = Request {
            base: tree_base.clone(),
            head: tree_head.clone(),
            nodes: hiera_engine::batch::NodeSource::from_refs(&node_list),
            events: Box::new(|_| ()),
            keys: match &list {
                Some(k) => Keys::List(k.clone()),
                None => Keys::All,
            },
            settings: Settings::default(),
            threads,
            no_skip,
            show_secrets: false,
            allow_exec: false,
            hiera_config: None,
            modulepath: None,
        };
        let report = crate::run(req)
            .map_err(|e| describe(&format!("no_skip={no_skip}: diff failed: {e}")))?;
        check(&report, &truth, &compared, &ob, &oh, &node_list)
            .map_err(|m| describe(&format!("no_skip={no_skip}: {m}")))?;
    }
    Ok(stats)
}

/// The report against the truth: every pair reported differs, with its answers (or edits);
/// every differing pair compared is reported, once.
fn check(
    report: &Report,
    truth: &BTreeMap<String, BTreeMap<String, (Resolved, Resolved)>>,
    compared: &BTreeMap<String, BTreeSet<String>>,
    ob: &Oracle,
    oh: &Oracle,
    nodes: &[Node],
) -> Result<(), String> {
    let mut reported: BTreeSet<(String, String)> = BTreeSet::new();
    let mut new_errors = 0;
    for change in &report.changes {
        for g in &change.groups {
            for (i, node) in g.nodes.iter().enumerate() {
                let Some(n) = nodes.iter().find(|n| n.name == *node) else {
                    return Err(format!("key {}: unknown node {node}", change.key));
                };
                if !reported.insert((node.clone(), change.key.clone())) {
                    return Err(format!("{node} × {}: reported twice", change.key));
                }
                let (before, after) = match truth.get(node).and_then(|t| t.get(&change.key)) {
                    Some((a, b)) => (a.clone(), b.clone()),
                    None => (
                        ob.answer(&n.scope, &change.key),
                        oh.answer(&n.scope, &change.key),
                    ),
                };
                if before == after {
                    return Err(format!(
                        "{node} × {}: reported as changed ({:?} → {:?}), but single lookups both give {before:?}",
                        change.key, g.before, g.after
                    ));
                }
                group_agrees(g, i, &before, &after).map_err(|m| {
                    format!(
                        "{node} × {}: {m}; single lookups: {before:?} → {after:?}",
                        change.key
                    )
                })?;
                if matches!(after, Resolved::Error(_)) && !matches!(before, Resolved::Error(_)) {
                    new_errors += 1;
                }
            }
        }
    }
    for (node, keys) in compared {
        for key in keys {
            let (before, after) = &truth[node][key];
            if before != after && !reported.contains(&(node.clone(), key.clone())) {
                return Err(format!(
                    "{node} × {key}: single lookups differ ({before:?} → {after:?}), not in the report"
                ));
            }
        }
    }
    if report.new_errors() != new_errors {
        return Err(format!(
            "new_errors() is {}, the report's groups hold {new_errors}",
            report.new_errors()
        ));
    }
    if report.has_changes() == reported.is_empty() {
        return Err("has_changes() disagrees with the groups".into());
    }
    Ok(())
}

/// Whether group `g` holds its `i`th node's answers: the first node's exactly; another node
/// the same answers (a group without edits) or the same edits.
fn group_agrees(g: &Group, i: usize, before: &Resolved, after: &Resolved) -> Result<(), String> {
    let edits = match (before, after) {
        (Resolved::Found(a), Resolved::Found(b)) => paths::diff(a, b),
        _ => Vec::new(),
    };
    if edits != g.edits {
        return Err(format!("the group's edits {:?} are not {edits:?}", g.edits));
    }
    if (i == 0 || g.edits.is_empty()) && (g.before != *before || g.after != *after) {
        return Err(format!("the group says {:?} → {:?}", g.before, g.after));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generator makes every kind of case: each a few hundred random byte strings away.
    #[test]
    fn cases_run_and_agree() {
        let mut rng = hiera_engine::fuzzing::Rng(0x5EED);
        let (mut git, mut errors, mut changed, mut pairs) = (false, false, 0, 0);
        for _ in 0..20 {
            let data: Vec<u8> = (0..256).map(|_| rng.next() as u8).collect();
            let stats = run(&data);
            git |= stats.git;
            errors |= stats.errors;
            changed += stats.changed_pairs;
            pairs += stats.pairs;
        }
        assert!(git && errors, "git read a side: {git}, an error: {errors}");
        assert!(
            0 < changed && changed < pairs,
            "{changed} of {pairs} pairs changed"
        );
    }
}
