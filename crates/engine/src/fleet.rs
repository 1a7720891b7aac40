//! The one fleet loop: a key asked of every node of a fleet, on worker threads, the answers
//! folded in node order into `where`'s fleet report and the distinct values with their nodes.
//! `where` over a fleet, the web view's key across the fleet and the editor's fleet hover are
//! all this loop; they differ only in where their nodes and sessions come from ([`Fleet`]):
//! facts read as the workers reach them ([`Streamed`]), or a server's nodes asked through
//! their slim forms first.
//!
//! Redaction happens here, per node, with the secrets that node's session decrypted: every
//! value and error of the report and every grouped value is the redacted one, and the
//! secrets of every node are merged into [`KeyAcross::secrets`] for what the caller prints
//! beside them.

use crate::batch::{shared_name_label, Node, NodeUnit};
use crate::engine::{Exec, Session};
use crate::redact::Redactor;
use crate::scope::Strict;
use crate::store::DataFiles;
use crate::where_::fleet::FleetReport;
use crate::where_::{Answer, Reporter, Request};
use crate::workspace::Workspace;
use hiera_value::value::Value;
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Where a fleet loop's nodes, and a session for each, come from.
pub trait Fleet: Sync {
    /// What one worker takes at a time (a facts file, a chunk of PuppetDB's nodes, a range of
    /// the nodes a server holds).
    type Unit: Send;

    /// Runs `ask` on every node of `unit`, in order, with a session for it; gives each node's
    /// answer and what reading the unit warned of. `ask` may run more than once for a node (a
    /// slim session that read beyond the facts it kept is asked again of the whole node):
    /// the last answer is the node's.
    fn ask_unit<R>(
        &self,
        unit: Self::Unit,
        ask: &mut dyn FnMut(&Node, &mut Session) -> R,
    ) -> (Vec<R>, Vec<String>);
}

/// A fleet read unit by unit as the workers reach it (a node builder's
/// [`NodeSource`](crate::batch::NodeSource)), each node asked on a session of `workspace`, or
/// of its own environment's when a classifier put it elsewhere.
pub struct Streamed<'w> {
    /// The run's workspace.
    pub workspace: &'w Workspace,
    /// Whether the sessions run the programs a hierarchy names.
    pub exec: Exec,
}

impl<'w> Fleet for Streamed<'w> {
    type Unit = NodeUnit<'w>;

    fn ask_unit<R>(
        &self,
        unit: NodeUnit<'w>,
        ask: &mut dyn FnMut(&Node, &mut Session) -> R,
    ) -> (Vec<R>, Vec<String>) {
        let read = unit();
        let answers = read
            .nodes
            .into_iter()
            .map(|node| {
                let mut session = node
                    .workspace
                    .as_deref()
                    .unwrap_or(self.workspace)
                    .session_unrefreshed(node.scope.clone());
                session.set_exec(self.exec);
                ask(&node, &mut session)
            })
            .collect();
        (answers, read.warnings)
    }
}

/// One distinct value of the key and the nodes that get it.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueGroup {
    /// The value (redacted).
    pub value: Value,
    /// Its JSON text, as the groups are told apart.
    pub json: String,
    /// The nodes, in fleet order.
    pub nodes: Vec<String>,
}

/// A key across a fleet.
#[derive(Debug, Clone)]
pub struct KeyAcross {
    /// `where`'s report over the fleet (values and errors redacted).
    pub report: FleetReport,
    /// The distinct values found, most nodes first (first met first among equals).
    pub values: Vec<ValueGroup>,
    /// Nodes whose value has no JSON text (nested too deep, not UTF-8), with why.
    pub unrenderable: Vec<(String, String)>,
    /// What every node's session decrypted, for what the caller prints beside the report.
    pub secrets: Redactor,
    /// What reading the nodes warned of (a facts file's, once each, in order).
    pub warnings: Vec<String>,
    /// Every node's name and the value of its facts source (`""` for none), in order.
    pub named: Vec<(String, String)>,
}

/// One node's part, as a worker hands it to the fold.
struct NodeAnswer {
    name: String,
    source: Option<String>,
    report: Result<crate::where_::Report, String>,
    secrets: Redactor,
}

