//! Where each key and value of a JSON data file is written: the json gem's grammar (comments,
//! escapes, duplicate keys where the last wins) walked by the same `Parser`,
//! keeping offsets instead of values.

use super::{Fail, Parser, MAX_NESTING};
use crate::lines::LineIndex;
use crate::position::tree::{Pos, PosEntry, PosKind, PosNode};
use hiera_value::value::Value;
use std::sync::Arc;

/// The positions of a JSON document, or the parser's message for a document it refuses.
pub fn positions(text: &str) -> Result<PosNode, String> {
    // The loader's verdict first: positions are only given for what it reads.
    super::parse(text)?;
    let mut p = Parser {
        s: text,
        b: text.as_bytes(),
        depth: 0,
    };
    let lines = LineIndex::new(text);
    let start = p.ignore(0).map_err(|i| p.unexpected(i))?;
    let mut w = Walker { lines: &lines };
    match w.value(&mut p, start) {
        Ok((node, _)) => Ok(node),
        Err(_) => Err(p.unexpected(start)),
    }
}

struct Walker<'l, 't> {
    lines: &'l LineIndex<&'t str>,
}

type W<T> = Result<T, Fail>;

impl Walker<'_, '_> {
    fn value(&mut self, p: &mut Parser, i: usize) -> W<(PosNode, usize)> {
        let at = self.lines.pos(i);
        match p.b.get(i) {
            Some(b'{') | Some(b'[') => {
                if p.depth >= MAX_NESTING {
                    return Err(Fail::Silent);
                }
                p.depth += 1;
                let r = if p.b[i] == b'{' {
                    self.object(p, i, at)
                } else {
                    self.array(p, i, at)
                };
                p.depth -= 1;
                r
            }
            _ => {
                let (_, end) = p.value(i)?;
                Ok((PosNode::scalar_to(at, self.lines.pos(end)), end))
            }
        }
    }

    fn skip(p: &Parser, j: usize) -> W<usize> {
        p.ignore(j).map_err(|_| Fail::Silent)
    }

    fn object(&mut self, p: &mut Parser, i: usize, at: Pos) -> W<(PosNode, usize)> {
        let mut entries: Vec<PosEntry> = Vec::new();
        let mut j = Self::skip(p, i + 1)?;
        let done = |entries| PosNode {
            pos: at,
            end: None,
            kind: PosKind::Map(entries),
        };
        if p.b.get(j) == Some(&b'}') {
            return Ok((done(entries), j + 1));
        }
        loop {
            let key_pos = self.lines.pos(j);
            let (k, e) = p.string(j)?;
            let key_end = self.lines.pos(e);
            j = Self::skip(p, e)?;
            if p.b.get(j) != Some(&b':') {
                return Err(Fail::Silent);
            }
            j = Self::skip(p, j + 1)?;
            let (v, e) = self.value(p, j)?;
            let entry = PosEntry {
                key: Value::String(k),
                key_pos,
                key_end: Some(key_end),
                merged_from: None,
                value: Arc::new(v),
            };
            match entries.iter_mut().find(|x| x.key == entry.key) {
                Some(slot) => *slot = entry,
                None => entries.push(entry),
            }
            j = Self::skip(p, e)?;
            match p.b.get(j) {
                Some(b',') => j = Self::skip(p, j + 1)?,
                Some(b'}') => return Ok((done(entries), j + 1)),
                _ => return Err(Fail::Silent),
            }
        }
    }

    fn array(&mut self, p: &mut Parser, i: usize, at: Pos) -> W<(PosNode, usize)> {
        let mut items = Vec::new();
        let mut j = Self::skip(p, i + 1)?;
        if p.b.get(j) == Some(&b']') {
            return Ok((
                PosNode {
                    pos: at,
                    end: None,
                    kind: PosKind::Seq(items),
                },
                j + 1,
            ));
        }
        loop {
            let (v, e) = self.value(p, j)?;
            items.push(Arc::new(v));
            j = Self::skip(p, e)?;
            match p.b.get(j) {
                Some(b',') => j = Self::skip(p, j + 1)?,
                Some(b']') => {
                    return Ok((
                        PosNode {
                            pos: at,
                            end: None,
                            kind: PosKind::Seq(items),
                        },
                        j + 1,
                    ))
                }
                _ => return Err(Fail::Silent),
            }
        }
    }
}
