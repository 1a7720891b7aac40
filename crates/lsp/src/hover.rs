//! Hover: what the context's nodes get for the key under the cursor, and this definition's
//! part in it; the value of a `%{…}`; a hiera.yaml path interpolated; a class parameter's
//! value. Everything from the tree is escaped for Markdown (`hiera_value::escape`), and
//! values go through the session's redactor unless secrets are shown.

use crate::context::scope_of;
use crate::cursor::{FileKind, Target};
use crate::server::{Answer, Server};
use hiera_engine::batch::Node;
use hiera_engine::config::{HieraConfig, Layer, LoadContext, WrittenSetting};
use hiera_engine::redact::Redactor;
use hiera_engine::where_::{self, Answer as WAnswer, Role};
use hiera_engine::Format;
use hiera_value::escape::{markdown_code, markdown_fenced, markdown_text};
use hiera_value::value::Value;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// Nodes of a fleet a hover asks about at most.
const MAX_FLEET_NODES: usize = 2000;
/// Distinct values a fleet hover lists.
const MAX_VALUES: usize = 8;
/// Lines of a value shown.
const MAX_VALUE_LINES: usize = 30;

impl Server {
    pub(crate) fn hover(&mut self, p: &Json) -> Answer {
        let (doc, kind, target) = self.target(p)?;
        let Some(target) = target else {
            return Ok(Json::Null);
        };
        let (md, span) = match &target {
            Target::Key { key, .. } => (self.key_hover(&key.key, Some(&doc.path)), key.span),
            Target::OptionName(o) => (self.option_hover(&o.key), o.span),
            Target::Interpolation { text, span, .. } => (self.interpolation_hover(text), *span),
            Target::HieraPath {
                template,
                setting,
                absolute,
                span,
            } => (self.hiera_path_hover(template, setting, absolute), *span),
            Target::Variable { name, span } if kind == FileKind::Manifest => {
                match self.param_key_at(&doc.path, span.0, name) {
                    Some(key) => (self.key_hover(&key, None), *span),
                    None => return Ok(Json::Null),
                }
            }
            Target::LookupString { key, span } => (self.key_hover(key, None), *span),
            Target::Variable { .. } => return Ok(Json::Null),
        };
        Ok(json!({
            "contents": {"kind": "markdown", "value": md},
            "range": self.range(&doc, span),
        }))
    }

    fn nodes(&self) -> Result<Vec<Node>, String> {
        self.ctx
            .as_ref()
            .map(|c| c.nodes.clone())
            .map_err(Clone::clone)
    }

    fn context_line(&self) -> String {
        match &self.ctx {
            Ok(c) => format!("*{}*", markdown_text(&c.label)),
            Err(e) => format!("*no node context: {}*", markdown_text(e)),
        }
    }

    /// The hover of `key`; `here`: the data file the cursor is in.
    pub(crate) fn key_hover(&mut self, key: &str, here: Option<&Path>) -> String {
        let mut md = format!("### {}\n{}\n\n", markdown_code(key), self.context_line());
        if let Some(schema) = self.code_schema() {
            if let Some((c, p)) = schema.param(key) {
                md.push_str(&format!(
                    "Class parameter {} of class {} ({}){}{}\n\n",
                    markdown_code(&format!("${}", p.name)),
                    markdown_code(&c.name),
                    markdown_code(&format!(
                        "{}:{}",
                        self.shown(&c.file.to_string_lossy()),
                        p.span.start.line
                    )),
                    p.type_text
                        .as_deref()
                        .map(|t| format!(", type {}", markdown_code(t)))
                        .unwrap_or_default(),
                    p.default
                        .as_deref()
                        .map(|d| format!(", default {}", markdown_code(d)))
                        .unwrap_or_default(),
                ));
            }
        }
        let nodes = match self.nodes() {
            Ok(n) => n,
            Err(_) => return md,
        };
        if nodes.len() == 1 {
            let mut reporter = match self.reporter() {
                Ok(r) => r,
                Err(f) => {
                    md.push_str(&markdown_text(&f.1));
                    return md;
                }
            };
            let node = &nodes[0];
            let scope = match scope_of(node) {
                Ok(s) => s,
                Err(e) => {
                    md.push_str(&format!("facts unreadable: {}\n", markdown_text(&e)));
                    return md;
                }
            };
            match self.report(scope, &node.name, key, &mut reporter) {
                Ok((report, secrets)) => md.push_str(&self.single(&report, &secrets, here)),
                Err(e) => md.push_str(&format!("**lookup fails**: {}\n", markdown_text(&e))),
            }
            return md;
        }
        md.push_str(&self.fleet(&nodes, key, here));
        md
    }

