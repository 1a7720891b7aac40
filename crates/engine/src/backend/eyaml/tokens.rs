//! hiera-eyaml's text grammar of a whole file (`parser/encrypted_tokens.rb`), for the
//! `eyaml` commands that rewrite files: the encrypted parser splits a file into text and
//! `ENC[...]` tokens (string form, or the block form `>\n  ENC[...` folded over lines), the
//! decrypted parser splits an edited file into text and `DEC(<id>)::PKCS7[...]!` markers, and
//! each token is written back as hiera-eyaml writes it (60-character lines in block form).
//!
//! The pieces of a file joined again give the file byte for byte: a command that changes
//! one token leaves every other byte where it was.

use regex::Regex;
use std::sync::OnceLock;

/// One piece of a file with `ENC[...]` tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text outside any token, as written.
    Text(&'a str),
    /// A token.
    Enc(EncToken<'a>),
}

/// An `ENC[...]` token as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncToken<'a> {
    /// The token's text in the file (in block form from the `>` on).
    pub raw: &'a str,
    /// The block form (`>` and a line break before it).
    pub block: bool,
    /// The encryption scheme (`PKCS7` when the token names none).
    pub scheme: &'a str,
    /// The base64 ciphertext, whitespace removed.
    pub cipher: String,
    /// Block form: the indentation of the token's lines.
    pub indent: &'a str,
}

/// One piece of a file with `DEC::PKCS7[...]!` markers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecPiece<'a> {
    /// Text outside any marker, as written.
    Text(&'a str),
    /// A marker: a plaintext to encrypt.
    Dec(DecToken<'a>),
}

/// A `DEC(<id>)::PKCS7[plaintext]!` marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecToken<'a> {
    /// The block form (`>` and a line break before it).
    pub block: bool,
    /// The number of the token it came from (`edit`), if any.
    pub id: Option<usize>,
    /// The encryption scheme.
    pub scheme: &'a str,
    /// The plaintext.
    pub plain: &'a str,
    /// Block form: the indentation.
    pub indent: &'a str,
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| {
        Regex::new(pattern).unwrap_or_else(|e| panic!("bad built-in regex {pattern}: {e}"))
    })
}

// Ruby's `\s` and `\w` (ASCII), spelled out: Rust's are Unicode's.
const WS: &str = r"[ \t\n\r\x0B\x0C]";

fn enc_string() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"ENC\[([A-Za-z0-9_]+,)?([a-zA-Z0-9+/=]+?)\]")
}

fn enc_block() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        &format!(r">\n({WS}*)ENC\[([A-Za-z0-9_]+,)?([a-zA-Z0-9+/= \t\n\r\x0B\x0C]+?)\]"),
    )
}

/// EncHieraTokenType: a value as a lookup sees it (spaces and line breaks inside the base64,
/// as YAML folds a block-form token).
fn enc_value() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"ENC\[([A-Za-z0-9_]+,)?([a-zA-Z0-9+/ =\n]+?)\]")
}

fn dec_string() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?s)DEC(\([0-9]+\))?::([A-Za-z0-9_]+)\[(.+?)\]!")
}

fn dec_block() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        &format!(r"(?s)>\n({WS}*)DEC(\([0-9]+\))?::([A-Za-z0-9_]+)\[(.+?)\]!"),
    )
}

/// hiera-eyaml's `Parser#parse`: at each place the first token type matching right there
/// wins (string form first); else the text runs to the nearest place any type matches.
fn scan<'a, T>(
    text: &'a str,
    types: &[&'static Regex],
    make: impl Fn(usize, regex::Captures<'a>) -> T,
    plain: impl Fn(&'a str) -> T,
) -> Vec<T> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let here = types.iter().enumerate().find_map(|(i, r)| {
            r.captures_at(text, pos)
                .filter(|c| c.get(0).is_some_and(|m| m.start() == pos))
                .map(|c| (i, c))
        });
        if let Some((i, caps)) = here {
            let end = caps.get(0).map_or(pos, |m| m.end());
            out.push(make(i, caps));
            pos = end.max(pos + 1);
            continue;
        }
        let next = types
            .iter()
            .filter_map(|r| r.find_at(text, pos).map(|m| m.start()))
            .min()
            .unwrap_or(text.len());
        out.push(plain(&text[pos..next]));
        pos = next;
    }
    out
}

/// The pieces of a file with `ENC[...]` tokens (hiera-eyaml's `encrypted_parser`).
pub fn encrypted_pieces(text: &str) -> Vec<Piece<'_>> {
    enc_pieces(text, &[enc_string(), enc_block()])
}

/// The pieces of a value as a lookup reads it (hiera-eyaml's `hiera_backend_parser`: spaces
/// and line breaks may sit inside a token, as YAML's folding leaves them).
pub fn value_pieces(text: &str) -> Vec<Piece<'_>> {
    enc_pieces(text, &[enc_value()])
}

