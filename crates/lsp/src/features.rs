//! Navigation and editing: definition, references, completion, symbols, code actions, inlay
//! hints, rename.

use crate::cursor::{self, FileKind, KeyAt, Target};
use crate::hover::render;
use crate::server::{invalid, Answer, Failure, Server};
use crate::text::{self, Doc};
use hiera_engine::interpolation::{tokens_at, unclosed, Token};
use hiera_engine::where_::{Answer as WAnswer, Role};
use hiera_formats::position::DataFormat;
use hiera_value::value::Value;
use lsp_server::ErrorCode;
use lsp_types::{Location, Position, Range};
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Workspace symbols answered at most.
const MAX_SYMBOLS: usize = 500;
/// Inlay hints of one request at most.
const MAX_HINTS: usize = 300;
/// Characters of an inlay hint's value.
const HINT_CHARS: usize = 60;
/// Lookups one request's fleet hints make at most (keys × nodes): past it, the keys left
/// get no hint (a client asks again for what scrolls into view).
const MAX_FLEET_HINT_LOOKUPS: usize = 5_000;

impl Server {
    /// The key a target names, for navigation.
    fn key_of_target(&mut self, doc: &Doc, kind: FileKind, t: &Target) -> Option<String> {
        match t {
            Target::Key { key, .. } | Target::OptionName(key) => Some(key.key.clone()),
            Target::Interpolation { key, .. } => key.clone(),
            Target::LookupString { key, .. } => Some(key.clone()),
            Target::Variable { name, span } if kind == FileKind::Manifest => {
                self.param_key_at(&doc.path, span.0, name)
            }
            _ => None,
        }
    }

    pub(crate) fn definition(&mut self, p: &Json) -> Answer {
        let (doc, kind, target) = self.target(p)?;
        let Some(t) = target else {
            return Ok(Json::Null);
        };
        let locations: Vec<Location> = match &t {
            Target::HieraPath {
                absolute, setting, ..
            } => self
                .resolve_hiera_path(absolute, setting)
                .unwrap_or_default()
                .into_iter()
                .filter(|(_, exists)| *exists)
                .filter_map(|(f, _)| self.location(Path::new(&f), (1, 1), 0))
                .collect(),
            Target::Key { key, on_key: true } => {
                let schema = self.code_schema();
                match schema.as_deref().and_then(|s| s.param(&key.key)) {
                    // The `$name` of the declaration.
                    Some((c, p)) => self.schema_location(&c.file, p.span).into_iter().collect(),
                    // No parameter: where the node's answer comes from.
                    None => self.definitions_of(&key.key, true),
                }
            }
            _ => match self.key_of_target(&doc, kind, &t) {
                Some(k) => self.definitions_of(&k, false),
                None => Vec::new(),
            },
        };
        Ok(serde_json::to_value(locations).unwrap_or(Json::Null))
    }

