//! Diagnostics: lint's rules run on the repo as the editor holds it (open buffers are the
//! workspace's overlays, and lint reads through the workspace's file system), its findings
//! for each open document published at their positions; a YAML error in a document no
//! hierarchy reads yet is placed too. Quick fixes ride along in each diagnostic's `data`.

use crate::cursor::{self, FileKind};
use crate::server::Server;
use crate::text::Doc;
use hiera_formats::position::DataFormat;
use hiera_lint::{Finding, Severity};
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
                            line,
                            column: col,
                            severity: Severity::Error,
                            rule: "data-syntax",
                            message: e.to_string(),
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
                .filter_map(|n| {
                    Some(hiera_engine::batch::Node {
                        name: n.name.clone(),
                        source: None,
                        scope: n.scope.clone().ok()?,
                        facts_error: None,
                        workspace: None,
                    })
                })
                .collect(),
        )
    }

    fn diagnostic(&self, doc: &Doc, f: &Finding) -> Json {
        let start = doc.position_of(f.line.max(1), f.column.max(1), self.enc);
        // To the end of the word (a key, a scalar) or of the line.
        let line = doc.line(start.line as usize);
        let from = doc_byte(line, f.column.max(1));
        let word_end = from + word_len(&line[from..]);
        let word_end = line[..word_end].trim_end().len().max(from);
        let end_byte = if word_end > from {
            word_end
        } else {
            line.len()
        };
        let end = doc.position_at_byte(start.line as usize, end_byte, self.enc);
        let severity = match f.severity {
            Severity::Error => 1,
            Severity::Warning => 2,
            Severity::Info => 3,
        };
        let mut d = json!({
            "range": {"start": start, "end": end},
            "severity": severity,
            "code": f.rule,
            "source": "hiera-lookup",
            "message": f.message,
        });
        if let Some(fix) = quick_fix(f, &line[from.min(line.len())..end_byte.max(from)]) {
            d["data"] = fix;
        }
        d
    }
}

/// The length of the key or plain scalar `rest` starts with: up to YAML's mapping indicator
/// (a `:` before a space or the end: `ntp::servers:`, not the `:` of `1:30`), a flow
/// indicator, or a comment (a `#` after a space).
fn word_len(rest: &str) -> usize {
    let b = rest.as_bytes();
    b.iter()
        .enumerate()
        .position(|(i, &c)| match c {
            b':' => matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n')),
            b',' | b']' | b'}' | b'\n' => true,
            b'#' => i > 0 && b[i - 1] == b' ',
            _ => false,
        })
        .unwrap_or(rest.len())
}

/// The byte offset of 1-based character column `col` in `line`.
fn doc_byte(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col.max(1) - 1)
        .map_or(line.len(), |(i, _)| i)
}

/// The fix a finding suggests, for code actions: `{"title", "newText"}` to replace the
/// diagnostic's range with.
fn quick_fix(f: &Finding, written: &str) -> Option<Json> {
    match f.rule {
        "unknown-class-parameter" | "unknown-class" => {
            let (_, rest) = f.message.split_once("did you mean '")?;
            let suggestion = rest.split_once('\'')?.0;
            Some(json!({
                "title": format!("Rename to '{suggestion}'"),
                "newText": suggestion,
            }))
        }
        "yaml11-value" => {
            if written.is_empty() || written.starts_with(['"', '\'']) {
                return None;
            }
            Some(json!({
                "title": format!("Quote '{written}' (a string)"),
                "newText": format!("'{}'", written.replace('\'', "''")),
            }))
        }
        _ => None,
    }
}
