//! A control repo opened once and asked many questions: every command that answers more
//! than one lookup (batch, `where` over a fleet, `diff`, `lint`) and every long-lived front end
//! (a web view, a language server) is a client of a [`Workspace`].
//!
//! What it keeps between questions is what depends on files only: the parses of data files,
//! shared by every node and every query. It notices what changed: each file read from disk
//! is stamped (size, modification time, inode) when read, and [`Workspace::refresh`] (run
//! before every query it answers) drops the parse of every file whose stamp changed, and
//! finds the layers again (a new module, an edited environment.conf). hiera.yaml files are
//! parsed once too, and stamped and dropped like data files, so an edited hierarchy is seen
//! by the next query. Editor buffers are overlays ([`Workspace::set_overlay`]): unsaved text
//! read in place of the file, through the same `Fs` seam every read goes through.
//!
//! A workspace is `Send + Sync`: a server answers concurrent requests from one.
//!
//! ```
//! use hiera_engine::workspace::Workspace;
//! use hiera_engine::{EnvOptions, Outcome, Scope, Settings};
//! use hiera_value::{Map, Value};
//!
//! let repo = std::env::temp_dir().join(format!("hl-ws-doc-{}", std::process::id()));
//! std::fs::create_dir_all(repo.join("data"))?;
//! std::fs::write(repo.join("hiera.yaml"), "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n")?;
//! std::fs::write(repo.join("data/common.yaml"), "port: 80\n")?;
//!
//! let ws = Workspace::open(EnvOptions { cwd: repo.clone(), ..Default::default() }, Settings::default())?;
//! let node = Scope::from_facts(Map::default(), "production");
//! assert_eq!(ws.lookup(&node, &["port".into()], None)?, Outcome::Found(Value::Int(80)));
//!
//! // An editor's unsaved buffer is read in place of the file…
//! ws.set_overlay(&repo.join("data/common.yaml"), Some("port: 8080\n".into()));
//! assert_eq!(ws.lookup(&node, &["port".into()], None)?, Outcome::Found(Value::Int(8080)));
//! ws.set_overlay(&repo.join("data/common.yaml"), None);
//!
//! // …and a file changed on disk is read again on the next query.
//! std::fs::write(repo.join("data/common.yaml"), "port: 443\n")?;
//! assert_eq!(ws.lookup(&node, &["port".into()], None)?, Outcome::Found(Value::Int(443)));
//! std::fs::remove_dir_all(&repo)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::engine::{Layers, Outcome, Session, Settings};
use crate::environment::EnvOptions;
use crate::error::Result;
use crate::fs::{Fs, Kind};
use crate::merge::MergeStrategy;
use crate::scope::Scope;
use crate::store::DataFiles;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// A control repo's layers and the parses every query shares. See the [module](self).
#[derive(Debug)]
pub struct Workspace {
    /// Where the layers come from, to find them again when the tree changes (`None`: layers
    /// given as they are, over a file system that does not change).
    env: Option<EnvOptions>,
    layers: RwLock<Layers>,
    settings: Settings,
    fs: Arc<WorkspaceFs>,
    files: DataFiles,
}

impl Workspace {
    /// The control repo `env` names, on disk. Fails as [`EnvOptions::layers`] does.
    pub fn open(env: EnvOptions, settings: Settings) -> Result<Workspace> {
        let fs = Arc::new(WorkspaceFs::new(crate::fs::disk(), true));
        let layers = env.layers_in(&*fs)?;
        Ok(Workspace {
            files: DataFiles::with_fs(fs.clone()),
            env: Some(env),
            layers: RwLock::new(layers),
            settings,
            fs,
        })
    }

    /// Layers read through `fs`, which does not change while the workspace lives (a git
    /// revision, for `diff`): nothing is stamped or refreshed, overlays still apply.
    pub fn with_fs(layers: Layers, settings: Settings, fs: Arc<dyn Fs>) -> Workspace {
        let fs = Arc::new(WorkspaceFs::new(fs, false));
        Workspace {
            files: DataFiles::with_fs(fs.clone()),
            env: None,
            layers: RwLock::new(layers),
            settings,
            fs,
        }
    }

