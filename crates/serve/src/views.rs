//! The document behind every view, computed once as JSON: the API (`/api/v1/…`) returns it as
//! it is and the page renders it as HTML, so a page and its API answer never disagree. Each
//! document is made on a request's blocking thread, after [`State::refresh`].
//!
//! Secrets: what eyaml decrypted for a document's lookups is `[redacted]` in it (values,
//! messages, explanations) unless `--show-secrets`: every session records its plaintexts
//! (the workspace's `redact` setting), and the finished document is rewritten with them
//! ([`redacted`]).

use crate::error::ViewError;
use crate::index::FleetIndex;
use crate::state::{Fleet, State};
use hiera_engine::answer::Finish;
use hiera_engine::batch::{Node, NodeSource, Record};
use hiera_engine::config::{HieraConfig, Layer, LoadContext, Locations};
use hiera_engine::engine::Session;
use hiera_engine::error::Error;
use hiera_engine::merge::MergeStrategy;
use hiera_engine::redact::Redactor;
use hiera_engine::scope::{Scope, Strict};
use hiera_engine::slim::FactPaths;
use hiera_engine::where_::{self, Definition, Reporter, Role};
use hiera_engine::workspace::Stamp;
use hiera_value::value::Value;
use serde_json::{json, Map as JsonMap, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Keys a `POST /api/v1/lookup` may ask for at once.
pub const MAX_POSTED_KEYS: usize = 1000;
/// The longest key a request may name, in bytes.
pub const MAX_KEY_BYTES: usize = 4096;
/// Matches a search lists, of nodes and of keys each.
pub const MAX_MATCHES: usize = 500;

/// A value as JSON, written by the json gem's rules as batch mode writes it (a value JSON
/// cannot hold, such as NaN, is the error a lookup would report).
pub fn value_json(v: &Value) -> Result<Json, String> {
    let text = hiera_formats::render::to_json(v).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// `doc` with every plaintext `secrets` holds replaced by `[redacted]`, in every string and
/// every object key.
pub fn redacted(doc: Json, secrets: &Redactor) -> Json {
    if secrets.is_empty() {
        return doc;
    }
    match doc {
        Json::String(s) => Json::String(secrets.text(&s).into_owned()),
        Json::Array(a) => Json::Array(a.into_iter().map(|v| redacted(v, secrets)).collect()),
        Json::Object(o) => Json::Object(
            o.into_iter()
                .map(|(k, v)| (secrets.text(&k).into_owned(), redacted(v, secrets)))
                .collect(),
        ),
        other => other,
    }
}

/// Where a node's facts came from, as an object (`{"kind": "facts", "name": "facts/web01.yaml"}`).
fn source_json(source: Option<&(String, String)>) -> Json {
    match source {
        Some((kind, name)) => json!({"kind": kind, "name": name}),
        None => Json::Null,
    }
}

/// `GET /api/v1/nodes`: every node, with where its facts came from and why they could not
/// be read.
pub fn nodes(fleet: &Fleet) -> Json {
    let list: Vec<Json> = fleet
        .nodes
        .iter()
        .zip(&fleet.names)
        .map(|(n, name)| {
            json!({
                "node": name,
                "certname": n.name(),
                "source": source_json(n.source()),
                "error": n.facts_error().map(|e| e.to_string()),
            })
        })
        .collect();
    Json::Array(list)
}

/// A definition as the node and key views show it: where (file, the `/files/` path when it is
/// inside the repo, line and column), in which layer and level, its role.
fn definition_json(state: &State, d: &Definition) -> Json {
    json!({
        "role": d.role.name(),
        "layer": d.layer.to_string(),
        "level": d.level,
        "file": d.file,
        "path": state.relative(&d.file),
        "line": d.pos.map(|p| p.line),
        "column": d.pos.map(|p| p.column),
        "key": d.path,
    })
}

/// `GET /api/v1/nodes/{node}`: every key the node sees (what `--all` answers), with its value
/// (or error), the merge and the definitions that make it (the one that wins, or those a
/// merge takes).
pub fn node(state: &State, fleet: &Fleet, name: &str) -> Result<Json, ViewError> {
    let node = find(state, fleet, name)?;
    let mut doc = json!({
        "node": name,
        "certname": node.name,
        "source": source_json(node.source.as_ref()),
        "error": Json::Null,
        "keys": [],
    });
    if let Some(e) = &node.facts_error {
        doc["error"] = json!(e.to_string());
        return Ok(doc);
    }
    let mut session = state.session(node.scope.clone());
    let keys = match session.all_keys() {
        Ok(k) => k,
        Err(e) => {
            doc["error"] = json!(e.to_string());
            return Ok(redacted(doc, &secrets_of(&session)));
        }
    };
    let mut reporter = Reporter::new(state.workspace().files(), state.options().strict);
    let mut entries = Vec::with_capacity(keys.len());
    for key in keys {
        let request = where_::Request {
            key: key.clone(),
            merge: None,
            reachable_only: true,
        };
        let report = reporter.report(&mut session, &request, Some(node.name.clone()));
        let secrets = secrets_of(&session);
        let mut e = JsonMap::new();
        e.insert("key".into(), json!(key));
        match report {
            Ok(r) => {
                match &r.answer {
                    where_::Answer::Found(v) => match value_json(&secrets.value(v)) {
                        Ok(v) => {
                            e.insert("found".into(), json!(true));
                            e.insert("value".into(), v);
                        }
                        Err(m) => {
                            e.insert("error".into(), json!(m));
                        }
                    },
                    where_::Answer::NotFound => {
                        e.insert("found".into(), json!(false));
                    }
                    where_::Answer::Error(m) => {
                        e.insert("error".into(), json!(m));
                    }
                }
                e.insert("merge".into(), json!(r.strategy));
                let sources: Vec<Json> = r
                    .definitions
                    .iter()
                    .filter(|d| matches!(d.role, Role::Wins | Role::Contributes))
                    .map(|d| definition_json(state, d))
                    .collect();
                e.insert("sources".into(), Json::Array(sources));
            }
            Err(err) => {
                e.insert("error".into(), json!(err.to_string()));
            }
        }
        entries.push(Json::Object(e));
    }
    doc["keys"] = Json::Array(entries);
    Ok(redacted(doc, &secrets_of(&session)))
}

/// The node a page names (by its distinct name), whole.
fn find(state: &State, fleet: &Fleet, name: &str) -> Result<std::sync::Arc<Node>, ViewError> {
    let i = fleet
        .position(name)
        .ok_or_else(|| ViewError::NotFound(format!("no node named {name}")))?;
    Ok(state.node(fleet, i))
}

/// What the session decrypted so far.
fn secrets_of(session: &Session) -> Redactor {
    session.redactor().cloned().unwrap_or_default()
}

/// One node's answer for `key` as batch mode writes its JSON Lines line (`node`, the facts
/// source, `key`, then `found`/`value`, `default` or `error`), as an object.
fn answer_line(
    session: Result<&mut Session, &Error>,
    node: &Node,
    key: &str,
    merge: Option<&MergeStrategy>,
) -> Json {
    let outcome = match session {
        Err(e) => Err(e.clone()),
        Ok(session) => {
            let outcome = session
                .lookup(&[key.to_string()], merge)
                .and_then(|o| Finish::default().apply(o));
            match session.redactor().filter(|r| !r.is_empty()) {
                Some(r) => outcome
                    .map(|a| a.map_value(|v| r.value(v)))
                    .map_err(|e| r.error(&e)),
                None => outcome,
            }
        }
    };
    let record = Record {
        node: node.name.clone(),
        source: node.source.clone(),
        key: key.to_string(),
        outcome,
        rendered: None,
    };
    let (line, _) = record.json_line();
    serde_json::from_str(&line)
        .unwrap_or_else(|e| json!({"node": node.name, "key": key, "error": e.to_string()}))
}

/// `GET /api/v1/nodes/{node}/keys/{key}`: the node's answer for the key with the fields of
/// a batch line, `where`'s report for the node (every definition, level by level, with its
/// role) under `where`, and with `explain`, Puppet's `--explain` text under `explain`.
pub fn node_key(
    state: &State,
    fleet: &Fleet,
    name: &str,
    key: &str,
    explain: bool,
) -> Result<Json, ViewError> {
    check_key(key)?;
    let node = find(state, fleet, name)?;
    let shown = name;
    if let Some(e) = &node.facts_error {
        let mut doc = answer_line(Err(e), &node, key, None);
        doc["where"] = Json::Null;
        return Ok(doc);
    }
    let mut session = state.session(node.scope.clone());
    let mut doc = answer_line(Ok(&mut session), &node, key, None);
    let mut where_session = state.session(node.scope.clone());
    let request = where_::Request {
        key: key.to_string(),
        merge: None,
        reachable_only: false,
    };
    let mut reporter = Reporter::new(state.workspace().files(), state.options().strict);
    doc["where"] = match reporter.report(&mut where_session, &request, Some(node.name.clone())) {
        Ok(report) => {
            let secrets = secrets_of(&where_session);
            where_json(state, &report, &secrets)
        }
        Err(e) => json!({"error": e.to_string()}),
    };
    doc["display_node"] = json!(shown);
    if explain {
        doc["explain"] = match state.explain(node.scope.clone(), key, None) {
            Ok(text) => json!(text),
            Err(e) => json!({"error": e.to_string()}),
        };
    }
    let mut secrets = secrets_of(&session);
    secrets.merge(&secrets_of(&where_session));
    Ok(redacted(doc, &secrets))
}

/// `where`'s JSON report of one node, its values redacted, each definition and
/// lookup_options entry with the `/files/` path of its file.
fn where_json(state: &State, report: &where_::Report, secrets: &Redactor) -> Json {
    let mut report = report.clone();
    for d in &mut report.definitions {
        d.value = secrets.value(&d.value);
    }
    if let where_::Answer::Found(v) = &report.answer {
        report.answer = where_::Answer::Found(secrets.value(v));
    }
    let mut doc = match where_::render::json(&report)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Json>(&t).map_err(|e| e.to_string()))
    {
        Ok(d) => d,
        Err(e) => return json!({"error": e}),
    };
    add_paths(state, &mut doc["definitions"]);
    add_paths(state, &mut doc["lookup_options_entries"]);
    doc
}

/// Adds `path` (the `/files/` path, or null) beside the `file` of every object of `list`.
fn add_paths(state: &State, list: &mut Json) {
    if let Json::Array(items) = list {
        for item in items {
            let path = item["file"].as_str().and_then(|f| state.relative(f));
            if let Json::Object(o) = item {
                o.insert("path".into(), json!(path));
            }
        }
    }
}

fn check_key(key: &str) -> Result<(), ViewError> {
    if key.is_empty() {
        return Err(ViewError::BadRequest("a key is needed".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(ViewError::BadRequest(format!(
            "a key is at most {MAX_KEY_BYTES} bytes"
        )));
    }
    Ok(())
}

/// `GET /api/v1/keys/{key}`: the key across the fleet. `values`: each distinct answer with
/// the nodes that get it (most nodes first); `not_found` and `errors`; `definitions`: every
/// definition (file, line, value) with the nodes it wins, contributes or is shadowed for
/// (`where`'s fleet report), those no node reaches last; `lookup_options`: the entries that
/// apply.
pub fn key(state: &State, fleet: &Fleet, key: &str) -> Result<Json, ViewError> {
    check_key(key)?;
    // The answer for the same inputs (nodes, hiera.yaml and data files unchanged) is kept.
    let fingerprint = inputs(state, fleet, &layer_configs(state)).fingerprint;
    state.key_view(key, fingerprint, || key_across(state, fleet, key))
}

/// The nodes a worker of a key's view takes at a time.
const KEY_VIEW_UNIT: usize = 16;

/// The server's nodes as the fleet loop asks them: a range of the fleet's places at a time,
/// each node through its slim form first ([`State::on_slim`]).
struct Served<'s> {
    state: &'s State,
    fleet: &'s Fleet,
}

impl hiera_engine::fleet::Fleet for Served<'_> {
    type Unit = std::ops::Range<usize>;

    fn ask_unit<R>(
        &self,
        unit: std::ops::Range<usize>,
        ask: &mut dyn FnMut(&Node, &mut Session) -> R,
    ) -> (Vec<R>, Vec<String>) {
        let answers = unit
            .map(|i| self.state.on_slim(self.fleet, i, &mut *ask))
            .collect();
        (answers, Vec::new())
    }
}

/// [`key`], computed by the fleet loop.
fn key_across(state: &State, fleet: &Fleet, key: &str) -> Result<Json, ViewError> {
    let request = where_::Request {
        key: key.to_string(),
        merge: None,
        reachable_only: false,
    };
    let n = fleet.nodes.len();
    let units = (0..n)
        .step_by(KEY_VIEW_UNIT)
        .map(|start| start..(start + KEY_VIEW_UNIT).min(n));
    let across = hiera_engine::fleet::key_across(
        &Served { state, fleet },
        units,
        state.options().threads,
        (&state.workspace().files(), state.options().strict),
        &request,
    );
    let mut fleet_report = across.report;
    let mut values = Vec::new();
    for group in across.values {
        match serde_json::from_str::<Json>(&group.json) {
            Ok(value) => values
                .push(json!({"value": value, "count": group.nodes.len(), "nodes": group.nodes})),
            Err(e) => fleet_report
                .errors
                .extend(group.nodes.into_iter().map(|n| (n, e.to_string()))),
        }
    }
    fleet_report.errors.extend(across.unrenderable);
    let mut doc = match where_::render::fleet_json(&fleet_report)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Json>(&t).map_err(|e| e.to_string()))
    {
        Ok(d) => d,
        Err(e) => return Err(ViewError::Failed(e)),
    };
    add_paths(state, &mut doc["definitions"]);
    add_paths(state, &mut doc["lookup_options_entries"]);
    let out = json!({
        "key": key,
        "nodes": fleet.nodes.len(),
        "values": values,
        "not_found": doc["not_found"].take(),
        "errors": doc["errors"].take(),
        "definitions": doc["definitions"].take(),
        "lookup_options": doc["lookup_options_entries"].take(),
        "warnings": doc["warnings"].take(),
    });
    Ok(redacted(out, &across.secrets))
}

