//! Open documents, LSP positions and file URIs.
//!
//! LSP positions count UTF-16 code units by default; a client that offers `utf-8` gets byte
//! offsets instead ([`Encoding`]). The engine's positions ([`hiera_formats::position::Pos`],
//! lint findings) are 1-based lines and columns in characters. The conversions are the
//! workspace's one line index ([`hiera_formats::lines::LineIndex`]), which clamps: a position
//! past the end of a line or of the document is the end, never a panic.

use hiera_formats::lines::{LineIndex, Units};
use lsp_types::{Position, Range, Uri};
use std::path::{Path, PathBuf};

/// How the client counts a position's `character`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 code units (LSP's default).
    Utf16,
    /// Bytes of UTF-8.
    Utf8,
}

impl Encoding {
    /// The line index's units for it.
    fn units(self) -> Units {
        match self {
            Encoding::Utf16 => Units::Utf16,
            Encoding::Utf8 => Units::Utf8,
        }
    }
}

/// An open document: the editor's text, which the workspace reads in place of the file.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The client's URI for it.
    pub uri: Uri,
    /// The file it edits (absolute, as the workspace names it).
    pub path: PathBuf,
    /// The client's version.
    pub version: i32,
    /// The text and its lines.
    lines: LineIndex<String>,
}

impl Doc {
    /// A document with `text`.
    pub fn new(uri: Uri, path: PathBuf, version: i32, text: String) -> Doc {
        Doc {
            uri,
            path,
            version,
            lines: LineIndex::new(text),
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        self.lines.text()
    }

    /// Replaces the text of `range` (the whole text when `None`).
    pub fn edit(&mut self, range: Option<Range>, new: &str, enc: Encoding) {
        let text = match range {
            None => new.to_string(),
            Some(r) => {
                let a = self.offset(r.start, enc);
                let b = self.offset(r.end, enc).max(a);
                let mut text = std::mem::take(&mut self.lines).into_text();
                text.replace_range(a..b, new);
                text
            }
        };
        self.lines = LineIndex::new(text);
    }

    /// The 0-based line `n` without its line break ("" past the end).
    pub fn line(&self, n: usize) -> &str {
        self.lines.line(n + 1)
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.lines.line_count()
    }

    /// The byte offset of an LSP position, clamped to the document.
    pub fn offset(&self, p: Position, enc: Encoding) -> usize {
        let line = p.line as usize + 1;
        match self.lines.line_start(line) {
            Some(start) => start + self.lines.byte_at(line, p.character as usize, enc.units()),
            None => self.text().len(),
        }
    }

    /// The 0-based line and the byte offset in that line of an LSP position (clamped).
    pub fn line_byte(&self, p: Position, enc: Encoding) -> (usize, usize) {
        let last = self.line_count().saturating_sub(1);
        let line = p.line as usize;
        if line > last {
            return (last, self.line(last).len());
        }
        let byte = self
            .lines
            .byte_at(line + 1, p.character as usize, enc.units());
        (line, byte)
    }

    /// The LSP position of a 1-based line and 1-based character column (as libyaml's marks
    /// and lint findings give them); 0 is taken as 1.
    pub fn position_of(&self, line: usize, column: usize, enc: Encoding) -> Position {
        let (line, byte) = self.line_byte_of(hiera_formats::position::Pos { line, column });
        self.position_at_byte(line, byte, enc)
    }

    /// The 0-based line and the byte offset in it of a 1-based line and character column (as
    /// the readers' positions give them; clamped).
    pub fn line_byte_of(&self, pos: hiera_formats::position::Pos) -> (usize, usize) {
        let line = pos.line.max(1);
        let byte = self.lines.offset(pos) - self.lines.line_start(line).unwrap_or(0);
        (line - 1, byte)
    }

    /// The LSP position of a byte offset in line `line` (0-based).
    pub fn position_at_byte(&self, line: usize, byte: usize, enc: Encoding) -> Position {
        let character = self.lines.column(line + 1, byte, enc.units());
        Position::new(line as u32, character as u32)
    }

    /// The LSP position of a byte offset of the document (clamped).
    pub fn position_at(&self, offset: usize, enc: Encoding) -> Position {
        let offset = self.lines.char_start(offset);
        let line = self.lines.pos(offset).line;
        let start = self.lines.line_start(line).unwrap_or(0);
        self.position_at_byte(line - 1, offset - start, enc)
    }
}

/// The local file a `file:` URI names (percent-escapes decoded), or `None` for another scheme
/// or an unusable URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    path_of_uri_str(uri.as_str())
}

/// [`uri_to_path`] on a URI's text.
pub fn path_of_uri_str(s: &str) -> Option<PathBuf> {
    let rest = s
        .strip_prefix("file://")
        .or_else(|| s.strip_prefix("FILE://"))?;
    // `file:///p` or `file://localhost/p`.
    let path = if rest.starts_with('/') {
        rest
    } else {
        rest.strip_prefix("localhost")?
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let bytes = percent_decode(path)?;
    let text = String::from_utf8(bytes).ok()?;
    if text.contains('\0') || !text.starts_with('/') {
        return None;
    }
    Some(PathBuf::from(text))
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The `file:` URI of an absolute path.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    for &b in path.to_string_lossy().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        Doc::new(
            "file:///x.yaml".parse().unwrap(),
            "/x.yaml".into(),
            1,
            text.into(),
        )
    }

    #[test]
    fn utf16_and_utf8_positions_clamp() {
        let d = doc("a: é😀x\nb: 1\n");
        // 'x' is after 'a: ' (3), 'é' (1 unit), '😀' (2 units).
        assert_eq!(d.offset(Position::new(0, 6), Encoding::Utf16), 3 + 2 + 4);
        assert_eq!(d.offset(Position::new(0, 9), Encoding::Utf8), 9);
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(d.offset(Position::new(0, 5), Encoding::Utf16), 5);
        // Past the end of a line, of the document.
        assert_eq!(d.offset(Position::new(0, 999), Encoding::Utf16), 10);
        assert_eq!(
            d.offset(Position::new(99, 0), Encoding::Utf16),
            d.text().len()
        );
        assert_eq!(
            d.position_of(1, 6, Encoding::Utf16),
            Position::new(0, 6),
            "columns are characters"
        );
        assert_eq!(d.position_of(1, 6, Encoding::Utf8), Position::new(0, 9));
    }

    #[test]
    fn edits_apply_by_range() {
        let mut d = doc("a: 1\nb: é2\n");
        d.edit(
            Some(Range::new(Position::new(1, 3), Position::new(1, 4))),
            "",
            Encoding::Utf16,
        );
        assert_eq!(d.text(), "a: 1\nb: 2\n");
        // Reversed and out-of-range ranges do not panic.
        d.edit(
            Some(Range::new(Position::new(9, 9), Position::new(0, 0))),
            "z",
            Encoding::Utf16,
        );
        assert!(d.text().ends_with('z'));
    }

    #[test]
    fn file_uris() {
        let p = Path::new("/tmp/a b/ü%.yaml");
        let u = path_to_uri(p).unwrap();
        assert_eq!(u.as_str(), "file:///tmp/a%20b/%C3%BC%25.yaml");
        assert_eq!(uri_to_path(&u).unwrap(), p);
        assert_eq!(
            path_of_uri_str("file://localhost/etc/x").unwrap(),
            Path::new("/etc/x")
        );
        for bad in [
            "http://x/y",
            "file://host/y",
            "file:///a%zz",
            "file:///a%00b",
        ] {
            assert_eq!(path_of_uri_str(bad), None, "{bad}");
        }
    }
}