    /// The layers as last found.
    pub fn layers(&self) -> Layers {
        self.layers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The settings every session of this workspace gets.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The parsed data files every query shares (batch workers take a clone: the same store).
    pub fn files(&self) -> DataFiles {
        self.files.clone()
    }

    /// The file system every read goes through: overlays over the disk (or a revision).
    pub fn fs(&self) -> Arc<dyn Fs> {
        self.fs.clone()
    }

    /// Drops what changed on disk since it was read: the parse of every stamped file whose
    /// stamp differs, and the layers, found again. The paths dropped, in no order.
    pub fn refresh(&self) -> Vec<PathBuf> {
        let changed = self.fs.changed();
        for path in &changed {
            self.files.invalidate(&path.to_string_lossy());
        }
        // Which locations exist is not stamped: levels are resolved again for each query.
        self.files.forget_resolved_levels();
        if let Some(env) = &self.env {
            // A new module, an edited environment.conf: cheap to find again (a few
            // directory listings), so found again at every refresh.
            if let Ok(layers) = env.layers_in(&*self.fs) {
                *self.layers.write().unwrap_or_else(|e| e.into_inner()) = layers;
            }
        }
        changed
    }

    /// A session for the node `scope`, sharing this workspace's parses, after a refresh.
    pub fn session(&self, scope: Scope) -> Session {
        self.refresh();
        self.session_unrefreshed(scope)
    }

    /// [`session`](Self::session) without the refresh: for a batch of nodes answered in
    /// one query (refreshed once before it).
    pub fn session_unrefreshed(&self, scope: Scope) -> Session {
        Session::with_files(scope, self.layers(), self.settings.clone(), self.files())
    }

    /// The first of `keys` found for the node `scope` (`merge`: `--merge`).
    pub fn lookup(
        &self,
        scope: &Scope,
        keys: &[String],
        merge: Option<&MergeStrategy>,
    ) -> Result<Outcome> {
        self.session(scope.clone()).lookup(keys, merge)
    }

    /// Every key the node `scope` can see in its data (`--all`).
    pub fn all_keys(&self, scope: &Scope) -> Result<Vec<String>> {
        self.session(scope.clone()).all_keys()
    }

    /// Takes `other`'s parse of each of `same` (paths, as lookups name them, whose bytes are
    /// identical in both workspaces' trees): the two sides of a `diff` parse such a file once.
    pub fn share_parses_with(&mut self, other: &Workspace, same: HashSet<String>) {
        self.files = self.files.clone().sharing_with(&other.files, same);
    }

    /// Reads `text` in place of the file at `path` (an editor's unsaved buffer); `None`
    /// removes the overlay. The file's parse is dropped either way.
    pub fn set_overlay(&self, path: &Path, text: Option<String>) {
        self.fs.set_overlay(path, text.map(String::into_bytes));
        self.files.invalidate(&path.to_string_lossy());
    }
}

/// What a file on disk was when it was read: a change to any of these is a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl Stamp {
    /// The file at `path` now (`None`: it is gone); a link's is its target's.
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(crate::fs::os_path(path)).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            inode,
        })
    }
}

/// The workspace's file system: overlays over another, and (on disk) the stamp of every file
/// read, for [`Workspace::refresh`].
#[derive(Debug)]
struct WorkspaceFs {
    inner: Arc<dyn Fs>,
    /// Whether `inner` is the disk, whose files can change.
    disk: bool,
    overlays: RwLock<HashMap<PathBuf, Arc<Vec<u8>>>>,
    stamps: Mutex<HashMap<PathBuf, Option<Stamp>>>,
}

