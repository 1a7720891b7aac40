//! Places in a file's text: [`Position`] (1-based line and column in characters, and the byte
//! offset) and [`Span`], as the schema's code and data sides give them, computed through
//! the one line index ([`LineIndex`]).

use hiera_formats::lines::LineIndex;

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
        Position::in_lines(&LineIndex::new(text), offset)
    }

    /// The position of byte `offset` of an indexed text (clamped, at a character's start):
    /// a file's many places cost a binary search each.
    pub(crate) fn in_lines<T: AsRef<str>>(lines: &LineIndex<T>, offset: usize) -> Position {
        let offset = lines.char_start(offset);
        let p = lines.pos(offset);
        Position {
            line: p.line,
            column: p.column,
            offset,
        }
    }

    /// The position at 1-based `line` and `column` (characters) of an indexed text.
    pub(crate) fn at<T: AsRef<str>>(lines: &LineIndex<T>, line: usize, column: usize) -> Position {
        Position {
            line,
            column,
            offset: lines.offset(hiera_formats::position::Pos { line, column }),
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
