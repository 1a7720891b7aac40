//! Rule group 5: `lookup_options`. Options for keys that no data file defines, `^patterns`
//! that match no key (or do not compile), merges Puppet rejects, `convert_to` types that do
//! not parse, options Puppet ignores, and module options outside the module's namespace.

use super::repo::Repo;
use super::Sink;
use hiera_value::value::{Map, Value};
use std::collections::HashSet;

pub(crate) fn check(repo: &Repo, _refs: &HashSet<String>, sink: &mut Sink) {
    for f in &repo.files {
        let Some(lo) = f.data.get(&Value::str("lookup_options")) else {
            continue;
        };
        let lo_pos = f.key_region("lookup_options");
        let Value::Hash(lo) = lo else {
            if !lo.is_null() {
                sink.add(
                    &f.path,
                    lo_pos,
                    "lookup-options-not-a-hash",
                    format!(
                        "lookup_options is a {}: Puppet fails every lookup with 'value of lookup_options must be a hash'",
                        lo.ruby_class()
                    ),
                );
            }
            continue;
        };
        let module = f.module(repo);
        for (name, opts) in lo {
            let Some(name) = name.as_str() else { continue };
            let pos = f
                .path_region(&[Value::str("lookup_options"), Value::str(name)])
                .unwrap_or(lo_pos);
            if let Some(m) = module {
                let body = name.strip_prefix('^').unwrap_or(name);
                if !body.starts_with(&format!("{m}::")) {
                    sink.add(
                        &f.path,
                        pos,
                        "module-key-outside-namespace",
                        format!(
                            "lookup_options of module '{m}' names '{name}': all lookup_options keys must start with module name '{m}', or Puppet fails every lookup in the module"
                        ),
                    );
                }
            }
            if let Some(pattern) = name.strip_prefix('^').map(|_| name) {
                match hiera_engine::engine::KeyPattern::new(pattern) {
                    Err(e) => sink.add(
                        &f.path,
                        pos,
                        "lookup-options-invalid-pattern",
                        format!("lookup_options pattern '{name}' is not a valid regexp: {e}"),
                    ),
                    Ok(re) => {
                        if !repo.defined_unknown && !repo.defined.iter().any(|k| re.is_match(k)) {
                            sink.add(
                                &f.path,
                                pos,
                                "lookup-options-pattern-unused",
                                format!("lookup_options pattern '{name}' matches no key defined in the repo's data"),
                            );
                        }
                    }
                }
            } else if module.is_none() && !repo.defined_unknown && !repo.defined.contains(name) {
                // A module's options are for its users' data, which may not exist yet.
                sink.add(
                    &f.path,
                    pos,
                    "lookup-options-undefined-key",
                    format!("lookup_options for '{name}', which no data file of the repo defines"),
                );
            }
            match opts {
                Value::Hash(h) => check_options(f, name, h, pos, sink),
                Value::Null => {}
                other => sink.add(
                    &f.path,
                    pos,
                    "lookup-options-not-a-hash",
                    format!(
                        "the lookup_options of '{name}' are a {}, not a hash of options (merge, convert_to)",
                        other.ruby_class()
                    ),
                ),
            }
        }
    }
}

fn check_options(
    f: &super::repo::DataFile,
    name: &str,
    opts: &Map,
    pos: super::Region,
    sink: &mut Sink,
) {
    for (k, v) in opts {
        let k = k.as_str().unwrap_or("");
        let opos = f
            .path_region(&[
                Value::str("lookup_options"),
                Value::str(name),
                Value::str(k),
            ])
            .unwrap_or(pos);
        match k {
            "merge" => {
                if let Err(e) = hiera_engine::merge::MergeStrategy::from_value(v) {
                    sink.add(
                        &f.path,
                        opos,
                        "lookup-options-merge",
                        format!("the merge of '{name}' is invalid: {e}"),
                    );
                }
            }
            "convert_to" => {
                let ty = match v {
                    Value::String(s) => Some(s.as_str()),
                    Value::Array(a) => a.first().and_then(Value::as_str),
                    _ => None,
                };
                match ty {
                    None => sink.add(
                        &f.path,
                        opos,
                        "lookup-options-convert-to",
                        format!("the convert_to of '{name}' must be a type name, or an array of a type name and arguments"),
                    ),
                    Some(t) => {
                        if let Err(e) = hiera_types::parse(t) {
                            sink.add(
                                &f.path,
                                opos,
                                "lookup-options-convert-to",
                                format!("the convert_to type of '{name}' does not parse: {}", e.message()),
                            );
                        }
                    }
                }
            }
            other => sink.add(
                &f.path,
                opos,
                "lookup-options-unknown-option",
                format!("lookup_options of '{name}' has '{other}', which Puppet ignores (it knows merge and convert_to)"),
            ),
        }
    }
}
