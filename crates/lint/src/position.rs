//! Places in a file's text: [`Position`] (1-based line and column in characters, and the byte
//! offset) and [`Span`], as the schema's code and data sides give them, and [`LineStarts`],
//! which computes them.

/// A place in a file: 1-based line and column (characters), and the 0-based byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 0-based byte offset in the file.
    pub offset: usize,
}

impl Position {
    /// The position of byte `offset` of `text` (clamped to the text, and to a char boundary).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.bytes().filter(|b| *b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            offset,
        }
    }

    /// `(line, column)`, as lint findings take it.
    pub fn line_col(&self) -> (usize, usize) {
        (self.line, self.column)
    }
}

/// A range of a file: `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// Where it starts.
    pub start: Position,
    /// Where it ends (the position just after it).
    pub end: Position,
}

/// The byte offset of each line's start, to turn 1-based line/char positions into offsets.
pub(crate) struct LineStarts<'a> {
    text: &'a str,
    index: hiera_formats::position::LineIndex<'a>,
}

impl<'a> LineStarts<'a> {
    pub(crate) fn new(text: &'a str) -> LineStarts<'a> {
        LineStarts {
            text,
            index: hiera_formats::position::LineIndex::new(text),
        }
    }

    /// The position at 1-based `line` and `column` (characters).
    pub(crate) fn at(&self, line: usize, column: usize) -> Position {
        let start = self.index.line_start(line).unwrap_or(self.text.len());
        let offset = self.text[start..]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i);
        Position {
            line,
            column,
            offset,
        }
    }

    /// The position of byte `offset` ([`Position::of_offset`] without reading the text
    /// before it again: a file's many places cost a binary search each).
    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let p = self.index.pos(offset);
        Position {
            line: p.line,
            column: p.column,
            offset,
        }
    }

    /// The position of the first `needle` at or after `from` (a byte offset).
    pub(crate) fn find(&self, needle: &str, from: usize) -> Option<Position> {
        let from = from.min(self.text.len());
        let i = self.text.get(from..)?.find(needle)? + from;
        Some(self.position(i))
    }
}