/// Asks `request` of every node of `fleet`'s `units` on up to `threads` workers, each with
/// its own [`Reporter`] over `files` (the sessions' data files, parsed once), and folds the
/// answers in node order.
pub fn key_across<F: Fleet>(
    fleet: &F,
    units: impl IntoIterator<Item = F::Unit, IntoIter: Send>,
    threads: usize,
    (files, strict): (&DataFiles, Strict),
    request: &Request,
) -> KeyAcross {
    let mut fold = Fold::new(&request.key);
    crate::workers::in_order_with(
        units,
        threads,
        || Reporter::new(files.clone(), strict),
        |reporter, unit| {
            fleet.ask_unit(unit, &mut |node, session| NodeAnswer {
                name: node.name.clone(),
                source: node.source.as_ref().map(|(_, s)| s.clone()),
                report: match &node.facts_error {
                    Some(e) => Err(e.to_string()),
                    None => reporter
                        .report(session, request, Some(node.name.clone()))
                        .map_err(|e| e.to_string()),
                },
                secrets: session.redactor().cloned().unwrap_or_default(),
            })
        },
        |_, (answers, warnings)| {
            fold.warnings.extend(warnings);
            for a in answers {
                fold.add(a);
            }
            ControlFlow::Continue(())
        },
    );
    fold.finish()
}

/// The answers folded in node order.
struct Fold {
    report: FleetReport,
    groups: Vec<ValueGroup>,
    by_json: HashMap<String, usize>,
    unrenderable: Vec<(String, String)>,
    secrets: Redactor,
    warnings: Vec<String>,
    named: Vec<(String, String)>,
    /// Each name met: the first node's source and place, and whether it was renamed.
    seen: HashMap<String, (Option<String>, usize, bool)>,
}

impl Fold {
    fn new(key: &str) -> Fold {
        Fold {
            report: FleetReport::new(key),
            groups: Vec::new(),
            by_json: HashMap::new(),
            unrenderable: Vec::new(),
            secrets: Redactor::default(),
            warnings: Vec::new(),
            named: Vec::new(),
            seen: HashMap::new(),
        }
    }

    /// The node's label: its name, or, once a second node of the name is met, the name with
    /// its facts source (the first node's label changes then).
    fn label(&mut self, name: &str, source: &Option<String>) -> String {
        let i = self.named.len();
        self.named
            .push((name.to_string(), source.clone().unwrap_or_default()));
        match self.seen.get_mut(name) {
            None => {
                self.seen
                    .insert(name.to_string(), (source.clone(), i, false));
                name.to_string()
            }
            Some((first, first_i, renamed)) => {
                if !*renamed {
                    *renamed = true;
                    let to = shared_name_label(name, first.as_deref(), *first_i);
                    self.report.rename(name, &to);
                    for g in &mut self.groups {
                        for n in g.nodes.iter_mut().filter(|n| *n == name) {
                            n.clone_from(&to);
                        }
                    }
                    for (n, _) in self.unrenderable.iter_mut().filter(|(n, _)| n == name) {
                        n.clone_from(&to);
                    }
                }
                shared_name_label(name, source.as_deref(), i)
            }
        }
    }

    fn add(&mut self, a: NodeAnswer) {
        let label = self.label(&a.name, &a.source);
        let s = a.secrets;
        self.secrets.merge(&s);
        let mut r = match a.report {
            Ok(r) => r,
            Err(e) => {
                self.report.nodes.push(label.clone());
                self.report.errors.push((label, s.text(&e).into_owned()));
                return;
            }
        };
        if !s.is_empty() {
            for d in &mut r.definitions {
                d.value = s.value(&d.value);
            }
            r.answer = match r.answer {
                Answer::Found(v) => Answer::Found(s.value(&v)),
                Answer::Error(e) => Answer::Error(s.text(&e).into_owned()),
                Answer::NotFound => Answer::NotFound,
            };
            for w in &mut r.warnings {
                *w = s.text(w).into_owned();
            }
        }
        if let Answer::Found(v) = &r.answer {
            match hiera_formats::render::to_json(v) {
                Ok(json) => {
                    let at = match self.by_json.get(&json) {
                        Some(&at) => at,
                        None => {
                            self.groups.push(ValueGroup {
                                value: v.clone(),
                                json: json.clone(),
                                nodes: Vec::new(),
                            });
                            self.by_json.insert(json, self.groups.len() - 1);
                            self.groups.len() - 1
                        }
                    };
                    self.groups[at].nodes.push(label.clone());
                }
                Err(e) => self.unrenderable.push((label.clone(), e.to_string())),
            }
        }
        self.report.add(&label, r);
    }

