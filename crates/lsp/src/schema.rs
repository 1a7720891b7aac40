//! Class parameters as the schema of Hiera data: the server holds one
//! [`hiera_lint::schema::Schema`] (the Puppet code of the modulepath, parsed by
//! tree-sitter-puppet: classes, parameters with their types and defaults, `lookup()` calls in
//! manifests and templates, each with its exact span), and keeps it up to date with the
//! editor's buffers: an open `.pp`/`.epp`/`.erb` buffer replaces its file's contribution
//! ([`Schema::update_file`]) on every change, so unsaved code counts for hovers, references,
//! completion and lint's rules (`parameter-type-mismatch`, `unused-key`, …) before it is
//! saved; closing the buffer puts back what the disk holds.

use crate::server::{is_code, Server};
use crate::text::{self, Doc};
use hiera_lint::schema::{Schema, Span};
use lsp_types::{Location, Range};
use std::path::Path;
use std::sync::Arc;

impl Server {
    /// The schema: the code on the disk, the open code buffers over it.
    pub(crate) fn code_schema(&mut self) -> Option<Arc<Schema>> {
        if let Some(s) = &self.schema {
            return Some(s.clone());
        }
        let ws = self.ws.as_ref()?;
        let mut schema = Schema::for_layers(&ws.layers());
        for (path, doc) in &self.docs {
            if is_code(path) {
                schema.update_file(path, Some(doc.text()));
            }
        }
        let schema = Arc::new(schema);
        self.schema = Some(schema.clone());
        Some(schema)
    }

    /// A code buffer changed (`Some`: its text) or closed (`None`: the disk's text counts
    /// again, or nothing when the file does not exist).
    pub(crate) fn code_changed(&mut self, path: &Path, text: Option<&str>) {
        let Some(schema) = self.schema.as_mut() else {
            // Not loaded yet: loading applies the open buffers.
            return;
        };
        let on_disk;
        let text = match text {
            Some(t) => Some(t),
            None => {
                on_disk = hiera_value::limits::read_text(path).ok();
                on_disk.as_deref()
            }
        };
        Arc::make_mut(schema).update_file(path, text);
    }

    /// The location of a schema span of `path` (a manifest, a template): its byte offsets
    /// converted to the client's encoding on the text the schema read (the open buffer, else
    /// the file).
    pub(crate) fn schema_location(&self, path: &Path, span: Span) -> Option<Location> {
        let uri = text::path_to_uri(path)?;
        let text = self.file_text(path).unwrap_or_default();
        let doc = Doc::new(uri.clone(), path.to_path_buf(), 0, text);
        let at = |offset: usize| doc.position_at(offset, self.enc);
        Some(Location::new(
            uri,
            Range::new(at(span.start.offset), at(span.end.offset)),
        ))
    }

    /// The data key (`class::name`) of the parameter `$name` declared on 0-based `line` of
    /// the manifest `file`, when the schema knows it.
    pub(crate) fn param_key_at(&mut self, file: &Path, line: usize, name: &str) -> Option<String> {
        let schema = self.code_schema()?;
        let m = schema.file(file)?;
        m.classes.iter().find_map(|c| {
            c.params
                .iter()
                .find(|p| p.name == name && p.span.start.line == line + 1)
                .map(|p| format!("{}::{}", c.name, p.name))
        })
    }
}
