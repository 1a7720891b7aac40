//! The shapes facts come in, read into [`NodeFacts`]:
//!
//! * a plain facts hash (Facter's output, what `puppet lookup --facts` reads);
//! * a `Puppet::Node::Facts` document, `{name, values, timestamp, expiration}`: what
//!   `puppet facts find` prints (JSON) and what Puppet's fact cache holds (YAML tagged
//!   `--- !ruby/object:Puppet::Node::Facts`);
//! * PuppetDB's answers: `/pdb/query/v4/facts` rows (`[{certname, name, value, environment}]`),
//!   `/pdb/query/v4/inventory` objects (`{certname, facts, trusted, ...}`, alone or in an
//!   array), `/pdb/query/v4/factsets` (`{certname, facts: {data: [{name, value}]}, ...}`).
//!
//! A hash whose top level has a `facts` key is one of PuppetDB's shapes or is rejected (Puppet
//! refuses a fact named `facts`): it is never read as a node without facts.

use super::NodeFacts;
use hiera_engine::error::{Error, Result};
use hiera_formats::DataFormat;
use hiera_value::value::{Map, Value};

/// Parses a facts file's text as Puppet does (`.json` JSON, `.yaml`/`.yml` YAML, anything else
/// JSON then YAML) and reads every node it holds.
pub(crate) fn parse_text(text: &str, display: &str) -> Result<Vec<NodeFacts>> {
    let value = parse_value(text, display)?;
    from_value(value, display)
}

/// The format of a facts file by its extension, as Puppet's `--facts` reads it (case
/// insensitive): `json` is JSON, `yaml` and `yml` YAML. `None` for any other: a `--facts` file
/// is then tried as JSON, then YAML, and a facts directory does not list it.
pub(crate) fn format_of_extension(extension: &str) -> Option<DataFormat> {
    match extension.to_ascii_lowercase().as_str() {
        "json" => Some(DataFormat::Json),
        "yaml" | "yml" => Some(DataFormat::Yaml),
        _ => None,
    }
}

/// The parsed document of a facts file.
pub(crate) fn parse_value(text: &str, display: &str) -> Result<Value> {
    let format = display
        .rsplit_once('.')
        .and_then(|(_, ext)| format_of_extension(ext));
    let parsed = match format {
        Some(DataFormat::Json) => Some(parse_json(text, display)?),
        Some(_) => Some(parse_yaml(text, display)?),
        None => parse_json(text, display)
            .ok()
            .or_else(|| parse_yaml(text, display).ok()),
    };
    match parsed {
        Some(v @ (Value::Hash(_) | Value::Array(_))) => Ok(v),
        _ if text.trim().is_empty() => Err(Error::run(format!(
            "Incorrectly formatted data in {display} given via the --facts flag (only accepts yaml and json files): the file is empty; {FACTS_HINT}"
        ))),
        _ => Err(incorrectly_formatted(display)),
    }
}

fn incorrectly_formatted(display: &str) -> Error {
    Error::run(format!(
        "Incorrectly formatted data in {display} given via the --facts flag (only accepts yaml and json files)"
    ))
}

/// What a facts file holds, for the messages about one that does not.
const FACTS_HINT: &str =
    "it should hold the node's facts as a YAML or JSON hash (`puppet facts show` prints them)";

/// JSON as `--facts` reads it. Puppet's message is the json gem's (`JSON::ParserError` alone
/// for an empty file); ours names the file and what it should hold around it.
fn parse_json(text: &str, display: &str) -> Result<Value> {
    hiera_formats::json::parse_fast_at(text).map_err(|(e, at)| {
        if text.trim().is_empty() {
            Error::run(format!(
                "The facts file {display} is empty: {FACTS_HINT} ({e})"
            ))
        } else {
            // The json gem's words name no place: the line and column where it stopped.
            let place = at
                .map(|at| {
                    let p = hiera_formats::lines::LineIndex::new(text).pos(at);
                    format!(" at line {}, column {}", p.line, p.column)
                })
                .unwrap_or_default();
            Error::run(format!(
                "The facts file {display} is not valid JSON{place}: {e}"
            ))
        }
    })
}