    fn finish(mut self) -> KeyAcross {
        self.report.finish();
        // Most nodes first; a stable sort keeps first-met order among equals.
        self.groups
            .sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
        KeyAcross {
            report: self.report,
            values: self.groups,
            unrenderable: self.unrenderable,
            secrets: self.secrets,
            warnings: self.warnings,
            named: self.named,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::NodeSource;
    use crate::engine::Settings;
    use crate::environment::EnvOptions;
    use hiera_value::value::Map;

    fn node(name: &str, source: &str, role: &str) -> Node {
        let mut facts = Map::default();
        facts.insert(Value::str("role"), Value::str(role));
        Node {
            name: name.into(),
            source: Some(("facts".into(), source.into())),
            scope: crate::scope::Scope::from_facts(facts, "production"),
            facts_error: None,
            workspace: None,
        }
    }

    /// Values grouped by their JSON (most nodes first, first met first among equals), every
    /// node in fleet order whatever the threads, a name two nodes share told apart by source
    /// everywhere it is listed, a facts error the node's error.
    #[test]
    fn a_key_across_a_fleet_groups_values_and_labels_shared_names() {
        let dir = std::env::temp_dir().join(format!("hl-fleet-loop-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("data/roles")).unwrap();
        std::fs::write(
            dir.join("hiera.yaml"),
            "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: common\n    path: common.yaml\n",
        )
        .unwrap();
        std::fs::write(dir.join("data/common.yaml"), "k: common\n").unwrap();
        std::fs::write(dir.join("data/roles/web.yaml"), "k: web\n").unwrap();
        std::fs::write(dir.join("data/roles/none.yaml"), "other: 1\n").unwrap();
        let env = EnvOptions {
            cwd: dir.clone(),
            ..Default::default()
        };
        let workspace = Workspace::open(env, Settings::default()).unwrap();
        let mut broken = node("b", "b.yaml", "web");
        broken.facts_error = Some(crate::error::Error::run("b.yaml: not facts"));
        let nodes = || {
            vec![
                node("db1", "db1.yaml", "db"),
                node("web", "a/web.yaml", "web"),
                node("web", "b/web.yaml", "web"),
                broken.clone(),
                node("db2", "db2.yaml", "db"),
                node("web3", "web3.yaml", "web"),
            ]
        };
        let request = Request {
            key: "k".into(),
            merge: None,
            reachable_only: false,
        };
        for threads in [1, 3] {
            let across = key_across(
                &Streamed {
                    workspace: &workspace,
                    exec: Exec::Allowed,
                },
                NodeSource::from_nodes(nodes()).into_units(),
                threads,
                (&workspace.files(), Strict::Error),
                &request,
            );
            let groups: Vec<(&str, Vec<&str>)> = across
                .values
                .iter()
                .map(|g| {
                    (
                        g.json.as_str(),
                        g.nodes.iter().map(String::as_str).collect(),
                    )
                })
                .collect();
            assert_eq!(
                groups,
                [
                    (
                        "\"web\"",
                        vec!["web (a/web.yaml)", "web (b/web.yaml)", "web3"]
                    ),
                    ("\"common\"", vec!["db1", "db2"]),
                ],
                "{threads} threads"
            );
            assert_eq!(
                across.report.nodes,
                [
                    "db1",
                    "web (a/web.yaml)",
                    "web (b/web.yaml)",
                    "b",
                    "db2",
                    "web3"
                ]
            );
            assert_eq!(
                across.report.errors,
                [("b".to_string(), "b.yaml: not facts".to_string())]
            );
            let wins: Vec<(&str, &Vec<String>)> = across
                .report
                .definitions
                .iter()
                .map(|d| (d.definition.file.as_str(), &d.wins))
                .collect();
            assert!(wins[0].0.ends_with("roles/web.yaml"), "{wins:?}");
            assert_eq!(wins[0].1, &["web (a/web.yaml)", "web (b/web.yaml)", "web3"]);
            assert_eq!(across.named.len(), 6);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
