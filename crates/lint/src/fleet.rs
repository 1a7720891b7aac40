//! Rule group 6: rules that need the nodes (`--facts-dir`, one facts file per node). Data
//! files no node reaches, values the next level gives anyway for every node reaching them,
//! values a higher level overrides for every node, and merges that fail for some node.
//!
//! Each node's hierarchy is interpolated by the engine ([`Session::interpolate`]) with the
//! node's scope, and merged keys are looked up through the engine as `puppet lookup` would.

use super::param_types::{NodeNotes, Pending};
use super::repo::Repo;
use super::Sink;
use hiera_engine::batch::{Node, NodeSource};
use hiera_engine::engine::{Exec, Layers, Session, Settings};
use hiera_engine::error::{Error, Result};
use hiera_engine::scope::{Scope, Strict};
use hiera_engine::workspace::Workspace;
use hiera_value::value::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The nodes of the fleet (`--facts-dir`, PuppetDB, or the caller's), read as they are
/// checked, one unit (a facts file, a chunk of PuppetDB's) at a time: the fleet is never all
/// in memory.
pub(crate) struct Fleet<'a> {
    nodes: NodeSource<'a>,
}

impl<'a> Fleet<'a> {
    /// The caller's nodes: a stream of them (the node context's fleet: facts files, a
    /// facts directory, PuppetDB), else [`Options::nodes`](super::Options::nodes). `None`
    /// without any.
    pub fn from_options<'s: 'a>(
        opts: &'a super::Options,
        stream: Option<NodeSource<'s>>,
    ) -> Option<Fleet<'a>> {
        if let Some(nodes) = stream {
            return Some(Fleet {
                nodes: nodes.shorten(),
            });
        }
        opts.nodes.as_ref().map(|nodes| Fleet {
            nodes: NodeSource::from_refs(nodes),
        })
    }
}

