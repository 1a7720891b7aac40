//! Rule group 6: rules that need the nodes (`--facts-dir`, one facts file per node). Data
//! files no node reaches, values the next level gives anyway for every node reaching them,
//! values a higher level overrides for every node, and merges that fail for some node.
//!
//! Each node's hierarchy is interpolated by the engine ([`Session::interpolate`]) with the
//! node's scope, and merged keys are looked up through the engine as `puppet lookup` would.

use super::repo::{has_placeholders, Repo};
use super::Sink;
use hiera_engine::config::Locations;
use hiera_engine::engine::{Exec, Layers, Session, Settings};
use hiera_engine::error::{Error, Result};
use hiera_engine::scope::{Scope, Strict};
use hiera_engine::workspace::Workspace;
use hiera_value::value::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One node of the fleet.
#[derive(Debug, Clone)]
pub(crate) struct FleetNode {
    pub name: String,
    pub facts: Map,
    /// The node's top-scope variables (its facts, and what the caller set over them).
    pub scope: Scope,
}

/// The nodes of the fleet (`--facts-dir` or PuppetDB).
#[derive(Debug, Clone, Default)]
pub(crate) struct Fleet {
    pub nodes: Vec<FleetNode>,
}

impl Fleet {
    /// The nodes of `--facts-dir`, or of PuppetDB (every active node, or `nodes_query`'s),
    /// read by the node sources batch mode uses ([`facts::batch`](hiera_facts::batch),
    /// [`facts::puppetdb_batch`](hiera_facts::puppetdb_batch)). `None` without either.
    pub fn from_options(root: &Path, opts: &super::Options) -> Result<Option<Fleet>> {
        if let Some(nodes) = &opts.nodes {
            return Fleet::from_nodes(nodes).map(Some);
        }
        let nodes = match (&opts.facts_dir, &opts.puppetdb) {
            (Some(_), Some(_)) => {
                return Err(Error::Usage(
                    "--facts-dir and --puppetdb cannot be combined".into(),
                ))
            }
            (Some(dir), None) => {
                let request = hiera_facts::FactsRequest {
                    dir: Some((
                        hiera_engine::environment::absolute(root, dir),
                        dir.display().to_string(),
                    )),
                    ..Default::default()
                };
                hiera_facts::batch(&request)?.0
            }
            (None, Some(db)) => {
                let client = hiera_facts::puppetdb::Client::new(db)?;
                let mut nodes = Vec::new();
                for chunk in
                    hiera_facts::puppetdb_batch(&client, opts.nodes_query.as_deref(), None)?
                {
                    nodes.extend(chunk);
                }
                nodes
            }
            (None, None) if opts.nodes_query.is_some() => {
                return Err(Error::Usage("--nodes-query needs --puppetdb".into()))
            }
            (None, None) => return Ok(None),
        };
        Fleet::from_batch(nodes).map(Some)
    }

    /// The fleet of a batch's nodes. A node whose facts cannot be read stops the lint: every
    /// fleet finding would be wrong without it.
    pub fn from_batch(found: Vec<hiera_facts::BatchNode>) -> Result<Fleet> {
        let mut nodes = Vec::with_capacity(found.len());
        for n in found {
            let mut facts = n.facts?;
            // `$trusted.certname` follows clientcert, as in batch mode.
            facts
                .entry(Value::str("clientcert"))
                .or_insert_with(|| Value::str(n.name.as_str()));
            nodes.push(FleetNode {
                name: n.name,
                scope: Scope::from_facts(facts.clone(), "production"),
                facts,
            });
        }
        Ok(Fleet { nodes })
    }

    /// The fleet of nodes whose scopes the caller built. A node whose facts could not be
    /// read stops the lint, as in [`from_batch`](Self::from_batch).
    pub fn from_nodes(found: &[hiera_engine::batch::Node]) -> Result<Fleet> {
        let mut nodes = Vec::with_capacity(found.len());
        for n in found {
            if let Some(e) = &n.facts_error {
                return Err(Error::run(format!("node {}: {e}", n.name)));
            }
            nodes.push(FleetNode {
                name: n.name.clone(),
                facts: n.scope.facts().cloned().unwrap_or_default(),
                scope: n.scope.clone(),
            });
        }
        Ok(Fleet { nodes })
    }