/// `POST /api/v1/lookup`: answers for a node that is not in the fleet, from a facts document
/// (any shape `--facts` reads). `body` is the document and `keys` the query's `key`s; or,
/// with no `key` in the query, `body` is `{"facts": DOCUMENT, "keys": [...], "merge":
/// NAME, "explain": BOOL}` (the document as JSON, or as the text of a YAML or JSON file).
pub fn lookup(
    state: &State,
    body: &[u8],
    query_keys: Vec<String>,
    query_merge: Option<String>,
    query_explain: bool,
) -> Result<Json, ViewError> {
    let bad = ViewError::BadRequest;
    let text = std::str::from_utf8(body).map_err(|_| bad("the body is not UTF-8".into()))?;
    let (facts_text, keys, merge, explain) = if !query_keys.is_empty() {
        (text.to_string(), query_keys, query_merge, query_explain)
    } else {
        let doc: Json = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "the body is not a JSON object with facts and keys ({e}); or give the keys as ?key=… and the facts document as the body"
            ))
        })?;
        let facts = match doc.get("facts") {
            Some(Json::String(s)) => s.clone(),
            Some(f @ (Json::Object(_) | Json::Array(_))) => f.to_string(),
            _ => return Err(bad("the body needs \"facts\": a facts document".into())),
        };
        let keys = match doc.get("keys") {
            Some(Json::Array(a)) => a
                .iter()
                .map(|k| k.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("\"keys\" must be a list of strings".into()))?,
            Some(Json::String(k)) => vec![k.clone()],
            _ => return Err(bad("the body needs \"keys\": a list of keys".into())),
        };
        let merge = match doc.get("merge") {
            None | Some(Json::Null) => None,
            Some(Json::String(m)) => Some(m.clone()),
            Some(_) => return Err(bad("\"merge\" must be a strategy name".into())),
        };
        let explain = doc.get("explain").and_then(Json::as_bool).unwrap_or(false);
        (facts, keys, merge, explain)
    };
    if keys.is_empty() {
        return Err(bad("no keys were given to look up".into()));
    }
    if keys.len() > MAX_POSTED_KEYS {
        return Err(bad(format!("at most {MAX_POSTED_KEYS} keys at once")));
    }
    for k in &keys {
        check_key(k)?;
    }
    let strategy = match &merge {
        Some(m) => Some(
            MergeStrategy::from_cli(m, None, false, false)
                .map_err(|e| bad(format!("merge: {}", e.message)))?,
        ),
        None => None,
    };
    let (name, facts, warning) =
        hiera_facts::facts_from_text(&facts_text, "the posted facts", "posted")
            .map_err(|e| bad(e.to_string()))?;
    Scope::check_facts(&facts).map_err(|e| bad(e.to_string()))?;
    let scope = state.context().scope(facts);
    let node = Node {
        name: name.clone(),
        source: None,
        scope: scope.clone(),
        facts_error: None,
        workspace: None,
    };
    let mut session = state.session(scope.clone());
    let mut secrets = Redactor::default();
    let answers: Vec<Json> = keys
        .iter()
        .map(|k| {
            let mut line = answer_line(Ok(&mut session), &node, k, strategy.as_ref());
            if explain {
                line["explain"] = match state.explain(scope.clone(), k, merge.as_deref()) {
                    Ok(t) => json!(t),
                    Err(e) => json!({"error": e.to_string()}),
                };
            }
            line
        })
        .collect();
    secrets.merge(&secrets_of(&session));
    Ok(redacted(
        json!({"node": name, "answers": answers, "warnings": warning.into_iter().collect::<Vec<_>>()}),
        &secrets,
    ))
}

