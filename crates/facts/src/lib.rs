//! Where a node's facts come from, as `puppet lookup --node` finds them: facts files in every
//! shape Puppet and PuppetDB write (`shapes`), Puppet's YAML fact cache (`cache`), PuppetDB
//! ([`puppetdb`]), and the puppet.conf settings that say where those are ([`conf`]).
//!
//! Every source gives `NodeFacts`: the facts hash Puppet would make top-scope variables of
//! (the `trusted` fact included when the source has one), the node's certname when the source
//! names it, and where the facts came from (for batch output and error messages).
#![warn(missing_docs)]

pub(crate) mod cache;
pub mod conf;
pub mod context;
pub mod enc;
pub mod puppetdb;
pub(crate) mod shapes;

use hiera_engine::error::{Error, Result};
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};

/// What the user said about where facts come from (the CLI maps its flags to this).
#[derive(Debug, Clone, Default)]
pub struct FactsRequest {
    /// `--node NAME`.
    pub node: Option<String>,
    /// `--facts FILE...` (absolute path, as the user wrote it); `-` is standard input.
    pub files: Vec<(PathBuf, String)>,
    /// `--facts-dir DIR` (absolute path, as the user wrote it).
    pub dir: Option<(PathBuf, String)>,
    /// Puppet's vardir: the fact cache is `$vardir/yaml/facts`.
    pub vardir: PathBuf,
    /// `--no-facts`: a node known only by its name, as when no source has facts.
    pub no_facts: bool,
    /// `--trusted=FILE`: trusted data for every node.
    pub trusted: Option<Map>,
}

/// The facts of the node a single lookup is for, and warnings to print.
///
/// Puppet's order: the facts terminus first (the fact cache `$vardir/yaml/facts/NODE.yaml`, for
/// `--node`), then the `--facts` file's facts over them (`Facts#add_extra_values`). `--node`
/// with no facts from anywhere is Puppet's "No facts available for target node" error.
///
/// With PuppetDB (`--puppetdb`, or Puppet's routes.yaml sending facts there), PuppetDB is the
/// facts terminus instead of the cache.
pub fn single(
    req: &FactsRequest,
    puppetdb: Option<&puppetdb::Client>,
) -> Result<(Map, Vec<String>)> {
    let mut warnings = Vec::new();
    let node = req.node.as_deref();
    let mut found: Option<NodeFacts> = match (node, puppetdb) {
        (Some(n), Some(db)) if !req.no_facts => match db.node(n)? {
            Some(f) => Some(f),
            None if req.files.is_empty() => {
                return Err(Error::run(format!(
                    "No facts available for target node: {n} (PuppetDB at {} has no active node of that name)",
                    db.url()
                )))
            }
            None => None,
        },
        (Some(n), None) if !req.no_facts => cache::find(&req.vardir, n)?,
        _ => None,
    };
    if let Some((path, display)) = req.files.first() {
        let (nodes, w) = read_file(path, display)?;
        warnings.extend(w);
        let given = pick(nodes, node, display)?;
        match &mut found {
            Some(cached) => merge_over(&mut cached.values, given.values),
            None => found = Some(given),
        }
    }
    let mut values = match found {
        Some(f) => {
            if f.values.is_empty() {
                return Err(Error::run(format!(
                    "No facts available for target node: {}",
                    node.unwrap_or("localhost")
                )));
            }
            f.values
        }
        None => match node {
            Some(n) if req.no_facts => {
                let mut m = Map::default();
                m.insert(Value::str("clientcert"), Value::str(n));
                m
            }
            Some(n) => {
                return Err(Error::run(format!(
                    "No facts available for target node: {n} (no --facts file, and the fact cache has no {}; --no-facts answers for a node known only by its name)",
                    cache::path(&req.vardir, n).display()
                )))
            }
            // Puppet would ask Facter about this host; hiera-lookup has only what it is given.
            None => Map::default(),
        },
    };
    if let Some(t) = &req.trusted {
        apply_trusted(&mut values, t, node);
    }
    Ok((values, warnings))
}

/// One node of a batch: its name, where its facts came from, and its facts or the error
/// that made them unreadable.
#[derive(Debug, Clone)]
pub struct BatchNode {
    /// The node's name (certname, `clientcert` fact or file name).
    pub name: String,
    /// `facts` (a file) or `puppetdb` (a certname): the JSON Lines field naming the source.
    pub kind: &'static str,
    /// The facts file or the PuppetDB certname.
    pub source: String,
    /// The facts, or why they could not be read.
    pub facts: Result<Map>,
}

