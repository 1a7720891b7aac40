//! The lines of a text: byte offsets ↔ 1-based lines and columns, the one line index of the
//! workspace.
//!
//! Columns count characters, as libyaml's marks, the readers' positions
//! ([`Pos`]) and lint's findings do; an editor counts them in its own [`Units`] (UTF-16 code
//! units by LSP's default, or bytes), which [`LineIndex::column`] and [`LineIndex::byte_at`]
//! convert to and from. Every conversion clamps: a place past the end of a line or of the
//! text is that end, and an offset inside a character is that character's start — never a
//! panic.

use crate::position::tree::Pos;

/// What an editor counts a column in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Characters (Unicode scalar values), as [`Pos`] counts them.
    Chars,
    /// UTF-16 code units (LSP's default).
    Utf16,
    /// Bytes of UTF-8.
    Utf8,
}

impl Units {
    /// How many of these units `c` is.
    fn of(self, c: char) -> usize {
        match self {
            Units::Chars => 1,
            Units::Utf16 => c.len_utf16(),
            Units::Utf8 => c.len_utf8(),
        }
    }

    /// The length of `s` in these units.
    pub fn len(self, s: &str) -> usize {
        match self {
            Units::Utf8 => s.len(),
            Units::Chars => s.chars().count(),
            Units::Utf16 => s.chars().map(char::len_utf16).sum(),
        }
    }
}

/// A text and where each of its lines starts. `T` is the text, owned (`String`, for an
/// editor's buffer that changes) or borrowed (`&str`, for a file read once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex<T: AsRef<str> = String> {
    text: T,
    /// The byte offset of each line's start (the first is 0; one more after each `\n`).
    starts: Vec<usize>,
}

impl<T: AsRef<str> + Default> Default for LineIndex<T> {
    /// The index of an empty text.
    fn default() -> LineIndex<T> {
        LineIndex::new(T::default())
    }
}

impl<T: AsRef<str>> LineIndex<T> {
    /// The index of `text`'s lines.
    pub fn new(text: T) -> LineIndex<T> {
        let mut starts = vec![0];
        starts.extend(text.as_ref().match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.text.as_ref()
    }

    /// The text, given back.
    pub fn into_text(self) -> T {
        self.text
    }

    /// How many lines the text has (a text ending with a line break has an empty last line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The byte offset where 1-based `line` starts, when the text has that line.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    /// 1-based `line` without its line break (`""` when the text has no such line).
    pub fn line(&self, line: usize) -> &str {
        let Some(start) = self.line_start(line) else {
            return "";
        };
        let text = self.text();
        let end = self.starts.get(line).copied().unwrap_or(text.len());
        text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// `offset` clamped to the text and moved back to a character's start.
    pub fn char_start(&self, offset: usize) -> usize {
        let text = self.text();
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The line and column of byte `offset`.
    pub fn pos(&self, offset: usize) -> Pos {
        let offset = self.char_start(offset);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        Pos {
            line,
            column: self.text()[start..offset].chars().count() + 1,
        }
    }

    /// The byte offset of `pos` (a line or column of 0 is taken as 1): past the end of its
    /// line, the line's end; past the last line, the end of the text.
    pub fn offset(&self, pos: Pos) -> usize {
        let Some(start) = self.line_start(pos.line.max(1)) else {
            return self.text().len();
        };
        start + self.byte_at(pos.line.max(1), pos.column.max(1) - 1, Units::Chars)
    }

    /// How many `units` there are before byte `byte` of 1-based `line` (clamped to the line):
    /// the 0-based column an editor counts.
    pub fn column(&self, line: usize, byte: usize, units: Units) -> usize {
        let text = self.line(line);
        let mut b = byte.min(text.len());
        while !text.is_char_boundary(b) {
            b -= 1;
        }
        units.len(&text[..b])
    }

    /// The byte offset in 1-based `line` of the 0-based column `column` counted in `units`
    /// (clamped to the line; inside a character, that character's start).
    pub fn byte_at(&self, line: usize, column: usize, units: Units) -> usize {
        let text = self.line(line);
        let mut seen = 0;
        for (i, c) in text.char_indices() {
            let w = units.of(c);
            if seen + w > column {
                return i;
            }
            seen += w;
        }
        text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_positions_and_offsets() {
        let t = "a: é😀x\r\nb: 1\n";
        let li = LineIndex::new(t);
        assert_eq!(li.line_count(), 3);
        assert_eq!(li.line(1), "a: é😀x");
        assert_eq!(li.line(2), "b: 1");
        assert_eq!(li.line(3), "");
        assert_eq!(li.line(0), "");
        assert_eq!(li.line(9), "");
        assert_eq!(li.line_start(2), Some(t.find('b').unwrap()));
        // 'x' is the 6th character of line 1, at byte 3 + 2 + 4.
        let x = t.find('x').unwrap();
        assert_eq!(li.pos(x), Pos { line: 1, column: 6 });
        assert_eq!(li.offset(Pos { line: 1, column: 6 }), x);
        // Inside a character: its start.
        assert_eq!(li.pos(x - 1), Pos { line: 1, column: 5 });
        // Past the end of the text, of a line, of the lines; 0 is 1.
        assert_eq!(li.pos(999), Pos { line: 3, column: 1 });
        assert_eq!(
            li.offset(Pos {
                line: 2,
                column: 99
            }),
            t.len() - 1
        );
        assert_eq!(li.offset(Pos { line: 9, column: 1 }), t.len());
        assert_eq!(li.offset(Pos { line: 0, column: 0 }), 0);
        assert_eq!(li.char_start(x - 1), x - 4);
        let li = LineIndex::new("ab\nçd\n\nx");
        assert_eq!(li.pos(0), Pos { line: 1, column: 1 });
        assert_eq!(li.pos(3), Pos { line: 2, column: 1 });
        // 'd' is after a two-byte character.
        assert_eq!(li.pos(5), Pos { line: 2, column: 2 });
        assert_eq!(li.pos(8), Pos { line: 4, column: 1 });
    }

    #[test]
    fn editor_units() {
        let li = LineIndex::new(String::from("a: é😀x\nb"));
        let x = li.text().find('x').unwrap();
        assert_eq!(li.column(1, x, Units::Utf16), 3 + 1 + 2);
        assert_eq!(li.column(1, x, Units::Utf8), x);
        assert_eq!(li.column(1, x, Units::Chars), 5);
        assert_eq!(li.byte_at(1, 6, Units::Utf16), x);
        assert_eq!(li.byte_at(1, x, Units::Utf8), x);
        // Inside the surrogate pair: the emoji's start; past the line: its end.
        assert_eq!(li.byte_at(1, 5, Units::Utf16), x - 4);
        assert_eq!(li.byte_at(1, 99, Units::Utf16), li.line(1).len());
        assert_eq!(li.column(1, 999, Units::Utf16), 7);
        assert_eq!(Units::Utf16.len("😀"), 2);
    }
}