impl WorkspaceFs {
    fn new(inner: Arc<dyn Fs>, disk: bool) -> WorkspaceFs {
        WorkspaceFs {
            inner,
            disk,
            overlays: RwLock::default(),
            stamps: Mutex::default(),
        }
    }

    fn overlay(&self, path: &Path) -> Option<Arc<Vec<u8>>> {
        let overlays = self.overlays.read().unwrap_or_else(|e| e.into_inner());
        if overlays.is_empty() {
            return None;
        }
        overlays.get(path).cloned()
    }

    fn set_overlay(&self, path: &Path, bytes: Option<Vec<u8>>) {
        let mut overlays = self.overlays.write().unwrap_or_else(|e| e.into_inner());
        match bytes {
            Some(b) => overlays.insert(path.to_path_buf(), Arc::new(b)),
            None => overlays.remove(path),
        };
    }

    /// The stamped paths whose file changed since; their stamps are forgotten (the next read
    /// stamps them again).
    fn changed(&self) -> Vec<PathBuf> {
        let mut stamps = self.stamps.lock().unwrap_or_else(|e| e.into_inner());
        let changed: Vec<PathBuf> = stamps
            .iter()
            .filter(|(path, stamp)| Stamp::of(path) != **stamp)
            .map(|(path, _)| path.clone())
            .collect();
        for path in &changed {
            stamps.remove(path);
        }
        changed
    }
}

