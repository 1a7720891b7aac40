//! Rule group 2: every hiera.yaml (global, environment, modules) is valid for its version;
//! versions 3 and 4 and `hiera3_backend` levels are warnings that spell out the version 5
//! equivalent; a level whose locations match no file is noted.

use super::repo::{has_placeholders, LayerInfo, Repo};
use super::Sink;
use hiera_engine::config::{Entry, FunctionKind, Layer, Locations};
use hiera_formats::DataFormat;
use hiera_value::value::Value;
use std::path::Path;

pub(crate) fn check(repo: &Repo, sink: &mut Sink) {
    for layer in &repo.layers {
        let Some(path) = layer.hiera_yaml.as_deref() else {
            continue;
        };
        let text = repo.read_text(path).unwrap_or_default();
        if let Some(e) = &layer.error {
            let msg = e.to_string();
            let pos = line_in_message(&msg)
                .map(|l| (l, 1))
                .or_else(|| yaml_position(&msg))
                .unwrap_or((1, 1));
            sink.add(path, pos, "hiera-config-invalid", msg);
            continue;
        }
        let Some(cfg) = &layer.config else { continue };
        if cfg.version == 3 && layer.kind != Layer::Global {
            let what = if layer.kind == Layer::Environment {
                "an environment"
            } else {
                "a module"
            };
            sink.add(
                path,
                (1, 1),
                "hiera-config-invalid",
                format!(
                    "hiera.yaml version 3 cannot be used in {what} (Puppet 8 fails every lookup); write version 5: `version: 5` and a `hierarchy:` of levels with `name`, `data_hash: yaml_data` and `path`"
                ),
            );
            continue;
        }
        if cfg.version == 3 || cfg.version == 4 {
            let pos = super::written::find_text(&text, "version", 1)
                .filter(|_| cfg.version == 4)
                .unwrap_or((1, 1));
            sink.add(
                path,
                pos,
                "hiera-config-deprecated",
                format!(
                    "hiera.yaml version {} is deprecated; the version 5 equivalent is: {}",
                    cfg.version,
                    v5_equivalent(layer, path)
                ),
            );
        }
        // Where each level writes its settings, by the YAML reader's positions.
        let tree = (cfg.version >= 4)
            .then(|| hiera_formats::position::positions_of(DataFormat::Yaml, text.as_bytes()))
            .and_then(|t| t.ok().flatten());
        let mut in_section = [0usize; 2];
        for level in &layer.levels {
            let e = &level.entry;
            let index = &mut in_section[usize::from(level.default_hierarchy)];
            let section = if level.default_hierarchy {
                "default_hierarchy"
            } else {
                "hierarchy"
            };
            let setting_pos = |setting: &str| -> Option<(usize, usize)> {
                let path = [
                    Value::str(section),
                    Value::Int(*index as i64),
                    Value::str(setting),
                ];
                let at = tree.as_ref()?.locate(&path)?;
                Some((at.pos.line, at.pos.column))
            };
            let level_pos = setting_pos("name").unwrap_or((1, 1));
            let hiera3_pos = setting_pos("hiera3_backend");
            *index += 1;
            if e.kind == FunctionKind::Hiera3Backend {
                let pos = hiera3_pos.unwrap_or(level_pos);
                sink.add(
                    path,
                    pos,
                    "hiera3-backend",
                    format!(
                        "level '{}' uses hiera3_backend '{}', which needs Ruby and Hiera 3; {}",
                        e.name,
                        e.function,
                        hiera3_replacement(&e.function)
                    ),
                );
                continue;
            }
            if e.data_format().is_none() || level.templates.is_empty() || level.default_hierarchy {
                continue;
            }
            if level.files.iter().all(Vec::is_empty) {
                let shown: Vec<String> = level
                    .templates
                    .iter()
                    .map(|t| relative(t, &layer.dir))
                    .collect();
                let placeholders = level.templates.iter().any(|t| has_placeholders(t));
                let pos = level_pos;
                sink.add(
                    path,
                    pos,
                    "level-no-files",
                    format!(
                        "level '{}' reads no file: nothing in the repo matches {}{}",
                        e.name,
                        shown.join(", "),
                        if placeholders {
                            " (whatever the facts)"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
}

/// A 1-based line named as `line: N` in a message.
fn line_in_message(m: &str) -> Option<usize> {
    let i = m.rfind("line: ")? + 6;
    m[i..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .ok()
}

/// `at line N column M` in a Psych message.
fn yaml_position(m: &str) -> Option<(usize, usize)> {
    let i = m.rfind("at line ")? + 8;
    let rest = &m[i..];
    let line: usize = rest
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect::<String>()
        .parse()
        .ok()?;
    let col = rest
        .find("column ")
        .and_then(|j| {
            rest[j + 7..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect::<String>()
                .parse()
                .ok()
        })
        .unwrap_or(1);
    Some((line, col))
}

fn relative(t: &str, dir: &Path) -> String {
    let d = format!("{}/", dir.display());
    t.strip_prefix(&d).unwrap_or(t).to_string()
}

/// What replaces a Hiera 3 backend in version 5.
fn hiera3_replacement(backend: &str) -> String {
    if let Some(f) = DataFormat::of_backend(backend) {
        return format!("use `data_hash: {}` instead", f.data_hash_function());
    }
    match backend {
        "eyaml" => "use `lookup_key: eyaml_lookup_key` with `options: {pkcs7_private_key: …, pkcs7_public_key: …}` instead".into(),
        other => format!(
            "port it to a Hiera 5 function (`data_hash`/`lookup_key`), or keep '{other}' only as long as Puppet still runs Hiera 3 backends"
        ),
    }
}

/// The version 5 hiera.yaml an old one means, on one line (YAML flow style).
fn v5_equivalent(layer: &LayerInfo, path: &Path) -> String {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let levels: Vec<String> = layer
        .levels
        .iter()
        .filter(|l| !l.default_hierarchy)
        .map(|l| level_v5(&l.entry, dir))
        .collect();
    format!("`{{version: 5, hierarchy: [{}]}}`", levels.join(", "))
}

fn level_v5(e: &Entry, dir: &Path) -> String {
    let mut parts = vec![format!("name: {}", quote(&e.name))];
    parts.push(format!("{}: {}", e.kind.tag(), e.function));
    let datadir = relative(&e.datadir, dir);
    if !datadir.is_empty() && datadir != "data" {
        parts.push(format!("datadir: {}", quote(&datadir)));
    }
    let with_ext = |p: &String| {
        let mut p = p.clone();
        if let Some(ext) = &e.extension {
            if !p.ends_with(ext.as_str()) {
                p.push_str(ext);
            }
        }
        quote(&p)
    };
    match &e.locations {
        Locations::Paths(ps) if ps.len() == 1 => parts.push(format!("path: {}", with_ext(&ps[0]))),
        Locations::Paths(ps) => parts.push(format!(
            "paths: [{}]",
            ps.iter().map(with_ext).collect::<Vec<_>>().join(", ")
        )),
        Locations::Globs(gs) => parts.push(format!(
            "globs: [{}]",
            gs.iter().map(|g| quote(g)).collect::<Vec<_>>().join(", ")
        )),
        _ => {}
    }
    if let Some(o) = &e.options {
        if !o.is_empty() {
            if let Ok(j) =
                hiera_formats::render::to_json(&hiera_value::value::Value::Hash(o.clone()))
            {
                parts.push(format!("options: {j}"));
            }
        }
    }
    format!("{{{}}}", parts.join(", "))
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