/// Every node of a batch, from the `--facts` files and the `--facts-dir` directory, in that
/// order (a directory's files sorted by name), and warnings to print (duplicate node names,
/// partial host names). A file that cannot be read is that node's error; a directory that
/// cannot be read, or has no facts file, is an error. Every file is read now: a batch that
/// answers as it reads takes [`batch_files`] and [`read_batch_file`] instead.
pub fn batch(req: &FactsRequest) -> Result<(Vec<BatchNode>, Vec<String>)> {
    let mut nodes = Vec::new();
    let mut warnings = Vec::new();
    for (path, display) in &batch_files(req)? {
        let (found, w) = read_batch_file(path, display, req.trusted.as_ref());
        warnings.extend(w);
        nodes.extend(found);
    }
    warnings.extend(duplicate_warnings(
        nodes.iter().map(|n| (n.name.as_str(), n.source.as_str())),
    ));
    Ok((nodes, warnings))
}

/// The facts files of a batch, nothing read yet: the `--facts` files, then the `--facts-dir`
/// directory's (sorted by name), each with its path as the user would name it. A directory
/// that cannot be read, or has no facts file, is an error.
pub fn batch_files(req: &FactsRequest) -> Result<Vec<(PathBuf, String)>> {
    let mut files = req.files.clone();
    if let Some((dir, display)) = &req.dir {
        let mut found = facts_files_in(dir)?;
        if found.is_empty() {
            return Err(Error::run(format!(
                "No facts files (*.yaml, *.yml, *.json) in the facts directory {display}"
            )));
        }
        found.sort();
        files.extend(found.into_iter().map(|p| {
            let shown = Path::new(display)
                .join(p.file_name().unwrap_or_default())
                .display()
                .to_string();
            (p, shown)
        }));
    }
    Ok(files)
}

/// The nodes of one facts file of a batch ([`batch_files`]), `trusted` (`--trusted`) applied,
/// and the warnings reading it gave. A file that cannot be read is one node's error, named
/// after the file.
pub fn read_batch_file(
    path: &Path,
    display: &str,
    trusted: Option<&Map>,
) -> (Vec<BatchNode>, Vec<String>) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match read_file(path, display) {
        Ok((list, warnings)) => {
            let nodes = list
                .into_iter()
                .map(|nf| {
                    let name = nf.name(&stem);
                    let mut values = nf.values;
                    let facts = if values.is_empty() {
                        Err(Error::run(format!(
                            "No facts available for target node: {name}"
                        )))
                    } else {
                        if let Some(t) = trusted {
                            apply_trusted(&mut values, t, Some(&name));
                        }
                        Ok(values)
                    };
                    BatchNode {
                        name,
                        kind: "facts",
                        source: display.to_string(),
                        facts,
                    }
                })
                .collect();
            (nodes, warnings)
        }
        Err(e) => (
            vec![BatchNode {
                name: stem,
                kind: "facts",
                source: display.to_string(),
                facts: Err(e),
            }],
            Vec::new(),
        ),
    }
}

/// How many nodes' facts one PuppetDB request fetches in batch mode.
pub const PUPPETDB_CHUNK: usize = 100;

/// Batch mode over PuppetDB: every active node, or those of a PQL query, fetched
/// `PUPPETDB_CHUNK` at a time as the iterator is consumed (the fleet is never all in memory).
/// A chunk PuppetDB fails to give is an error for each of its nodes.
pub fn puppetdb_batch<'a>(
    db: &'a puppetdb::Client,
    pql: Option<&str>,
    trusted: Option<Map>,
) -> Result<impl Iterator<Item = Vec<BatchNode>> + 'a> {
    let chunks = puppetdb_chunks(db, pql)?;
    Ok(chunks
        .into_iter()
        .map(move |chunk| read_puppetdb_chunk(db, &chunk, trusted.as_ref())))
}

/// The certnames of a PuppetDB batch (every active node, or those of a PQL query), in
/// chunks of `PUPPETDB_CHUNK`, to fetch with [`read_puppetdb_chunk`]. No node is an error.
pub fn puppetdb_chunks(db: &puppetdb::Client, pql: Option<&str>) -> Result<Vec<Vec<String>>> {
    let certnames = db.certnames(pql)?;
    if certnames.is_empty() {
        return Err(Error::run(format!(
            "PuppetDB at {} has no {}",
            db.url(),
            if pql.is_some() {
                "node matching the --nodes-query"
            } else {
                "active node"
            }
        )));
    }
    Ok(certnames
        .chunks(PUPPETDB_CHUNK)
        .map(|c| c.to_vec())
        .collect())
}

