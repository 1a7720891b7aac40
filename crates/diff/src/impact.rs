//! Which keys a change can touch, from the changed files alone: the keys defined in changed
//! data files (added, removed or given another value), the keys whose values interpolate or
//! alias those (`%{lookup('k')}`, `%{hiera('k')}`, `%{alias('k')}`, transitively), and the
//! keys named by changed `lookup_options` entries. A HOCON file is changed when what it
//! `include`s differs between the sides, even if its own bytes do not (its keys are compared
//! as parsed with each side's includes). A changed hiera.yaml, environment.conf,
//! metadata.json, legacy data provider function or eyaml key, a changed `^pattern` lookup_options entry, or a data file that does not parse
//! on one side can touch any key: then everything is recomputed (for the last two, only on
//! the nodes that read a changed file).

use super::Tree;
use hiera_engine::fs::Fs;
use hiera_engine::interpolation::{parse_expr, tokenize, Method, Token};
use hiera_formats::DataFormat;
use hiera_value::value::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a file is to a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// hiera.yaml, environment.conf, an eyaml key: may change how any key is found.
    Config,
    /// A file a data_hash backend may read.
    Data,
}

/// The role of a path (relative to the control repo), `None` for files no lookup reads
/// (manifests, templates, Ruby code, README …).
pub(crate) fn role(rel: &str) -> Option<Role> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    // metadata.json's `data_provider`, and the legacy data provider functions
    // (`MODULE::data`, `environment::data`) Puppet 8 calls for it.
    let data_function =
        rel == "functions/environment/data.pp" || rel.ends_with("/functions/data.pp");
    if name == "hiera.yaml"
        || name == "environment.conf"
        || name == "metadata.json"
        || data_function
    {
        return Some(Role::Config);
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if matches!(ext, "pem" | "pkcs7") {
        return Some(Role::Config);
    }
    if DataFormat::of_extension(ext).is_some() {
        return Some(Role::Data);
    }
    // A level's `path` may name any file; files under a data directory are data whatever
    // their extension.
    let in_data_dir = rel
        .split('/')
        .rev()
        .skip(1)
        .any(|d| matches!(d, "data" | "hieradata"));
    in_data_dir.then_some(Role::Data)
}

/// How a file differs between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Added,
    Removed,
    Modified,
}

/// A changed file and the keys it changes.
#[derive(Debug, Clone)]
pub(crate) struct ChangedFile {
    /// Relative to the control repo.
    pub path: String,
    pub status: Status,
    /// Top-level keys added, removed or given another value (`lookup_options` entries
    /// count as their keys).
    pub keys: Vec<String>,
}

/// The keys a change can touch.
#[derive(Debug, Clone, Default)]
pub(crate) struct Impact {
    pub changed: Vec<ChangedFile>,
    /// Why every key must be recomputed, if it must.
    pub everything: Option<String>,
    /// Whether every key must be recomputed only on the nodes whose hierarchies reach a
    /// changed file: the reasons are all in data files (one that does not load on one side,
    /// a changed `^pattern` lookup_options entry), which a node reaching none of the changed
    /// files does not read. A changed hiera.yaml, environment.conf or eyaml key touches
    /// every node.
    pub everything_where_reached: bool,
    /// The keys to recompute (when not everything).
    pub keys: BTreeSet<String>,
    /// Every top-level key of every data file on either side (the keys `--all` can reach).
    pub universe: BTreeSet<String>,
}

/// One side's parse of a data file: its top-level hash, or why it has none.
pub(super) type Parsed = Result<Arc<Map>, String>;

/// `rel`'s bytes parsed by its extension; a HOCON file's includes are read from `fs` (the
/// side's own files).
pub(super) fn parse(rel: &str, bytes: &[u8], fs: &dyn Fs) -> Parsed {
    parse_recording(rel, bytes, fs).0
}

/// The format a data file at `rel` is read in: by its extension, else YAML (a level's own
/// `path` may name a file with any extension).
fn format_of(rel: &str) -> DataFormat {
    let ext = rel.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    DataFormat::of_extension(ext).unwrap_or(DataFormat::Yaml)
}

