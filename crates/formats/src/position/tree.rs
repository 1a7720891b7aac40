//! The position tree: where each key and value of a data file is written (line and column),
//! shaped like the loaded value. The readers (YAML, JSON, HOCON) build it; `position` above
//! them picks the reader for a file.

use hiera_value::value::Value;
use std::sync::Arc;

/// A 1-based line and column (columns count characters, as libyaml's marks do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A path into a value: hash keys and array indexes, as [`Value`]s.
pub type Path = [Value];

/// A node of a data file: where it starts, and where its children are.
#[derive(Debug, Clone, PartialEq)]
pub struct PosNode {
    /// Where the node is written (for an alias: the `*name` site).
    pub pos: Pos,
    /// Where a scalar's text ends (just after its last character: a quoted one's closing
    /// quote), when the reader knows it (YAML, JSON; not HOCON, not collections).
    pub end: Option<Pos>,
    /// What the node is, with where its children are.
    pub kind: PosKind,
}

#[derive(Debug, Clone, PartialEq)]
/// What a [`PosNode`] is.
pub enum PosKind {
    /// A string, number, boolean or null.
    Scalar,
    /// An array: its elements, in order.
    Seq(Vec<Arc<PosNode>>),
    /// Entries in the loaded hash's order; a key written twice keeps its first place and its
    /// last definition (the one the loader keeps).
    Map(Vec<PosEntry>),
    /// A YAML alias: the node written at the anchor.
    Alias(Arc<PosNode>),
}

#[derive(Debug, Clone, PartialEq)]
/// One entry of a hash.
pub struct PosEntry {
    /// The key as the loader reads it (a YAML `1:` key is the Integer 1).
    pub key: Value,
    /// Where the key is written; for a key brought in by a YAML merge key (`<<: *base`),
    /// the alias site (or the `<<` key of an inline hash).
    pub key_pos: Pos,
    /// Where the key's text ends (just after it: a quoted key's closing quote), when the
    /// reader knows it and the key is written at [`key_pos`](Self::key_pos).
    pub key_end: Option<Pos>,
    /// A key brought in by `<<`: where that key is written inside the merged hash.
    pub merged_from: Option<Pos>,
    /// Where the entry's value is written.
    pub value: Arc<PosNode>,
}

/// Where a path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// What to point a reader at: the key of the last hash segment (or the element of an
    /// array index, or the root node for an empty path). When the path runs through a YAML
    /// alias or merge key, the place in the document that brings it in (the alias site).
    pub pos: Pos,
    /// When the path runs through an alias or merge key: where the text really is (the key
    /// inside the anchored node).
    pub anchor: Option<Pos>,
    /// Where the text at [`pos`](Self::pos) ends (a key's or a scalar element's), when the
    /// reader knows it and the text is written there (not through an alias or merge key).
    pub end: Option<Pos>,
}

impl PosNode {
    /// A scalar written at `pos` (where it ends unknown).
    pub fn scalar(pos: Pos) -> PosNode {
        PosNode {
            pos,
            end: None,
            kind: PosKind::Scalar,
        }
    }

    /// A scalar written from `pos` to just before `end`.
    pub fn scalar_to(pos: Pos, end: Pos) -> PosNode {
        PosNode {
            end: Some(end),
            ..PosNode::scalar(pos)
        }
    }

    /// The node itself, or the anchored node of an alias (aliases of aliases resolved).
    pub fn target(&self) -> &PosNode {
        let mut n = self;
        while let PosKind::Alias(t) = &n.kind {
            n = t;
        }
        n
    }

    /// The entry of `key` when this node is a hash.
    pub fn entry(&self, key: &Value) -> Option<&PosEntry> {
        match &self.target().kind {
            PosKind::Map(entries) => entries.iter().find(|e| e.key == *key),
            _ => None,
        }
    }

    /// The node holding the value at `path` (aliases followed), or `None` when the file
    /// does not hold it.
    pub fn node_at(&self, path: &Path) -> Option<&PosNode> {
        let mut node = self;
        for seg in path {
            let t = node.target();
            node = match (&t.kind, seg) {
                (PosKind::Map(_), _) => &t.entry(seg)?.value,
                (PosKind::Seq(items), Value::Int(i)) => items.get(usize::try_from(*i).ok()?)?,
                _ => return None,
            };
        }
        Some(node.target())
    }

    /// Where `path` is written, or `None` when the file does not hold it.
    pub fn locate(&self, path: &Path) -> Option<Located> {
        let mut node = self;
        let mut at = Located {
            pos: self.pos,
            anchor: None,
            end: self.end,
        };
        // The first alias or merge key crossed: everything below is written elsewhere.
        let mut via: Option<Pos> = None;
        for seg in path {
            if let PosKind::Alias(_) = node.kind {
                via.get_or_insert(node.pos);
            }
            let t = node.target();
            let (pos, end, next, merged) = match (&t.kind, seg) {
                (PosKind::Map(_), _) => {
                    let e = t.entry(seg)?;
                    (e.key_pos, e.key_end, &*e.value, e.merged_from)
                }
                (PosKind::Seq(items), Value::Int(i)) => {
                    let item = items.get(usize::try_from(*i).ok()?)?;
                    (item.pos, item.end, &**item, None)
                }
                _ => return None,
            };
            at = match (via, merged) {
                (Some(v), _) => Located {
                    pos: v,
                    anchor: Some(pos),
                    end: None,
                },
                (None, Some(inner)) => {
                    via = Some(pos);
                    Located {
                        pos,
                        anchor: Some(inner),
                        end: None,
                    }
                }
                (None, None) => Located {
                    pos,
                    anchor: None,
                    end,
                },
            };
            node = next;
        }
        Some(at)
    }
}

impl PosNode {
    /// A tree of hashes from the paths of a document's fields in document order (a later
    /// field defining the same path wins, as in HOCON). The root is at 1:1.
    pub fn from_paths(fields: impl IntoIterator<Item = (Vec<Value>, Pos)>) -> PosNode {
        let mut root = PosNode {
            pos: Pos { line: 1, column: 1 },
            end: None,
            kind: PosKind::Map(Vec::new()),
        };
        for (path, pos) in fields {
            let mut node = &mut root;
            for (n, seg) in path.iter().enumerate() {
                if !matches!(node.kind, PosKind::Map(_)) {
                    node.kind = PosKind::Map(Vec::new());
                }
                let PosKind::Map(entries) = &mut node.kind else {
                    break;
                };
                let i = match entries.iter().position(|e| e.key == *seg) {
                    Some(i) => i,
                    None => {
                        entries.push(PosEntry {
                            key: seg.clone(),
                            key_pos: pos,
                            key_end: None,
                            merged_from: None,
                            value: Arc::new(PosNode::scalar(pos)),
                        });
                        entries.len() - 1
                    }
                };
                let e = &mut entries[i];
                if n + 1 == path.len() {
                    e.key_pos = pos;
                }
                node = Arc::make_mut(&mut e.value);
            }
        }
        root
    }
}
