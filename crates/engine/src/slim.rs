//! Slim scopes: a node's facts cut down to the parts lookups read, for a program that keeps
//! thousands of nodes and asks every one of them the same question (`serve`'s view of a key
//! across the fleet). A real fact set is tens of kilobytes parsed; the hierarchy and the data
//! of a control repo read a handful of its paths (`facts.os.family`, `facts.networking.fqdn`).
//!
//! Invariant: a slim scope answers a read exactly as its whole scope would, or the session
//! reading it says it could not ([`Session::missed_facts`](crate::Session::missed_facts)),
//! and its answers are then thrown away and asked again of the whole scope. A read is
//! answered only when [`FactPaths`] covers it: the whole value at the end of the read's path
//! was kept (a kept hash keeps its kept entries in their order; every other value is kept
//! whole). Which paths to keep is learnt, never guessed: a session asked to
//! ([`Session::record_fact_reads`](crate::Session::record_fact_reads)) records the paths it
//! read.

use crate::key::Segment;
use hiera_value::value::{Map, Value};
use std::collections::BTreeMap;

/// The fact paths a slim scope keeps: a tree of hash keys, each path ending where the whole
/// value is kept. The empty tree keeps nothing; [`FactPaths::whole`] keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FactPaths {
    root: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// The whole value.
    Whole,
    /// Only these entries of a hash (any other value is kept whole).
    Some(BTreeMap<String, Node>),
}

impl Default for Node {
    fn default() -> Node {
        Node::Some(BTreeMap::new())
    }
}

/// One step of a path into the facts: a hash key, or anything else (an array index, an
/// integer key), past which the whole value is kept.
pub(crate) type Step<'a> = Option<&'a str>;

/// The steps of `segments` (as [`Step`]s).
pub(crate) fn steps(segments: &[Segment]) -> impl Iterator<Item = Step<'_>> + Clone {
    segments.iter().map(|s| match s {
        Segment::Key(k) => Some(k.as_str()),
        _ => None,
    })
}

impl FactPaths {
    /// Keeps every fact whole.
    pub fn whole() -> FactPaths {
        FactPaths { root: Node::Whole }
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        matches!(&self.root, Node::Some(m) if m.is_empty())
    }

    /// Keeps the value at `path` whole (with what is kept already). Whether that kept more.
    pub(crate) fn add<'a>(&mut self, path: impl Iterator<Item = Step<'a>>) -> bool {
        let mut at = &mut self.root;
        for step in path {
            let Some(key) = step else {
                break;
            };
            at = match at {
                Node::Whole => return false,
                Node::Some(children) => children.entry(key.to_string()).or_default(),
            };
        }
        let more = !matches!(at, Node::Whole);
        *at = Node::Whole;
        more
    }

    /// Keeps the fact at `path` (hash keys from the top of the facts) whole, with what is
    /// kept already. Whether that kept more.
    pub fn keep(&mut self, path: &[&str]) -> bool {
        self.add(path.iter().map(|k| Some(*k)))
    }

    /// Keeps, with what is kept already, everything `other` keeps. Whether that kept more.
    pub fn merge(&mut self, other: &FactPaths) -> bool {
        merge_into(&mut self.root, &other.root)
    }

    /// Whether the value at `path` is kept whole.
    pub(crate) fn covers<'a>(&self, path: impl Iterator<Item = Step<'a>>) -> bool {
        let mut at = &self.root;
        for step in path {
            let Node::Some(children) = at else {
                return true;
            };
            match step.and_then(|k| children.get(k)) {
                Some(next) => at = next,
                None => return false,
            }
        }
        matches!(at, Node::Whole)
    }

    /// What of `facts` is kept: the kept entries, in their order.
    pub(crate) fn prune(&self, facts: &Map) -> Map {
        match &self.root {
            Node::Whole => facts.clone(),
            Node::Some(children) => prune_map(children, facts),
        }
    }
}

fn merge_into(into: &mut Node, from: &Node) -> bool {
    match (into, from) {
        (Node::Whole, _) => false,
        (into @ Node::Some(_), Node::Whole) => {
            *into = Node::Whole;
            true
        }
        (Node::Some(a), Node::Some(b)) => {
            let mut more = false;
            for (k, sub) in b {
                match a.get_mut(k) {
                    Some(mine) => more |= merge_into(mine, sub),
                    None => {
                        a.insert(k.clone(), sub.clone());
                        more = true;
                    }
                }
            }
            more
        }
    }
}

