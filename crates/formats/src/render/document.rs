//! What every writer shares: the error Ruby raises while rendering, and the document a plain
//! value cannot spell (symbols, shared objects) that `--explain --render-as yaml` prints.

use hiera_value::value::Value;

/// A rendering failure, worded as Ruby words it (Puppet prints `Error: Could not run: <message>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// json gem `GeneratorError`/`NestingError`, e.g. `Infinity not allowed in JSON`.
    #[error("{0}")]
    Json(String),
    /// An exception raised inside Psych while dumping, e.g. `invalid value for Integer(): "0b"`.
    #[error("{0}")]
    Yaml(String),
}

/// A document plain values cannot spell: Ruby symbols, and hashes and arrays that are the same
/// object in several places (Psych anchors the first occurrence, `&1`, and aliases the others,
/// `*1`, numbering anchors in the order their first alias is met). `--explain --render-as
/// yaml` prints one.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// `:name`
    Symbol(&'static str),
    /// A value without shared parts.
    Leaf(Value),
    /// An array, anchored (`&N`) when it is aliased elsewhere.
    Seq {
        /// The anchor number, when the array is aliased.
        anchor: Option<u32>,
        /// The elements, in order.
        items: Vec<Tree>,
    },
    /// A hash, anchored (`&N`) when it is aliased elsewhere.
    Map {
        /// The anchor number, when the hash is aliased.
        anchor: Option<u32>,
        /// The entries, in order.
        entries: Vec<(Tree, Tree)>,
    },
    /// `*N`: the node anchored as `&N` again.
    Alias(u32),
}

impl Tree {
    /// The plain value (symbols as strings, aliases expanded): what JSON shows.
    pub fn to_value(&self) -> Value {
        let mut anchored = std::collections::HashMap::new();
        self.to_value_with(&mut anchored)
    }

    fn to_value_with(&self, anchored: &mut std::collections::HashMap<u32, Value>) -> Value {
        let v = match self {
            Tree::Symbol(s) => Value::str(*s),
            Tree::Leaf(v) => v.clone(),
            Tree::Alias(n) => anchored.get(n).cloned().unwrap_or(Value::Null),
            Tree::Seq { items, .. } => {
                Value::Array(items.iter().map(|t| t.to_value_with(anchored)).collect())
            }
            Tree::Map { entries, .. } => {
                let mut m = hiera_value::value::Map::default();
                for (k, e) in entries {
                    let k = k.to_value_with(anchored);
                    let e = e.to_value_with(anchored);
                    m.insert(k, e);
                }
                Value::Hash(m)
            }
        };
        if let Tree::Seq {
            anchor: Some(n), ..
        }
        | Tree::Map {
            anchor: Some(n), ..
        } = self
        {
            anchored.insert(*n, v.clone());
        }
        v
    }
}