/// `GET /api/v1/lint`: `lint`'s findings for the control repo, its fleet rules over the
/// server's nodes, each finding with the `/files/` path of its file, and their count by
/// severity.
pub fn lint(state: &State, fleet: &Fleet) -> Result<Json, ViewError> {
    lint_with(state, Some(fleet))
}

/// [`lint`], with the fleet rules over `fleet`'s nodes (which look every node up) or without.
fn lint_with(state: &State, fleet: Option<&Fleet>) -> Result<Json, ViewError> {
    let mut opts = state.options().lint.clone();
    opts.root = state.options().root.clone();
    opts.allow_exec = state.options().allow_exec;
    // The nodes as the server has them (their scopes: facts, --fact, --var, the classifier);
    // those whose facts cannot be read are left out (and named), as in every other view.
    let (nodes, unreadable): (Vec<Node>, Vec<Node>) = fleet
        .map(|f| state.all_nodes(f))
        .unwrap_or_default()
        .into_iter()
        .partition(|n| n.facts_error.is_none());
    opts.nodes = (!nodes.is_empty()).then_some(nodes);
    let report = hiera_lint::lint(&opts).map_err(|e| ViewError::Failed(e.to_string()))?;
    // Which nodes each finding's file matters to: the overview's index of the fleet.
    let reach = fleet.map(|f| (fleet_index_of(state, f), f));
    let text = hiera_lint::output::render(&report, hiera_lint::output::OutputFormat::Json);
    let mut findings: Json = if text.trim().is_empty() {
        json!([])
    } else {
        serde_json::from_str(&text).map_err(|e| ViewError::Failed(e.to_string()))?
    };
    let mut counts = BTreeMap::from([("error", 0usize), ("warning", 0), ("info", 0)]);
    if let Json::Array(items) = &mut findings {
        for f in items {
            if let Some(c) = f["severity"].as_str().and_then(|s| counts.get_mut(s)) {
                *c += 1;
            }
            let path = f["file"].as_str().and_then(|file| {
                let p = Path::new(file);
                if p.is_absolute() {
                    state.relative(file)
                } else {
                    Some(file.to_string())
                }
            });
            // The nodes whose hierarchies reach the file (data files; none for the others).
            let reaching = reach.as_ref().and_then(|(index, fleet)| {
                let file = f["file"].as_str()?;
                let abs = state.options().root.join(file).display().to_string();
                let nodes = index.reach.get(&abs).or_else(|| index.reach.get(file))?;
                let names: Vec<&String> = nodes
                    .iter()
                    .take(MAX_LISTED_NODES)
                    .filter_map(|&n| fleet.names.get(n as usize))
                    .collect();
                Some((nodes.len(), names))
            });
            if let Json::Object(o) = f {
                o.insert("path".into(), json!(path));
                if let Some((n, names)) = reaching {
                    o.insert("reached_by".into(), json!(n));
                    o.insert("nodes".into(), json!(names));
                }
            }
        }
    }
    let unreadable: Vec<&String> = unreadable.iter().map(|n| &n.name).collect();
    Ok(json!({"findings": findings, "counts": counts, "unreadable_nodes": unreadable}))
}

