//! Puppet's YAML fact cache: `puppet lookup --node NAME` (run mode `server`, facts terminus
//! `yaml`) reads `$vardir/yaml/facts/NAME.yaml`, a `--- !ruby/object:Puppet::Node::Facts`
//! document written by the server (or by `puppet facts upload`'s terminus).

use super::NodeFacts;
use hiera_engine::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Puppet's default `vardir` (puppet-agent packages): `/opt/puppetlabs/puppet/cache` for root,
/// `~/.puppetlabs/opt/puppet/cache` for anyone else. A Puppet Server's puppet.conf sets
/// `[server] vardir = /opt/puppetlabs/server/data/puppetserver` (see [`super::conf`]).
pub(crate) fn default_vardir() -> PathBuf {
    if is_root() {
        PathBuf::from("/opt/puppetlabs/puppet/cache")
    } else {
        home().join(".puppetlabs/opt/puppet/cache")
    }
}

/// `Puppet.features.root?`: the effective user is root.
pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `~` as Ruby's `File.expand_path` finds it.
pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Puppet's `Indirector::BadNameRegexp`: names that could leave the cache directory.
fn bad_name(name: &str) -> bool {
    let b = name.as_bytes();
    name.starts_with("..")
        || name.contains(['/', '\\', '\0'])
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// `$vardir/yaml/facts/NAME.yaml`.
pub(crate) fn path(vardir: &Path, node: &str) -> PathBuf {
    vardir
        .join("yaml")
        .join("facts")
        .join(format!("{node}.yaml"))
}

/// The node's cached facts, `None` when the cache has no file for it (Puppet then has no facts
/// from its terminus). A file that exists but cannot be read or parsed is an error, in
/// Puppet's words.
pub(crate) fn find(vardir: &Path, node: &str) -> Result<Option<NodeFacts>> {
    if bad_name(node) {
        return Err(Error::run(format!(
            "invalid key (the node name {node:?} cannot name a file in the fact cache)"
        )));
    }
    let file = path(vardir, node);
    if !file.exists() {
        return Ok(None);
    }
    let display = file.display().to_string();
    let fail = |detail: String| {
        Error::run(format!(
            "Could not parse YAML data for facts {node}: {detail}"
        ))
    };
    let text = hiera_value::limits::read_text(&file).map_err(|e| {
        hiera_engine::error::unreadable(
            &format!("The cached facts of {node},"),
            &display,
            &e,
            "run as a user who may read Puppet's vardir, or give the node's facts with --facts",
        )
    })?;
    // Puppet permits Puppet::Node::Facts and Symbol in the cache.
    let doc = hiera_formats::yaml::load_facts_document(text.as_bytes())
        .map_err(|e| fail(e.puppet_message(&display)))?;
    let nodes = match doc.value {
        hiera_value::value::Value::Hash(_) => super::shapes::from_value(doc.value, &display)?,
        // An empty file: Puppet finds `false`, not facts.
        _ => {
            return Err(fail(format!(
                "({display}): not a Puppet::Node::Facts document"
            )))
        }
    };
    let mut node_facts = nodes.into_iter().next().expect("a hash is one node");
    if node_facts.certname.is_none() {
        node_facts.certname = Some(node.to_string());
    }
    Ok(Some(node_facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_never_leave_the_cache() {
        for n in ["../x", "a/b", "a\\b", "..", "c:x", "a\0"] {
            assert!(bad_name(n), "{n}");
        }
        for n in ["web01.example.com", "a..b", "x..", "."] {
            assert!(!bad_name(n), "{n}");
        }
    }

    #[test]
    fn finds_parses_and_reports() {
        let dir = std::env::temp_dir().join(format!("hl-fact-cache-{}", std::process::id()));
        let facts = dir.join("yaml/facts");
        std::fs::create_dir_all(&facts).unwrap();
        std::fs::write(
            facts.join("w.yaml"),
            "--- !ruby/object:Puppet::Node::Facts\nname: w\nvalues:\n  a: :sym\n  b: 1\n",
        )
        .unwrap();
        std::fs::write(
            facts.join("t.yaml"),
            "--- !ruby/object:Puppet::Node::Facts\nname: t\nvalues:\n  _timestamp: 2019-01-01 00:00:00.000000000 +00:00\n",
        )
        .unwrap();
        let w = find(&dir, "w").unwrap().unwrap();
        assert_eq!(w.certname.as_deref(), Some("w"));
        assert_eq!(w.values.len(), 2);
        assert!(find(&dir, "nope").unwrap().is_none());
        // Puppet 8.10: Could not parse YAML data for facts t: (<file>): Tried to load
        // unspecified class: Time
        let e = find(&dir, "t").unwrap_err().to_string();
        assert!(
            e.starts_with("Could not parse YAML data for facts t: (")
                && e.ends_with("t.yaml): Tried to load unspecified class: Time"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
