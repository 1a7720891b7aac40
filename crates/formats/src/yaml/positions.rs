//! Where each key and value of a YAML document is written: libyaml's start marks, from the
//! same event stream [`load_document`](super::load_document) reads, in a tree shaped like
//! the loaded value (keys resolved as Psych resolves them, duplicate keys and `<<` merge keys
//! applied as Psych applies them). Aliases are kept as aliases, so their sites are known and
//! nothing is copied.

use super::{check_flow_depth, ffi, scalar_node, Event, Mark, YamlError, MAX_ALIAS_EXPANSION};
use super::{MAX_DEPTH, STR_TAG};
use crate::position::tree::{Pos, PosEntry, PosKind, PosNode};
use hiera_value::value::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The positions of the first document of `bytes` (`None` for an empty stream). Syntax errors
/// are libyaml's, as [`load_document`](super::load_document) reports them.
pub fn load_positions(bytes: &[u8]) -> Result<Option<PosNode>, YamlError> {
    check_flow_depth(bytes)?;
    let mut parser = ffi::Parser::new(bytes);
    let mut b = Builder::default();
    loop {
        match parser.next()? {
            Event::StreamStart | Event::DocStart => {}
            Event::DocEnd | Event::StreamEnd => break,
            Event::Alias { anchor, mark } => {
                let target =
                    b.anchors
                        .get(&anchor)
                        .cloned()
                        .ok_or_else(|| YamlError::BadAlias {
                            message: format!("An alias referenced an unknown anchor: {anchor}"),
                            line: mark.line,
                            column: mark.column,
                        })?;
                let node = PosNode {
                    pos: pos(mark),
                    end: None,
                    kind: PosKind::Alias(target),
                };
                b.complete(node, None)?;
            }
            Event::Scalar {
                anchor,
                tag,
                value,
                quoted_implicit,
                mark,
                end,
            } => {
                // Only a key needs its value; a scalar that does not resolve (a disallowed
                // tag) cannot be a Hiera key, and the loader has reported it.
                let key = match scalar_node(value, tag.as_deref(), quoted_implicit, mark) {
                    Ok(n) if n.symbol => KeyInfo {
                        value: n.value,
                        merge: false,
                    },
                    Ok(n) => KeyInfo {
                        merge: !n.str_tag && n.value.as_str() == Some("<<"),
                        value: n.value,
                    },
                    Err(_) => KeyInfo {
                        value: Value::Null,
                        merge: false,
                    },
                };
                let node = Arc::new(PosNode::scalar_to(pos(mark), pos(end)));
                if let Some(a) = anchor {
                    b.anchors.insert(a, node.clone());
                }
                b.complete_arc(node, Some(key))?;
            }
            Event::SeqStart { anchor, mark, .. } => b.start(anchor, mark, Open::Seq(Vec::new()))?,
            Event::MapStart { anchor, tag, mark } => {
                // A `!str` mapping loads as a string: its keys are not the value's.
                let special = tag.as_deref().is_some_and(|t| {
                    t == STR_TAG || t.starts_with("!str") || t.starts_with("!ruby/string")
                });
                let open = if special {
                    Open::Opaque
                } else {
                    Open::Map(Vec::new(), None)
                };
                b.start(anchor, mark, open)?
            }
            Event::SeqEnd | Event::MapEnd => b.end()?,
        }
    }
    Ok(b.root
        .map(|r| Arc::try_unwrap(r).unwrap_or_else(|r| (*r).clone())))
}

fn pos(m: Mark) -> Pos {
    Pos {
        line: m.line,
        column: m.column,
    }
}

struct KeyInfo {
    value: Value,
    /// A `<<` merge key.
    merge: bool,
}

enum Open {
    Seq(Vec<Arc<PosNode>>),
    /// Entries, and the pending key (its info, where it starts and ends) awaiting its value.
    Map(Vec<PosEntry>, Option<(KeyInfo, Pos, Option<Pos>)>),
    /// A collection whose inside is not part of the loaded value.
    Opaque,
}

struct Frame {
    open: Open,
    anchor: Option<String>,
    mark: Mark,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<String, Arc<PosNode>>,
    root: Option<Arc<PosNode>>,
    /// Entries copied by merge keys, bounded as the loader bounds alias expansion.
    copied: usize,
}