/// The longest revision a diff request may name.
const MAX_REV_BYTES: usize = 256;

fn check_rev(rev: &str) -> Result<(), ViewError> {
    if rev.is_empty()
        || rev.len() > MAX_REV_BYTES
        || rev.starts_with('-')
        || rev.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(ViewError::BadRequest(format!(
            "not a revision: {}",
            hiera_value::escape::printable(rev)
        )));
    }
    Ok(())
}

/// `GET /api/v1/diff?base=REV[&head=REV]`: `diff --all`'s JSON report between two revisions
/// of the control repo's git repository (`head`: the work tree), over the fleet's nodes.
pub fn diff(
    state: &State,
    fleet: &Fleet,
    base: &str,
    head: Option<&str>,
) -> Result<Json, ViewError> {
    use hiera_diff::{git::Repo, Keys, Tree};
    check_rev(base)?;
    if let Some(h) = head {
        check_rev(h)?;
    }
    let bad = |e: Error| ViewError::BadRequest(e.to_string());
    let root = state.options().root.clone();
    let repo = Repo::discover(&root).map_err(ViewError::BadRequest)?;
    let base_tree = Tree::revision(&repo, base, &root).map_err(bad)?;
    let head_tree = match head {
        Some(h) => Tree::revision(&repo, h, &root).map_err(bad)?,
        None => {
            let mut t = Tree::dir(&root, "work tree").map_err(bad)?;
            t.prefix = base_tree.prefix.clone();
            t
        }
    };
    // Nodes whose facts cannot be read are left out (and named).
    let (nodes, unreadable): (Vec<Node>, Vec<Node>) = state
        .all_nodes(fleet)
        .into_iter()
        .partition(|n| n.facts_error.is_none());
    let report = hiera_diff::run(hiera_diff::Request {
        base: base_tree,
        head: head_tree,
        nodes: NodeSource::from_nodes(nodes),
        events: Box::new(|_| ()),
        keys: Keys::All,
        settings: hiera_engine::engine::Settings {
            strict: state.options().strict,
            ..Default::default()
        },
        threads: state.options().threads,
        no_skip: false,
        hiera_config: state.options().lint.hiera_config.clone(),
        modulepath: state.options().lint.modulepath.clone(),
        show_secrets: state.options().show_secrets,
        allow_exec: state.options().allow_exec,
    })
    .map_err(|e| ViewError::Failed(e.to_string()))?;
    let text = hiera_diff::output::Format::Json.render(&report);
    let mut doc: Json =
        serde_json::from_str(&text).map_err(|e| ViewError::Failed(e.to_string()))?;
    doc["unreadable_nodes"] = json!(unreadable.iter().map(|n| &n.name).collect::<Vec<_>>());
    Ok(doc)
}

