//! `hiera-lookup eyaml decrypt`: a value's plaintext (`-s`, standard input), or a whole file
//! with every `ENC[…]` token written as `DEC::PKCS7[plaintext]!` (`-f`), as hiera-eyaml's
//! `eyaml decrypt -e` writes it. Needs the private key.

use super::KeyArgs;
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::crypt::PrivateKey;
use hiera_engine::backend::eyaml::tokens::{
    encrypted_pieces, format_decrypted, value_pieces, Piece,
};
use std::io::Read;
use std::path::{Path, PathBuf};

/// `hiera-lookup eyaml decrypt`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml decrypt -s 'ENC[PKCS7,MIIBiQYJKoZIhvcNAQcDoIIBejCCAXYC...]'
    hiera-lookup eyaml decrypt -f data/common.eyaml

-s and standard input: every ENC[...] replaced by its plaintext. -f: the file with every
ENC[...] as DEC::PKCS7[plaintext]! (what `eyaml edit` shows).

Exit status: 0 decrypted, 2 error (a value that does not decrypt: nothing is printed).")]
pub struct Args {
    /// A value (text with ENC[...] tokens)
    #[arg(short = 's', long, value_name = "STRING", conflicts_with_all = ["file", "stdin"])]
    pub string: Option<String>,

    /// An eyaml file: printed with DEC::PKCS7[...]! markers
    #[arg(
        short = 'f',
        long,
        visible_short_alias = 'e',
        value_name = "FILE",
        conflicts_with = "stdin"
    )]
    pub file: Option<PathBuf>,

    /// A value on standard input (the default without -s or -f)
    #[arg(long)]
    pub stdin: bool,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Decrypts and prints.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    if let Some(f) = &args.file {
        let text = super::read_data_file(f)?;
        let key = args.keys.private_key(Some(f))?;
        let out = decrypted_file(&text, &key, f, false)?;
        return output::stdout(&out, ExitCode::Success);
    }
    let text = match &args.string {
        Some(s) => s.clone(),
        None => {
            let mut buf = String::new();
            std::io::stdin()
                .take(hiera_value::limits::MAX_FILE_SIZE)
                .read_to_string(&mut buf)
                .map_err(|e| Failure(format!("standard input cannot be read ({e})")))?;
            buf
        }
    };
    let key = args.keys.private_key(None)?;
    let mut out = String::new();
    let mut tokens = 0;
    for p in value_pieces(&text) {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Enc(e) => {
                tokens += 1;
                out.push_str(&plaintext(&key, &e, &format!("encrypted value {tokens}"))?);
            }
        }
    }
    if tokens == 0 {
        return Err(Failure(
            "the value holds no ENC[...] token to decrypt".into(),
        ));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    output::stdout(&out, ExitCode::Success)
}

/// `text` with every token as a `DEC::PKCS7[…]!` marker (numbered as hiera-eyaml's `edit`
/// numbers them when `numbered`: the piece's index).
pub fn decrypted_file(
    text: &str,
    key: &PrivateKey,
    file: &Path,
    numbered: bool,
) -> output::Result<String> {
    let pieces = encrypted_pieces(text);
    let plain = plaintexts(text, &pieces, key, file)?;
    Ok(with_markers(&pieces, &plain, numbered))
}

/// The plaintext of every token of `pieces` (a split of `text`), by piece index (`None` for
/// text): all or an error.
pub fn plaintexts(
    text: &str,
    pieces: &[Piece<'_>],
    key: &PrivateKey,
    file: &Path,
) -> output::Result<Vec<Option<String>>> {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(_) => Ok(None),
            Piece::Enc(e) => plaintext(key, e, &place(file, text, e.raw)).map(Some),
        })
        .collect()
}

/// `pieces` joined with every token as its `DEC::PKCS7[…]!` marker (numbered by piece index
/// as hiera-eyaml's `edit` numbers them when `numbered`).
pub fn with_markers(pieces: &[Piece<'_>], plain: &[Option<String>], numbered: bool) -> String {
    let mut out = String::new();
    for (i, (p, plain)) in pieces.iter().zip(plain).enumerate() {
        match (p, plain) {
            (Piece::Text(t), _) => out.push_str(t),
            (Piece::Enc(e), Some(plain)) => {
                out.push_str(&format_decrypted(e, numbered.then_some(i), plain))
            }
            (Piece::Enc(e), None) => out.push_str(e.raw),
        }
    }
    out
}

/// `FILE:LINE` of `piece`, a slice of `text`.
pub fn place(file: &Path, text: &str, piece: &str) -> String {
    let offset = (piece.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let line = text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1;
    format!("{}:{line}", file.display())
}

/// The plaintext of a token at `place`; the error names the token by its place and the
/// reason, never by its text.
pub fn plaintext(
    key: &PrivateKey,
    e: &hiera_engine::backend::eyaml::tokens::EncToken<'_>,
    place: &str,
) -> output::Result<String> {
    if !e.scheme.eq_ignore_ascii_case("pkcs7") {
        return Err(Failure(format!(
            "{place}: the encrypted value uses the {} scheme; only PKCS7 is supported",
            e.scheme
        )));
    }
    let bytes = key.decrypt(&e.cipher).map_err(|why| {
        Failure(format!(
            "{place}: the encrypted value does not decrypt with this private key ({why}); nothing was changed"
        ))
    })?;
    String::from_utf8(bytes)
        .map_err(|_| Failure(format!("{place}: the encrypted value is not UTF-8 text")))
}
