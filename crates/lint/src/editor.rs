//! What an editor (the language server, `crates/lsp`) asks of the repo model besides the
//! findings: the data files the hierarchies reach, and the classes the manifests define. The
//! class part is provisional: the Schema API (`hiera_lint::schema`) supersedes it.

use super::{repo, schema, Options, Sink};
use hiera_engine::error::Result;
use std::path::PathBuf;

/// A class a manifest of the repo defines.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassInfo {
    /// The class's name (`ntp`, `profile::base`).
    pub name: String,
    /// Its parameters' names, in order, without `$`.
    pub params: Vec<String>,
    /// The manifest.
    pub file: PathBuf,
    /// 1-based line of `class`.
    pub line: usize,
}

/// The repo's data files (every file some hierarchy level can reach, placeholders matched
/// against the files that exist, as `lint` finds them) and the classes of its manifests.
pub fn data_files_and_classes(opts: &Options) -> Result<(Vec<PathBuf>, Vec<ClassInfo>)> {
    let root = opts
        .root
        .canonicalize()
        .unwrap_or_else(|_| opts.root.clone());
    let mut sink = Sink::new(&root);
    let repo = repo::Repo::load(&root, opts, &mut sink)?;
    let code = schema::Schema::load(Some(&repo.root), &repo.modules);
    let files = repo.files.iter().map(|f| f.path.clone()).collect();
    let mut classes: Vec<ClassInfo> = code
        .classes()
        .map(|c| ClassInfo {
            name: c.name.clone(),
            params: c.params.iter().map(|p| p.name.clone()).collect(),
            file: c.file.clone(),
            line: c.name_span.start.line,
        })
        .collect();
    classes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((files, classes))
}