/// The nodes of one chunk of [`puppetdb_chunks`], fetched in one request, `trusted` applied.
/// A chunk PuppetDB fails to give is an error for each of its nodes.
pub fn read_puppetdb_chunk(
    db: &puppetdb::Client,
    chunk: &[String],
    trusted: Option<&Map>,
) -> Vec<BatchNode> {
    let mut fetched = db.nodes(chunk);
    chunk
        .iter()
        .enumerate()
        .map(|(i, c)| {
            // Each node's facts moved out of the answer (copied only for a certname the
            // chunk names again).
            let again = chunk[i + 1..].contains(c);
            let facts = match &mut fetched {
                Err(e) => Err(e.clone()),
                Ok(list) => match list.iter_mut().find(|n| n.certname.as_deref() == Some(c)) {
                    Some(n) if n.values.is_empty() => Err(Error::run(format!(
                        "No facts available for target node: {c}"
                    ))),
                    Some(n) => {
                        let mut values = if again {
                            n.values.clone()
                        } else {
                            std::mem::take(&mut n.values)
                        };
                        if let Some(t) = trusted {
                            apply_trusted(&mut values, t, Some(c));
                        }
                        Ok(values)
                    }
                    None => Err(Error::run(format!(
                        "No facts available for target node: {c} (PuppetDB at {} no longer has it)",
                        db.url()
                    ))),
                },
            };
            BatchNode {
                name: c.clone(),
                kind: "puppetdb",
                source: c.clone(),
                facts,
            }
        })
        .collect()
}

pub use hiera_engine::batch::duplicate_warnings;

/// One node's facts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeFacts {
    /// The certname the source gives (PuppetDB's `certname`, the `name` of a
    /// `Puppet::Node::Facts` document); `None` for a plain facts hash.
    pub certname: Option<String>,
    /// The facts, as top-scope variables (a `trusted` fact among them when the source has one).
    pub values: Map,
    /// Where they came from: a file as the user named it, or `puppetdb:<certname>`.
    pub source: String,
}

impl NodeFacts {
    /// The node's name: the source's certname, else the `clientcert` fact, else `fallback`
    /// (a file's stem).
    pub(crate) fn name(&self, fallback: &str) -> String {
        if let Some(c) = &self.certname {
            return c.clone();
        }
        match self.values.get(&Value::str("clientcert")) {
            Some(Value::String(c)) => c.clone(),
            _ => fallback.to_string(),
        }
    }
}

/// The facts Puppet requires a `--facts` file to override together.
pub const TRUSTED_INFORMATION_FACTS: [&str; 4] = ["hostname", "domain", "fqdn", "clientcert"];

/// Puppet's rule for `--facts` files: setting some of hostname, domain, fqdn and clientcert
/// but not all is an error, because Puppet merges the file over the host's own facts and would
/// mix two machines' names. The missing names, when the rule is broken.
fn trusted_information_missing(values: &Map) -> Option<Vec<&'static str>> {
    let has = |k: &str| values.contains_key(&Value::str(k));
    let some = TRUSTED_INFORMATION_FACTS.iter().any(|k| has(k));
    let all = TRUSTED_INFORMATION_FACTS.iter().all(|k| has(k));
    (some && !all).then(|| {
        TRUSTED_INFORMATION_FACTS
            .iter()
            .copied()
            .filter(|k| !has(k))
            .collect()
    })
}

/// The rule of [`trusted_information_missing`] as the command line applies it: hiera-lookup
/// does not merge the host's facts, so it answers from the file and returns the warning
/// Puppet's error would have been.
pub(crate) fn trusted_information_warning(values: &Map, display: &str) -> Option<String> {
    trusted_information_missing(values).map(|missing| {
        format!(
            "{display} sets some of the {} facts but not {}: puppet lookup refuses such a --facts file (it would merge the rest from the host's own facts); hiera-lookup uses the file as it is",
            TRUSTED_INFORMATION_FACTS.join(","),
            missing.join(",")
        )
    })
}

