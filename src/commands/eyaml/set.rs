//! `hiera-lookup eyaml set KEY VALUE --level NAME|--file PATH [--node N]`: add or replace a
//! top-level key's value with VALUE encrypted for the public key (no private key needed), in
//! the data file of an eyaml hierarchy level as it is for the node, or in a named file. Every
//! other byte of the file stays: comments, order, quoting, the other values (the result is
//! read back and checked). A file that is not a plain YAML block mapping is refused.

use super::{encrypt_b64, CipherArgs, KeyArgs};
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::tokens::format_encrypted;
use hiera_engine::config::Locations;
use hiera_value::value::{Map, Value};
use std::path::PathBuf;

/// `hiera-lookup eyaml set`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml set profile::db::password 'hunter2' --level 'Secrets'
    hiera-lookup eyaml set profile::db::password 'hunter2' --level 'Per-node secrets' --node web01.example.com
    hiera-lookup eyaml set api::token \"$TOKEN\" --file data/common.eyaml

The level's path is interpolated for --node (with --facts FILE for more facts than its name).

Exit status: 0 written, 2 error (the file is left as it was).")]
pub struct Args {
    /// The top-level key
    #[arg(value_name = "KEY")]
    pub key: String,

    /// The value (a string), encrypted before it is written
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub value: String,

    /// The data file, instead of a level's (--level then only picks the keys)
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    /// The node the level's path is interpolated for
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,

    /// The node's facts (YAML or JSON), for a path that needs more than its name
    #[arg(long, value_name = "FILE")]
    pub facts: Option<PathBuf>,

    #[command(flatten)]
    pub cipher: CipherArgs,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Encrypts and writes.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let file = match &args.file {
        Some(f) => super::absolute(f)?,
        None => level_file(args)?,
    };
    let text = if file.exists() {
        super::read_data_file(&file)?
    } else {
        String::new()
    };
    let public = args.keys.public_key(Some(&file))?;
    let b64 = encrypt_b64(&public, args.value.as_bytes(), args.cipher.cipher()?)?;
    let token = format_encrypted("PKCS7", &b64, false, "");
    let new = set_key(&text, &args.key, &token).map_err(|why| {
        Failure(format!(
            "{}: {why}; the file was left as it was",
            file.display()
        ))
    })?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure(format!("{}: cannot be created ({e})", dir.display())))?;
    }
    super::replace_file(&file, &new)?;
    output::note(&format!("{}: {} set (encrypted)", file.display(), args.key));
    Ok(ExitCode::Success)
}

/// The data file of `--level` for `--node`.
fn level_file(args: &Args) -> output::Result<PathBuf> {
    let Some(name) = &args.keys.level else {
        return Err(Failure(
            "say where: --level NAME (a hierarchy level) or --file PATH".into(),
        ));
    };
    let Some(entry) = args.keys.level_for(None)? else {
        return Err(Failure(format!("--level {name}: no such eyaml level")));
    };
    let paths = match &entry.locations {
        Locations::Paths(p) => p.clone(),
        _ => {
            return Err(Failure(format!(
                "--level {name}: the level has no plain path (a glob, mapped_paths or uri): give --file PATH"
            )))
        }
    };
    let root = args.keys.root()?;
    let env = hiera_engine::EnvOptions {
        cwd: root,
        hiera_config: args.keys.repo.hiera_config.clone(),
        modulepath: args.keys.repo.modulepath.clone(),
        ..Default::default()
    };
    let mut facts = match &args.facts {
        Some(f) => hiera_facts::load_facts_file(&super::absolute(f)?, &f.display().to_string())?,
        None => Map::default(),
    };
    if let Some(n) = &args.node {
        for fact in ["clientcert", "fqdn"] {
            facts
                .entry(Value::str(fact))
                .or_insert_with(|| Value::str(n.as_str()));
        }
    }
    let scope = hiera_engine::Scope::from_facts(facts, &env.environment_name());
    let mut session = hiera_engine::Session::new(scope, env.layers()?, Default::default());
    let mut candidates = Vec::new();
    for p in &paths {
        let full = hiera_engine::config::path_plus(&entry.datadir, p);
        let v = session.interpolate(&Value::str(full), false).map_err(|e| {
            Failure(format!(
                "--level {name}: its path cannot be interpolated for this node ({e}): give --node NAME, --facts FILE or --file PATH"
            ))
        })?;
        if let Value::String(s) = v {
            candidates.push(PathBuf::from(s));
        }
    }
    match candidates.iter().find(|c| c.exists()) {
        Some(c) => Ok(c.clone()),
        None if candidates.len() == 1 => Ok(candidates.remove(0)),
        None => Err(Failure(format!(
            "--level {name}: the level has {} paths and no file yet: give --file PATH",
            candidates.len()
        ))),
    }
}

