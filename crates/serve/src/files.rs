//! `/files/{path}`: the control repo's data files, hiera.yaml files and manifests, with line
//! anchors: the target of every file:line link. Only what is inside the repo is shown: a path
//! with `..`, a symbolic link that leads out, a hidden file or directory (`.git`), or a file
//! of any other kind (an eyaml private key, a certificate) is "not found", as is a file that
//! does not exist; so the answer never tells what is outside.

use crate::error::ViewError;
use crate::state::State;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

/// The largest file shown, in bytes.
pub const MAX_SHOWN_BYTES: u64 = 4 << 20;
/// Entries a directory listing shows at most.
const MAX_ENTRIES: usize = 10_000;

/// The files shown, by extension: data (YAML, JSON, eyaml, HOCON), manifests (`.pp`, where
/// lint finds class parameters), and the repo's settings (`.hiera-lookup.toml`).
fn shown_kind(name: &str) -> bool {
    if name == ".hiera-lookup.toml" {
        return true;
    }
    if name.starts_with('.') {
        return false;
    }
    matches!(
        Path::new(name).extension().and_then(|x| x.to_str()),
        Some("yaml" | "yml" | "json" | "eyaml" | "conf" | "pp" | "epp")
    )
}

fn not_found(rel: &str) -> ViewError {
    ViewError::NotFound(format!(
        "no file {} in the control repo",
        hiera_value::escape::printable(rel)
    ))
}

/// The file or directory `rel` names inside the root, canonical; `None` for anything this
/// module does not show (see the [module](self)).
pub fn resolve(state: &State, rel: &str) -> Option<PathBuf> {
    if rel.contains(['\0', '\\']) || rel.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let last = parts.len().saturating_sub(1);
    for (i, c) in parts.iter().enumerate() {
        if *c == ".." || (c.starts_with('.') && !(i == last && *c == ".hiera-lookup.toml")) {
            return None;
        }
    }
    let root = state.canonical_root();
    let path = parts.iter().fold(root.to_path_buf(), |p, c| p.join(c));
    // Symbolic links resolved: whatever they point at must still be inside the root.
    let canonical = std::fs::canonicalize(&path).ok()?;
    if !canonical.starts_with(root) {
        return None;
    }
    let meta = std::fs::metadata(&canonical).ok()?;
    if meta.is_file() {
        // Both the name asked for and the file a link leads to (a link named `x.yaml` to
        // a private key is not shown).
        let target = canonical.file_name()?.to_str()?;
        (shown_kind(parts.last()?) && shown_kind(target)).then_some(canonical)
    } else if meta.is_dir() {
        Some(canonical)
    } else {
        None
    }
}

/// The document of `/files/{rel}`: a file's lines (`{"path", "lines": [...]}`, or `too_large`
/// with its size), or a directory's entries (`{"path", "entries": [{"name", "dir"}]}`).
pub fn view(state: &State, rel: &str) -> Result<Json, ViewError> {
    let path = resolve(state, rel).ok_or_else(|| not_found(rel))?;
    let rel = path
        .strip_prefix(state.canonical_root())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let meta = std::fs::metadata(&path).map_err(|_| not_found(&rel))?;
    if meta.is_dir() {
        let mut entries = Vec::new();
        let rd = std::fs::read_dir(&path).map_err(|_| not_found(&rel))?;
        for e in rd.filter_map(|e| e.ok()) {
            if entries.len() >= MAX_ENTRIES {
                break;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // Listed only when it would be shown.
            if let Some(p) = resolve(state, &child) {
                entries.push((p.is_dir(), name));
            }
        }
        // Directories first, then by name.
        entries.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let entries: Vec<Json> = entries
            .into_iter()
            .map(|(dir, name)| json!({"name": name, "dir": dir}))
            .collect();
        return Ok(json!({"path": rel, "dir": true, "entries": entries}));
    }
    if meta.len() > MAX_SHOWN_BYTES {
        return Ok(json!({"path": rel, "dir": false, "too_large": true, "size": meta.len()}));
    }
    let bytes = std::fs::read(&path).map_err(|_| not_found(&rel))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    Ok(json!({"path": rel, "dir": false, "size": meta.len(), "lines": lines}))
}
