//! The HTML pages: each renders the document of its view ([`crate::views`]) with maud, which
//! escapes every spliced value (a key named `<script>` is text). Names from the analysed
//! tree (keys, nodes, files, messages) are also made [`printable`] (control characters and
//! bidirectional overrides shown escaped). Every page is a permalink (GET, its state in the
//! path and query), works without JavaScript (filters are GET forms; the script only filters
//! as one types) and links to its JSON.

use crate::error::ViewError;
use crate::state::State;
use crate::views;
use crate::{blocking, heavy, param, status, Params};
use axum::extract::{Path, Query, State as Ext};
use axum::response::{Html, IntoResponse, Response};
use hiera_value::escape::printable;
use maud::{html, Markup, DOCTYPE};
use serde_json::Value as Json;
use std::sync::Arc;

/// Rows a table shows before "… N more" (the filter form narrows them).
const MAX_ROWS: usize = 2000;

/// `s` as one path segment: every byte but unreserved characters percent-encoded, and a
/// segment of dots encoded whole (a browser would resolve `..`).
pub fn segment(s: &str) -> String {
    let dots = !s.is_empty() && s.bytes().all(|b| b == b'.');
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'~' | b':' => {
                out.push(b as char)
            }
            b'.' if !dots => out.push('.'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `s` as a query value.
fn query_value(s: &str) -> String {
    segment(s).replace("%2E", ".")
}

fn node_href(node: &str) -> String {
    format!("/nodes/{}", segment(node))
}

fn key_href(key: &str) -> String {
    format!("/keys/{}", segment(key))
}

fn node_key_href(node: &str, key: &str) -> String {
    format!("/nodes/{}/keys/{}", segment(node), segment(key))
}

/// The `/files/` link of a path inside the repo, at `line`.
fn file_href(path: &str, line: Option<u64>) -> String {
    let p: Vec<String> = path.split('/').map(segment).collect();
    match line {
        Some(l) => format!("/files/{}#L{l}", p.join("/")),
        None => format!("/files/{}", p.join("/")),
    }
}

/// A value as the pages show it: indented JSON.
fn pretty(v: &Json) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn text<'a>(v: &'a Json, field: &str) -> &'a str {
    v[field].as_str().unwrap_or_default()
}

fn items(v: &Json) -> &[Json] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `file:line` linked to the file view when the file is inside the repo.
fn location(d: &Json) -> Markup {
    let file = text(d, "file");
    let line = d["line"].as_u64();
    let shown = match (d["path"].as_str(), line) {
        (Some(p), Some(l)) => format!("{}:{l}", printable(p)),
        (Some(p), None) => printable(p),
        (None, Some(l)) => format!("{}:{l}", printable(file)),
        (None, None) => printable(file),
    };
    html! {
        @if let Some(p) = d["path"].as_str() {
            a.file href=(file_href(p, line)) { (shown) }
        } @else {
            span.file { (shown) }
        }
    }
}

/// A page: the header (navigation, search), `body`, the footer linking `api` (its JSON).
fn page(title: &str, api: Option<&str>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (printable(title)) " · hiera-lookup" }
                link rel="stylesheet" href="/assets/style.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header {
                    nav {
                        a.brand href="/" { "hiera-lookup" }
                        a href="/nodes" { "Nodes" }
                        a href="/lint" { "Lint" }
                        a href="/diff" { "Diff" }
                        a href="/files/" { "Files" }
                        form.search action="/" method="get" role="search" {
                            input type="search" name="q" placeholder="Search keys and nodes"
                                aria-label="Search keys and nodes";
                            button type="submit" { "Search" }
                        }
                    }
                }
                main { (body) }
                footer {
                    "Read-only view of the control repo, answered by hiera-lookup's engine. "
                    @if let Some(a) = api { a href=(a) { "This page as JSON" } " · " }
                    a href="/api/v1/openapi.json" { "API (OpenAPI 3)" }
                }
            }
        }
    }
}

fn html_response(markup: Markup) -> Response {
    Html(markup.into_string()).into_response()
}

