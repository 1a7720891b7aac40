//! The node context: which facts the answers are for. A facts file is one node; a facts
//! directory is a fleet (or one of its nodes, when `node` names it). Without facts, answers
//! are for a node with no facts (only levels without facts in their paths are reached).

use hiera_engine::batch::Node;
use hiera_engine::environment::{absolute, EnvOptions};
use hiera_engine::Scope;
use hiera_facts::context::NodeSources;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// What the client asked for (`initializationOptions`, `[lsp]` of `.hiera-lookup.toml`,
/// `hiera-lookup.selectNode`): the node context's sources as the command line's flags name
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextRequest {
    /// A facts file or directory (relative to the root).
    pub facts: Option<String>,
    /// A node's certname: the node of a facts directory.
    pub node: Option<String>,
    /// `--var NAME=VALUE`s.
    pub vars: Vec<String>,
    /// `--fact NAME=VALUE`s.
    pub fact: Vec<String>,
    /// `--enc=COMMAND`: the classifier (run only with `--allow-exec` when it is in the repo).
    pub enc: Option<String>,
    /// `--trusted=FILE`.
    pub trusted: Option<String>,
    /// `--environment`.
    pub environment: Option<String>,
}

impl ContextRequest {
    /// `{"facts": …, "node": …, "vars": […], "fact": […], "enc": …, "trusted": …,
    /// "environment": …}` (other keys ignored, wrong types ignored).
    pub fn from_json(j: &Json) -> ContextRequest {
        let s = |k: &str| {
            j.get(k)
                .and_then(Json::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let list = |k: &str| match j.get(k) {
            Some(Json::Array(a)) => a
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_string)
                .collect(),
            Some(Json::String(one)) if !one.is_empty() => vec![one.clone()],
            _ => Vec::new(),
        };
        ContextRequest {
            facts: s("facts"),
            node: s("node"),
            vars: list("vars"),
            fact: list("fact"),
            enc: s("enc"),
            trusted: s("trusted"),
            environment: s("environment"),
        }
    }

    /// This request with `other`'s settings where it has none.
    pub fn or(self, other: ContextRequest) -> ContextRequest {
        let list = |a: Vec<String>, b: Vec<String>| if a.is_empty() { b } else { a };
        ContextRequest {
            facts: self.facts.or(other.facts),
            node: self.node.or(other.node),
            vars: list(self.vars, other.vars),
            fact: list(self.fact, other.fact),
            enc: self.enc.or(other.enc),
            trusted: self.trusted.or(other.trusted),
            environment: self.environment.or(other.environment),
        }
    }

    /// The node context's sources for the repo at `root` (whose layout `env` gives): the
    /// command line's `-C ROOT` with these settings as flags.
    fn sources(&self, env: &EnvOptions) -> NodeSources {
        let (facts, facts_dir) = match &self.facts {
            Some(f) if env.cwd.join(f).is_dir() => (Vec::new(), Some(PathBuf::from(f))),
            Some(f) => (vec![PathBuf::from(f)], None),
            None => (Vec::new(), None),
        };
        NodeSources {
            hiera_config: env.hiera_config.clone(),
            modulepath: env.modulepath.clone(),
            environment: self.environment.clone(),
            // Without facts, a node named is known by its name only (`--no-facts`).
            no_facts: self.facts.is_none() && self.node.is_some(),
            node: match &self.facts {
                None => self.node.clone(),
                Some(_) => None,
            },
            facts,
            facts_dir,
            trusted: self.trusted.as_ref().map(PathBuf::from),
            vars: self.vars.clone(),
            fact_overrides: self.fact.clone(),
            enc: self.enc.clone().map(Some),
            ..Default::default()
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
        ..Default::default()
    })
}

/// The nodes answers are for.
#[derive(Debug, Clone)]
pub struct Context {
    /// One node, or a fleet: each as the node context builds it (facts, `--fact`s, the
    /// classifier, `$settings::`, `--var`s), or with why its facts could not be read.
    pub nodes: Vec<Node>,
    /// A fleet (a facts directory with no node chosen).
    pub fleet: bool,
    /// What it was made from, in words (for hovers).
    pub label: String,
    /// Facts file or directory read (to read again when it changes).
    pub source: Option<PathBuf>,
}

/// A node's scope, or why its facts could not be read.
pub fn scope_of(node: &Node) -> Result<&Scope, String> {
    match &node.facts_error {
        Some(e) => Err(e.to_string()),
        None => Ok(&node.scope),
    }
}

impl Context {
    /// The context of `req` for the repo whose layout `env` gives (its `cwd` the root), built
    /// by the node context every command uses; `allow_exec`: whether a classifier in the
    /// repo may run.
    pub fn load(
        req: &ContextRequest,
        env: &EnvOptions,
        allow_exec: bool,
    ) -> Result<Context, String> {
        let root = &env.cwd;
        let mut context = req
            .sources(env)
            .resolve_in(root)
            .map_err(|e| e.to_string())?;
        context
            .check_enc_trust(root, allow_exec, "the language server")
            .map_err(|e| e.to_string())?;
        let Some(facts) = &req.facts else {
            let single = context.single(&mut Vec::new()).map_err(|e| e.to_string())?;
            let name = req.node.clone().unwrap_or_else(|| "(no facts)".into());
            return Ok(Context {
                nodes: vec![Node {
                    name,
                    source: None,
                    scope: single.scope,
                    facts_error: None,
                    workspace: None,
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
        let mut nodes = context.fleet().map_err(|e| e.to_string())?.read_all().nodes;
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
            ..Default::default()
        });
        assert_eq!(b.facts.as_deref(), Some("f.yaml"));
        assert_eq!(b.node.as_deref(), Some("n"));
    }
}