/// [`parse`], and the paths a HOCON file's `include`s read (as the file names them, resolved
/// by `fs`), nested includes too: what the parse depends on besides `bytes`.
fn parse_recording(rel: &str, bytes: &[u8], fs: &dyn Fs) -> (Parsed, Vec<PathBuf>) {
    let included = std::cell::RefCell::new(Vec::new());
    let v = match format_of(rel) {
        DataFormat::Json => hiera_formats::json::parse(&String::from_utf8_lossy(bytes)),
        DataFormat::Hocon => {
            let read = hocon_includes(fs);
            let recording = |p: &Path| {
                included.borrow_mut().push(p.to_path_buf());
                read(p)
            };
            hiera_formats::hocon::parse_hocon_with(&String::from_utf8_lossy(bytes), &recording)
        }
        DataFormat::Yaml => {
            hiera_formats::yaml::load_bytes(bytes).map_err(|e| e.puppet_message(rel))
        }
    };
    let parsed = match v {
        Ok(Value::Hash(m)) => Ok(Arc::new(m)),
        // An empty document: no keys.
        Ok(Value::Null | Value::Bool(false)) => Ok(Arc::default()),
        Ok(other) => Err(format!(
            "{rel} holds {}, not a hash",
            hiera_types::simple_name(&other)
        )),
        Err(e) => Err(e),
    };
    (parsed, included.into_inner())
}

/// Where a HOCON file's `include file(...)` reads: `fs`.
pub(super) fn hocon_includes(
    fs: &dyn Fs,
) -> impl Fn(&std::path::Path) -> Option<std::io::Result<Vec<u8>>> + '_ {
    move |p| fs.is_file(p).then(|| fs.read(p))
}

/// Compares the two sides' files and finds the keys the change can touch. `modules` are the
/// modules of either side, each a name and its directory relative to the control repo (as
/// the listings name files).
pub(crate) fn analyse(base: &Tree, head: &Tree, modules: &[(String, String)]) -> Impact {
    let mut impact = Impact::default();
    // Each distinct file content is parsed once, whichever side (or path) holds it; a HOCON
    // file once on each side, since what it includes is read from that side (`Some(is_head)`).
    let mut parsed: HashMap<(gix::ObjectId, Option<bool>), (Parsed, Vec<PathBuf>)> = HashMap::new();
    let mut parse_side =
        |tree: &Tree, is_head: bool, rel: &str| -> Option<(Parsed, Vec<PathBuf>)> {
            let id = *tree.listing.get(rel)?;
            let at = (id, (format_of(rel) == DataFormat::Hocon).then_some(is_head));
            if let Some(p) = parsed.get(&at) {
                return Some(p.clone());
            }
            let p = match tree.read(rel) {
                Ok(bytes) => parse_recording(rel, &bytes, &*tree.fs),
                Err(e) => (Err(format!("{rel}: {e}")), Vec::new()),
            };
            parsed.insert(at, p.clone());
            Some(p)
        };

    let paths: BTreeSet<&String> = base.listing.keys().chain(head.listing.keys()).collect();
    let mut everything: Vec<String> = Vec::new();
    // Whether a reason in `everything` holds for every node.
    let mut every_node = false;
    // Keys that interpolate another key: referenced root key → the keys referring to it.
    let mut referrers: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut dynamic: BTreeSet<String> = BTreeSet::new();
    for rel in paths {
        let Some(role) = role(rel) else { continue };
        let (b, h) = (base.listing.get(rel), head.listing.get(rel));
        let status = match (b, h) {
            (Some(x), Some(y)) if x == y => None,
            (Some(_), Some(_)) => Some(Status::Modified),
            (None, Some(_)) => Some(Status::Added),
            _ => Some(Status::Removed),
        };
        if role == Role::Config {
            if status.is_some() {
                everything.push(format!("{rel} changed"));
                every_node = true;
                impact.changed.push(ChangedFile {
                    path: rel.clone(),
                    status: status.unwrap_or(Status::Modified),
                    keys: Vec::new(),
                });
            }
            continue;
        }
        let pb = parse_side(base, false, rel);
        let hocon = format_of(rel) == DataFormat::Hocon;
        let ph = if status.is_none() && !hocon {
            None
        } else {
            parse_side(head, true, rel)
        };
        // The same HOCON file reads what it includes on each side: when that differs, the
        // file's keys may (and the nodes reaching it must be asked again).
        let status = status.or_else(|| {
            let included: BTreeSet<&PathBuf> = [&pb, &ph]
                .into_iter()
                .flatten()
                .flat_map(|p| &p.1)
                .collect();
            let differs = |p: &&PathBuf| base.fs.read(p).ok() != head.fs.read(p).ok();
            included.iter().any(differs).then_some(Status::Modified)
        });
        for p in [&pb, &ph].into_iter().flatten() {
            if let Ok(p) = &p.0 {
                impact
                    .universe
                    .extend(p.keys().filter_map(Value::as_str).map(str::to_string));
                scan_references(p, &mut referrers, &mut dynamic);
            }
        }
        let Some(status) = status else { continue };
        let empty: Parsed = Ok(Arc::default());
        let parse = |p: Option<(Parsed, Vec<PathBuf>)>| p.map_or_else(|| empty.clone(), |p| p.0);
        let (pb, ph) = (parse(pb), parse(ph));
        let keys = match (&pb, &ph) {
            (Ok(a), Ok(b)) => {
                let module = modules
                    .iter()
                    .find(|(_, dir)| rel.starts_with(&format!("{dir}/")))
                    .map(|(name, _)| name.as_str());
                let (keys, patterns) = changed_keys(a, b, module);
                if patterns {
                    everything.push(format!("a lookup_options pattern changed in {rel}"));
                }
                keys
            }
            (Err(e), _) | (_, Err(e)) => {
                // Every lookup that reaches the file may start or stop failing.
                let _ = e;
                everything.push(format!("{rel} does not load on one side"));
                Vec::new()
            }
        };
        impact.keys.extend(keys.iter().cloned());
        impact.changed.push(ChangedFile {
            path: rel.clone(),
            status,
            keys,
        });
    }
    impact.universe.remove("lookup_options");
    if !everything.is_empty() {
        impact.everything = Some(everything.join("; "));
        impact.everything_where_reached = !every_node;
        return impact;
    }
    // Keys interpolating a changed key change too, transitively.
    if !impact.keys.is_empty() {
        impact.keys.extend(dynamic);
        let mut todo: Vec<String> = impact.keys.iter().cloned().collect();
        while let Some(k) = todo.pop() {
            if let Some(rs) = referrers.get(&k) {
                for r in rs {
                    if impact.keys.insert(r.clone()) {
                        todo.push(r.clone());
                    }
                }
            }
        }
    }
    impact
}