    /// One node's answer and this file's part in it.
    fn single(&self, r: &where_::Report, secrets: &Redactor, here: Option<&Path>) -> String {
        let mut md = String::new();
        match &r.answer {
            WAnswer::Found(v) => md.push_str(&fenced(&render(&secrets.value(v)))),
            WAnswer::NotFound => md.push_str("**not found** for this node\n\n"),
            WAnswer::Error(e) => md.push_str(&format!(
                "**lookup fails**: {}\n\n",
                markdown_text(&secrets.text(e))
            )),
        }
        let winner = r
            .definitions
            .iter()
            .find(|d| matches!(d.role, Role::Wins | Role::Contributes));
        if let Some(here) = here {
            let here = here.to_string_lossy();
            match r.definitions.iter().find(|d| d.file == here) {
                Some(d) => {
                    let level = d
                        .level
                        .as_deref()
                        .map(|l| format!(" (level {})", markdown_code(l)))
                        .unwrap_or_default();
                    let line = match d.role {
                        Role::Wins => format!("This definition **wins**{level}."),
                        Role::Contributes => {
                            format!("This definition **contributes** to the merge{level}.")
                        }
                        Role::Shadowed => format!(
                            "This definition is **shadowed**{level} by {}.",
                            winner.map_or("a higher level".to_string(), |w| self.place(w))
                        ),
                        Role::KnockedOut => format!(
                            "This definition is **knocked out**{level}: {}",
                            markdown_text(d.note.as_deref().unwrap_or("a higher level removed it"))
                        ),
                        Role::NotReached => {
                            "This file is **not reached**: the node's hierarchy never reads it."
                                .to_string()
                        }
                    };
                    md.push_str(&line);
                    md.push_str("\n\n");
                }
                None => {
                    md.push_str("This file's definition is not among the key's definitions.\n\n")
                }
            }
        }
        let contributing: Vec<String> = r
            .definitions
            .iter()
            .filter(|d| matches!(d.role, Role::Wins | Role::Contributes))
            .map(|d| self.place(d))
            .collect();
        if !contributing.is_empty() {
            md.push_str(&format!("From: {}\n\n", contributing.join(", ")));
        }
        let source = match r.source {
            where_::MergeSource::Given => "given",
            where_::MergeSource::LookupOptions => "lookup_options",
            where_::MergeSource::Default => "default",
        };
        md.push_str(&format!(
            "Merge: {} ({source})\n",
            markdown_code(&r.strategy)
        ));
        md
    }

    /// `file:line` of a definition.
    fn place(&self, d: &where_::Definition) -> String {
        let line = d.pos.map(|p| format!(":{}", p.line)).unwrap_or_default();
        markdown_code(&format!("{}{line}", self.shown(&d.file)))
    }