/// Data files a datadir walk lists at most (the overview's files no node reaches).
const MAX_LISTED_FILES: usize = 20_000;

/// `GET /api/v1/` (the overview): the environment's layers and their hierarchies (each
/// level's function and path templates), every data file the nodes reach with how many
/// nodes reach it, the data files under the datadirs no node reaches, counts of nodes and
/// keys, and with `q`, the nodes and keys whose names contain it.
pub fn overview(state: &State, fleet: &Fleet, q: Option<&str>) -> Json {
    let ws = state.workspace();
    let configs = layer_configs(state);
    let mut layer_docs = Vec::new();
    for c in &configs {
        let shown = c.path.display().to_string();
        let mut doc = json!({
            "layer": c.name,
            "file": shown,
            "path": state.relative(&shown),
            "exists": c.exists,
        });
        match &c.config {
            Ok(cfg) => {
                doc["version"] = json!(cfg.version);
                let levels = |entries: &[hiera_engine::config::Entry]| -> Vec<Json> {
                    entries
                        .iter()
                        .map(|e| {
                            let (kind, locations) = match &e.locations {
                                Locations::None => ("none", vec![]),
                                Locations::Paths(p) => ("paths", p.clone()),
                                Locations::Globs(g) => ("globs", g.clone()),
                                Locations::Uris(u) => ("uris", u.clone()),
                                Locations::Mapped(v, k, t) => {
                                    ("mapped_paths", vec![v.clone(), k.clone(), t.clone()])
                                }
                            };
                            json!({
                                "name": e.name,
                                "kind": e.kind.tag(),
                                "function": e.function,
                                "datadir": e.datadir,
                                "locations": {"kind": kind, "templates": locations},
                            })
                        })
                        .collect()
                };
                doc["levels"] = json!(levels(&cfg.hierarchy));
                doc["default_hierarchy"] = match &cfg.default_hierarchy {
                    Some(d) => json!(levels(d)),
                    None => Json::Null,
                };
            }
            Err(e) => doc["error"] = json!(e.to_string()),
        }
        doc["warnings"] = json!(c.warnings);
        layer_docs.push(doc);
    }
    let Inputs {
        on_disk,
        fingerprint,
    } = inputs(state, fleet, &configs);
    let index = state.fleet_index(fingerprint, || fleet_index(state, fleet));
    let (reach, keys) = (&index.reach, &index.keys);
    let secrets = &index.secrets;
    let files: Vec<Json> = reach
        .iter()
        .map(|(f, n)| json!({"file": f, "path": state.relative(f), "nodes": n.len()}))
        .collect();
    let unreached: Vec<Json> = on_disk
        .keys()
        .filter(|f| is_data_file(f) && !reach.contains_key(*f))
        .map(|f| json!({"file": f, "path": state.relative(f)}))
        .collect();
    let mut doc = json!({
        "root": state.options().root.display().to_string(),
        "environment": ws.layers().environment_dir.map(|d| d.display().to_string()),
        "node_count": fleet.nodes.len(),
        "key_count": keys.len(),
        "unreadable_nodes": fleet.nodes.iter().filter(|n| n.facts_error().is_some()).count(),
        "layers": layer_docs,
        "files": files,
        "unreached_files": unreached,
        "fleet_warnings": fleet.warnings,
        "fleet_error": fleet.error,
        // The rules that need no node (the fleet's are on /lint): cheap on any fleet.
        "lint": match lint_with(state, None) {
            Ok(l) => l["counts"].clone(),
            Err(e) => json!({"error": e.message()}),
        },
        "show_secrets": state.options().show_secrets,
        "allow_exec": state.options().allow_exec,
    });
    if let Some(q) = q.filter(|q| !q.is_empty()) {
        let needle = q.to_lowercase();
        let nodes: Vec<&String> = fleet
            .names
            .iter()
            .filter(|n| n.to_lowercase().contains(&needle))
            .take(MAX_MATCHES)
            .collect();
        let matched: Vec<Json> = keys
            .iter()
            .filter(|(k, _)| k.to_lowercase().contains(&needle))
            .take(MAX_MATCHES)
            .map(|(k, n)| json!({"key": k, "nodes": n}))
            .collect();
        doc["search"] = json!({"q": q, "nodes": nodes, "keys": matched});
    }
    redacted(doc, secrets)
}

