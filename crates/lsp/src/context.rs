//! The node context: which facts the answers are for. A facts file is one node; a facts
//! directory is a fleet (or one of its nodes, when `node` names it). Without facts, answers
//! are for a node with no facts (only levels without facts in their paths are reached).

use hiera_engine::environment::{absolute, EnvOptions};
use hiera_engine::Scope;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// What the client asked for (`initializationOptions`, `[lsp]` of `.hiera-lookup.toml`,
/// `hiera-lookup.selectNode`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextRequest {
    /// A facts file or directory (relative to the root).
    pub facts: Option<String>,
    /// A node's certname: the node of a facts directory.
    pub node: Option<String>,
}

impl ContextRequest {
    /// `{"facts": …, "node": …}` (other keys ignored, wrong types ignored).
    pub fn from_json(j: &Json) -> ContextRequest {
        let s = |k: &str| {
            j.get(k)
                .and_then(Json::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        ContextRequest {
            facts: s("facts"),
            node: s("node"),
        }
    }

    /// This request with `other`'s keys where it has none.
    pub fn or(self, other: ContextRequest) -> ContextRequest {
        ContextRequest {
            facts: self.facts.or(other.facts),
            node: self.node.or(other.node),
        }
    }
}

/// The `[lsp]` table of `ROOT/.hiera-lookup.toml` (`facts`, `node`); nothing when absent.
/// The file is read by lint's settings module, its one reader.
pub fn from_settings_file(root: &Path) -> Result<ContextRequest, String> {
    let t = hiera_lint::settings::LspSettings::load(&hiera_engine::fs::RealFs, root)?;
    Ok(ContextRequest {
        facts: t.facts,
        node: t.node,
    })
}

/// One node of the context.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its name (certname, `clientcert` or file name).
    pub name: String,
    /// Its scope, or why its facts could not be read.
    pub scope: Result<Scope, String>,
}

/// The nodes answers are for.
#[derive(Debug, Clone)]
pub struct Context {
    /// One node, or a fleet.
    pub nodes: Vec<Node>,
    /// A fleet (a facts directory with no node chosen).
    pub fleet: bool,
    /// What it was made from, in words (for hovers).
    pub label: String,
    /// Facts file or directory read (to read again when it changes).
    pub source: Option<PathBuf>,
}

impl Context {
    /// The context of `req` for the repo at `root` (`env`: its layout, for `$settings::`).
    pub fn load(req: &ContextRequest, root: &Path, env: &EnvOptions) -> Result<Context, String> {
        let Some(facts) = &req.facts else {
            let name = req.node.clone().unwrap_or_else(|| "(no facts)".into());
            let mut facts = hiera_value::value::Map::default();
            if let Some(n) = &req.node {
                facts.insert(
                    hiera_value::value::Value::str("clientcert"),
                    hiera_value::value::Value::str(n.as_str()),
                );
            }
            return Ok(Context {
                nodes: vec![Node {
                    name,
                    scope: Ok(scope_of(facts, env)),
                }],
                fleet: false,
                label: match &req.node {
                    Some(n) => format!("node {n} (no facts)"),
                    None => "no facts (give a facts file or directory)".into(),
                },
                source: None,
            });
        };
        let path = absolute(root, Path::new(facts));
        let mut request = hiera_facts::FactsRequest::default();
        let is_dir = path.is_dir();
        if is_dir {
            request.dir = Some((path.clone(), facts.clone()));
        } else {
            request.files = vec![(path.clone(), facts.clone())];
        }
        let (found, _warnings) = hiera_facts::batch(&request).map_err(|e| e.to_string())?;
        let mut nodes: Vec<Node> = found
            .into_iter()
            .map(|n| Node {
                scope: n.facts.map(|f| scope_of(f, env)).map_err(|e| e.to_string()),
                name: n.name,
            })
            .collect();
        if let Some(want) = &req.node {
            nodes.retain(|n| &n.name == want);
            if nodes.is_empty() {
                return Err(format!("no node named {want} in {facts}"));
            }
            nodes.truncate(1);
        }
        if nodes.is_empty() {
            return Err(format!("no node in {facts}"));
        }
        let fleet = nodes.len() > 1;
        let label = if fleet {
            format!("{} nodes of {facts}", nodes.len())
        } else {
            format!("node {} ({facts})", nodes[0].name)
        };
        Ok(Context {
            nodes,
            fleet,
            label,
            source: Some(path),
        })
    }
}

/// A node's scope as the command line makes it: its facts, and `$settings::` variables.
fn scope_of(facts: hiera_value::value::Map, env: &EnvOptions) -> Scope {
    let mut scope = Scope::from_facts(facts, &env.environment_name());
    for (name, value) in env.settings_vars() {
        scope.set(&name, value);
    }
    scope
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_merge() {
        let a = ContextRequest::from_json(&serde_json::json!({"facts": "f.yaml", "node": 3}));
        assert_eq!(a.facts.as_deref(), Some("f.yaml"));
        assert_eq!(a.node, None);
        let b = a.or(ContextRequest {
            facts: Some("other".into()),
            node: Some("n".into()),
        });
        assert_eq!(b.facts.as_deref(), Some("f.yaml"));
        assert_eq!(b.node.as_deref(), Some("n"));
    }
}