fn prune_map(keep: &BTreeMap<String, Node>, map: &Map) -> Map {
    let mut out = Map::default();
    for (k, v) in map {
        let Value::String(name) = k else { continue };
        match keep.get(name.as_str()) {
            None => {}
            Some(Node::Whole) => {
                out.insert(k.clone(), v.clone());
            }
            Some(Node::Some(children)) => {
                let kept = match v {
                    Value::Hash(h) => Value::Hash(prune_map(children, h)),
                    // Only a hash's entries can be told apart.
                    other => other.clone(),
                };
                out.insert(k.clone(), kept);
            }
        }
    }
    out
}

/// Top-scope variables that are never the fact of their name (`from_facts` sets them over
/// any fact so named).
const NOT_FACTS: [&str; 7] = [
    "facts",
    "trusted",
    "environment",
    "name",
    "title",
    "module_name",
    "server_facts",
];

/// The path into the facts that reading the variable `root` (then `segments`) reads:
/// `$facts` itself for `facts`, the fact `root` for any other variable (`::os`, `os`) but
/// those no fact sets; `None` for those.
pub(crate) fn fact_path<'a>(
    root: &'a str,
    segments: &'a [Segment],
) -> Option<impl Iterator<Item = Step<'a>> + Clone> {
    let root = root.strip_prefix("::").unwrap_or(root);
    let is_facts = root == "facts";
    if !is_facts && NOT_FACTS.contains(&root) {
        return None;
    }
    Some(
        std::iter::once(Some(root))
            .take(usize::from(!is_facts))
            .chain(steps(segments)),
    )
}

/// Adds to `keep` the fact paths the `%{}` expressions in `value` (its strings, hash keys
/// and values at any depth) read: variables (`%{facts.os.family}`, `%{::fqdn}`) and
/// `%{scope('…')}`. A prediction of what interpolating the value will read, to make slim
/// forms that need not learn it by missing first; nothing is looked up.
pub(crate) fn probe(value: &Value, keep: &mut FactPaths) {
    match value {
        Value::String(s) => probe_str(s, keep),
        Value::Array(a) => a.iter().for_each(|v| probe(v, keep)),
        Value::Hash(h) => h.iter().for_each(|(k, v)| {
            probe(k, keep);
            probe(v, keep);
        }),
        _ => {}
    }
}

/// [`probe`] of one string.
pub(crate) fn probe_str(s: &str, keep: &mut FactPaths) {
    if s.contains("%{") {
        let _ = crate::interpolation::interpolate_string(&mut Probe(keep), s, true);
    }
}

/// An interpolation context that records the variables read and finds nothing.
struct Probe<'a>(&'a mut FactPaths);