/// The page of an error (its status: 404, 400 or 500).
pub fn error_page(e: &ViewError) -> Response {
    let title = match e {
        ViewError::NotFound(_) => "Not found",
        ViewError::BadRequest(_) => "Bad request",
        ViewError::Failed(_) => "Error",
    };
    let body = html! {
        h1 { (title) }
        p.error { (printable(e.message())) }
        p { a href="/" { "Back to the overview" } }
    };
    (status(e), Html(page(title, None, body).into_string())).into_response()
}

fn respond(result: Result<Result<Markup, ViewError>, ViewError>) -> Response {
    match result.and_then(|r| r) {
        Ok(m) => html_response(m),
        Err(e) => error_page(&e),
    }
}

/// The filter form of a table: a GET form (`q`) that the script also applies as one types.
fn filter_form(action: &str, q: Option<&str>, table: &str, label: &str) -> Markup {
    html! {
        form.filter action=(action) method="get" {
            input type="search" name="q" value=[q] placeholder=(label) aria-label=(label)
                data-filter=(table);
            button type="submit" { "Filter" }
        }
    }
}

fn matches(q: Option<&str>, hay: &str) -> bool {
    match q {
        Some(q) if !q.is_empty() => hay.to_lowercase().contains(&q.to_lowercase()),
        _ => true,
    }
}

/// `/`: the overview.
pub async fn index(Ext(state): Ext<Arc<State>>, Query(p): Params) -> Response {
    let q = param(&p, "q").map(str::to_string);
    let api = match &q {
        Some(q) => format!("/api/v1/?q={}", query_value(q)),
        None => "/api/v1/".into(),
    };
    respond(
        heavy(&state, move |s, f| {
            let doc = views::overview(s, f, q.as_deref());
            Ok(overview_page(&doc, &api))
        })
        .await,
    )
}