/// A layer's hiera.yaml, loaded as the lookups load it.
struct LayerConfig {
    /// `global`, `environment`, `module NAME`.
    name: String,
    path: PathBuf,
    exists: bool,
    config: Result<HieraConfig, Error>,
    warnings: Vec<String>,
}

/// Every layer's hiera.yaml (modules: those that have one).
fn layer_configs(state: &State) -> Vec<LayerConfig> {
    let ws = state.workspace();
    let layers = ws.layers();
    let fs = ws.fs();
    let mut configs: Vec<(String, Layer, PathBuf)> = Vec::new();
    if let Some(g) = &layers.global {
        configs.push(("global".into(), Layer::Global, g.clone()));
    }
    if let Some(e) = &layers.environment_dir {
        configs.push((
            "environment".into(),
            Layer::Environment,
            e.join("hiera.yaml"),
        ));
    }
    for (m, dir) in &layers.modules {
        let p = dir.join("hiera.yaml");
        if fs.kind(&p).is_some() {
            configs.push((format!("module {m}"), Layer::Module, p));
        }
    }
    configs
        .into_iter()
        .map(|(name, layer, path)| {
            let ctx = LoadContext {
                layer,
                codedir: layers.codedir.clone(),
                strict_off: state.options().strict == Strict::Off,
            };
            let mut warnings = Vec::new();
            let config = HieraConfig::load_in(&*fs, &path, &ctx, &mut warnings);
            LayerConfig {
                name,
                exists: fs.kind(&path).is_some(),
                path,
                config,
                warnings,
            }
        })
        .collect()
}

