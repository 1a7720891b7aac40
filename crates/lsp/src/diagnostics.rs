//! Diagnostics: lint's rules run on the repo as the editor holds it (open buffers are the
//! workspace's overlays, and lint reads through the workspace's file system), its findings
//! for each open document published at their regions; a YAML error in a document no
//! hierarchy reads yet is placed too. A finding's fix (lint's structured [`Fix`]) rides
//! along in its diagnostic's `data`, its edits' ranges in the client's units, for the code
//! actions to apply.

use crate::cursor::{self, FileKind};
use crate::server::Server;
use crate::text::Doc;
use hiera_formats::position::DataFormat;
use hiera_lint::{Finding, Fix, Region, Severity};
use lsp_types::Range;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

impl Server {
    /// The diagnostics of each of `paths` (open documents).
    pub(crate) fn diagnose(&mut self, paths: &[PathBuf]) -> Vec<(PathBuf, Vec<Json>)> {
        let schema = self.code_schema();
        let findings = self.lint_findings(schema);
        let mut out = Vec::new();
        for path in paths {
            let Some(doc) = self.docs.get(path) else {
                continue;
            };
            let mut diags = Vec::new();
            let mut syntax = false;
            for f in findings.iter().filter(|f| self.finding_path(f) == *path) {
                syntax |= f.rule == "data-syntax" || f.rule == "hiera-config-invalid";
                diags.push(self.diagnostic(doc, f));
            }
            // A YAML file no hierarchy reaches (yet): its syntax all the same.
            if !syntax {
                if let FileKind::Data(DataFormat::Yaml) | FileKind::HieraYaml =
                    cursor::kind_of(path)
                {
                    if let Err(e) = hiera_formats::yaml::load_document(doc.text().as_bytes()) {
                        let (line, col) = e.position();
                        let f = Finding {
                            file: String::new(),
                            region: Region::at(line, col),
                            severity: Severity::Error,
                            rule: "data-syntax",
                            message: e.to_string(),
                            fix: None,
                        };
                        diags.push(self.diagnostic(doc, &f));
                    }
                }
            }
            out.push((path.clone(), diags));
        }
        out
    }

    /// The absolute file a finding is in.
    fn finding_path(&self, f: &Finding) -> PathBuf {
        let p = Path::new(&f.file);
        match &self.root {
            Some(r) if p.is_relative() => r.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// Every lint finding of the repo as the editor holds it (none without a workspace):
    /// data buffers through the workspace's overlays, code buffers through `schema`.
    fn lint_findings(
        &self,
        schema: Option<std::sync::Arc<hiera_lint::schema::Schema>>,
    ) -> Vec<Finding> {
        let (Some(ws), Some(root)) = (&self.ws, &self.root) else {
            return Vec::new();
        };
        let opts = hiera_lint::Options {
            root: root.clone(),
            hiera_config: self.options.hiera_config.clone(),
            modulepath: self.options.modulepath.clone(),
            fs: Some(ws.fs()),
            allow_exec: self.options.allow_exec,
            // Everything the user opens is theirs to see, vendored or not.
            include_vendored: true,
            schema,
            nodes: self.fleet_nodes(),
            fleet_types_only: true,
            ..Default::default()
        };
        match hiera_lint::lint(&opts) {
            Ok(r) => r.findings().to_vec(),
            Err(_) => Vec::new(),
        }
    }

    /// A fleet context's nodes, for the fleet part of `parameter-type-mismatch` (the value
    /// each node gets, after merges and interpolation); `None` for one node or none. Nodes
    /// whose facts are unreadable are left out (their hovers say why).
    fn fleet_nodes(&self) -> Option<Vec<hiera_engine::batch::Node>> {
        let ctx = self.ctx.as_ref().ok().filter(|c| c.fleet)?;
        Some(
            ctx.nodes
                .iter()
                .filter(|n| n.facts_error.is_none())
                .cloned()
                .collect(),
        )
    }

    fn diagnostic(&self, doc: &Doc, f: &Finding) -> Json {
        let severity = match f.severity {
            Severity::Error => 1,
            Severity::Warning => 2,
            Severity::Info => 3,
        };
        let mut d = json!({
            "range": self.region_range(doc, f.region),
            "severity": severity,
            "code": f.rule,
            "source": "hiera-lookup",
            "message": f.message,
        });
        if let Some(fix) = &f.fix {
            d["data"] = json!({"fix": self.fix_json(doc, fix)});
        }
        d
    }

    /// The LSP range of a finding's region: what the rule says it is about, or, when it
    /// knows only a place, from there to the end of the line (something to point at).
    fn region_range(&self, doc: &Doc, r: Region) -> Range {
        let start = doc.position_of(r.start.line.max(1), r.start.column.max(1), self.enc);
        let end = if r.end > r.start {
            doc.position_of(r.end.line, r.end.column, self.enc)
        } else {
            let line = start.line as usize;
            doc.position_at_byte(line, doc.line(line).trim_end().len(), self.enc)
        };
        Range::new(start, end.max(start))
    }

    /// A fix as the code actions take it back: its title and its edits, ranges in the
    /// client's units.
    fn fix_json(&self, doc: &Doc, fix: &Fix) -> Json {
        let edits: Vec<Json> = fix
            .edits
            .iter()
            .map(|e| json!({"range": self.region_range(doc, e.region), "newText": e.new_text}))
            .collect();
        json!({"title": fix.title, "edits": edits})
    }
}