fn overview_page(doc: &Json, api: &str) -> Markup {
    let body = html! {
        h1 { "Overview" }
        dl.summary {
            dt { "Control repo" } dd { code { (printable(text(doc, "root"))) } }
            dt { "Nodes" } dd { a href="/nodes" { (doc["node_count"]) } }
            dt { "Keys the nodes see" } dd { (doc["key_count"]) }
            @if doc["unreadable_nodes"].as_u64().unwrap_or(0) > 0 {
                dt { "Nodes whose facts cannot be read" } dd.error { (doc["unreadable_nodes"]) }
            }
            dt { "Secrets" } dd { @if doc["show_secrets"] == true { "shown (--show-secrets)" } @else { "[redacted]" } }
            dt { "command levels" } dd { @if doc["allow_exec"] == true { "run (--allow-exec)" } @else { "not run" } }
            dt { "Lint" } dd {
                @if let Some(e) = doc["lint"]["error"].as_str() {
                    span.error { (printable(e)) }
                } @else {
                    @for (sev, n) in doc["lint"].as_object().into_iter().flatten() {
                        span class=(format!("count sev-{sev}")) { (n) " " (sev) } " "
                    }
                }
                a href="/lint" { "all findings" }
            }
        }
        @if let Some(e) = doc["fleet_error"].as_str() {
            p.error { "Reading the nodes again failed (showing the nodes read before): " (printable(e)) }
        }
        @for w in items(&doc["fleet_warnings"]) {
            p.warning { (printable(w.as_str().unwrap_or_default())) }
        }
        @if let Some(s) = doc.get("search") {
            section #search {
                h2 { "Search: " (printable(text(s, "q"))) }
                h3 { "Nodes" }
                @if items(&s["nodes"]).is_empty() { p { "No node matches." } }
                ul.names {
                    @for n in items(&s["nodes"]) {
                        @let n = n.as_str().unwrap_or_default();
                        li { a href=(node_href(n)) { (printable(n)) } }
                    }
                }
                h3 { "Keys" }
                @if items(&s["keys"]).is_empty() { p { "No key matches." } }
                table {
                    thead { tr { th { "Key" } th.num { "Nodes that see it" } } }
                    tbody {
                        @for k in items(&s["keys"]) {
                            tr {
                                td { a.key href=(key_href(text(k, "key"))) { (printable(text(k, "key"))) } }
                                td.num { (k["nodes"]) }
                            }
                        }
                    }
                }
            }
        }
        section #layers {
            h2 { "Layers and hierarchies" }
            @for l in items(&doc["layers"]) {
                h3 { (printable(text(l, "layer"))) }
                p {
                    @if let Some(p) = l["path"].as_str() {
                        a.file href=(file_href(p, None)) { (printable(p)) }
                    } @else {
                        code { (printable(text(l, "file"))) }
                    }
                    @if l["exists"] == false { " (absent: Puppet's default hierarchy)" }
                    @if let Some(v) = l["version"].as_u64() { " · version " (v) }
                }
                @if let Some(e) = l["error"].as_str() { p.error { (printable(e)) } }
                @for (title, levels) in [("Hierarchy", &l["levels"]), ("default_hierarchy", &l["default_hierarchy"])] {
                    @if !items(levels).is_empty() {
                        table.levels {
                            caption { (title) }
                            thead { tr { th { "Level" } th { "Function" } th { "Datadir" } th { "Locations" } } }
                            tbody {
                                @for e in items(levels) {
                                    tr {
                                        td { (printable(text(e, "name"))) }
                                        td { code { (text(e, "kind")) ": " (printable(text(e, "function"))) } }
                                        td { code { (printable(text(e, "datadir"))) } }
                                        td {
                                            (text(&e["locations"], "kind"))
                                            ul.templates {
                                                @for t in items(&e["locations"]["templates"]) {
                                                    li { code { (printable(t.as_str().unwrap_or_default())) } }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        section #files {
            h2 { "Data files the nodes reach" }
            table {
                thead { tr { th { "File" } th.num { "Nodes" } } }
                tbody {
                    @for f in items(&doc["files"]) {
                        tr { td { (location(f)) } td.num { (f["nodes"]) } }
                    }
                }
            }
            h2 { "Data files no node reaches" }
            @if items(&doc["unreached_files"]).is_empty() { p { "None." } }
            ul.names {
                @for f in items(&doc["unreached_files"]) { li { (location(f)) } }
            }
        }
    };
    page("Overview", Some(api), body)
}

/// `/nodes`: every node.
pub async fn nodes(Ext(state): Ext<Arc<State>>, Query(p): Params) -> Response {
    let q = param(&p, "q").map(str::to_string);
    respond(
        blocking(&state, move |_, f| {
            let doc = views::nodes(f);
            let q = q.as_deref();
            let shown: Vec<&Json> = items(&doc)
                .iter()
                .filter(|n| matches(q, text(n, "node")))
                .collect();
            let body = html! {
                h1 { "Nodes" }
                p { (shown.len()) " of " (items(&doc).len()) " nodes" }
                (filter_form("/nodes", q, "nodes", "Filter nodes"))
                table #nodes {
                    thead { tr { th { "Node" } th { "Facts from" } th { "Problem" } } }
                    tbody {
                        @for n in shown.iter().take(MAX_ROWS) {
                            tr {
                                td { a href=(node_href(text(n, "node"))) { (printable(text(n, "node"))) } }
                                td { (printable(n["source"]["name"].as_str().unwrap_or_default())) }
                                td.error { (printable(n["error"].as_str().unwrap_or_default())) }
                            }
                        }
                    }
                }
                @if shown.len() > MAX_ROWS { p { "… " (shown.len() - MAX_ROWS) " more: filter to see them." } }
            };
            Ok(page("Nodes", Some("/api/v1/nodes"), body))
        })
        .await,
    )
}

/// `/nodes/{node}`: every key the node sees.
pub async fn node(
    Ext(state): Ext<Arc<State>>,
    Path(node): Path<String>,
    Query(p): Params,
) -> Response {
    let q = param(&p, "q").map(str::to_string);
    respond(
        blocking(&state, move |s, f| {
            let doc = views::node(s, f, &node)?;
            let name = text(&doc, "node").to_string();
            let q = q.as_deref();
            let keys: Vec<&Json> = items(&doc["keys"])
                .iter()
                .filter(|k| matches(q, text(k, "key")))
                .collect();
            let api = format!("/api/v1/nodes/{}", segment(&name));
            let body = html! {
                h1 { "Node " span.node { (printable(&name)) } }
                @if let Some(src) = doc["source"]["name"].as_str() {
                    p { "Facts from " code { (printable(src)) } }
                }
                @if let Some(e) = doc["error"].as_str() { p.error { (printable(e)) } }
                p { (keys.len()) " of " (items(&doc["keys"]).len()) " keys" }
                (filter_form(&node_href(&name), q, "keys", "Filter keys"))
                table #keys {
                    thead { tr { th { "Key" } th { "Value" } th { "From" } th { "Merge" } } }
                    tbody {
                        @for k in keys.iter().take(MAX_ROWS) {
                            @let key = text(k, "key");
                            tr {
                                td { a.key href=(node_key_href(&name, key)) { (printable(key)) } }
                                td {
                                    @if let Some(e) = k["error"].as_str() { span.error { (printable(e)) } }
                                    @else if k["found"] == true { pre.value { (pretty(&k["value"])) } }
                                    @else { span.muted { "not found" } }
                                }
                                td { ul.sources { @for d in items(&k["sources"]) { li { (location(d)) } } } }
                                td { (text(k, "merge")) }
                            }
                        }
                    }
                }
                @if keys.len() > MAX_ROWS { p { "… " (keys.len() - MAX_ROWS) " more: filter to see them." } }
            };
            Ok(page(&format!("Node {name}"), Some(&api), body))
        })
        .await,
    )
}

/// `/nodes/{node}/keys/{key}`: the answer, the level-by-level table and Puppet's explanation.
pub async fn node_key(
    Ext(state): Ext<Arc<State>>,
    Path((node, key)): Path<(String, String)>,
) -> Response {
    respond(
        blocking(&state, move |s, f| {
            let doc = views::node_key(s, f, &node, &key, true)?;
            let name = doc["display_node"].as_str().unwrap_or(&node).to_string();
            let api = format!("{}?explain=1", node_key_href(&name, &key).replacen("/nodes/", "/api/v1/nodes/", 1));
            let w = &doc["where"];
            let body = html! {
                h1 {
                    a.key href=(key_href(&key)) { (printable(&key)) }
                    " for "
                    a.node href=(node_href(&name)) { (printable(&name)) }
                }
                section #answer {
                    h2 { "Answer" }
                    @if let Some(e) = doc["error"].as_str() { p.error { (printable(e)) } }
                    @else if doc["found"] == true { pre.value { (pretty(&doc["value"])) } }
                    @else { p.muted { "Not found." } }
                    @if let Some(m) = w["merge"].get("strategy").and_then(Json::as_str) {
                        p { "Merge: " code { (m) } " (" (printable(w["merge"]["source"].as_str().unwrap_or_default())) ")" }
                    }
                }
                section #levels {
                    h2 { "Level by level" }
                    @if let Some(e) = w["error"].as_str() { p.error { (printable(e)) } }
                    table {
                        thead { tr { th.num { "#" } th { "Role" } th { "Layer" } th { "Level" } th { "File" } th { "Key" } th { "Value" } } }
                        tbody {
                            @for d in items(&w["definitions"]) {
                                tr class=(format!("role-{}", text(d, "role").replace(' ', "-"))) {
                                    td.num { @if let Some(o) = d["order"].as_u64() { (o) } }
                                    td { (text(d, "role")) }
                                    td { (printable(text(d, "layer"))) }
                                    td { (printable(d["level"].as_str().unwrap_or_default())) }
                                    td { (location(d)) }
                                    td { code { (printable(text(d, "key"))) } }
                                    td {
                                        pre.value { (pretty(&d["value"])) }
                                        @if let Some(n) = d["note"].as_str() { p.muted { (printable(n)) } }
                                    }
                                }
                            }
                        }
                    }
                    @if !items(&w["lookup_options_entries"]).is_empty() {
                        h3 { "lookup_options" }
                        table {
                            thead { tr { th { "Name" } th { "Applies" } th { "File" } th { "Options" } } }
                            tbody {
                                @for o in items(&w["lookup_options_entries"]) {
                                    tr {
                                        td { code { (printable(text(o, "name"))) } }
                                        td { @if o["applies"] == true { "yes" } @else { "no" } }
                                        td { (location(o)) }
                                        td { pre.value { (pretty(&o["value"])) } }
                                    }
                                }
                            }
                        }
                    }
                }
                section #explain {
                    h2 { "puppet lookup --explain" }
                    @if let Some(t) = doc["explain"].as_str() { pre.explain { (t) } }
                    @else { p.error { (printable(doc["explain"]["error"].as_str().unwrap_or_default())) } }
                }
            };
            Ok(page(&format!("{key} for {name}"), Some(&api), body))
        })
        .await,
    )
}

/// `/keys/{key}`: the key across the fleet.
pub async fn key(Ext(state): Ext<Arc<State>>, Path(key): Path<String>) -> Response {
    respond(
        heavy(&state, move |s, f| {
            let doc = views::key(s, f, &key)?;
            let api = format!("/api/v1/keys/{}", segment(&key));
            let body = html! {
                h1 { "Key " span.key { (printable(&key)) } }
                p {
                    (doc["nodes"]) " nodes: "
                    (items(&doc["values"]).len()) " distinct values, "
                    (items(&doc["not_found"]).len()) " not found, "
                    (items(&doc["errors"]).len()) " errors"
                }
                section #values {
                    h2 { "Values" }
                    @for v in items(&doc["values"]) {
                        div.value-group {
                            pre.value { (pretty(&v["value"])) }
                            details {
                                summary { (nodes_text(v["count"].as_u64().unwrap_or(0) as usize)) }
                                ul.names {
                                    @for n in items(&v["nodes"]) {
                                        @let n = n.as_str().unwrap_or_default();
                                        li { a href=(node_key_href(n, &key)) { (printable(n)) } }
                                    }
                                }
                            }
                        }
                    }
                    @if !items(&doc["not_found"]).is_empty() {
                        details {
                            summary { "Not found on " (nodes_text(items(&doc["not_found"]).len())) }
                            ul.names {
                                @for n in items(&doc["not_found"]) {
                                    @let n = n.as_str().unwrap_or_default();
                                    li { a href=(node_key_href(n, &key)) { (printable(n)) } }
                                }
                            }
                        }
                    }
                    @if !items(&doc["errors"]).is_empty() {
                        h3 { "Errors" }
                        ul.errors {
                            @for e in items(&doc["errors"]) {
                                @let n = text(e, "node");
                                li { a href=(node_key_href(n, &key)) { (printable(n)) } ": " span.error { (printable(text(e, "error"))) } }
                            }
                        }
                    }
                }
                section #definitions {
                    h2 { "Definitions" }
                    table {
                        thead { tr { th { "File" } th { "Layer" } th { "Key" } th { "Value" } th.num { "Wins for" } th.num { "Contributes to" } th.num { "Shadowed for" } th.num { "Reached by" } } }
                        tbody {
                            @for d in items(&doc["definitions"]) {
                                tr {
                                    td { (location(d)) }
                                    td { (printable(text(d, "layer"))) }
                                    td { code { (printable(text(d, "key"))) } }
                                    td { pre.value { (pretty(&d["value"])) } }
                                    td.num { (node_count(&d["wins"], &key)) }
                                    td.num { (node_count(&d["contributes"], &key)) }
                                    td.num { (node_count(&d["shadowed"], &key)) }
                                    td.num { (d["reached_by"]) }
                                }
                            }
                        }
                    }
                }
                @if !items(&doc["lookup_options"]).is_empty() {
                    section #lookup-options {
                        h2 { "lookup_options" }
                        table {
                            thead { tr { th { "Name" } th { "File" } th { "Options" } } }
                            tbody {
                                @for o in items(&doc["lookup_options"]) {
                                    tr {
                                        td { code { (printable(text(o, "name"))) } }
                                        td { (location(o)) }
                                        td { pre.value { (pretty(&o["value"])) } }
                                    }
                                }
                            }
                        }
                    }
                }
            };
            Ok(page(&format!("Key {key}"), Some(&api), body))
        })
        .await,
    )
}