/// What answers about the fleet depend on, as it is on disk now.
struct Inputs {
    /// Every file under the datadirs (the part of each before its first interpolation),
    /// with its stamp.
    on_disk: Stamped,
    /// A fingerprint of the nodes' reading, the hiera.yaml files and `on_disk`: the same
    /// fingerprint, the same answers. `None` when it cannot be taken (a datadir interpolated
    /// from its start, a location climbing out of its datadir, a datadir too big to list
    /// whole, `command` levels allowed to run, whose programs answer as they like).
    fingerprint: Option<u64>,
}

fn inputs(state: &State, fleet: &Fleet, configs: &[LayerConfig]) -> Inputs {
    use std::hash::{Hash, Hasher};
    let mut datadirs: Vec<&str> = Vec::new();
    let mut leaves_datadir = false;
    for c in configs {
        if let Ok(cfg) = &c.config {
            for e in cfg
                .hierarchy
                .iter()
                .chain(cfg.default_hierarchy.iter().flatten())
            {
                if !datadirs.contains(&e.datadir.as_str()) {
                    datadirs.push(&e.datadir);
                }
                // A location climbing out of its datadir names a file the walk below
                // does not see.
                leaves_datadir |= match &e.locations {
                    Locations::None => false,
                    Locations::Paths(t) | Locations::Globs(t) | Locations::Uris(t) => {
                        t.iter().any(|t| t.contains(".."))
                    }
                    Locations::Mapped(_, _, t) => t.contains(".."),
                };
            }
        }
    }
    let mut on_disk = BTreeMap::new();
    let mut exact = !state.options().allow_exec && !leaves_datadir;
    for d in datadirs {
        let fixed = d.split("%{").next().unwrap_or_default();
        let dir = match fixed.rfind('/') {
            Some(i) if fixed.len() != d.len() => &fixed[..i],
            _ => fixed,
        };
        exact &= Path::new(dir).is_absolute() && dir.len() > 1;
        exact &= list_files(Path::new(dir), &mut on_disk, 0);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fleet.generation.hash(&mut h);
    on_disk.hash(&mut h);
    for c in configs {
        c.path.hash(&mut h);
        Stamp::of(&c.path).hash(&mut h);
    }
    Inputs {
        on_disk,
        fingerprint: exact.then(|| h.finish()),
    }
}

/// The nodes a lint finding lists at most (`reached_by` counts them all).
pub const MAX_LISTED_NODES: usize = 100;

/// The fleet's index as the overview has it (kept while its inputs are unchanged).
pub(crate) fn fleet_index_of(state: &State, fleet: &Fleet) -> std::sync::Arc<FleetIndex> {
    let fingerprint = inputs(state, fleet, &layer_configs(state)).fingerprint;
    state.fleet_index(fingerprint, || fleet_index(state, fleet))
}

fn fleet_index(state: &State, fleet: &Fleet) -> FleetIndex {
    // Each worker folds its nodes into its own index (never every node's keys at once); the
    // workers' indexes are merged after.
    let parts = hiera_engine::workers::in_order_with(
        0..fleet.nodes.len(),
        state.options().threads,
        // The index a worker folds its nodes into, and the data files whose interpolations
        // it probed for the facts they read.
        || (FleetIndex::default(), std::collections::HashSet::new()),
        |(part, probed_files), i| {
            let seen = state.on_slim(fleet, i, |node, session| {
                if node.facts_error.is_some() {
                    return None;
                }
                let reached = session.reached_locations().ok().flatten();
                let keys = session.all_keys().unwrap_or_default();
                // What the values of the files it read will read, for the slim forms the
                // next questions ask.
                let mut reads = FactPaths::default();
                session.probe_fact_reads(&mut reads, probed_files);
                if !reads.is_empty() {
                    state.learn(reads);
                }
                Some((reached, keys, secrets_of(session)))
            });
            let Some((reached, keys, secrets)) = seen else {
                return;
            };
            part.secrets.merge(&secrets);
            let mut seen = std::collections::BTreeSet::new();
            for l in reached.unwrap_or_default() {
                if seen.insert(l.clone()) {
                    part.reach.entry(l).or_default().push(i as u32);
                }
            }
            for k in keys {
                *part.keys.entry(k).or_default() += 1;
            }
        },
        |_, ()| std::ops::ControlFlow::Continue(()),
    );
    let mut index = FleetIndex::default();
    for (part, _) in parts {
        index.secrets.merge(&part.secrets);
        for (file, nodes) in part.reach {
            index.reach.entry(file).or_default().extend(nodes);
        }
        for (k, n) in part.keys {
            *index.keys.entry(k).or_default() += n;
        }
    }
    // Files that exist, each looked at once, not once per node reaching it.
    index.reach.retain(|f, _| Path::new(f).is_file());
    // Each file's nodes in fleet order, whichever worker met them.
    for nodes in index.reach.values_mut() {
        nodes.sort_unstable();
    }
    index
}

/// Files by name, with their stamps.
type Stamped = BTreeMap<String, Option<Stamp>>;

/// Adds the files under `dir` to `out` with their stamps (a link's: its target's), without
/// following links to directories, at most [`MAX_LISTED_FILES`] and 16 directories deep.
/// Whether every file is listed.
fn list_files(dir: &Path, out: &mut Stamped, depth: usize) -> bool {
    if depth > 16 || out.len() >= MAX_LISTED_FILES {
        return false;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return true;
    };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    let mut complete = true;
    for e in entries {
        if out.len() >= MAX_LISTED_FILES {
            return false;
        }
        let Ok(t) = e.file_type() else { continue };
        let p = e.path();
        if t.is_dir() {
            complete &= list_files(&p, out, depth + 1);
        } else if t.is_file() || t.is_symlink() {
            // A link's stamp is its target's: an edit through it is seen.
            out.insert(p.display().to_string(), Stamp::of(&p));
        }
    }
    complete
}

/// Whether `file` is named like a data file (what the overview lists as unreached).
fn is_data_file(file: &str) -> bool {
    matches!(
        Path::new(file).extension().and_then(|x| x.to_str()),
        Some("yaml" | "yml" | "json" | "eyaml" | "conf")
    )
}