/// Reads a `--facts` file as Puppet does: `.json` as JSON, `.yaml`/`.yml` as YAML, anything
/// else JSON then YAML, with Puppet's rule that hostname, domain, fqdn and clientcert are
/// overridden together (broken, it is Puppet's error here; the command line warns instead).
/// Beyond Puppet, every shape of `shapes` is read (the `puppet facts` wrapper, the fact
/// cache's Ruby-tagged YAML, PuppetDB's answers for one node).
pub fn load_facts_file(path: &Path, display: &str) -> Result<Map> {
    let text = hiera_value::limits::read_text(path)
        .map_err(|e| hiera_engine::error::unreadable("The facts file", display, &e, FACTS_FIX))?;
    let facts = pick(shapes::parse_text(&text, display)?, None, display)?.values;
    if trusted_information_missing(&facts).is_some() {
        return Err(Error::run(format!(
            "When overriding any of the {} facts with {display} given via the --facts flag, they must all be overridden.",
            TRUSTED_INFORMATION_FACTS.join(",")
        )));
    }
    Ok(facts)
}

/// One node's facts from the text of a facts document, in any shape a `--facts` file may have
/// (a Facter hash, `puppet facts` output, a fact cache file, PuppetDB's answer for one node):
/// the node's name (the document's certname, else its `clientcert` fact, else `fallback`), its
/// facts, and the warning a `--facts` file setting only some of the host-name facts gives.
/// `display` names the document in messages; its extension picks the parser, as a file's
/// does (anything else: JSON, then YAML). For facts that arrive without a file (`serve`'s
/// `POST /api/v1/lookup`).
pub fn facts_from_text(
    text: &str,
    display: &str,
    fallback: &str,
) -> Result<(String, Map, Option<String>)> {
    let facts = pick(shapes::parse_text(text, display)?, None, display)?;
    let name = facts.name(fallback);
    if facts.values.is_empty() {
        return Err(Error::run(format!(
            "No facts available for target node: {name}"
        )));
    }
    let warning = trusted_information_warning(&facts.values, display);
    Ok((name, facts.values, warning))
}

/// What to do about a `--facts` file that cannot be read.
pub(crate) const FACTS_FIX: &str = "check the path given to --facts";

/// A facts file (`-` is standard input): every node it holds, and the warnings it gave.
pub(crate) fn read_file(path: &Path, display: &str) -> Result<(Vec<NodeFacts>, Vec<String>)> {
    let text = if display == "-" {
        read_stdin()?
    } else {
        hiera_value::limits::read_text(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::IsADirectory {
                // A directory of facts files is a fleet.
                let fix = format!("to answer for every node of it, give --facts-dir {display}");
                return hiera_engine::error::unreadable("The facts file", display, &e, &fix);
            }
            hiera_engine::error::unreadable("The facts file", display, &e, FACTS_FIX)
        })?
    };
    let nodes = shapes::parse_text(&text, display)?;
    let warnings = nodes
        .iter()
        .filter_map(|n| trusted_information_warning(&n.values, display))
        .collect();
    Ok((nodes, warnings))
}

/// Standard input, bounded as files are.
fn read_stdin() -> Result<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(hiera_value::limits::MAX_FILE_SIZE + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::run(format!("Could not read facts from standard input: {e}")))?;
    if buf.len() as u64 > hiera_value::limits::MAX_FILE_SIZE {
        return Err(Error::run(format!(
            "Could not read facts from standard input: more than {} bytes",
            hiera_value::limits::MAX_FILE_SIZE
        )));
    }
    String::from_utf8(buf)
        .map_err(|_| Error::run("Could not read facts from standard input: not UTF-8"))
}

/// Picks the node a single lookup is for among a source's nodes: the one whose certname is
/// `node`, the only one, or an error naming the choice.
pub(crate) fn pick(nodes: Vec<NodeFacts>, node: Option<&str>, display: &str) -> Result<NodeFacts> {
    if nodes.len() == 1 {
        return Ok(nodes.into_iter().next().expect("one node"));
    }
    let names: Vec<String> = nodes.iter().map(|n| n.name(display)).collect();
    if let Some(want) = node {
        if let Some(i) = names.iter().position(|n| n == want) {
            return Ok(nodes.into_iter().nth(i).expect("found"));
        }
        return Err(Error::run(format!(
            "No facts available for target node: {want} ({display} holds the facts of {})",
            list(&names)
        )));
    }
    Err(Error::run(format!(
        "{display} holds the facts of {} nodes ({}): pick one with --node, or give more than one source for batch mode",
        names.len(),
        list(&names)
    )))
}

fn list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", … {} more", names.len() - SHOWN));
    }
    s
}

/// Puppet's `Facts#add_extra_values`: the `--facts` file's facts replace the cached ones of
/// the same name (top-level keys only).
pub(crate) fn merge_over(base: &mut Map, extra: Map) {
    for (k, v) in extra {
        base.insert(k, v);
    }
}