    /// A fleet's values with node counts, and this file's part for how many nodes.
    fn fleet(&self, nodes: &[Node], key: &str, here: Option<&Path>) -> String {
        let asked = &nodes[..nodes.len().min(MAX_FLEET_NODES)];
        let across = match self.across(key, asked) {
            Ok(a) => a,
            Err(f) => return markdown_text(&f.1),
        };
        let report = &across.report;
        let mut shown: BTreeMap<String, usize> = BTreeMap::new();
        for g in &across.values {
            *shown.entry(render(&g.value)).or_default() += g.nodes.len();
        }
        let mut sorted: Vec<(String, usize)> = shown.into_iter().collect();
        if !report.not_found.is_empty() {
            sorted.push(("(not found)".into(), report.not_found.len()));
        }
        let mut errors: BTreeMap<String, usize> = BTreeMap::new();
        for (_, e) in &report.errors {
            *errors.entry(format!("(error) {e}")).or_default() += 1;
        }
        sorted.extend(errors);
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut md = String::new();
        let distinct = sorted.len();
        for (v, n) in sorted.into_iter().take(MAX_VALUES) {
            md.push_str(&format!("**{n} node{}**:\n", if n == 1 { "" } else { "s" }));
            md.push_str(&fenced(&v));
        }
        if distinct > MAX_VALUES {
            md.push_str(&format!("…and {} other values\n\n", distinct - MAX_VALUES));
        }
        if asked.len() < nodes.len() {
            md.push_str(&format!(
                "(the first {} of {} nodes)\n\n",
                asked.len(),
                nodes.len()
            ));
        }
        if let Some(here) = here.map(|h| h.to_string_lossy().into_owned()) {
            let mut roles: BTreeMap<&str, usize> = BTreeMap::new();
            let mut defined = 0;
            if let Some(d) = report
                .definitions
                .iter()
                .find(|d| d.definition.file == here)
            {
                for (role, list) in [
                    (Role::Wins, &d.wins),
                    (Role::Contributes, &d.contributes),
                    (Role::Shadowed, &d.shadowed),
                    (Role::KnockedOut, &d.knocked_out),
                ] {
                    if !list.is_empty() {
                        roles.insert(role.name(), list.len());
                        defined += list.len();
                    }
                }
            }
            let rest = asked.len().saturating_sub(defined);
            if rest > 0 {
                roles.insert("not defined here", rest);
            }
            let parts: Vec<String> = roles.iter().map(|(r, n)| format!("{r} for {n}")).collect();
            md.push_str(&format!("This definition: {}.\n", parts.join(", ")));
        }
        md
    }

    fn option_hover(&mut self, name: &str) -> String {
        let mut md = format!("### lookup_options {}\n\n", markdown_code(name));
        if name.starts_with('^') {
            md.push_str("A pattern: applies to every key it matches (a key's own entry wins).\n");
        } else {
            md.push_str(&format!(
                "Options of {} (merged across layers; the first found for each option wins).\n",
                markdown_code(name)
            ));
        }
        md
    }

    fn first_scope(&self) -> Result<(String, hiera_engine::Scope), String> {
        let nodes = self.nodes()?;
        let n = nodes.first().ok_or("no node")?;
        Ok((n.name.clone(), scope_of(n)?.clone()))
    }

    fn interpolation_hover(&mut self, text: &str) -> String {
        let mut md = format!("### {}\n{}\n\n", markdown_code(text), self.context_line());
        let (_, scope) = match self.first_scope() {
            Ok(s) => s,
            Err(e) => return md + &markdown_text(&e),
        };
        let mut session = match self.session(scope) {
            Ok(s) => s,
            Err(f) => return md + &markdown_text(&f.1),
        };
        let result = session.interpolate(&Value::str(text), true);
        let secrets = session.redactor().cloned().unwrap_or_default();
        match result {
            Ok(v) => md.push_str(&fenced(&render(&secrets.value(&v)))),
            Err(e) => md.push_str(&format!(
                "**fails**: {}\n",
                markdown_text(&secrets.text(&e.to_string()))
            )),
        }
        if self.ctx.as_ref().is_ok_and(|c| c.fleet) {
            md.push_str("\n(for the fleet's first node)\n");
        }
        md
    }