/// `text` (a YAML data file) with the top-level `key` set to `token`: its value replaced in
/// place (an inline comment after it kept), or a new line at the end. `Err` says why the file
/// cannot be edited safely.
pub fn set_key(text: &str, key: &str, token: &str) -> Result<String, String> {
    let before = match hiera_formats::yaml::load(text) {
        Ok(Value::Hash(h)) => h,
        Ok(Value::Null) | Ok(Value::Bool(false)) if blank(text) => Map::default(),
        Ok(other) => {
            return Err(format!(
                "not a YAML mapping (it holds a {})",
                other.ruby_class()
            ))
        }
        Err(e) => return Err(format!("not valid YAML ({e})")),
    };
    let bytes = text.as_bytes();
    let new = match hiera_formats::yaml::index::index(bytes) {
        None if before.is_empty() => append(text, key, token),
        None => {
            return Err(
                "uses YAML this command does not rewrite (anchors, tags, flow mappings, several documents): edit it with `eyaml edit`".into(),
            )
        }
        Some(index) => {
            let hits: Vec<usize> = (0..index.len())
                .filter(|&i| index.key(bytes, i) == key)
                .collect();
            match hits.as_slice() {
                [] => append(text, key, token),
                [i] => replace(text, &index.entries[*i], token)?,
                _ => return Err(format!("'{key}' is written twice")),
            }
        }
    };
    // Read back: the key holds the token and nothing else changed.
    let after = match hiera_formats::yaml::load(&new) {
        Ok(Value::Hash(h)) => h,
        _ => return Err("the edit would not read back as a mapping".into()),
    };
    let mut expected = before;
    expected.insert(Value::str(key), Value::str(token));
    if Value::Hash(after) != Value::Hash(expected) {
        return Err("the edit would change more than the key's value".into());
    }
    Ok(new)
}

/// Only comments, blank lines and document markers.
fn blank(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    })
}

fn append(text: &str, key: &str, token: &str) -> String {
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if blank(&out) && !out.contains("---") {
        out.push_str("---\n");
    }
    out.push_str(&format!("{}: {token}\n", yaml_key(key)));
    out
}

/// `key` as a YAML mapping key: plain when YAML reads it back as that string, else
/// double-quoted (JSON's escapes are YAML's).
fn yaml_key(key: &str) -> String {
    let plain_ok = !key.is_empty()
        && !key.starts_with(|c: char| " -?:,[]{}#&*!|>'\"%@`".contains(c))
        && !key.contains(": ")
        && !key.contains(" #")
        && !key.ends_with([':', ' '])
        && !key.contains(['\n', '\t'])
        && matches!(
            hiera_formats::yaml::load(&format!("{key}: x")),
            Ok(Value::Hash(h)) if h.get(&Value::str(key)).is_some() && h.len() == 1
        );
    if plain_ok {
        key.to_string()
    } else {
        hiera_formats::render::to_json(&Value::str(key)).unwrap_or_else(|_| format!("{key:?}"))
    }
}