/// YAML as `--facts` reads it: no Ruby objects (Puppet's `safe_load_file`), except that the
/// `Puppet::Node::Facts` tag of a fact cache file is accepted (beyond Puppet).
fn parse_yaml(text: &str, display: &str) -> Result<Value> {
    let doc = hiera_formats::yaml::load_facts_document(text.as_bytes()).map_err(|e| {
        let m = e.puppet_message(display);
        // Psych's syntax messages start with the file; the others ("stack level too deep",
        // "alias expansion too large") name it as JSON's do.
        Error::run(if m.starts_with('(') {
            m
        } else {
            format!("{m} (in {display})")
        })
    })?;
    // An Encoding (Psych builds `!ruby/encoding` even under safe_load) is kept: the node's
    // fact sanitizing makes it its name.
    if let Some(rv) = doc.ruby_values.iter().find(|rv| rv.class != "Encoding") {
        return Err(Error::run(format!(
            "({display}): Tried to load unspecified class: {}",
            rv.class
        )));
    }
    Ok(doc.value)
}

/// Reads every node of a parsed facts document.
pub(crate) fn from_value(value: Value, display: &str) -> Result<Vec<NodeFacts>> {
    match value {
        Value::Hash(h) => Ok(vec![from_hash(h, display)?]),
        Value::Array(items) => from_array(items, display),
        _ => Err(incorrectly_formatted(display)),
    }
}

fn get<'a>(h: &'a Map, k: &str) -> Option<&'a Value> {
    h.get(&Value::str(k))
}