impl Builder {
    fn start(&mut self, anchor: Option<String>, mark: Mark, open: Open) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::TooDeep {
                line: mark.line,
                column: mark.column,
            });
        }
        self.stack.push(Frame { open, anchor, mark });
        Ok(())
    }

    fn end(&mut self) -> Result<(), YamlError> {
        let Some(f) = self.stack.pop() else {
            return Ok(());
        };
        let kind = match f.open {
            Open::Seq(items) => PosKind::Seq(items),
            Open::Map(entries, _) => PosKind::Map(entries),
            Open::Opaque => PosKind::Scalar,
        };
        let node = Arc::new(PosNode {
            pos: pos(f.mark),
            end: None,
            kind,
        });
        if let Some(a) = f.anchor {
            self.anchors.insert(a, node.clone());
        }
        self.complete_arc(node, None)
    }

    fn complete(&mut self, node: PosNode, key: Option<KeyInfo>) -> Result<(), YamlError> {
        self.complete_arc(Arc::new(node), key)
    }

    /// Hands a finished node to its parent. `key` is what the node would be as a key (a
    /// collection or alias as a key is never a Hiera key: `Null` stands in).
    fn complete_arc(&mut self, node: Arc<PosNode>, key: Option<KeyInfo>) -> Result<(), YamlError> {
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        match &mut frame.open {
            Open::Seq(items) => items.push(node),
            Open::Opaque => {}
            Open::Map(entries, pending) => match pending.take() {
                None => {
                    let key = key.unwrap_or(KeyInfo {
                        value: Value::Null,
                        merge: false,
                    });
                    *pending = Some((key, node.pos, node.end));
                }
                Some((key, key_pos, key_end)) => {
                    if key.merge {
                        if let Some(n) = merge_key(entries, &node) {
                            self.copied = self.copied.saturating_add(n);
                            if self.copied > MAX_ALIAS_EXPANSION {
                                return Err(YamlError::AliasExpansion {
                                    line: key_pos.line,
                                    column: key_pos.column,
                                });
                            }
                            return Ok(());
                        }
                    }
                    put(
                        entries,
                        PosEntry {
                            key: key.value,
                            key_pos,
                            key_end,
                            merged_from: None,
                            value: node,
                        },
                    );
                }
            },
        }
        Ok(())
    }
}

/// `hash[key] = value`: a key already there keeps its place and takes the new definition.
fn put(entries: &mut Vec<PosEntry>, e: PosEntry) {
    match entries.iter_mut().find(|x| x.key == e.key) {
        Some(slot) => *slot = e,
        None => entries.push(e),
    }
}

/// Psych's `<<` rules (see `insert_pair` in the loader): a hash (or alias of one) merges its
/// entries in; a sequence of hashes merges them with earlier ones winning. Returns the number
/// of entries copied, or `None` when the value is no merge and `<<` is an ordinary key.
fn merge_key(entries: &mut Vec<PosEntry>, value: &Arc<PosNode>) -> Option<usize> {
    // The place merged keys are brought in: an alias site (an inline hash's keys are
    // written where they are).
    let site = |n: &PosNode| match n.kind {
        PosKind::Alias(_) => Some(n.pos),
        _ => None,
    };
    match &value.target().kind {
        PosKind::Map(src) => {
            let at = site(value);
            for e in src {
                put(entries, imported(e, at));
            }
            Some(src.len())
        }
        PosKind::Seq(items) => {
            let maps: Option<Vec<(&Vec<PosEntry>, Option<Pos>)>> = items
                .iter()
                .map(|i| match &i.target().kind {
                    PosKind::Map(m) => Some((m, site(i))),
                    _ => None,
                })
                .collect();
            let maps = maps?;
            let mut merged: Vec<PosEntry> = Vec::new();
            let mut n = 0;
            for (m, at) in maps.into_iter().rev() {
                for e in m {
                    put(&mut merged, imported(e, at));
                    n += 1;
                }
            }
            for e in merged {
                put(entries, e);
            }
            Some(n)
        }
        _ => None,
    }
}

fn imported(e: &PosEntry, site: Option<Pos>) -> PosEntry {
    match site {
        Some(site) => PosEntry {
            key: e.key.clone(),
            key_pos: site,
            key_end: None,
            merged_from: Some(e.merged_from.unwrap_or(e.key_pos)),
            value: e.value.clone(),
        },
        None => e.clone(),
    }
}