/// `1 node`, `2 nodes`.
fn nodes_text(n: usize) -> String {
    if n == 1 {
        "1 node".into()
    } else {
        format!("{n} nodes")
    }
}

/// A count of nodes, expandable to their names.
fn node_count(list: &Json, key: &str) -> Markup {
    let nodes = items(list);
    html! {
        @if nodes.is_empty() { "0" } @else {
            details {
                summary { (nodes.len()) }
                ul.names {
                    @for n in nodes {
                        @let n = n.as_str().unwrap_or_default();
                        li { a href=(node_key_href(n, key)) { (printable(n)) } }
                    }
                }
            }
        }
    }
}

/// `/lint`: lint's findings.
pub async fn lint(Ext(state): Ext<Arc<State>>) -> Response {
    respond(
        heavy(&state, move |s, f| {
            let doc = views::lint(s, f)?;
            let body = html! {
                h1 { "Lint" }
                p {
                    @for (sev, n) in doc["counts"].as_object().into_iter().flatten() {
                        span class=(format!("count sev-{sev}")) { (n) " " (sev) } " "
                    }
                }
                @if !items(&doc["unreadable_nodes"]).is_empty() {
                    p.warning { "Left out of the fleet rules (facts unreadable): " (items(&doc["unreadable_nodes"]).len()) " nodes" }
                }
                (filter_form("/lint", None, "findings", "Filter findings"))
                table #findings {
                    thead { tr { th { "Severity" } th { "Rule" } th { "Where" } th { "Message" } th.num { "Nodes reaching the file" } } }
                    tbody {
                        @for f in items(&doc["findings"]) {
                            tr class=(format!("sev-{}", text(f, "severity"))) {
                                td { (text(f, "severity")) }
                                td { code { (text(f, "rule")) } }
                                td { (location(f)) }
                                td { (printable(text(f, "message"))) }
                                td.num {
                                    @if let Some(n) = f["reached_by"].as_u64() {
                                        @if n == 0 { "0" } @else {
                                            details {
                                                summary { (nodes_text(n as usize)) }
                                                ul.names {
                                                    @for node in items(&f["nodes"]) {
                                                        @let node = node.as_str().unwrap_or_default();
                                                        li { a href=(node_href(node)) { (printable(node)) } }
                                                    }
                                                    @if n as usize > items(&f["nodes"]).len() { li { "…" } }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                @if items(&doc["findings"]).is_empty() { p { "No findings." } }
            };
            Ok(page("Lint", Some("/api/v1/lint"), body))
        })
        .await,
    )
}

/// `/diff?base=REV[&head=REV]`: diff's report.
pub async fn diff(Ext(state): Ext<Arc<State>>, Query(p): Params) -> Response {
    let base = param(&p, "base")
        .filter(|b| !b.is_empty())
        .map(str::to_string);
    let head = param(&p, "head")
        .filter(|h| !h.is_empty())
        .map(str::to_string);
    let form = |base: Option<&str>, head: Option<&str>| {
        html! {
            form.diff action="/diff" method="get" {
                label { "Base " input type="text" name="base" value=[base] placeholder="origin/main" required; }
                label { "Head " input type="text" name="head" value=[head] placeholder="work tree"; }
                button type="submit" { "Compare" }
            }
        }
    };
    let Some(base) = base else {
        let body = html! {
            h1 { "Diff" }
            p { "What a change to the control repo does to every node's answers: two git revisions, or a revision and the work tree." }
            (form(None, None))
        };
        return html_response(page("Diff", None, body));
    };
    let mut api = format!("/api/v1/diff?base={}", query_value(&base));
    if let Some(h) = &head {
        api.push_str(&format!("&head={}", query_value(h)));
    }
    let shown = (base.clone(), head.clone());
    let result = heavy(&state, move |s, f| {
        views::diff(s, f, &base, head.as_deref())
    })
    .await;
    let doc = match result.and_then(|r| r) {
        Ok(d) => d,
        Err(e) => {
            let body = html! {
                h1 { "Diff" }
                (form(Some(&shown.0), shown.1.as_deref()))
                p.error { (printable(e.message())) }
            };
            return (status(&e), Html(page("Diff", None, body).into_string())).into_response();
        }
    };
    let body = html! {
        h1 { "Diff " code { (printable(text(&doc, "base"))) } " → " code { (printable(text(&doc, "head"))) } }
        (form(Some(&shown.0), shown.1.as_deref()))
        p {
            (doc["changed_keys"]) " keys changed on " (doc["changed_nodes"]) " of " (doc["nodes"]) " nodes ("
            (doc["lookups"]) " lookups)"
        }
        @if !items(&doc["unreadable_nodes"]).is_empty() {
            p.warning { "Left out (facts unreadable): " (items(&doc["unreadable_nodes"]).len()) " nodes" }
        }
        h2 { "Changed files" }
        ul.names {
            @for f in items(&doc["changed_files"]) {
                li { code { (text(f, "status")) } " " (printable(text(f, "path"))) }
            }
        }
        h2 { "Changes" }
        @if items(&doc["changes"]).is_empty() { p { "No change." } }
        @for c in items(&doc["changes"]) {
            @let key = text(c, "key");
            section.change {
                h3 { a.key href=(key_href(key)) { (printable(key)) } }
                @for g in items(&c["groups"]) {
                    div.group {
                        details {
                            summary { (nodes_text(items(&g["nodes"]).len())) }
                            ul.names {
                                @for n in items(&g["nodes"]) {
                                    @let n = n.as_str().unwrap_or_default();
                                    li { a href=(node_key_href(n, key)) { (printable(n)) } }
                                }
                            }
                        }
                        @if let Some(edits) = g.get("edits") {
                            table {
                                thead { tr { th { "Path" } th { "Before" } th { "After" } } }
                                tbody {
                                    @for e in items(edits) {
                                        tr {
                                            td { code { (printable(text(e, "path"))) } }
                                            td { @if let Some(v) = e.get("before").or(e.get("removed")) { pre.value.before { (pretty(v)) } } }
                                            td { @if let Some(v) = e.get("after").or(e.get("added")) { pre.value.after { (pretty(v)) } } }
                                        }
                                    }
                                }
                            }
                        } @else {
                            div.beforeafter {
                                pre.value.before { (pretty(&g["before"])) }
                                pre.value.after { (pretty(&g["after"])) }
                            }
                        }
                    }
                }
            }
        }
    };
    html_response(page("Diff", Some(&api), body))
}

/// `/files/`: the control repo's top directory.
pub async fn files_root(Ext(state): Ext<Arc<State>>) -> Response {
    file_page(state, String::new()).await
}

/// `/files/{path}`: a file with line anchors, or a directory.
pub async fn file(Ext(state): Ext<Arc<State>>, Path(path): Path<String>) -> Response {
    file_page(state, path).await
}

async fn file_page(state: Arc<State>, path: String) -> Response {
    respond(
        blocking(&state, move |s, _| {
            let doc = crate::files::view(s, &path)?;
            let rel = text(&doc, "path").to_string();
            let crumbs: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
            let body = html! {
                h1.crumbs {
                    a href="/files/" { "repo" }
                    @for (i, c) in crumbs.iter().enumerate() {
                        " / "
                        a href=(file_href(&crumbs[..=i].join("/"), None)) { (printable(c)) }
                    }
                }
                @if doc["dir"] == true {
                    ul.entries {
                        @for e in items(&doc["entries"]) {
                            @let name = text(e, "name");
                            @let child = if rel.is_empty() { name.to_string() } else { format!("{rel}/{name}") };
                            li class=(if e["dir"] == true { "dir" } else { "file" }) {
                                a href=(file_href(&child, None)) { (printable(name)) @if e["dir"] == true { "/" } }
                            }
                        }
                    }
                } @else if doc["too_large"] == true {
                    p { "Too large to show (" (doc["size"]) " bytes)." }
                } @else {
                    table.source {
                        tbody {
                            @for (i, line) in items(&doc["lines"]).iter().enumerate() {
                                @let n = i + 1;
                                tr id=(format!("L{n}")) {
                                    td.ln { a href=(format!("#L{n}")) { (n) } }
                                    td.code { code { (line.as_str().unwrap_or_default()) } }
                                }
                            }
                        }
                    }
                }
            };
            let api = format!("/api/v1{}", file_href(&rel, None));
            Ok(page(if rel.is_empty() { "Files" } else { &rel }, Some(&api), body))
        })
        .await,
    )
}