impl Fs for WorkspaceFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if let Some(bytes) = self.overlay(path) {
            return Ok(bytes.to_vec());
        }
        if self.disk {
            // Stamped before reading: a change while reading shows as a change next time.
            let stamp = Stamp::of(path);
            self.stamps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(path.to_path_buf(), stamp);
        }
        self.inner.read(path)
    }
    fn kind(&self, path: &Path) -> Option<Kind> {
        if self.overlay(path).is_some() {
            return Some(Kind::File);
        }
        self.inner.kind(path)
    }
    fn is_symlink(&self, path: &Path) -> bool {
        self.overlay(path).is_none() && self.inner.is_symlink(path)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = self.inner.read_dir(path);
        let overlays = self.overlays.read().unwrap_or_else(|e| e.into_inner());
        // An unsaved new file is listed in its directory (globs find it).
        for p in overlays.keys().filter(|p| p.parent() == Some(path)) {
            if let (Ok(names), Some(name)) = (&mut names, p.file_name()) {
                let name = crate::fs::name_text(name);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
    fn canonical(&self, path: &Path) -> PathBuf {
        if self.overlay(path).is_some() {
            return crate::fs::lexical(path);
        }
        self.inner.canonical(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiera_value::{Map, Value};

    /// A scratch control repo, removed when dropped.
    struct Repo(PathBuf);

    impl Repo {
        fn new(name: &str) -> Repo {
            let d = std::env::temp_dir().join(format!("hl-ws-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(d.join("data/nodes")).unwrap();
            Repo(d)
        }
        fn write(&self, rel: &str, text: &str) {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        fn open(&self) -> Workspace {
            let env = EnvOptions {
                cwd: self.0.clone(),
                ..Default::default()
            };
            Workspace::open(env, Settings::default()).unwrap()
        }
    }

    impl Drop for Repo {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const HIERA: &str = "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: common\n    path: common.yaml\n";

    fn node(name: &str) -> Scope {
        let mut facts = Map::default();
        facts.insert(Value::str("clientcert"), Value::str(name));
        Scope::from_facts(facts, "production")
    }

    fn get(ws: &Workspace, scope: &Scope, key: &str) -> Outcome {
        ws.lookup(scope, &[key.to_string()], None).unwrap()
    }

    fn int(i: i64) -> Outcome {
        Outcome::Found(Value::Int(i))
    }

    #[test]
    fn an_edited_data_file_is_read_again() {
        let repo = Repo::new("edit");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        let ws = repo.open();
        let n = node("web01");
        assert_eq!(get(&ws, &n, "port"), int(80));
        // Same length, so only the modification time (or inode) tells.
        std::thread::sleep(std::time::Duration::from_millis(20));
        repo.write("data/common.yaml", "port: 81\n");
        assert_eq!(get(&ws, &n, "port"), int(81));
        // Replaced by rename (editors do this): a new inode.
        repo.write("data/common.yaml.new", "port: 82\nx: 1\n");
        std::fs::rename(
            repo.0.join("data/common.yaml.new"),
            repo.0.join("data/common.yaml"),
        )
        .unwrap();
        assert_eq!(get(&ws, &n, "port"), int(82));
    }

    #[test]
    fn added_and_removed_files_change_answers() {
        let repo = Repo::new("add");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        let ws = repo.open();
        let n = node("web01");
        assert_eq!(get(&ws, &n, "port"), int(80));
        repo.write("data/nodes/web01.yaml", "port: 8080\n");
        assert_eq!(get(&ws, &n, "port"), int(8080));
        // Another node shares the parse of common.yaml and never sees web01's file.
        assert_eq!(get(&ws, &node("db01"), "port"), int(80));
        std::fs::remove_file(repo.0.join("data/nodes/web01.yaml")).unwrap();
        assert_eq!(get(&ws, &n, "port"), int(80));
    }

    #[test]
    fn an_edited_hierarchy_is_seen_at_once() {
        let repo = Repo::new("hiera");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        repo.write("data/other.yaml", "port: 9\n");
        let ws = repo.open();
        let n = node("web01");
        assert_eq!(get(&ws, &n, "port"), int(80));
        repo.write(
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: other\n    path: other.yaml\n",
        );
        assert_eq!(get(&ws, &n, "port"), int(9));
    }

    #[test]
    fn hiera_yaml_parsed_once_is_still_read_again_when_edited() {
        // The workspace keeps each hiera.yaml's parse for every session: an edit between
        // queries (same length: only the modification time tells), an editor's buffer, and
        // the buffer's removal must each be seen by the next query.
        let repo = Repo::new("hiera-same");
        let a = "version: 5\nhierarchy:\n  - name: a\n    path: aaaa.yaml\n";
        let b = "version: 5\nhierarchy:\n  - name: b\n    path: bbbb.yaml\n";
        repo.write("hiera.yaml", a);
        repo.write("data/aaaa.yaml", "port: 1\n");
        repo.write("data/bbbb.yaml", "port: 2\n");
        let ws = repo.open();
        let n = node("web01");
        assert_eq!(get(&ws, &n, "port"), int(1));
        assert_eq!(get(&ws, &node("db01"), "port"), int(1));
        std::thread::sleep(std::time::Duration::from_millis(20));
        repo.write("hiera.yaml", b);
        assert_eq!(get(&ws, &n, "port"), int(2));
        ws.set_overlay(&repo.0.join("hiera.yaml"), Some(a.into()));
        assert_eq!(get(&ws, &n, "port"), int(1));
        ws.set_overlay(&repo.0.join("hiera.yaml"), None);
        assert_eq!(get(&ws, &n, "port"), int(2));
    }

    #[test]
    fn overlays_are_read_in_place_of_files_and_new_files() {
        let repo = Repo::new("overlay");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        let ws = repo.open();
        let n = node("web01");
        ws.set_overlay(&repo.0.join("data/common.yaml"), Some("port: 1\n".into()));
        assert_eq!(get(&ws, &n, "port"), int(1));
        // A buffer for a file not yet saved.
        let new = repo.0.join("data/nodes/web01.yaml");
        ws.set_overlay(&new, Some("port: 2\n".into()));
        assert_eq!(get(&ws, &n, "port"), int(2));
        assert!(!new.exists(), "an overlay writes nothing");
        ws.set_overlay(&new, None);
        ws.set_overlay(&repo.0.join("data/common.yaml"), None);
        assert_eq!(get(&ws, &n, "port"), int(80));
    }

    #[test]
    fn a_new_module_is_found_on_refresh() {
        let repo = Repo::new("module");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        let ws = repo.open();
        let n = node("web01");
        assert_eq!(get(&ws, &n, "ntp::servers"), Outcome::NotFound);
        repo.write(
            "modules/ntp/hiera.yaml",
            "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
        );
        repo.write("modules/ntp/data/common.yaml", "ntp::servers: [a]\n");
        assert_eq!(
            get(&ws, &n, "ntp::servers"),
            Outcome::Found(Value::Array(vec![Value::str("a")]))
        );
    }

    fn node_with(name: &str, os: &str) -> Scope {
        let mut facts = Map::default();
        facts.insert(Value::str("clientcert"), Value::str(name));
        let mut os_fact = Map::default();
        os_fact.insert(Value::str("family"), Value::str(os));
        facts.insert(Value::str("os"), Value::Hash(os_fact));
        Scope::from_facts(facts, "production")
    }

    #[test]
    fn levels_resolved_once_answer_each_node_as_its_own() {
        // Nodes share the resolution of the OS level (same os.family), never the node level,
        // and a level that differs for every node (past the memo's bound) still answers each
        // node from its own file.
        let repo = Repo::new("levels");
        repo.write(
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n",
        );
        repo.write("data/common.yaml", "port: 80\nos: none\n");
        repo.write("data/os/RedHat.yaml", "os: redhat\n");
        repo.write("data/os/Debian.yaml", "os: debian\n");
        for i in 0..100 {
            repo.write(&format!("data/nodes/n{i}.yaml"), &format!("port: {i}\n"));
        }
        let ws = repo.open();
        let nodes: Vec<Scope> = (0..120)
            .map(|i| node_with(&format!("n{i}"), ["RedHat", "Debian", "Solaris"][i % 3]))
            .collect();
        ws.refresh();
        for (i, n) in nodes.iter().enumerate() {
            let mut s = ws.session_unrefreshed(n.clone());
            let port = s.lookup(&["port".into()], None).unwrap();
            let os = s.lookup(&["os".into()], None).unwrap();
            assert_eq!(port, int(if i < 100 { i as i64 } else { 80 }), "n{i}");
            let want = ["redhat", "debian", "none"][i % 3];
            assert_eq!(os, Outcome::Found(Value::str(want)), "n{i}");
        }
    }

    #[test]
    fn a_level_resolved_once_warns_every_node() {
        // Warnings of a level's resolution (here strict=warning's undefined variable) are
        // each node's, whether it resolved the level or took another node's resolution.
        let repo = Repo::new("level-warn");
        repo.write(
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: x\n    path: \"x/%{nosuchvar}.yaml\"\n  - name: common\n    path: common.yaml\n",
        );
        repo.write("data/common.yaml", "port: 80\n");
        let env = EnvOptions {
            cwd: repo.0.clone(),
            ..Default::default()
        };
        let settings = Settings {
            strict: crate::scope::Strict::Warning,
            ..Settings::default()
        };
        let ws = Workspace::open(env, settings).unwrap();
        for name in ["a", "b", "c"] {
            let mut s = ws.session_unrefreshed(node(name));
            assert_eq!(s.lookup(&["port".into()], None).unwrap(), int(80));
            let warnings = s.take_warnings();
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains("Undefined variable 'nosuchvar'")),
                "{name}: {warnings:?}"
            );
        }
    }

    #[test]
    fn a_workspace_answers_from_many_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Workspace>();
        let repo = Repo::new("threads");
        repo.write("hiera.yaml", HIERA);
        repo.write("data/common.yaml", "port: 80\n");
        for i in 0..8 {
            repo.write(&format!("data/nodes/n{i}.yaml"), &format!("port: {i}\n"));
        }
        let ws = Arc::new(repo.open());
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let ws = ws.clone();
                std::thread::spawn(move || get(&ws, &node(&format!("n{i}")), "port"))
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap(), int(i as i64));
        }
    }
}
