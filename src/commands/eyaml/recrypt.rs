//! `hiera-lookup eyaml recrypt [FILES…|--all]`: every encrypted value decrypted with the
//! current private key and encrypted again, for a new public key (`--to-public-key`) or with
//! another cipher. Only the `ENC[…]` tokens change (in their own form, string or block);
//! every file is decrypted before any is written, so a value that does not decrypt changes
//! nothing.

use super::{encrypt_b64, CipherArgs, KeyArgs};
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::crypt::PublicKey;
use hiera_engine::backend::eyaml::tokens::{encrypted_pieces, format_encrypted, Piece};
use std::path::PathBuf;

/// `hiera-lookup eyaml recrypt`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml recrypt --all --to-public-key keys/new_public_key.pkcs7.pem
    hiera-lookup eyaml recrypt data/common.eyaml --cipher aes-128-cbc

--all: every data file hiera.yaml's eyaml levels read that holds an ENC[...] value.

Exit status: 0 done, 2 error (nothing is written).")]
pub struct Args {
    /// The eyaml files
    #[arg(
        value_name = "FILE",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub files: Vec<PathBuf>,

    /// Every eyaml data file of hiera.yaml's eyaml levels
    #[arg(long)]
    pub all: bool,

    /// Encrypt for this public key (certificate) instead of the current one
    #[arg(long = "to-public-key", value_name = "FILE")]
    pub to_public_key: Option<PathBuf>,

    #[command(flatten)]
    pub cipher: CipherArgs,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Re-encrypts the files.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let files = if args.all {
        all_files(&args.keys)?
    } else {
        args.files
            .iter()
            .map(|f| super::absolute(f))
            .collect::<output::Result<_>>()?
    };
    let cipher = args.cipher.cipher()?;
    let to = match &args.to_public_key {
        Some(p) => Some(
            PublicKey::from_pem(&hiera_value::limits::read_file(p).map_err(|e| {
                Failure(format!(
                    "--to-public-key {}: cannot be read ({e})",
                    p.display()
                ))
            })?)
            .map_err(|e| Failure(format!("--to-public-key {}: {e}", p.display())))?,
        ),
        None => None,
    };
    // Everything decrypted and encrypted first; then written.
    let mut done = Vec::new();
    let mut values = 0;
    for f in &files {
        let text = super::read_data_file(f)?;
        let pieces = encrypted_pieces(&text);
        if !pieces.iter().any(|p| matches!(p, Piece::Enc(_))) {
            continue;
        }
        let key = args.keys.private_key(Some(f))?;
        let public = match &to {
            Some(k) => k.clone(),
            None => args.keys.public_key(Some(f))?,
        };
        let plain = super::decrypt::plaintexts(&text, &pieces, &key, f)?;
        let mut out = String::with_capacity(text.len());
        for (p, plain) in pieces.iter().zip(&plain) {
            match (p, plain) {
                (Piece::Enc(e), Some(plain)) => {
                    values += 1;
                    let b64 = encrypt_b64(&public, plain.as_bytes(), cipher)?;
                    out.push_str(&format_encrypted(e.scheme, &b64, e.block, e.indent));
                }
                (Piece::Text(t), _) => out.push_str(t),
                (Piece::Enc(e), None) => out.push_str(e.raw),
            }
        }
        done.push((f.clone(), out));
    }
    for (f, text) in &done {
        super::replace_file(f, text)?;
    }
    output::stdout(
        &format!(
            "Re-encrypted {values} value(s) in {} file(s) with {}\n",
            done.len(),
            cipher.name()
        ),
        ExitCode::Success,
    )
}

/// Every data file an eyaml level reads (as lint finds them) that holds a token.
fn all_files(keys: &KeyArgs) -> output::Result<Vec<PathBuf>> {
    let opts = hiera_lint::Options {
        root: keys.root()?,
        hiera_config: keys.repo.hiera_config.clone(),
        modulepath: keys.repo.modulepath.clone(),
        ..Default::default()
    };
    let files = hiera_lint::editor::eyaml_files(&opts)?;
    if files.is_empty() {
        return Err(Failure(format!(
            "--all: no eyaml_lookup_key level of {} reads a data file",
            opts.root.display()
        )));
    }
    Ok(files
        .into_iter()
        .map(|(f, _)| f)
        .filter(|f| hiera_value::limits::read_text(f).is_ok_and(|t| t.contains("ENC[")))
        .collect())
}
