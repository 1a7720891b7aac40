//! What the server keeps of each packed node for the questions about the whole fleet: its
//! [slim form](hiera_engine::slim), as text. A slim scope in memory is a few kilobytes of
//! small allocations (its variables, its facts' maps); the facts it keeps, as compact JSON,
//! are a few hundred bytes, and made a scope again in microseconds, through the node context
//! as the whole node is ([`NodeContext::scope`]), then slimmed again so that a read beyond
//! them is told apart ([`Session::missed_facts`](hiera_engine::Session::missed_facts)).

use crate::pack::{Held, PackedFacts};
use hiera_engine::batch::Node;
use hiera_engine::scope::Scope;
use hiera_engine::slim::FactPaths;
use hiera_facts::context::NodeContext;
use std::sync::Arc;

/// Facts every slim form keeps, whatever lookups read: `$trusted` is made of them, and
/// `where`'s report (each node of a key's view) names the node by its `clientcert`.
pub const ALWAYS_KEPT: [&str; 2] = ["clientcert", "trusted"];

/// A node's slim form.
#[derive(Debug)]
pub enum Slim {
    /// The facts kept, as compact JSON (made a scope again when asked).
    Text {
        facts: PackedFacts,
        keep: Arc<FactPaths>,
    },
    /// The slim scope itself: its facts hold what JSON cannot say exactly.
    Scope(Scope),
}

impl Slim {
    /// The slim form of `node` keeping `keep` (which keeps [`ALWAYS_KEPT`]).
    pub fn of(node: &Node, keep: Arc<FactPaths>) -> Slim {
        let scope = node.scope.slimmed(keep.clone());
        match scope.facts().and_then(crate::pack::pack_facts) {
            Some(facts) => Slim::Text { facts, keep },
            None => Slim::Scope(scope),
        }
    }

    /// The node `held` in this slim form, its scope made by `context` as every node's is
    /// (`None`: its text cannot be read back, and the whole node must be asked).
    pub fn node(&self, held: &Held, context: &NodeContext) -> Option<Node> {
        let scope = match self {
            Slim::Scope(scope) => scope.clone(),
            Slim::Text { facts, keep } => {
                let facts = crate::pack::unpack_facts(facts).ok()?;
                context.scope(facts).slimmed(keep.clone())
            }
        };
        Some(Node {
            name: held.name().to_string(),
            source: held.source().cloned(),
            scope,
            facts_error: None,
            workspace: None,
        })
    }
}

/// What slim forms keep before any lookup is seen: [`ALWAYS_KEPT`].
pub fn first_kept() -> FactPaths {
    let mut keep = FactPaths::default();
    for name in ALWAYS_KEPT {
        keep.keep(&[name]);
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use hiera_value::value::Value;

    /// A node context that sets a variable of its own on every node (`--var`).
    fn context() -> NodeContext {
        hiera_facts::context::NodeSources {
            vars: vec!["extra=set by the node context".into()],
            ..Default::default()
        }
        .resolve_in(&std::env::temp_dir())
        .unwrap()
    }

    #[test]
    fn a_slim_form_is_small_text_that_makes_the_same_slim_scope() {
        let Value::Hash(facts) = hiera_formats::yaml::load(
            "{clientcert: a.example.com, os: {family: Debian, name: Debian}, \
             networking: {fqdn: a.example.com, interfaces: {eth0: {ip: 10.0.0.1}}}, uptime: 3}",
        )
        .unwrap() else {
            unreachable!()
        };
        let node = Node {
            name: "a".into(),
            source: None,
            scope: context().scope(facts),
            facts_error: None,
            workspace: None,
        };
        let mut keep = first_kept();
        keep.keep(&["os", "family"]);
        let keep = Arc::new(keep);
        let slim = Slim::of(&node, keep.clone());
        let Slim::Text { facts, .. } = &slim else {
            panic!("JSON holds these facts")
        };
        assert_eq!(
            hiera_formats::json::write::to_json(&Value::Hash(
                crate::pack::unpack_facts(facts).unwrap()
            ))
            .unwrap(),
            r#"{"clientcert":"a.example.com","os":{"family":"Debian"}}"#
        );
        let held = Held::Node(Arc::new(node));
        let again = slim.node(&held, &context()).expect("the text reads back");
        let want = held_scope(&held).slimmed(keep);
        assert_eq!(again.scope.facts(), want.facts());
        assert_eq!(format!("{:?}", again.scope), format!("{want:?}"));
    }

    fn held_scope(held: &Held) -> Scope {
        match held {
            Held::Node(n) => n.scope.clone(),
            Held::Packed(_) => unreachable!(),
        }
    }
}