/// Whether `facts` has the fact at `path` (`["os", "family"]`).
fn has_fact(facts: &Map, path: &[String]) -> bool {
    let mut cur = facts.get(&Value::str(path[0].as_str()));
    for seg in &path[1..] {
        cur = match cur {
            Some(Value::Hash(h)) => h.get(&Value::str(seg.as_str())),
            Some(Value::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
    }
    cur.is_some()
}

/// What [`check_facts`](super::interpolations::check_facts) asks of a node: whether it has a fact (`["os", "family"]`), or a
/// top-scope variable (a fact's, a classifier parameter, a `--var`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Read {
    /// A fact, by its path.
    Fact(Vec<String>),
    /// A top-scope variable, by its name.
    Var(String),
}

/// What the fleet's facts hold, as [`check_facts`](super::interpolations::check_facts) asks.
#[derive(Debug, Default)]
pub(crate) struct FleetFacts {
    /// How many nodes.
    pub nodes: usize,
    /// What reading the nodes warned of.
    pub warnings: Vec<String>,
    /// The nodes whose facts could not be read, each `node NAME: why` (left out of the
    /// fleet the rules judge).
    pub unreadable: Vec<String>,
    /// Each node's mismatches for `parameter-type-mismatch`, in node order (only nodes
    /// that have some).
    pub judged: Vec<(String, NodeNotes)>,
    /// Each fact or variable asked about, and whether some node has it.
    seen: HashMap<Read, bool>,
}

impl FleetFacts {
    /// Whether some node has the fact or variable `read`; only what [`check`] was given
    /// is known.
    pub(crate) fn any_has(&self, read: &Read) -> bool {
        self.seen.get(read).copied().unwrap_or(false)
    }
}

/// A session of the fleet's workspace for a node, running no program the tree names unless
/// `allow_exec`.
fn node_session(workspace: &Workspace, scope: Scope, allow_exec: bool) -> Session {
    let mut session = workspace.session_unrefreshed(scope);
    if !allow_exec {
        session.set_exec(Exec::Refused {
            how_to_allow: "lint runs no program the linted tree names unless given --allow-exec",
        });
    }
    session
}

/// What one node gives the fleet rules.
#[derive(Default)]
struct NodeCheck<'r> {
    name: String,
    /// Where its facts came from (`""`: the caller does not say).
    source: String,
    /// The files the node reaches.
    reached: Vec<usize>,
    shadowed: Vec<(usize, &'r str)>,
    redundant: Vec<(usize, &'r str)>,
    /// Whether the node has each fact path asked about.
    has: Vec<bool>,
    /// The merged keys whose lookup fails, and the message.
    failures: Vec<(&'r str, String)>,
    /// A `command` level a lookup reached and did not run.
    refused: Option<String>,
    /// What `parameter-type-mismatch` found in the node's values.
    judged: Option<NodeNotes>,
}

/// Checks every node of the fleet, read and checked on the workers (one unit, a facts file,
/// at a time) and counted in node order: the fleet rules' findings, and what
/// [`check_facts`](super::interpolations::check_facts) needs to know of the facts (`facts`:
/// the fact paths it asks about). `progress` is told how many nodes were checked, of about
/// how many. Of `opts`: `allow_exec`, and `fleet_types_only` (only the values class
/// parameters get are judged: no lookup of every merged key, no other fleet rule).
pub(crate) fn check(
    repo: &Repo,
    fleet: Fleet<'_>,
    facts: Vec<Read>,
    types: &Pending<'_>,
    opts: &super::Options,
    progress: &mut (dyn FnMut(usize, usize) + Send),
    sink: &mut Sink,
) -> Result<FleetFacts> {
    let (allow_exec, types_only) = (opts.allow_exec, opts.fleet_types_only);
    let merged = &types.merged;
    // `types_only` (a language server): only the values class parameters get are judged;
    // the merged keys' lookups of `lookup-fails` are what a keystroke cannot afford.
    let mut keys: Vec<&String> = merged.iter().filter(|_| !types_only).collect();
    keys.sort();
    let bare = Layers::default();
    let quiet = Settings {
        strict: Strict::Off,
        ..Default::default()
    };
    // One workspace for the fleet's lookups: every node shares its parses. A message may
    // quote what eyaml decrypted ("got 'hunter2'"): the lint has no need to show it.
    let workspace = Workspace::with_fs(
        repo.layers_spec.clone(),
        Settings {
            redact: true,
            secrets: opts.secrets,
            ..Settings::default()
        },
        // The repo's file system: a language server's unsaved buffers are what the nodes get.
        repo.fs.clone(),
    );
    // Built once: every node looks its interpolated paths up in it.
    let index: HashMap<&Path, usize> = repo
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_path(), i))
        .collect();
    // After a refusal the nodes are only read (a node whose facts cannot be read is the
    // error, as when every node was read first).
    let stop_checking = std::sync::atomic::AtomicBool::new(false);
    let check_node = |node: Node| -> NodeCheck<'_> {
        let source = node.source.map(|(_, s)| s).unwrap_or_default();
        let empty = Map::default();
        let facts_map = node.scope.facts().unwrap_or(&empty);
        let has = facts
            .iter()
            .map(|read| match read {
                Read::Fact(path) => has_fact(facts_map, path),
                Read::Var(name) => node.scope.get(name).is_some(),
            })
            .collect();
        let name = node.name;
        if stop_checking.load(std::sync::atomic::Ordering::Relaxed) {
            return NodeCheck {
                name,
                source,
                has,
                ..NodeCheck::default()
            };
        }
        let scope = node.scope;
        // `types_only` keeps none of what the files a node reaches tell.
        let list = if types_only {
            Vec::new()
        } else {
            let mut session = Session::new(scope.clone(), bare.clone(), quiet.clone());
            repo.reached(&index, &mut session)
        };
        let (mut shadowed, mut redundant) = (Vec::new(), Vec::new());
        // Keys of the files above the current one (small: node, role, OS … files), with
        // the layers defining them.
        let mut above: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, &fi) in list.iter().enumerate() {
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
                    shadowed.push((fi, *k));
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
                        redundant.push((fi, k));
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
        // The values class parameters get (parameter-type-mismatch), in a session of their
        // own, as automatic parameter lookup would.
        let judged = types.judges_nodes().then(|| {
            let mut session = node_session(&workspace, scope.clone(), allow_exec);
            types.judge_node(repo, &index, &mut session)
        });
        let (failures, refused) = lookups(&workspace, &keys, scope, allow_exec);
        NodeCheck {
            judged,
            name,
            source,
            reached: list,
            shadowed,
            redundant,
            has,
            failures,
            refused,
        }
    };
    let mut reach = vec![0u32; repo.files.len()];
    let mut shadowed: HashMap<(usize, &str), u32> = HashMap::new();
    let mut redundant: HashMap<(usize, &str), u32> = HashMap::new();
    // key -> (first failing node, error, how many nodes fail)
    let mut failures: HashMap<&str, (String, String, usize)> = HashMap::new();
    let mut seen = vec![false; facts.len()];
    let mut nodes = 0usize;
    let mut refused: Option<String> = None;
    let mut unreadable: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    let mut judged: Vec<(String, NodeNotes)> = Vec::new();
    let expected = fleet.nodes.expected;
    hiera_engine::workers::in_order(
        fleet.nodes.into_units(),
        threads(),
        |unit| {
            let read = unit();
            let (mut out, mut errors) = (Vec::new(), Vec::new());
            for n in read.nodes {
                match &n.facts_error {
                    // Reported, and left out of the fleet the rules judge.
                    Some(e) => errors.push(format!("node {}: {e}", n.name)),
                    None => out.push(check_node(n)),
                }
            }
            (out, read.warnings, errors)
        },
        |_, (checked, w, errors)| {
            warnings.extend(w);
            unreadable.extend(errors);
            for mut c in checked {
                nodes += 1;
                names.push((c.name.clone(), std::mem::take(&mut c.source)));
                for (s, h) in seen.iter_mut().zip(&c.has) {
                    *s |= *h;
                }
                if refused.is_some() {
                    continue;
                }
                for &fi in &c.reached {
                    reach[fi] += 1;
                }
                for k in c.shadowed {
                    *shadowed.entry(k).or_default() += 1;
                }
                for k in c.redundant {
                    *redundant.entry(k).or_default() += 1;
                }
                for (k, message) in c.failures {
                    failures
                        .entry(k)
                        .or_insert_with(|| (c.name.clone(), message, 0))
                        .2 += 1;
                }
                if let Some(j) = c.judged.filter(NodeNotes::matters) {
                    judged.push((c.name.clone(), j));
                }
                if c.refused.is_some() {
                    refused = c.refused;
                    stop_checking.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
            progress(nodes, expected);
            std::ops::ControlFlow::Continue(())
        },
    );
    if let Some(m) = refused {
        return Err(Error::run(m));
    }
    warnings.extend(hiera_engine::batch::duplicate_warnings(
        names.iter().map(|(n, s)| (n.as_str(), s.as_str())),
    ));
    drop(names);
    let fleet_facts = FleetFacts {
        nodes,
        unreadable,
        warnings,
        judged,
        seen: facts.into_iter().zip(seen).collect(),
    };
    if nodes == 0 || types_only {
        return Ok(fleet_facts);
    }
    for (i, f) in repo.files.iter().enumerate() {
        if reach[i] == 0 {
            sink.add(
                &f.path,
                (1, 1),
                "unreached-file",
                format!(
                    "no node of the fleet ({}) reads this file",
                    super::nodes_text(nodes)
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
            sink.add(&f.path, f.key_region(k), rule, msg);
        }
    };
    report(shadowed, "shadowed-key");
    report(redundant, "redundant-value");
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
            format!(
                " (and {} other {})",
                n - 1,
                if n == 2 { "node" } else { "nodes" }
            )
        } else {
            String::new()
        };
        sink.add(
            &f.path,
            f.key_region(k),
            "lookup-fails",
            format!("the lookup of '{k}' fails for node {node}{others}: {err}"),
        );
    }
    Ok(fleet_facts)
}

/// The lint's worker threads: one per CPU.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Looks every merged key up for a node, as `puppet lookup` would: the keys that fail, with
/// the message, and the refusal of a `command` level such a lookup reached (the lint fails
/// with it unless `allow_exec`).
fn lookups<'k>(
    workspace: &Workspace,
    keys: &[&'k String],
    scope: Scope,
    allow_exec: bool,
) -> (Vec<(&'k str, String)>, Option<String>) {
    let mut failures = Vec::new();
    if keys.is_empty() {
        return (failures, None);
    }
    let mut session = node_session(workspace, scope, allow_exec);
    for k in keys {
        let result = session.lookup(&[k.to_string()], None);
        if let Some(refused) = session.refused_exec() {
            return (failures, Some(refused.to_string()));
        }
        if let Err(e) = result {
            let message = match session.redactor() {
                Some(r) => r.text(&e.to_string()).into_owned(),
                None => e.to_string(),
            };
            failures.push((k.as_str(), message));
        }
    }
    (failures, None)
}