fn string(h: &Map, k: &str) -> Option<String> {
    match get(h, k) {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Keys PuppetDB's inventory and factsets objects may carry besides `facts`.
const PUPPETDB_OBJECT_KEYS: &[&str] = &[
    "certname",
    "facts",
    "trusted",
    "environment",
    "timestamp",
    "producer_timestamp",
    "producer",
    "hash",
    "package_inventory",
];

fn from_hash(h: Map, display: &str) -> Result<NodeFacts> {
    // Puppet::Node::Facts: {name, values[, timestamp, expiration]}.
    if let (Some(Value::String(name)), Some(Value::Hash(values))) =
        (get(&h, "name"), get(&h, "values"))
    {
        let mut values = values.clone();
        // Facts#initialize_from_hash: a `_timestamp` value is the document's timestamp.
        values.shift_remove(&Value::str("_timestamp"));
        return Ok(NodeFacts {
            certname: Some(name.clone()),
            values,
            source: display.to_string(),
        });
    }
    if h.contains_key(&Value::str("facts")) {
        let foreign: Vec<String> = h
            .keys()
            .filter_map(|k| k.as_str())
            .filter(|k| !PUPPETDB_OBJECT_KEYS.contains(k))
            .map(str::to_string)
            .collect();
        if !foreign.is_empty() {
            return Err(Error::run(format!(
                "Attempt to assign to a reserved variable name: 'facts' (in {display}: a top-level `facts` key is read only in PuppetDB's inventory or factsets shape, which has no `{}`)",
                foreign[0]
            )));
        }
        return puppetdb_object(&h, display);
    }
    Ok(NodeFacts {
        certname: None,
        values: h,
        source: display.to_string(),
    })
}

/// An `/inventory` or `/factsets` object.
fn puppetdb_object(h: &Map, display: &str) -> Result<NodeFacts> {
    let certname = string(h, "certname");
    let who = || {
        certname
            .as_deref()
            .map(|c| format!(" for {c}"))
            .unwrap_or_default()
    };
    let mut values = match get(h, "facts") {
        Some(Value::Hash(f)) => match get(f, "data") {
            // factsets: {href, data: [{name, value}]}
            Some(Value::Array(rows)) if f.keys().all(|k| matches!(k.as_str(), Some("data" | "href"))) => {
                name_value_rows(rows, display)?
            }
            None if f.len() == 1 && get(f, "href").is_some() => {
                return Err(Error::run(format!(
                    "{display}: the factset{} has only an href to its facts (query /pdb/query/v4/factsets, which expands them, or /pdb/query/v4/inventory)",
                    who()
                )))
            }
            _ => f.clone(),
        },
        // factsets queried with PQL extract: facts as [{name, value}]
        Some(Value::Array(rows)) => name_value_rows(rows, display)?,
        _ => {
            return Err(Error::run(format!(
                "{display}: `facts`{} is not a hash of facts",
                who()
            )))
        }
    };
    if let Some(t) = get(h, "trusted") {
        match t {
            Value::Hash(_) => {
                values
                    .entry(Value::str("trusted"))
                    .or_insert_with(|| t.clone());
            }
            Value::Null => {}
            _ => {
                return Err(Error::run(format!(
                    "{display}: `trusted`{} is not a hash",
                    who()
                )))
            }
        }
    }
    Ok(NodeFacts {
        certname,
        values,
        source: display.to_string(),
    })
}

/// `[{name, value}]` as a facts hash.
fn name_value_rows(rows: &[Value], display: &str) -> Result<Map> {
    let mut m = Map::default();
    for r in rows {
        match r {
            Value::Hash(r) => match (get(r, "name"), get(r, "value")) {
                (Some(Value::String(n)), Some(v)) => {
                    m.insert(Value::str(n.as_str()), v.clone());
                }
                _ => return Err(row_error(display)),
            },
            _ => return Err(row_error(display)),
        }
    }
    Ok(m)
}

fn row_error(display: &str) -> Error {
    Error::run(format!(
        "{display}: a fact row is not a {{\"name\": ..., \"value\": ...}} hash"
    ))
}

/// An array: PuppetDB's `/facts` rows, or a list of inventory/factsets objects.
fn from_array(items: Vec<Value>, display: &str) -> Result<Vec<NodeFacts>> {
    if items.is_empty() {
        return Err(Error::run(format!(
            "{display} holds an empty list: PuppetDB answered no node (no facts available)"
        )));
    }
    let hashes: Vec<&Map> = items
        .iter()
        .map(|v| match v {
            Value::Hash(h) => Some(h),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or_else(|| incorrectly_formatted(display))?;
    let is_row = |h: &Map| {
        matches!(get(h, "certname"), Some(Value::String(_)))
            && matches!(get(h, "name"), Some(Value::String(_)))
            && h.contains_key(&Value::str("value"))
    };
    if hashes.iter().all(|h| is_row(h)) {
        // /pdb/query/v4/facts rows, grouped by certname in order of appearance.
        let mut nodes: indexmap::IndexMap<String, Map> = indexmap::IndexMap::new();
        for h in hashes {
            let (Some(c), Some(n)) = (string(h, "certname"), string(h, "name")) else {
                unreachable!("checked by is_row")
            };
            let v = get(h, "value").cloned().unwrap_or(Value::Null);
            nodes.entry(c).or_default().insert(Value::str(n), v);
        }
        return Ok(nodes
            .into_iter()
            .map(|(c, values)| NodeFacts {
                certname: Some(c),
                values,
                source: display.to_string(),
            })
            .collect());
    }
    if hashes.iter().all(|h| h.contains_key(&Value::str("facts"))) {
        return hashes
            .into_iter()
            .map(|h| from_hash(h.clone(), display))
            .collect();
    }
    Err(Error::run(format!(
        "Incorrectly formatted data in {display} given via the --facts flag (a list must be PuppetDB's /pdb/query/v4/facts rows or inventory/factsets objects)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(text: &str, name: &str) -> Vec<NodeFacts> {
        parse_text(text, name).unwrap()
    }

    fn fact<'a>(n: &'a NodeFacts, k: &str) -> Option<&'a Value> {
        n.values.get(&Value::str(k))
    }

    /// One rule says which names are facts files and how each is read: `--facts` and the
    /// files a facts directory lists.
    #[test]
    fn facts_file_extensions() {
        for (ext, format) in [
            ("json", Some(DataFormat::Json)),
            ("JSON", Some(DataFormat::Json)),
            ("yaml", Some(DataFormat::Yaml)),
            ("Yml", Some(DataFormat::Yaml)),
            ("eyaml", None),
            ("conf", None),
            ("txt", None),
        ] {
            assert_eq!(format_of_extension(ext), format, "{ext}");
        }
        // YAML that is not JSON: read as YAML by its extension, whatever its case.
        assert!(parse_value("a: 1\n", "n.YML").is_ok());
        assert!(parse_value("a: 1\n", "n.JSON").is_err());
        // Any other name: JSON, then YAML.
        assert!(parse_value("a: 1\n", "n.facts").is_ok());
        // A facts directory lists the names `--facts` reads by their extension.
        let dir = std::env::temp_dir().join(format!("hl-facts-ext-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "a.yaml", "b.YML", "c.json", "d.txt", "e.eyaml", ".json", "f",
        ] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        let mut listed: Vec<String> = crate::facts_files_in(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        listed.sort();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(listed, ["a.yaml", "b.YML", "c.json"]);
    }

    #[test]
    fn plain_hash() {
        let n = nodes("{\"os\": {\"family\": \"RedHat\"}}", "a.json");
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].certname, None);
        assert_eq!(
            fact(&n[0], "os").and_then(|o| o.get("family")),
            Some(&Value::str("RedHat"))
        );
    }

    #[test]
    fn ruby_tagged_cache_document() {
        let text = "--- !ruby/object:Puppet::Node::Facts\nname: web01.example.com\nvalues:\n  os:\n    family: RedHat\n  clientcert: web01.example.com\ntimestamp: \"2023-11-14T22:13:20.000000000Z\"\nexpiration: \"2023-11-14T22:43:20.000000000Z\"\n";
        let n = nodes(text, "web01.example.com.yaml");
        assert_eq!(n[0].certname.as_deref(), Some("web01.example.com"));
        assert_eq!(n[0].values.len(), 2);
        // Other Ruby classes stay refused.
        let e = parse_text("--- !ruby/object:Foo\na: 1\n", "x.yaml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "(x.yaml): Tried to load unspecified class: Foo"
        );
    }

    #[test]
    fn puppet_facts_find_json_and_underscore_timestamp() {
        let n = nodes(
            r#"{"name":"w","values":{"a":1,"_timestamp":"x"},"timestamp":"t","expiration":"e"}"#,
            "w.json",
        );
        assert_eq!(n[0].certname.as_deref(), Some("w"));
        assert_eq!(n[0].values.len(), 1);
    }

    #[test]
    fn puppetdb_fact_rows_group_by_certname() {
        let n = nodes(
            r#"[{"certname":"a","environment":"production","name":"x","value":1},
                {"certname":"b","environment":"production","name":"x","value":2},
                {"certname":"a","environment":"production","name":"y","value":{"z":true}}]"#,
            "rows.json",
        );
        assert_eq!(n.len(), 2);
        assert_eq!(n[0].certname.as_deref(), Some("a"));
        assert_eq!(n[0].values.len(), 2);
        assert_eq!(fact(&n[1], "x"), Some(&Value::Int(2)));
    }

    #[test]
    fn inventory_objects_alone_or_listed_carry_trusted() {
        let one = r#"{"certname":"w","timestamp":"t","environment":"production","facts":{"os":{"family":"RedHat"}},"trusted":{"authenticated":"remote","certname":"w","extensions":{"pp_role":"web"}}}"#;
        let n = nodes(one, "inv.json");
        assert_eq!(n[0].certname.as_deref(), Some("w"));
        let t = fact(&n[0], "trusted").unwrap();
        assert_eq!(
            t.get("extensions").and_then(|e| e.get("pp_role")),
            Some(&Value::str("web"))
        );
        let n = nodes(&format!("[{one},{one}]"), "inv.json");
        assert_eq!(n.len(), 2);
    }

    #[test]
    fn factsets_expanded_or_refused() {
        let n = nodes(
            r#"[{"certname":"w","environment":"production","facts":{"href":"/pdb/query/v4/factsets/w/facts","data":[{"name":"a","value":1}]}}]"#,
            "fs.json",
        );
        assert_eq!(fact(&n[0], "a"), Some(&Value::Int(1)));
        let e = parse_text(
            r#"{"certname":"w","facts":{"href":"/pdb/query/v4/factsets/w/facts"}}"#,
            "fs.json",
        )
        .unwrap_err();
        assert!(e.to_string().contains("only an href"), "{e}");
    }

    #[test]
    fn top_level_facts_key_is_read_or_rejected() {
        let n = nodes(r#"{"facts":{"a":1}}"#, "f.json");
        assert_eq!(fact(&n[0], "a"), Some(&Value::Int(1)));
        let e = parse_text(r#"{"facts":{"a":1},"os":"x"}"#, "f.json").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Attempt to assign to a reserved variable name: 'facts'"),
            "{e}"
        );
        assert!(parse_text(r#"{"facts":3}"#, "f.json").is_err());
    }

    #[test]
    fn empty_and_odd_lists_are_errors() {
        assert!(parse_text("[]", "e.json").is_err());
        assert!(parse_text("[1,2]", "e.json").is_err());
        assert!(parse_text(r#"[{"a":1}]"#, "e.json").is_err());
        assert!(parse_text("3", "e.json").is_err());
    }
}