/// The top-level keys whose values differ between two versions of a file, and whether a
/// `lookup_options` entry for a `^pattern` changed (which can touch any key). In a file of
/// `module`, a changed entry not named `module::…` counts as a pattern too: Puppet refuses
/// the module's whole lookup_options for it, so every key of the module starts or stops
/// failing.
fn changed_keys(a: &Map, b: &Map, module: Option<&str>) -> (Vec<String>, bool) {
    let mut out = BTreeSet::new();
    let mut pattern = false;
    let lo = Value::str("lookup_options");
    for (k, va) in a.iter().chain(b.iter()) {
        let Some(name) = k.as_str() else { continue };
        if k == &lo {
            continue;
        }
        if a.get(k) != b.get(k) {
            out.insert(name.to_string());
        }
        let _ = va;
    }
    let empty = Map::default();
    let hash = |m: &Map| -> Map {
        match m.get(&lo) {
            Some(Value::Hash(h)) => h.clone(),
            _ => empty.clone(),
        }
    };
    let (la, lb) = (hash(a), hash(b));
    if a.get(&lo).is_some_and(|v| !matches!(v, Value::Hash(_)))
        || b.get(&lo).is_some_and(|v| !matches!(v, Value::Hash(_)))
    {
        pattern = a.get(&lo) != b.get(&lo);
    }
    for (k, _) in la.iter().chain(lb.iter()) {
        if la.get(k) == lb.get(k) {
            continue;
        }
        match k.as_str() {
            Some(p) if p.starts_with('^') => pattern = true,
            Some(name) if module.is_some_and(|m| !name.starts_with(&format!("{m}::"))) => {
                pattern = true
            }
            Some(name) => {
                out.insert(name.to_string());
            }
            None => pattern = true,
        }
    }
    (out.into_iter().collect(), pattern)
}

/// Records which top-level keys interpolate which keys (`lookup`, `hiera`, `alias`); keys
/// whose interpolated key cannot be parsed (a lookup of it fails, but how may change) go to
/// `dynamic`.
fn scan_references(
    m: &Map,
    referrers: &mut HashMap<String, BTreeSet<String>>,
    dynamic: &mut BTreeSet<String>,
) {
    for (k, v) in m.iter() {
        let Some(top) = k.as_str() else { continue };
        if top == "lookup_options" {
            continue;
        }
        let mut refs = Vec::new();
        let mut is_dynamic = false;
        collect_refs(v, &mut refs, &mut is_dynamic, 0);
        if is_dynamic {
            dynamic.insert(top.to_string());
        }
        for r in refs {
            referrers.entry(r).or_default().insert(top.to_string());
        }
    }
}

