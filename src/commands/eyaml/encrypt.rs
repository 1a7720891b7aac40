//! `hiera-lookup eyaml encrypt`: a value encrypted for the public key, as hiera-eyaml's
//! `eyaml encrypt` writes it (`--output string` or `block`, `--label`). Needs no private key.

use super::{encrypt_b64, CipherArgs, KeyArgs};
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::tokens::format_encrypted;
use std::io::Read;
use std::path::PathBuf;

/// `hiera-lookup eyaml encrypt`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml encrypt -s 'hunter2' --pkcs7-public-key keys/public_key.pkcs7.pem
    hiera-lookup eyaml encrypt -f id_rsa --output block --label 'profile::ssh::key'

The value comes from -s, -f or standard input (--stdin, or when neither is given).

Exit status: 0 encrypted, 2 error.")]
pub struct Args {
    /// The value to encrypt
    #[arg(short = 's', long, value_name = "STRING", conflicts_with_all = ["file", "stdin"])]
    pub string: Option<String>,

    /// Encrypt the contents of FILE
    #[arg(short = 'f', long, value_name = "FILE", conflicts_with = "stdin")]
    pub file: Option<PathBuf>,

    /// Encrypt standard input (the default without -s or -f)
    #[arg(long)]
    pub stdin: bool,

    /// string (ENC[PKCS7,...] on one line) or block (folded, for a YAML `>` scalar)
    #[arg(short = 'o', long, value_name = "FORMAT", default_value = "string",
          value_parser = crate::flags::groups::Listed(&["string", "block"]))]
    pub output: String,

    /// Write `LABEL: ` before the value (a YAML key)
    #[arg(short = 'l', long, value_name = "LABEL")]
    pub label: Option<String>,

    #[command(flatten)]
    pub cipher: CipherArgs,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Encrypts and prints.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let block = match args.output.as_str() {
        "string" => false,
        "block" => true,
        other => return Err(Failure(format!("--output '{other}': string or block"))),
    };
    let plain: Vec<u8> = match (&args.string, &args.file) {
        (Some(s), _) => s.clone().into_bytes(),
        (None, Some(f)) => hiera_value::limits::read_file(f)
            .map_err(|e| Failure(format!("{}: cannot be read ({e})", f.display())))?,
        (None, None) => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(hiera_value::limits::MAX_FILE_SIZE)
                .read_to_end(&mut buf)
                .map_err(|e| Failure(format!("standard input cannot be read ({e})")))?;
            buf
        }
    };
    let key = args.keys.public_key(None)?;
    let cipher = encrypt_b64(&key, &plain, args.cipher.cipher()?)?;
    output::stdout(
        &format!("{}\n", written(&cipher, block, args.label.as_deref())),
        ExitCode::Success,
    )
}

/// hiera-eyaml's `encrypt` output: the token in string form (`LABEL: ENC[…]`) or in block form
/// indented by two spaces (after `LABEL: >` and a line break when labelled).
pub fn written(cipher: &str, block: bool, label: Option<&str>) -> String {
    let label = label.map(|l| format!("{l}: ")).unwrap_or_default();
    if !block {
        return format!("{label}{}", format_encrypted("PKCS7", cipher, false, ""));
    }
    let folded = format_encrypted("PKCS7", cipher, true, "  ");
    if label.is_empty() {
        // Without a label hiera-eyaml writes no `>` line.
        folded.trim_start_matches(">\n").to_string()
    } else {
        format!("{label}{folded}")
    }
}