/// The entry's value replaced by `token`.
fn replace(
    text: &str,
    e: &hiera_formats::yaml::index::Entry,
    token: &str,
) -> Result<String, String> {
    let bytes = text.as_bytes();
    let (start, end) = (e.start as usize, e.end as usize);
    // The `:` after the key (past a closing quote).
    let mut colon = e.key.1 as usize;
    while colon < end && bytes[colon] != b':' {
        colon += 1;
    }
    if colon >= end {
        return Err("its key line could not be read".into());
    }
    // The entry's own lines: trailing blank lines and column-0 comments belong to what follows.
    let mut own_end = end;
    loop {
        let line_start = text[start..own_end.saturating_sub(1)]
            .rfind('\n')
            .map_or(start, |i| start + i + 1);
        if line_start <= colon {
            break;
        }
        let line = &text[line_start..own_end];
        if line.trim().is_empty() || line.starts_with('#') {
            own_end = line_start;
        } else {
            break;
        }
    }
    let value = &text[colon + 1..own_end];
    let newline = if value.ends_with('\n') { "\n" } else { "" };
    let body = value.trim_end_matches('\n');
    let comment = if body.contains('\n') {
        ""
    } else {
        inline_comment(body)
    };
    Ok(format!(
        "{}: {token}{comment}{newline}{}",
        &text[..colon],
        &text[own_end..]
    ))
}

/// The ` # comment` ending a one-line value (outside quotes), with its leading blanks.
fn inline_comment(line: &str) -> &str {
    let b = line.as_bytes();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'\\' if double => i += 1,
            b'#' if !single && !double && i > 0 && matches!(b[i - 1], b' ' | b'\t') => {
                let mut s = i;
                while s > 0 && matches!(b[s - 1], b' ' | b'\t') {
                    s -= 1;
                }
                return &line[s..];
            }
            _ => {}
        }
        i += 1;
    }
    ""
}

#[cfg(test)]
mod tests {
    use super::set_key;

    const T: &str = "ENC[PKCS7,QUJD]";

    #[test]
    fn replaces_in_place_keeping_every_other_byte() {
        let text = "---\n# top\na: 1 # keep me\nb:\n  - x\n  - y\n\n# about c\nc: 'q'\n";
        assert_eq!(
            set_key(text, "a", T).unwrap(),
            "---\n# top\na: ENC[PKCS7,QUJD] # keep me\nb:\n  - x\n  - y\n\n# about c\nc: 'q'\n"
        );
        assert_eq!(
            set_key(text, "b", T).unwrap(),
            "---\n# top\na: 1 # keep me\nb: ENC[PKCS7,QUJD]\n\n# about c\nc: 'q'\n"
        );
        assert_eq!(
            set_key(text, "c", T).unwrap(),
            "---\n# top\na: 1 # keep me\nb:\n  - x\n  - y\n\n# about c\nc: ENC[PKCS7,QUJD]\n"
        );
    }

    #[test]
    fn appends_new_keys_quoting_when_needed() {
        assert_eq!(
            set_key("a: 1", "profile::db::pw", T).unwrap(),
            "a: 1\nprofile::db::pw: ENC[PKCS7,QUJD]\n"
        );
        assert_eq!(set_key("", "k", T).unwrap(), "---\nk: ENC[PKCS7,QUJD]\n");
        assert_eq!(
            set_key("# only\n", "true", T).unwrap(),
            "# only\n---\n\"true\": ENC[PKCS7,QUJD]\n"
        );
    }

    #[test]
    fn refuses_what_it_cannot_edit_safely() {
        assert!(set_key("- a\n- b\n", "k", T)
            .unwrap_err()
            .contains("not a YAML mapping"));
        assert!(set_key("a: &x 1\nb: *x\n", "a", T).is_err());
        assert!(set_key("{a: 1}", "a", T).is_err());
        assert!(set_key("a: [1\n", "a", T)
            .unwrap_err()
            .contains("not valid YAML"));
    }
}