fn enc_pieces<'a>(text: &'a str, types: &[&'static Regex]) -> Vec<Piece<'a>> {
    scan(
        text,
        types,
        |kind, c| {
            let g = |i: usize| c.get(i).map_or("", |m| m.as_str());
            let raw = c.get(0).map_or("", |m| m.as_str());
            let (block, indent, scheme, cipher) = if kind == 0 {
                (false, "", g(1), g(2))
            } else {
                (true, g(1), g(2), g(3))
            };
            Piece::Enc(EncToken {
                raw,
                block,
                scheme: match scheme.trim_end_matches(',') {
                    "" => "PKCS7",
                    s => s,
                },
                cipher: cipher
                    .chars()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect(),
                indent,
            })
        },
        Piece::Text,
    )
}

/// The pieces of an edited file with `DEC::PKCS7[...]!` markers (hiera-eyaml's
/// `decrypted_parser`).
pub fn decrypted_pieces(text: &str) -> Vec<DecPiece<'_>> {
    scan(
        text,
        &[dec_string(), dec_block()],
        |kind, c| {
            let g = |i: usize| c.get(i).map_or("", |m| m.as_str());
            let (block, indent, id, scheme, plain) = if kind == 0 {
                (false, "", g(1), g(2), g(3))
            } else {
                (true, g(1), g(2), g(3), g(4))
            };
            DecPiece::Dec(DecToken {
                block,
                id: id.trim_matches(['(', ')']).parse().ok(),
                scheme,
                plain,
                indent,
            })
        },
        DecPiece::Text,
    )
}

/// A token as hiera-eyaml's `to_encrypted` writes it: `ENC[scheme,cipher]`, or in block form
/// `>` + line break + the token cut into lines of 60 characters, each indented by `indent`.
pub fn format_encrypted(scheme: &str, cipher: &str, block: bool, indent: &str) -> String {
    let token = format!("ENC[{scheme},{cipher}]");
    if !block {
        return token;
    }
    let lines: Vec<&str> = token
        .as_bytes()
        .chunks(60)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    format!(">\n{indent}{}", lines.join(&format!("\n{indent}")))
}

/// A token as hiera-eyaml's `to_decrypted` writes it: `DEC(id)::scheme[plaintext]!`, in
/// block form after `>`, a line break and the token's indentation.
pub fn format_decrypted(token: &EncToken<'_>, id: Option<usize>, plain: &str) -> String {
    let id = id.map(|i| format!("({i})")).unwrap_or_default();
    let marker = format!("DEC{id}::{}[{plain}]!", token.scheme);
    if token.block {
        format!(">\n{}{marker}", token.indent)
    } else {
        marker
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(p: &[Piece<'_>]) -> String {
        p.iter()
            .map(|p| match p {
                Piece::Text(t) => *t,
                Piece::Enc(e) => e.raw,
            })
            .collect()
    }

    #[test]
    fn a_file_splits_into_text_and_tokens_and_joins_back() {
        let text = "# c\na: ENC[PKCS7,QUJD]\nb: >\n    ENC[PKCS7,QU\n    JD]\nc: ENC[x-y] ENC[QUJD] ok\nd: |\n  ENC[PKCS7,QUJD]\n";
        let p = encrypted_pieces(text);
        assert_eq!(join(&p), text);
        let toks: Vec<&EncToken> = p
            .iter()
            .filter_map(|p| match p {
                Piece::Enc(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(toks.len(), 4, "{toks:?}");
        assert!(!toks[0].block && toks[0].cipher == "QUJD" && toks[0].scheme == "PKCS7");
        assert!(toks[1].block && toks[1].cipher == "QUJD" && toks[1].indent == "    ");
        assert_eq!(toks[1].raw, ">\n    ENC[PKCS7,QU\n    JD]");
        // No scheme: the default one.
        assert_eq!(toks[2].scheme, "PKCS7");
        assert_eq!(toks[2].raw, "ENC[QUJD]");
    }

    #[test]
    fn markers_parse_with_ids_and_multi_line_plaintexts() {
        let text =
            "a: DEC(1)::PKCS7[x]!\nb: >\n  DEC(3)::PKCS7[two\nlines]!\nc: DEC::PKCS7[new]!\n";
        let d = decrypted_pieces(text);
        let decs: Vec<&DecToken> = d
            .iter()
            .filter_map(|p| match p {
                DecPiece::Dec(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(decs.len(), 3);
        assert_eq!(
            (decs[0].id, decs[0].plain, decs[0].block),
            (Some(1), "x", false)
        );
        assert_eq!(
            (decs[1].id, decs[1].plain, decs[1].block),
            (Some(3), "two\nlines", true)
        );
        assert_eq!((decs[2].id, decs[2].plain), (None, "new"));
    }

    #[test]
    fn block_form_is_cut_at_sixty() {
        let cipher = "A".repeat(100);
        let b = format_encrypted("PKCS7", &cipher, true, "  ");
        let lines: Vec<&str> = b.lines().collect();
        assert_eq!(lines[0], ">");
        assert_eq!(lines[1].len(), 62);
        assert!(lines[1].starts_with("  ENC[PKCS7,"));
        assert_eq!(
            format_encrypted("PKCS7", "QUJD", false, "  "),
            "ENC[PKCS7,QUJD]"
        );
        let p = encrypted_pieces(&b);
        assert!(matches!(&p[0], Piece::Enc(e) if e.cipher == cipher && e.block));
    }
}
