//! What an editor (the language server, `crates/lsp`) asks of the repo model besides the
//! findings: the data files the hierarchies reach. The code side (classes, parameters,
//! lookups) is the [`Schema`](super::schema::Schema), which the editor holds itself and keeps
//! up to date with its unsaved manifest buffers ([`Schema::update_file`](super::schema::Schema::update_file)).

use super::{repo, Options, Sink};
use hiera_engine::error::Result;
use hiera_value::value::Map;
use std::path::PathBuf;

/// The repo's data files: every file some hierarchy level can reach, placeholders matched
/// against the files that exist, as `lint` finds them.
pub fn data_files(opts: &Options) -> Result<Vec<PathBuf>> {
    let root = opts
        .root
        .canonicalize()
        .unwrap_or_else(|_| opts.root.clone());
    let mut sink = Sink::new(&root);
    let repo = repo::Repo::load(&root, opts, &mut sink)?;
    Ok(repo.files.iter().map(|f| f.path.clone()).collect())
}

/// The data files that `eyaml_lookup_key` levels read, each with the options of the first
/// such level reading it (its `pkcs7_*` keys): what `eyaml recrypt --all` rewrites.
pub fn eyaml_files(opts: &Options) -> Result<Vec<(PathBuf, Map)>> {
    let root = opts
        .root
        .canonicalize()
        .unwrap_or_else(|_| opts.root.clone());
    let mut sink = Sink::new(&root);
    let repo = repo::Repo::load(&root, opts, &mut sink)?;
    Ok(repo
        .files
        .iter()
        .filter_map(|f| f.eyaml.as_ref().map(|o| (f.path.clone(), o.clone())))
        .collect())
}