    /// Where `key` is defined: for the context's first node, the definitions that make its
    /// answer (`answer_only`) or every definition; else every data file writing it.
    fn definitions_of(&mut self, key: &str, answer_only: bool) -> Vec<Location> {
        let mut out = Vec::new();
        let first = self
            .ctx
            .as_ref()
            .ok()
            .and_then(|c| c.nodes.first().cloned());
        if let (Some(node), Ok(mut reporter)) = (first, self.reporter()) {
            if let Ok(scope) = crate::context::scope_of(&node) {
                if let Ok((r, _)) = self.report(scope, &node.name, key, &mut reporter) {
                    for d in &r.definitions {
                        if answer_only && !matches!(d.role, Role::Wins | Role::Contributes) {
                            continue;
                        }
                        let Some(pos) = d.pos else { continue };
                        let len = key.chars().count();
                        if let Some(l) =
                            self.location(Path::new(&d.file), (pos.line, pos.column), len)
                        {
                            out.push(l);
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            out = self.data_definitions(key);
        }
        out
    }

    /// Every top-level definition of `key` in the repo's data files (and open buffers).
    fn data_definitions(&mut self, key: &str) -> Vec<Location> {
        let Ok(index) = self.index() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in self.data_paths(&index.files) {
            for k in self.keys_in(&f) {
                if k.key == key {
                    out.extend(self.span_location(&f, k.span));
                }
            }
        }
        out
    }

    /// The index's data files and any open data file besides.
    fn data_paths(&self, files: &[PathBuf]) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = files.to_vec();
        for p in self.docs.keys() {
            if matches!(cursor::kind_of(p), FileKind::Data(_)) && !all.contains(p) {
                all.push(p.clone());
            }
        }
        all
    }

    /// A data file's top-level keys.
    fn keys_in(&self, path: &Path) -> Vec<KeyAt> {
        let FileKind::Data(format) = cursor::kind_of(path) else {
            return Vec::new();
        };
        match self.file_text(path) {
            Some(t) => cursor::top_keys(format, &t),
            None => Vec::new(),
        }
    }

    fn span_location(&self, path: &Path, span: cursor::Span) -> Option<Location> {
        let uri = text::path_to_uri(path)?;
        let doc = Doc::new(uri.clone(), path.to_path_buf(), 0, self.file_text(path)?);
        Some(Location::new(uri, self.range(&doc, span)))
    }

    pub(crate) fn references(&mut self, p: &Json) -> Answer {
        let (doc, kind, target) = self.target(p)?;
        let Some(t) = target else {
            return Ok(Json::Null);
        };
        let Some(key) = self.key_of_target(&doc, kind, &t) else {
            return Ok(Json::Null);
        };
        let include_decl = p["context"]["includeDeclaration"].as_bool().unwrap_or(true);
        let index = self.index()?;
        let schema = self.code_schema();
        let mut out: Vec<Location> = Vec::new();
        if include_decl {
            if let Some((c, param)) = schema.as_deref().and_then(|s| s.param(&key)) {
                out.extend(self.schema_location(&c.file, param.span));
            }
        }
        out.extend(self.data_definitions(&key));
        // Every lookup of it in manifests and templates (`lookup('k.0')` reads `k` too).
        if let Some(schema) = &schema {
            for call in schema.lookups_of(&key) {
                out.extend(self.schema_location(&call.file, call.span));
            }
        }
        // Interpolations and lookup_options naming it.
        for f in self.data_paths(&index.files) {
            let Some(text) = self.file_text(&f) else {
                continue;
            };
            let FileKind::Data(format) = cursor::kind_of(&f) else {
                continue;
            };
            for o in cursor::option_names(format, &text) {
                if o.key == key {
                    out.extend(self.span_location(&f, o.span));
                }
            }
            if let Ok(refs) = hiera_lint::schema::data_references(format, &text) {
                for r in refs.references.iter().filter(|r| r.root == key) {
                    out.extend(self.schema_location(&f, r.span));
                }
                continue;
            }
            // A file that does not parse (being edited): its `%{…}` line by line.
            for (i, line) in text.lines().enumerate() {
                for (range, token) in tokens_at(line) {
                    let Token::Expr { expr, .. } = token else {
                        continue;
                    };
                    if cursor::key_of_expr(expr).as_deref() == Some(key.as_str()) {
                        out.extend(self.span_location(&f, (i, range.start, range.end)));
                    }
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|l| {
            seen.insert((
                l.uri.as_str().to_string(),
                l.range.start.line,
                l.range.start.character,
            ))
        });
        Ok(serde_json::to_value(out).unwrap_or(Json::Null))
    }

    pub(crate) fn completion(&mut self, p: &Json) -> Answer {
        let (doc, kind) = self.doc_of(p)?;
        let pos: Position = serde_json::from_value(p["position"].clone())
            .map_err(|_| invalid("position is missing or malformed"))?;
        let (line, byte) = doc.line_byte(pos, self.enc);
        let text = doc.line(line);
        let before = &text[..byte];
        let mut items: Vec<Json> = Vec::new();
        // Inside an interpolation.
        if let Some(open) = unclosed(before) {
            let inner = &before[open + 2..];
            if let Some(path) = inner.trim_start().strip_prefix("facts.") {
                items.extend(self.fact_items(path));
            } else if !inner.contains(['(', '.']) {
                for (f, detail) in [
                    ("lookup('", "the value of another key"),
                    (
                        "alias('",
                        "another key's value, its type kept (alone in the string)",
                    ),
                    ("hiera('", "as lookup"),
                    ("literal('", "the text as it is"),
                    ("scope('", "a variable"),
                    ("facts.", "a fact"),
                    ("trusted.", "trusted data"),
                    ("trusted.certname", "the node's certname"),
                    ("environment", "the environment's name"),
                ] {
                    items.push(json!({"label": f, "kind": 3, "detail": detail}));
                }
            } else if inner.contains("lookup('")
                || inner.contains("alias('")
                || inner.contains("hiera('")
            {
                items.extend(self.key_items(None));
            }
            return Ok(json!({"isIncomplete": false, "items": items}));
        }
        if let FileKind::Data(format) = kind {
            let indent = text.len() - text.trim_start().len();
            let in_options = self.in_lookup_options(&doc, line);
            let key_part = !before.contains(':');
            if let Some(depth) = in_options {
                let trimmed = before.trim_start();
                if trimmed.starts_with("merge:") || trimmed.starts_with("strategy:") {
                    for s in ["first", "unique", "hash", "deep"] {
                        items.push(json!({"label": s, "kind": 12, "detail": "merge strategy"}));
                    }
                } else if key_part && depth == 1 {
                    items.extend(self.key_items(Some(format)));
                } else if key_part && depth >= 2 {
                    for (o, d) in [
                        (
                            "merge",
                            "first, unique, hash, deep, or a hash with strategy and options",
                        ),
                        (
                            "convert_to",
                            "a type (or [type, args…]) the value is converted to",
                        ),
                    ] {
                        items.push(json!({"label": o, "kind": 10, "detail": d, "insertText": format!("{o}: ")}));
                    }
                }
            } else if indent == 0 && key_part {
                items.extend(self.key_items(Some(format)));
                items.push(json!({"label": "lookup_options", "kind": 14, "detail": "merge and convert_to per key"}));
            }
        }
        Ok(json!({"isIncomplete": false, "items": items}))
    }

    /// Whether `line` is inside the top-level `lookup_options` hash: 1 for an entry's name,
    /// 2 and more for its options.
    fn in_lookup_options(&self, doc: &Doc, line: usize) -> Option<usize> {
        let text = doc.line(line);
        let indent = text.len() - text.trim_start().len();
        if indent == 0 {
            return None;
        }
        let mut under = false;
        for l in (0..line).rev() {
            let t = doc.line(l);
            if t.trim().is_empty() || t.trim_start().starts_with('#') {
                continue;
            }
            if !t.starts_with([' ', '\t']) {
                under = t.starts_with("lookup_options:");
                break;
            }
        }
        if !under {
            return None;
        }
        {
            // The entry's own indentation: the first line under lookup_options.
            let mut entry_indent = indent;
            for l in (0..line).rev() {
                let t = doc.line(l);
                if t.starts_with("lookup_options:") {
                    let next = doc.line(l + 1);
                    entry_indent = next.len() - next.trim_start().len();
                    break;
                }
            }
            Some(if indent <= entry_indent { 1 } else { 2 })
        }
    }

    /// Keys from class parameters (type and default in the detail) and lookups.
    fn key_items(&mut self, format: Option<DataFormat>) -> Vec<Json> {
        let Some(schema) = self.code_schema() else {
            return Vec::new();
        };
        let colon = format == Some(DataFormat::Yaml);
        let mut out = Vec::new();
        let mut params: Vec<_> = schema.params().collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, c, p) in params {
            let detail = match (&p.type_text, &p.default) {
                (Some(t), Some(d)) => format!("{t} (default {d})"),
                (Some(t), None) => t.clone(),
                (None, Some(d)) => format!("Any (default {d})"),
                (None, None) => "Any".into(),
            };
            let insert = if colon {
                format!("{key}: ")
            } else {
                key.clone()
            };
            out.push(json!({
                "label": key, "kind": 5, "detail": detail, "insertText": insert,
                "documentation": format!("Parameter ${} of class {} ({}:{})", p.name, c.name,
                    self.shown(&c.file.to_string_lossy()), p.span.start.line),
            }));
        }
        out
    }

    /// Fact names under `path` (`os.fam` → the keys of `$facts['os']`) of the context's
    /// first node.
    fn fact_items(&self, path: &str) -> Vec<Json> {
        let Ok(ctx) = &self.ctx else {
            return Vec::new();
        };
        let Some(Ok(scope)) = ctx.nodes.first().map(crate::context::scope_of) else {
            return Vec::new();
        };
        let Some(facts) = scope.facts() else {
            return Vec::new();
        };
        let mut parts: Vec<&str> = path.split('.').collect();
        parts.pop();
        let mut v = Value::Hash(facts.clone());
        for seg in parts {
            v = match &v {
                Value::Hash(h) => match h.get(&Value::str(seg)) {
                    Some(x) => x.clone(),
                    None => return Vec::new(),
                },
                _ => return Vec::new(),
            };
        }
        let Value::Hash(h) = v else { return Vec::new() };
        h.iter()
            .filter_map(|(k, v)| {
                let k = k.as_str()?;
                let detail = match v {
                    Value::Hash(_) => "hash".to_string(),
                    other => crate::server::truncate(&hiera_value::text::to_s(other), 60),
                };
                Some(json!({"label": k, "kind": 10, "detail": detail}))
            })
            .collect()
    }

    pub(crate) fn document_symbols(&mut self, p: &Json) -> Answer {
        let (doc, kind) = self.doc_of(p)?;
        let FileKind::Data(format) = kind else {
            return Ok(json!([]));
        };
        let options = cursor::option_names(format, doc.text());
        let keys = cursor::top_keys(format, doc.text());
        let mut out = Vec::new();
        for k in &keys {
            let range = self.range(&doc, k.span);
            // The whole entry: to the line before the next key.
            let next = keys
                .iter()
                .map(|n| n.span.0)
                .filter(|&l| l > k.span.0)
                .min()
                .unwrap_or(doc.line_count());
            let last = next.saturating_sub(1).max(k.span.0);
            let full = Range::new(
                range.start,
                doc.position_at_byte(last, doc.line(last).len(), self.enc),
            );
            let children: Vec<Json> = if k.key == "lookup_options" {
                options
                    .iter()
                    .map(|o| {
                        let r = self.range(&doc, o.span);
                        json!({"name": o.key, "kind": 20, "range": r, "selectionRange": r})
                    })
                    .collect()
            } else {
                Vec::new()
            };
            out.push(json!({
                "name": k.key, "kind": 20, "range": full, "selectionRange": range, "children": children,
            }));
        }
        Ok(Json::Array(out))
    }

    pub(crate) fn workspace_symbols(&mut self, p: &Json) -> Answer {
        let query = p["query"].as_str().unwrap_or("").to_lowercase();
        let index = self.index()?;
        let mut out = Vec::new();
        'files: for f in self.data_paths(&index.files) {
            for k in self.keys_in(&f) {
                if k.key.to_lowercase().contains(&query) {
                    if let Some(l) = self.span_location(&f, k.span) {
                        out.push(json!({
                            "name": k.key, "kind": 20, "location": l,
                            "containerName": self.shown(&f.to_string_lossy()),
                        }));
                    }
                    if out.len() >= MAX_SYMBOLS {
                        break 'files;
                    }
                }
            }
        }
        Ok(Json::Array(out))
    }

    pub(crate) fn code_actions(&mut self, p: &Json) -> Answer {
        let uri = p["textDocument"]["uri"]
            .as_str()
            .ok_or_else(|| invalid("textDocument.uri is missing"))?;
        let mut out = Vec::new();
        // Each diagnostic's fix, as lint gave it (its edits published with it).
        for d in p["context"]["diagnostics"].as_array().into_iter().flatten() {
            let fix = &d["data"]["fix"];
            let Some(title) = fix["title"].as_str() else {
                continue;
            };
            let edits: Option<Vec<Json>> = fix["edits"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| {
                    let range = serde_json::from_value::<Range>(e["range"].clone()).ok()?;
                    let new = e["newText"].as_str()?;
                    Some(json!({"range": range, "newText": new}))
                })
                .collect();
            let Some(edits) = edits.filter(|e| !e.is_empty()) else {
                continue;
            };
            out.push(json!({
                "title": title,
                "kind": "quickfix",
                "diagnostics": [d],
                "isPreferred": true,
                "edit": {"changes": {uri: edits}},
            }));
        }
        Ok(Json::Array(out))
    }

    pub(crate) fn inlay_hints(&mut self, p: &Json) -> Answer {
        let (doc, kind) = self.doc_of(p)?;
        let FileKind::Data(format) = kind else {
            return Ok(json!([]));
        };
        let range: Option<Range> = serde_json::from_value(p["range"].clone()).ok();
        let (from, to) = range.map_or((0, usize::MAX), |r| {
            (r.start.line as usize, r.end.line as usize)
        });
        let Ok(ctx) = &self.ctx else {
            return Ok(json!([]));
        };
        if ctx.fleet {
            return self.fleet_hints(&doc, format, from, to);
        }
        let Some(Ok(scope)) = ctx
            .nodes
            .first()
            .map(|n| crate::context::scope_of(n).cloned())
        else {
            return Ok(json!([]));
        };
        let node = ctx.nodes[0].name.clone();
        let mut reporter = self.reporter()?;
        let here = doc.path.to_string_lossy().into_owned();
        let mut out = Vec::new();
        for k in hinted_keys(format, &doc, from, to) {
            let Ok((r, secrets)) = self.report(&scope, &node, &k.key, &mut reporter) else {
                continue;
            };
            let role = r
                .definitions
                .iter()
                .find(|d| d.file == here)
                .map(|d| d.role);
            let label = match (&r.answer, role) {
                (_, Some(Role::Wins)) | (_, Some(Role::Contributes))
                    if !matches!(r.answer, WAnswer::Found(_)) =>
                {
                    continue
                }
                (WAnswer::Found(_), Some(Role::Wins)) => continue,
                (WAnswer::Found(v), Some(Role::Contributes)) => {
                    format!("merged ⇒ {}", one_line(&render(&secrets.value(v))))
                }
                (WAnswer::Found(v), Some(Role::Shadowed)) => {
                    format!("shadowed ⇒ {}", one_line(&render(&secrets.value(v))))
                }
                (WAnswer::Found(v), _) => {
                    format!("not reached ⇒ {}", one_line(&render(&secrets.value(v))))
                }
                (WAnswer::NotFound, _) => "not reached".into(),
                (WAnswer::Error(_), _) => "lookup fails".into(),
            };
            out.push(self.hint(&doc, k.span.0, &label));
        }
        Ok(Json::Array(out))
    }

    /// A fleet's hints: for each key of the lines `from..=to`, the values the nodes get, with
    /// counts (`2 values over 12 nodes: 9× [a], …`; `12 nodes ⇒ v`), unless every node gets the
    /// value written here. Secrets stay redacted unless shown.
    fn fleet_hints(&self, doc: &Doc, format: DataFormat, from: usize, to: usize) -> Answer {
        let Ok(ctx) = &self.ctx else {
            return Ok(json!([]));
        };
        let nodes = &ctx.nodes;
        let here = doc.path.to_string_lossy().into_owned();
        let mut budget = MAX_FLEET_HINT_LOOKUPS;
        let mut out = Vec::new();
        for k in hinted_keys(format, doc, from, to) {
            if budget < nodes.len() {
                break;
            }
            budget -= nodes.len();
            let across = self.across(&k.key, nodes)?;
            let report = &across.report;
            let asked = report.nodes.len();
            let wins = report
                .definitions
                .iter()
                .find(|d| d.definition.file == here)
                .map_or(0, |d| d.wins.len());
            let mut values: HashMap<String, usize> = HashMap::new();
            for g in &across.values {
                *values.entry(one_line(&render(&g.value))).or_default() += g.nodes.len();
            }
            if !report.not_found.is_empty() {
                values.insert("not found".into(), report.not_found.len());
            }
            if !report.errors.is_empty() {
                values.insert("lookup fails".into(), report.errors.len());
            }
            // Every node gets what is written here: nothing to add.
            if asked == 0 || (wins == asked && values.len() == 1) {
                continue;
            }
            let mut sorted: Vec<(String, usize)> = values.into_iter().collect();
            sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let s = |n: usize| if n == 1 { "" } else { "s" };
            let label = if sorted.len() == 1 {
                format!("{asked} node{} ⇒ {}", s(asked), sorted[0].0)
            } else {
                let most: Vec<String> = sorted
                    .iter()
                    .take(2)
                    .map(|(v, n)| format!("{n}× {v}"))
                    .collect();
                format!(
                    "{} values over {asked} nodes: {}{}",
                    sorted.len(),
                    most.join(", "),
                    if sorted.len() > 2 { ", …" } else { "" }
                )
            };
            out.push(self.hint(doc, k.span.0, &label));
        }
        Ok(Json::Array(out))
    }

    /// An inlay hint at the end of line `line`.
    fn hint(&self, doc: &Doc, line: usize, label: &str) -> Json {
        json!({
            "position": doc.position_at_byte(line, doc.line(line).len(), self.enc),
            "label": format!(" {label}"),
            "paddingLeft": true,
        })
    }

    pub(crate) fn prepare_rename(&mut self, p: &Json) -> Answer {
        let (doc, _, target) = self.target(p)?;
        match target {
            Some(Target::Key { key, on_key: true }) | Some(Target::OptionName(key)) => {
                Ok(json!({"range": self.range(&doc, key.span), "placeholder": key.key}))
            }
            _ => Ok(Json::Null),
        }
    }

    pub(crate) fn rename(&mut self, p: &Json) -> Answer {
        let (_, _, target) = self.target(p)?;
        let new = p["newName"]
            .as_str()
            .ok_or_else(|| invalid("newName is missing"))?;
        if new.is_empty() || new.contains(['\n', '\r']) {
            return Err(invalid("a key is one non-empty line"));
        }
        let old = match target {
            Some(Target::Key { key, on_key: true }) | Some(Target::OptionName(key)) => key.key,
            _ => return Err(Failure(ErrorCode::RequestFailed, "not on a key".into())),
        };
        let index = self.index()?;
        let mut changes: HashMap<String, Vec<Json>> = HashMap::new();
        for f in self.data_paths(&index.files) {
            let Some(text) = self.file_text(&f) else {
                continue;
            };
            let FileKind::Data(format) = cursor::kind_of(&f) else {
                continue;
            };
            let Some(uri) = text::path_to_uri(&f) else {
                continue;
            };
            let doc = Doc::new(uri.clone(), f.clone(), 0, text.clone());
            let mut spans: Vec<cursor::Span> = cursor::top_keys(format, &text)
                .into_iter()
                .chain(cursor::option_names(format, &text))
                .filter(|k| k.key == old)
                .map(|k| k.span)
                .collect();
            spans.dedup();
            let new_text = format.written_key(new);
            for s in spans {
                changes
                    .entry(uri.as_str().to_string())
                    .or_default()
                    .push(json!({"range": self.range(&doc, s), "newText": new_text}));
            }
        }
        Ok(json!({"changes": changes}))
    }
}

/// A value on one line, cut.
fn one_line(s: &str) -> String {
    let s = s.strip_prefix("---").unwrap_or(s).trim_start();
    let joined = s.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    crate::server::truncate(&joined, HINT_CHARS)
}

/// The keys of lines `from..=to` that inlay hints are given for (at most [`MAX_HINTS`]).
fn hinted_keys(
    format: DataFormat,
    doc: &Doc,
    from: usize,
    to: usize,
) -> impl Iterator<Item = cursor::KeyAt> {
    cursor::top_keys(format, doc.text())
        .into_iter()
        .filter(move |k| k.span.0 >= from && k.span.0 <= to && k.key != "lookup_options")
        .take(MAX_HINTS)
}
