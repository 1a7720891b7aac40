//! An External Node Classifier (ENC): the program a Puppet server asks what a node is
//! (`node_terminus = exec`, `external_nodes = PROGRAM` in puppet.conf; Foreman, a CMDB
//! script). It runs with the node's certname as its last argument and prints YAML:
//! `parameters` (top-scope variables: `$role`, `$datacenter`), `environment` and `classes`.
//!
//! `puppet lookup` asks the classifier only with `--compile` (a catalog compilation); its
//! answers are what the compiled node sees: parameters are node parameters, which win over
//! facts of the same name as top-scope variables (`$facts` keeps the facts), and the
//! classifier's environment is the node's unless `--environment` is given. A failing
//! classifier fails the lookup with Puppet's `Failed to find NODE via exec: …`.

use hiera_engine::error::{Error, Result};
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a classifier may take for one node.
pub const ENC_TIMEOUT: Duration = Duration::from_secs(30);

/// A classifier to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enc {
    /// The program and its arguments (the command split on whitespace, as Puppet splits
    /// `external_nodes`); the certname is added last.
    pub argv: Vec<String>,
    /// The directory a relative program is found in and runs in (the current directory).
    pub dir: PathBuf,
}

/// What the classifier says about a node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Classification {
    /// `parameters`: top-scope variables.
    pub parameters: Map,
    /// `environment`, when it names one.
    pub environment: Option<String>,
    /// `classes` (a list, or a hash of class → parameters): the names.
    pub classes: Vec<String>,
}

impl Enc {
    /// The classifier `command` (a program and its arguments), run from `dir`.
    pub fn new(command: &str, dir: &Path) -> Result<Enc> {
        let argv: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        if argv.is_empty() {
            return Err(Error::Usage(
                "--enc names no program: give --enc=COMMAND (the classifier, run with the node's certname)".into(),
            ));
        }
        Ok(Enc {
            argv,
            dir: dir.to_path_buf(),
        })
    }

    /// The program, as an absolute path when it names a file (`None`: found on PATH).
    pub fn program_path(&self) -> Option<PathBuf> {
        let p = Path::new(&self.argv[0]);
        (p.components().count() > 1 || p.is_absolute())
            .then(|| hiera_engine::environment::absolute(&self.dir, p))
    }

    /// Asks the classifier about `certname`.
    pub fn classify(&self, certname: &str) -> Result<Classification> {
        let mut argv = self.argv.clone();
        argv.push(certname.to_string());
        let shown = argv.join(" ");
        let failed = |why: String| {
            // Puppet's words (`Execution of '…' returned 1: `), then the program's own.
            Error::run(format!(
                "Failed to find {certname} via exec: Execution of '{shown}' {why} (the classifier --enc names; fix it, or leave --enc out)"
            ))
        };
        let out =
            hiera_engine::backend::run_program(&argv, &self.dir, "", ENC_TIMEOUT).map_err(|e| {
                failed(match e.strip_prefix("exited with status ") {
                    Some(rest) => format!("returned {rest}"),
                    None => e,
                })
            })?;
        let text = String::from_utf8_lossy(&out);
        parse(&text).map_err(|e| {
            Error::run(format!(
                "Could not load the classification of {certname} from '{shown}': {e}"
            ))
        })
    }
}

/// The classifier's YAML: a hash with `parameters`, `environment`, `classes` (each
/// optional).
pub fn parse(text: &str) -> std::result::Result<Classification, String> {
    let value = hiera_formats::yaml::load(text).map_err(|e| e.to_string())?;
    let map = match value {
        Value::Hash(m) => m,
        Value::Null => Map::default(),
        other => {
            return Err(format!(
                "it printed {}, not a YAML hash of parameters, environment and classes",
                other.ruby_class()
            ))
        }
    };
    let mut c = Classification::default();
    match map.get(&Value::str("parameters")) {
        None | Some(Value::Null) => {}
        Some(Value::Hash(p)) => c.parameters = p.clone(),
        Some(other) => {
            return Err(format!(
                "its parameters are {}, not a hash",
                other.ruby_class()
            ))
        }
    }
    match map.get(&Value::str("environment")) {
        Some(Value::String(e)) if !e.is_empty() => c.environment = Some(e.clone()),
        _ => {}
    }
    match map.get(&Value::str("classes")) {
        Some(Value::Array(a)) => {
            c.classes = a
                .iter()
                .filter_map(|v| v.as_str())
                .map(str::to_string)
                .collect()
        }
        Some(Value::Hash(h)) => {
            c.classes = h
                .keys()
                .filter_map(|v| v.as_str())
                .map(str::to_string)
                .collect()
        }
        _ => {}
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classifiers_yaml() {
        let c = parse("---\nclasses:\n  - role::web\nparameters:\n  role: web\n  nested:\n    a: 1\nenvironment: staging\n").unwrap();
        assert_eq!(c.classes, ["role::web"]);
        assert_eq!(c.environment.as_deref(), Some("staging"));
        assert_eq!(
            c.parameters.get(&Value::str("role")),
            Some(&Value::str("web"))
        );
        let c = parse("classes:\n  ntp:\n    servers: [a]\n").unwrap();
        assert_eq!(c.classes, ["ntp"]);
        assert!(c.parameters.is_empty() && c.environment.is_none());
        assert!(parse("").unwrap().parameters.is_empty());
        assert!(parse("- a\n").unwrap_err().contains("not a YAML hash"));
    }
}