fn collect_refs(v: &Value, refs: &mut Vec<String>, dynamic: &mut bool, depth: usize) {
    if depth > hiera_value::limits::MAX_VALUE_DEPTH {
        return;
    }
    match v {
        Value::String(s) => {
            if !s.contains("%{") {
                return;
            }
            for t in tokenize(s) {
                if let Token::Expr { expr, .. } = t {
                    let (method, arg, _) = parse_expr(expr);
                    if matches!(method, Method::Lookup | Method::Hiera | Method::Alias) {
                        // `lookup('a.b')` looks up `a`; a quoted first segment is the key.
                        match hiera_engine::key::LookupKey::parse(arg) {
                            Ok(k) => refs.push(k.root),
                            Err(_) => *dynamic = true,
                        }
                    }
                }
            }
        }
        Value::Array(a) => a
            .iter()
            .for_each(|x| collect_refs(x, refs, dynamic, depth + 1)),
        Value::Hash(h) => {
            for (k, x) in h.iter() {
                collect_refs(k, refs, dynamic, depth + 1);
                collect_refs(x, refs, dynamic, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(s: &str) -> Map {
        match hiera_formats::yaml::load(s).unwrap() {
            Value::Hash(h) => h,
            _ => panic!(),
        }
    }

    #[test]
    fn roles() {
        assert_eq!(role("hiera.yaml"), Some(Role::Config));
        assert_eq!(role("modules/ntp/hiera.yaml"), Some(Role::Config));
        assert_eq!(role("environment.conf"), Some(Role::Config));
        assert_eq!(role("keys/private_key.pkcs7.pem"), Some(Role::Config));
        assert_eq!(role("data/common.yaml"), Some(Role::Data));
        assert_eq!(role("data/nodes/web.txt"), Some(Role::Data));
        assert_eq!(role("modules/ntp/metadata.json"), Some(Role::Config));
        assert_eq!(role("modules/ntp/functions/data.pp"), Some(Role::Config));
        assert_eq!(role("functions/environment/data.pp"), Some(Role::Config));
        assert_eq!(role("modules/ntp/functions/other.pp"), None);
        assert_eq!(role("manifests/site.pp"), None);
        assert_eq!(role("README.md"), None);
    }

    #[test]
    fn changed_keys_and_lookup_options() {
        let a = map(
            "{a: 1, b: [1], c: x, lookup_options: {b: {merge: unique}, '^p::.*': {merge: deep}}}",
        );
        let b = map("{a: 1, b: [2], d: y, lookup_options: {b: {merge: unique}, a: {merge: first}, '^p::.*': {merge: deep}}}");
        assert_eq!(
            changed_keys(&a, &b, None),
            (vec!["a".into(), "b".into(), "c".into(), "d".into()], false)
        );
        let c = map("{lookup_options: {'^p::.*': {merge: hash}}}");
        assert!(changed_keys(&a, &c, None).1);
        // In a module's file, an entry for another module's key makes Puppet refuse all of
        // the module's lookup_options: every key of the module.
        let m = map("{p::x: 1, lookup_options: {p::x: {merge: deep}}}");
        let n = map("{p::x: 1, lookup_options: {p::x: {merge: deep}, a: {merge: deep}}}");
        assert_eq!(changed_keys(&m, &n, Some("p")), (vec![], true));
        assert_eq!(changed_keys(&m, &n, None), (vec!["a".into()], false));
        let o = map("{p::x: 1, lookup_options: {p::x: {merge: first}}}");
        assert_eq!(
            changed_keys(&m, &o, Some("p")),
            (vec!["p::x".into()], false)
        );
    }

    #[test]
    fn references_are_found_through_structures() {
        let m = map("{x: \"%{lookup('a.b')}\", y: [{z: \"%{alias('c')}\"}], w: \"%{facts.os}\", v: \"%{hiera('k_%{facts.x}')}\"}");
        let (mut r, mut d) = (HashMap::new(), BTreeSet::new());
        scan_references(&m, &mut r, &mut d);
        assert_eq!(r["a"], BTreeSet::from(["x".to_string()]));
        assert_eq!(r["c"], BTreeSet::from(["y".to_string()]));
        assert!(!r.contains_key("facts.os"));
        // Interpolations do not nest (`%{` ends at the first `}`, as Ruby's gsub): `v` names
        // a scope variable, not a key.
        assert!(d.is_empty(), "{d:?}");
    }
}