    fn hiera_path_hover(&mut self, template: &str, setting: &str, absolute: &str) -> String {
        let mut md = format!(
            "### {} {}\n{}\n\n",
            markdown_text(setting),
            markdown_code(template),
            self.context_line()
        );
        match self.resolve_hiera_path(absolute, setting) {
            Ok(paths) => {
                for (path, exists) in paths {
                    md.push_str(&format!(
                        "- {} — {}\n",
                        markdown_code(&self.shown(&path)),
                        if exists {
                            "exists"
                        } else {
                            "**does not exist**"
                        }
                    ));
                }
            }
            Err(e) => md.push_str(&markdown_text(&e)),
        }
        md
    }

    /// The files a hiera.yaml setting names for the context's first node (absolute) and
    /// whether each exists: `absolute`, the setting as the configuration takes it
    /// ([`WrittenSetting::absolute`]), interpolated.
    pub(crate) fn resolve_hiera_path(
        &mut self,
        absolute: &str,
        setting: &str,
    ) -> Result<Vec<(String, bool)>, String> {
        let (_, scope) = self.first_scope()?;
        let mut session = self.session(scope).map_err(|f| f.1)?;
        let full = match session.interpolate(&Value::str(absolute), false) {
            Ok(Value::String(s)) => s,
            Ok(other) => hiera_value::text::to_s(&other),
            Err(e) => return Err(e.to_string()),
        };
        let secrets = session.redactor().cloned().unwrap_or_default();
        let full = secrets.text(&full).into_owned();
        let ws = self.workspace().map_err(|f| f.1)?;
        let fs = ws.fs();
        if setting == "datadir" {
            let exists = fs.is_dir(Path::new(&full));
            return Ok(vec![(full, exists)]);
        }
        if setting.starts_with("glob") {
            let found = hiera_engine::location::glob(&*fs, &full).unwrap_or_default();
            if found.is_empty() {
                return Ok(vec![(full, false)]);
            }
            return Ok(found.into_iter().map(|f| (f, true)).collect());
        }
        let exists = fs.is_file(Path::new(&full));
        Ok(vec![(full, exists)])
    }

    /// Where the hiera.yaml at `path` (its open buffer, else the file) writes its datadirs
    /// and locations, as the engine's configuration reads it (nothing when it does not load).
    pub(crate) fn hiera_settings(&self, path: &Path) -> Vec<WrittenSetting> {
        let Ok(ws) = self.workspace() else {
            return Vec::new();
        };
        let layers = ws.layers();
        let layer = if layers.global.as_deref() == Some(path) {
            Layer::Global
        } else if layers
            .modules
            .iter()
            .any(|(_, dir)| path.parent() == Some(dir.as_path()))
        {
            Layer::Module
        } else {
            Layer::Environment
        };
        let ctx = LoadContext {
            layer,
            codedir: layers.codedir.clone(),
            strict_off: true,
        };
        let fs = ws.fs();
        match HieraConfig::load_in(&*fs, path, &ctx, &mut Vec::new()) {
            Ok(cfg) => cfg.written_settings(self.file_text(path).unwrap_or_default().as_bytes()),
            Err(_) => Vec::new(),
        }
    }
}

/// A value as `puppet lookup` prints it (YAML), or its text.
pub(crate) fn render(v: &Value) -> String {
    Format::Yaml
        .render(v)
        .unwrap_or_else(|_| hiera_value::text::to_s(v))
        .trim_end()
        .to_string()
}

/// A `~~~yaml` block of `text`, every line kept in it.
fn fenced(text: &str) -> String {
    let mut out = String::from("~~~yaml\n");
    let lines: Vec<&str> = text.lines().collect();
    for l in lines.iter().take(MAX_VALUE_LINES) {
        out.push_str(&markdown_fenced(l));
        out.push('\n');
    }
    if lines.len() > MAX_VALUE_LINES {
        out.push_str(&format!(
            "# … {} more lines\n",
            lines.len() - MAX_VALUE_LINES
        ));
    }
    out.push_str("~~~\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_hold_hostile_values() {
        let f = fenced("a\n~~~\n```\n<script>");
        assert_eq!(f.matches("~~~").count(), 2, "{f}");
    }
}