    /// Whether some node has the fact at `path` (`["os", "family"]`).
    pub(crate) fn any_has(&self, path: &[&str]) -> bool {
        self.nodes.iter().any(|n| {
            let mut cur = n.facts.get(&Value::str(path[0]));
            for seg in &path[1..] {
                cur = match cur {
                    Some(Value::Hash(h)) => h.get(&Value::str(*seg)),
                    Some(Value::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                };
            }
            cur.is_some()
        })
    }
}

fn scope_of(node: &FleetNode) -> Scope {
    node.scope.clone()
}

/// The files a node reaches, in priority order (layer, then level, then location).
pub(crate) fn reached(
    repo: &Repo,
    index: &HashMap<&Path, usize>,
    session: &mut Session,
) -> Vec<usize> {
    let mut out = Vec::new();
    for layer in &repo.layers {
        for level in &layer.levels {
            for (t, files) in level.templates.iter().zip(&level.files) {
                if files.is_empty() {
                    continue;
                }
                if !has_placeholders(t) || matches!(level.entry.locations, Locations::Mapped(..)) {
                    // Mapped paths depend on the node's array; counted as reached.
                    out.extend(files.iter().copied());
                    continue;
                }
                let Ok(Value::String(p)) = session.interpolate(&Value::str(t.as_str()), false)
                else {
                    continue;
                };
                if matches!(level.entry.locations, Locations::Globs(_)) {
                    for g in hiera_engine::location::glob(&hiera_engine::fs::RealFs, &p)
                        .unwrap_or_default()
                    {
                        if let Some(&i) = index.get(Path::new(&g)) {
                            out.push(i);
                        }
                    }
                } else if let Some(&i) = index.get(Path::new(&p)) {
                    out.push(i);
                }
            }
        }
    }
    let mut seen = HashSet::new();
    out.retain(|i| seen.insert(*i));
    out
}

/// Keys whose lookup_options give a merge (exact names, and defined keys a pattern matches).
pub(crate) fn merged_keys(repo: &Repo) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in &repo.files {
        let Some(Value::Hash(lo)) = f.data.get(&Value::str("lookup_options")) else {
            continue;
        };
        for (name, opts) in lo {
            let Some(name) = name.as_str() else { continue };
            let has_merge = opts
                .as_hash()
                .and_then(|h| h.get(&Value::str("merge")))
                .is_some_and(|m| !m.is_null() && m.as_str() != Some("first"));
            if !has_merge {
                continue;
            }
            if name.starts_with('^') {
                if let Ok(re) = hiera_engine::engine::KeyPattern::new(name) {
                    out.extend(repo.defined.iter().filter(|k| re.is_match(k)).cloned());
                }
            } else if repo.defined.contains(name) {
                out.push(name.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

pub(crate) fn check(repo: &Repo, fleet: &Fleet, allow_exec: bool, sink: &mut Sink) -> Result<()> {
    if fleet.nodes.is_empty() {
        return Ok(());
    }
    let merged: HashSet<String> = merged_keys(repo).into_iter().collect();
    let bare = Layers::default();
    let quiet = Settings {
        strict: Strict::Off,
        ..Default::default()
    };
    let mut reach = vec![0u32; repo.files.len()];
    let mut shadowed: HashMap<(usize, &str), u32> = HashMap::new();
    let mut redundant: HashMap<(usize, &str), u32> = HashMap::new();
    // Built once: every node looks its interpolated paths up in it.
    let index: HashMap<&Path, usize> = repo
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_path(), i))
        .collect();
    for node in &fleet.nodes {
        let mut session = Session::new(scope_of(node), bare.clone(), quiet.clone());
        let list = reached(repo, &index, &mut session);
        // Keys of the files above the current one (small: node, role, OS … files), with
        // the layers defining them.
        let mut above: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, &fi) in list.iter().enumerate() {
            reach[fi] += 1;
            let f = &repo.files[fi];
            // A module's data are defaults that the environment's data override: that is
            // the normal Hiera pattern, not a value "never used". Within a module, and for
            // the other layers, a value overridden everywhere is.
            let module = repo
                .layers
                .get(f.layer)
                .is_some_and(|l| l.kind == hiera_engine::config::Layer::Module);
            for (k, layers) in &above {
                if module && !layers.contains(&f.layer) {
                    continue;
                }
                if f.data.contains_key(&Value::str(*k)) && !merged.contains(*k) {
                    *shadowed.entry((fi, *k)).or_default() += 1;
                }
            }
            if i + 1 < list.len() {
                for (k, v) in &f.data {
                    let Some(k) = k.as_str() else { continue };
                    if k == "lookup_options" || merged.contains(k) {
                        continue;
                    }
                    let next = list[i + 1..]
                        .iter()
                        .find_map(|&j| repo.files[j].data.get(&Value::str(k)));
                    if next == Some(v) {
                        *redundant.entry((fi, k)).or_default() += 1;
                    }
                }
            }
            for k in f.data.keys() {
                if let Some(k) = k.as_str() {
                    if k != "lookup_options" {
                        above.entry(k).or_default().push(f.layer);
                    }
                }
            }
        }
    }
    for (i, f) in repo.files.iter().enumerate() {
        if reach[i] == 0 {
            sink.add(
                &f.path,
                (1, 1),
                "unreached-file",
                format!(
                    "no node of the fleet ({} facts files) reads this file",
                    fleet.nodes.len()
                ),
            );
        }
    }
    let always_shadowed: HashSet<(usize, &str)> = shadowed
        .iter()
        .filter(|((fi, _), n)| **n == reach[*fi])
        .map(|(k, _)| *k)
        .collect();
    let mut report = |counts: HashMap<(usize, &str), u32>, rule: &'static str| {
        // A value never used is reported as such, not also as redundant.
        let mut hits: Vec<_> = counts
            .into_iter()
            .filter(|((fi, _), n)| *n == reach[*fi])
            .filter(|(k, _)| rule == "shadowed-key" || !always_shadowed.contains(k))
            .collect();
        hits.sort();
        for ((fi, k), n) in hits {
            let f = &repo.files[fi];
            let nodes = if n == 1 {
                "the one node that reads this file".to_string()
            } else {
                format!("all {n} nodes that read this file")
            };
            let msg = if rule == "redundant-value" {
                format!(
                    "'{k}' has the value the next level gives anyway, for {nodes}: remove it here"
                )
            } else {
                format!(
                    "'{k}' is overridden by a higher level for {nodes}: this value is never used"
                )
            };
            sink.add(&f.path, f.key_pos(k), rule, msg);
        }
    };
    report(shadowed, "shadowed-key");
    report(redundant, "redundant-value");
    lookups(repo, fleet, &merged, allow_exec, sink)
}

/// Looks every merged key up for every node, as `puppet lookup` would, and reports the
/// first node each failing key fails for. A `command` level such a lookup reaches fails the
/// lint unless `allow_exec`.
fn lookups(
    repo: &Repo,
    fleet: &Fleet,
    merged: &HashSet<String>,
    allow_exec: bool,
    sink: &mut Sink,
) -> Result<()> {
    if merged.is_empty() {
        return Ok(());
    }
    let mut keys: Vec<&String> = merged.iter().collect();
    keys.sort();
    // One workspace for the fleet: every node shares its parses. A message may quote what
    // eyaml decrypted ("got 'hunter2'"): the lint has no need to show it.
    let workspace = Workspace::with_fs(
        repo.layers_spec.clone(),
        Settings {
            redact: true,
            ..Settings::default()
        },
        // The repo's file system: a language server's unsaved buffers are what the nodes get.
        repo.fs.clone(),
    );
    // key -> (first failing node, error, how many nodes fail)
    let mut failures: HashMap<&str, (String, String, usize)> = HashMap::new();
    for node in &fleet.nodes {
        let mut session = workspace.session_unrefreshed(scope_of(node));
        if !allow_exec {
            session.set_exec(Exec::Refused {
                how_to_allow:
                    "lint runs no program the linted tree names unless given --allow-exec",
            });
        }
        for k in &keys {
            let result = session.lookup(&[k.to_string()], None);
            if let Some(refused) = session.refused_exec() {
                return Err(Error::run(refused.to_string()));
            }
            if let Err(e) = result {
                let message = match session.redactor() {
                    Some(r) => r.text(&e.to_string()).into_owned(),
                    None => e.to_string(),
                };
                let entry = failures
                    .entry(k.as_str())
                    .or_insert_with(|| (node.name.clone(), message, 0));
                entry.2 += 1;
            }
        }
    }
    let mut failures: Vec<_> = failures.into_iter().collect();
    failures.sort();
    for (k, (node, err, n)) in failures {
        let Some(f) = repo
            .files
            .iter()
            .find(|f| f.data.contains_key(&Value::str(k)))
        else {
            continue;
        };
        let others = if n > 1 {
            format!(" (and {} other nodes)", n - 1)
        } else {
            String::new()
        };
        sink.add(
            &f.path,
            f.key_pos(k),
            "lookup-fails",
            format!("the lookup of '{k}' fails for node {node}{others}: {err}"),
        );
    }
    Ok(())
}