impl crate::interpolation::Context for Probe<'_> {
    fn lookup(&mut self, _key: &str) -> crate::error::Result<Value> {
        Ok(Value::str(""))
    }
    fn variable(&mut self, name: &str) -> crate::error::Result<Option<Value>> {
        if let Some(path) = fact_path(name, &[]) {
            self.0.add(path);
        }
        Ok(None)
    }
    fn scope_dig(
        &mut self,
        root: &str,
        _key: &str,
        segments: &[Segment],
    ) -> Option<crate::error::Result<Option<Value>>> {
        if let Some(path) = fact_path(root, segments) {
            self.0.add(path);
        }
        Some(Ok(None))
    }
    fn dig(
        &mut self,
        _key: &str,
        _segments: &[Segment],
        _value: Value,
    ) -> crate::error::Result<Option<Value>> {
        Ok(None)
    }
    fn guarded<T>(
        &mut self,
        _name: &str,
        f: impl FnOnce(&mut Self) -> crate::error::Result<T>,
    ) -> crate::error::Result<T> {
        f(self)
    }
    fn explained<T>(
        &mut self,
        _kind: impl FnOnce() -> crate::explain::Kind,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        f(self)
    }
    fn aliased(&mut self, _v: &Value) {}
    fn with_local<T>(&mut self, _name: &str, _value: Value, f: impl FnOnce(&mut Self) -> T) -> T {
        f(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EnvOptions, Outcome, Scope, Settings, Workspace};
    use hiera_formats::yaml;
    use std::sync::Arc;

    fn path(p: &str) -> Vec<Step<'_>> {
        p.split('.')
            .map(|s| (!s.starts_with('#')).then_some(s))
            .collect()
    }

    #[test]
    fn paths_keep_what_was_added() {
        let mut keep = FactPaths::default();
        assert!(keep.is_empty());
        assert!(!keep.covers(path("os").into_iter()));
        assert!(keep.add(path("os.family").into_iter()));
        assert!(!keep.add(path("os.family").into_iter()));
        assert!(keep.add(path("networking.fqdn").into_iter()));
        assert!(keep.covers(path("os.family").into_iter()));
        // Under a kept value, everything; above it or beside it, nothing.
        assert!(keep.covers(path("os.family.x").into_iter()));
        assert!(!keep.covers(path("os").into_iter()));
        assert!(!keep.covers(path("os.name").into_iter()));
        assert!(!keep.covers(std::iter::empty()));
        // A step that is not a hash key keeps the whole value before it.
        assert!(!keep.covers(path("disks.#0").into_iter()));
        assert!(keep.add(path("disks.#0.size").into_iter()));
        assert!(keep.covers(path("disks").into_iter()));
        assert!(!keep.covers(path("processors.#0").into_iter()));
        // A whole value takes in its parts; adding a part of it keeps nothing more.
        assert!(keep.add(path("os").into_iter()));
        assert!(keep.covers(path("os.name").into_iter()));
        assert!(!keep.add(path("os.release.major").into_iter()));
        let mut other = FactPaths::default();
        other.add(path("kernel").into_iter());
        other.add(path("os.name").into_iter());
        assert!(keep.merge(&other));
        assert!(!keep.merge(&other));
        assert!(keep.covers(path("kernel").into_iter()));
        let mut all = FactPaths::whole();
        assert!(all.covers(std::iter::empty()));
        assert!(!all.merge(&keep));
        assert!(!all.add(path("a.b").into_iter()));
    }

    #[test]
    fn pruning_keeps_the_kept_entries_in_their_order() {
        let Value::Hash(facts) = yaml::load(
            "{kernel: Linux, os: {name: Debian, family: Debian, release: {major: '12'}}, \
             networking: {interfaces: {eth0: {ip: 10.0.0.1}}, fqdn: a.example.com, ip: 10.0.0.1}, \
             role: [web], uptime: 3}",
        )
        .unwrap() else {
            unreachable!()
        };
        let mut keep = FactPaths::default();
        keep.add(path("networking.ip").into_iter());
        keep.add(path("networking.fqdn").into_iter());
        keep.add(path("os").into_iter());
        keep.add(path("role.first").into_iter());
        let pruned = keep.prune(&facts);
        assert_eq!(
            hiera_formats::json::write::to_json(&Value::Hash(pruned)).unwrap(),
            r#"{"os":{"name":"Debian","family":"Debian","release":{"major":"12"}},"networking":{"fqdn":"a.example.com","ip":"10.0.0.1"},"role":["web"]}"#
        );
        assert_eq!(FactPaths::whole().prune(&facts), facts);
        assert!(FactPaths::default().prune(&facts).is_empty());
    }

    #[test]
    fn variables_name_their_fact_paths() {
        let segs = |p: &str| -> Vec<Segment> { crate::key::split_key(p).unwrap_or_default() };
        let read = |root: &str, s: &[Segment]| -> Option<Vec<Option<String>>> {
            fact_path(root, s).map(|p| p.map(|s| s.map(str::to_string)).collect())
        };
        let os = segs("family");
        assert_eq!(
            read("facts", &segs("os.family")),
            Some(vec![Some("os".into()), Some("family".into())])
        );
        assert_eq!(read("facts", &[]), Some(vec![]));
        assert_eq!(
            read("::os", &os),
            Some(vec![Some("os".into()), Some("family".into())])
        );
        assert_eq!(read("trusted", &segs("certname")), None);
        assert_eq!(read("environment", &[]), None);
        assert_eq!(
            read("disks", &segs("0.size")),
            Some(vec![Some("disks".into()), None, Some("size".into())])
        );
    }

    #[test]
    fn probing_finds_the_facts_interpolations_read() {
        let Value::Hash(data) = yaml::load(
            "{a: \"%{facts.os.family}-%{::kernel}\", \"%{facts.k.in_key}\": 1,              b: [{c: \"%{scope('networking.fqdn')}\"}], d: \"%{lookup('x')}%{trusted.certname}\",              e: \"%{facts.disks.0.size}\", f: \"%{environment}%{literal('%')}\", g: plain,              h: \"%{bad syntax\", i: \"%{facts}\"}",
        )
        .unwrap() else {
            unreachable!()
        };
        let mut keep = FactPaths::default();
        for (k, v) in &data {
            if k.as_str() != Some("i") {
                probe(v, &mut keep);
                probe(k, &mut keep);
            }
        }
        for p in [
            "os.family",
            "kernel",
            "k.in_key",
            "networking.fqdn",
            "disks",
        ] {
            assert!(keep.covers(path(p).into_iter()), "{p}");
        }
        for p in ["os", "trusted", "environment", "x", "networking.ip"] {
            assert!(!keep.covers(path(p).into_iter()), "{p}");
        }
        probe(&data[&Value::str("i")], &mut keep);
        assert!(keep.covers(std::iter::empty()));
    }

    /// A scratch control repo, removed when dropped.
    struct Repo(std::path::PathBuf);

    impl Drop for Repo {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn repo(files: &[(&str, &str)]) -> Repo {
        let d = std::env::temp_dir().join(format!("hl-slim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for (rel, text) in files {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Repo(d)
    }

    /// What a session answers for `key`, with its warnings, and whether it missed a fact.
    fn ask(ws: &Workspace, scope: &Scope, key: &str) -> (String, Vec<String>, bool) {
        let mut s = ws.session(scope.clone());
        let answer = match s.lookup(&[key.to_string()], None) {
            Ok(Outcome::Found(v)) => {
                format!("found {}", hiera_formats::json::write::to_json(&v).unwrap())
            }
            Ok(Outcome::NotFound) => "not found".into(),
            Err(e) => format!("error {e}"),
        };
        (answer, s.take_warnings(), s.missed_facts())
    }

    #[test]
    fn a_slim_scope_answers_as_the_whole_one_or_says_it_cannot() {
        let repo = repo(&[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  \
                 - name: os\n    path: \"os/%{facts.os.family}/%{::kernel}.yaml\"\n  \
                 - name: mounts\n    mapped_paths: [facts.mounts, m, \"mounts/%{m}.yaml\"]\n  \
                 - name: common\n    path: common.yaml\n",
            ),
            ("data/os/Debian/Linux.yaml", "os_key: \"%{facts.os.release.major}\"\n"),
            ("data/mounts/home.yaml", "mount_key: home\n"),
            (
                "data/common.yaml",
                "fqdn: \"%{facts.networking.fqdn}\"\nnet: \"%{facts.networking}\"\n\
                 disk: \"%{facts.disks.0.size}\"\nmem: \"%{::memorysize}\"\n\
                 absent: \"%{facts.nothing.here}\"\nall: \"%{facts}\"\n\
                 os_key: common\nmount_key: common\nscoped: \"%{scope('os.name')}\"\n\
                 server: \"%{::servername}\"\n",
            ),
        ]);
        let Value::Hash(facts) = yaml::load(
            "{clientcert: a.example.com, kernel: Linux, memorysize: 2 GiB, \
             os: {name: Debian, family: Debian, release: {major: '12', full: '12.5'}}, \
             networking: {fqdn: a.example.com, ip: 10.0.0.1, interfaces: {eth0: {ip: 10.0.0.1}}}, \
             disks: [{size: 10 GiB}, {size: 20 GiB}], mounts: [home, var], \
             servername: mine, uptime: 3}",
        )
        .unwrap() else {
            unreachable!()
        };
        let env = EnvOptions {
            cwd: repo.0.clone(),
            ..Default::default()
        };
        let ws = Workspace::open(env, Settings::default()).unwrap();
        let whole = Scope::from_facts(facts, "production");
        let keys = [
            "fqdn",
            "net",
            "disk",
            "mem",
            "absent",
            "all",
            "os_key",
            "mount_key",
            "scoped",
            "server",
            "missing",
        ];
        let want: Vec<_> = keys.iter().map(|k| ask(&ws, &whole, k)).collect();
        assert!(want.iter().all(|(_, _, missed)| !missed));
        // Keeping nothing: every answer that read a fact is refused, none is wrong.
        let bare = whole.slimmed(Arc::new(FactPaths::default()));
        for (k, w) in keys.iter().zip(&want) {
            let got = ask(&ws, &bare, k);
            assert!(
                got.2 || (got.0 == w.0 && got.1 == w.1),
                "{k}: {got:?} vs {w:?}"
            );
        }
        assert!(ask(&ws, &bare, "fqdn").2);
        // Keeping what a session read for some keys: those keys are answered, and only a key
        // reading more misses.
        let mut s = ws.session(whole.clone());
        s.record_fact_reads();
        for k in [
            "fqdn",
            "disk",
            "mem",
            "absent",
            "os_key",
            "mount_key",
            "scoped",
            "server",
        ] {
            let _ = s.lookup(&[k.to_string()], None);
        }
        let read = s.take_fact_reads().unwrap();
        assert!(!read.covers(path("networking").into_iter()));
        let slim = whole.slimmed(Arc::new(read));
        for (k, w) in keys.iter().zip(&want) {
            let got = ask(&ws, &slim, k);
            let wide = matches!(*k, "net" | "all");
            assert_eq!(got.2, wide, "{k}: missed");
            if !wide {
                assert_eq!((&got.0, &got.1), (&w.0, &w.1), "{k}");
            }
        }
        // What is kept is a fraction of the facts.
        assert!(slim.facts().unwrap().len() < whole.facts().unwrap().len());
        assert!(slim.facts().unwrap().get(&Value::str("uptime")).is_none());
    }
}