/// `--trusted=FILE` (beyond Puppet): a hash of trusted data that becomes the node's
/// `$trusted`. Keys it leaves out keep the values Puppet derives from the node's certname
/// (`authenticated`, `certname`, `hostname`, `domain`, `extensions`, `external`).
pub fn read_trusted_file(path: &Path, display: &str) -> Result<Map> {
    let text = hiera_value::limits::read_text(path).map_err(|e| {
        hiera_engine::error::unreadable(
            "The trusted data file",
            display,
            &e,
            "check the path given to --trusted=FILE",
        )
    })?;
    match shapes::parse_value(&text, display)? {
        Value::Hash(h) => {
            // The `trusted` key of a facts file, or the hash itself.
            if let (1, Some(Value::Hash(t))) = (h.len(), h.get(&Value::str("trusted"))) {
                return Ok(t.clone());
            }
            Ok(h)
        }
        _ => Err(Error::run(format!(
            "Incorrectly formatted data in {display} given via the --trusted flag (expected a hash of trusted data, e.g. extensions: {{pp_role: web}})"
        ))),
    }
}

/// Sets the node's `trusted` fact from `--trusted` data, over what Puppet would derive.
pub(crate) fn apply_trusted(values: &mut Map, trusted: &Map, node: Option<&str>) {
    let mut base = match values.get(&Value::str("trusted")) {
        Some(Value::Hash(t)) => t.clone(),
        _ => {
            let mut probe = values.clone();
            if let (Some(n), false) = (node, probe.contains_key(&Value::str("clientcert"))) {
                probe.insert(Value::str("clientcert"), Value::str(n));
            }
            match hiera_engine::scope::trusted_from_facts(&probe) {
                Value::Hash(t) => t,
                _ => Map::default(),
            }
        }
    };
    for (k, v) in trusted {
        base.insert(k.clone(), v.clone());
    }
    // A complete trusted hash is used as is by the scope.
    for (k, default) in [
        ("authenticated", Value::str("local")),
        ("extensions", Value::Hash(Map::default())),
    ] {
        if !base.contains_key(&Value::str(k)) {
            base.insert(Value::str(k), default);
        }
    }
    if !base.contains_key(&Value::str("certname")) {
        base.insert(
            Value::str("certname"),
            node.map(Value::str).unwrap_or(Value::Null),
        );
    }
    values.insert(Value::str("trusted"), Value::Hash(base));
}

/// The facts files (`*.yaml`, `*.yml`, `*.json`, in any case, as `--facts` reads them) of a
/// directory, unsorted; batch mode, diff and lint's fleet all list a `--facts-dir` this way.
pub(crate) fn facts_files_in(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Error::run(format!(
            "Could not read facts directory {}: {}",
            dir.display(),
            hiera_engine::error::io_reason(&e)
        ))
    })?;
    Ok(rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .and_then(shapes::format_of_extension)
                .is_some()
        })
        .collect())
}

/// Sets the fact at the dotted `name` (`role`, `os.family`) to `value` over `facts`:
/// `--fact`. Hashes on the way are created, or replaced when they are not hashes.
pub fn set_fact(facts: &mut Map, name: &str, value: Value) {
    let mut parts = name.split('.').peekable();
    let mut cur = facts;
    while let Some(part) = parts.next() {
        let key = Value::str(part);
        if parts.peek().is_none() {
            cur.insert(key, value);
            return;
        }
        let slot = cur
            .entry(key)
            .or_insert_with(|| Value::Hash(Map::default()));
        if !matches!(slot, Value::Hash(_)) {
            *slot = Value::Hash(Map::default());
        }
        let Value::Hash(next) = slot else {
            unreachable!("made a hash above")
        };
        cur = next;
    }
}

#[cfg(test)]
mod set_fact_tests {
    use super::*;

    #[test]
    fn dotted_names_nest() {
        let mut facts: Map = Default::default();
        facts.insert(Value::str("os"), Value::str("linux"));
        set_fact(&mut facts, "role", Value::str("db"));
        set_fact(&mut facts, "os.family", Value::str("RedHat"));
        set_fact(&mut facts, "os.release.major", Value::Int(9));
        let os = match facts.get(&Value::str("os")) {
            Some(Value::Hash(h)) => h.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(os.get(&Value::str("family")), Some(&Value::str("RedHat")));
        assert!(matches!(
            os.get(&Value::str("release")),
            Some(Value::Hash(_))
        ));
        assert_eq!(facts.get(&Value::str("role")), Some(&Value::str("db")));
    }
}
