//! `hiera-lookup eyaml edit FILE`: the file decrypted (`DEC(n)::PKCS7[plaintext]!` markers,
//! as hiera-eyaml's edit mode shows them) into a 0600 file in a fresh private directory,
//! `$EDITOR` on it, then every marker whose plaintext changed (or that is new) encrypted for
//! the public key. An untouched value keeps its exact ciphertext bytes and every other byte
//! of the file stays as the editor left it; the temporary file is overwritten and removed
//! whatever happens. A failing editor, a value that does not decrypt or a marker copied
//! twice leaves the file as it was.

use super::{encrypt_b64, CipherArgs, KeyArgs};
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::tokens::{
    decrypted_pieces, encrypted_pieces, format_encrypted, DecPiece, Piece,
};
use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `hiera-lookup eyaml edit`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml edit data/common.eyaml
    EDITOR='code --wait' hiera-lookup eyaml edit data/nodes/web01.eyaml

Change a value between DEC(n)::PKCS7[ and ]!, or add DEC::PKCS7[new secret]! anywhere: only
those are encrypted again. The editor is $VISUAL, else $EDITOR, else sensible-editor, editor,
vi.

Exit status: 0 saved (or unchanged), 2 error (the file is left as it was).")]
pub struct Args {
    /// The eyaml data file (created when missing)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Do not write hiera-eyaml's explanation at the top of the edited text
    #[arg(long = "no-preamble")]
    pub no_preamble: bool,

    #[command(flatten)]
    pub cipher: CipherArgs,

    #[command(flatten)]
    pub keys: KeyArgs,
}

/// hiera-eyaml's edit-mode preamble: lines starting with this are dropped on save.
const PREFIX: &str = "# |";

fn preamble() -> String {
    [
        "This is eyaml edit mode. This text (lines starting with # | at the top of",
        "the file) will be removed when you save and exit.",
        " - To edit encrypted values, change the content of the DEC(<num>)::PKCS7[]!",
        "   block.",
        "   WARNING: DO NOT change the number in the parentheses.",
        " - To add a new encrypted value copy and paste a new block from the",
        "   appropriate example below. Note that:",
        "    * the text to encrypt goes in the square brackets",
        "    * ensure you include the exclamation mark when you copy and paste",
        "    * you must not include a number when adding a new block",
        "   e.g. DEC::PKCS7[]!",
    ]
    .iter()
    .map(|l| format!("{PREFIX} {l}\n"))
    .collect()
}

/// Edits the file.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let file = super::absolute(&args.file)?;
    let original = if file.exists() {
        super::read_data_file(&file)?
    } else {
        "---\n".to_string()
    };
    let pieces = encrypted_pieces(&original);
    let has_tokens = pieces.iter().any(|p| matches!(p, Piece::Enc(_)));
    let plain = if has_tokens {
        let key = args.keys.private_key(Some(&file))?;
        super::decrypt::plaintexts(&original, &pieces, &key, &file)?
    } else {
        vec![None; pieces.len()]
    };
    let decrypted = super::decrypt::with_markers(&pieces, &plain, true);
    // The public key first: a missing one fails before the editor opens.
    let public = args.keys.public_key(Some(&file))?;
    let cipher = args.cipher.cipher()?;
    let shown = if args.no_preamble {
        decrypted.clone()
    } else {
        preamble() + &decrypted
    };
    let edited = edit_in_private_dir(&file, &shown)?;
    let edited: String = {
        // The preamble's lines at the top are dropped (hiera-eyaml's rule).
        let mut rest = edited.as_str();
        while rest.starts_with(PREFIX) {
            rest = match rest.find('\n') {
                Some(i) => &rest[i + 1..],
                None => "",
            };
        }
        rest.to_string()
    };
    if edited == decrypted {
        output::note(&format!("{}: no changes", file.display()));
        return Ok(ExitCode::Success);
    }
    if edited.trim().is_empty() {
        return Err(Failure(format!(
            "{}: the edited text is blank; the file was left as it was",
            file.display()
        )));
    }
    let text = reencrypt(&pieces, &plain, &edited, &public, cipher, &file)?;
    super::replace_file(&file, &text)?;
    output::note(&format!("{}: saved", file.display()));
    Ok(ExitCode::Success)
}

/// The edited text with every marker encrypted again, except those whose plaintext is the
/// one their number stood for: those get the original token's bytes back.
fn reencrypt(
    pieces: &[Piece<'_>],
    plain: &[Option<String>],
    edited: &str,
    public: &hiera_engine::backend::eyaml::crypt::PublicKey,
    cipher: hiera_engine::backend::eyaml::crypt::Cipher,
    file: &Path,
) -> output::Result<String> {
    let mut out = String::with_capacity(edited.len());
    let mut seen = HashSet::new();
    for p in decrypted_pieces(edited) {
        match p {
            DecPiece::Text(t) => out.push_str(t),
            DecPiece::Dec(d) => {
                if let Some(id) = d.id {
                    if !seen.insert(id) {
                        return Err(Failure(format!(
                            "{}: DEC({id}) appears twice (a copied value?): remove the number from the copy; the file was left as it was",
                            file.display()
                        )));
                    }
                    if let (Some(Piece::Enc(e)), Some(Some(was))) = (pieces.get(id), plain.get(id))
                    {
                        if was == d.plain {
                            out.push_str(e.raw);
                            continue;
                        }
                    }
                }
                if !d.scheme.eq_ignore_ascii_case("pkcs7") {
                    return Err(Failure(format!(
                        "{}: DEC::{}[…]!: only PKCS7 is supported; the file was left as it was",
                        file.display(),
                        d.scheme
                    )));
                }
                let b64 = encrypt_b64(public, d.plain.as_bytes(), cipher)?;
                out.push_str(&format_encrypted("PKCS7", &b64, d.block, d.indent));
            }
        }
    }
    Ok(out)
}

/// Writes `text` to a 0600 file in a fresh 0700 directory, runs the editor on it, and
/// returns what it holds after; the file is overwritten and the directory removed on every
/// way out.
fn edit_in_private_dir(file: &Path, text: &str) -> output::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("hiera-lookup-edit-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|e| Failure(format!("no private temporary directory ({e})")))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "data.eyaml".into());
    let path = dir.path().join(name);
    let guard = Scrub(path.clone());
    let fail = |e: std::io::Error| Failure(format!("the temporary file cannot be written ({e})"));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(fail)?;
        f.write_all(text.as_bytes()).map_err(fail)?;
    }
    let editor = editor()?;
    // Ctrl-C (or a closed terminal) while the editor runs must not end this process before
    // it removes the plaintext: the editor gets the signal and decides.
    let shield = Shield::new();
    // As hiera-eyaml: the editor setting is a shell command line, the file its last word.
    let status = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status()
        .map_err(|e| Failure(format!("the editor '{editor}' could not be started ({e})")))?;
    drop(shield);
    if !status.success() {
        let how = match status.code() {
            Some(c) => format!("exited with status {c}"),
            None => "was killed".to_string(),
        };
        return Err(Failure(format!(
            "the editor '{editor}' {how}: {} was left as it was",
            file.display()
        )));
    }
    let edited = hiera_value::limits::read_text(&path).map_err(|e| {
        Failure(format!(
            "the edited text cannot be read back ({e}; did the editor move it?): {} was left as it was",
            file.display()
        ))
    })?;
    drop(guard);
    drop(dir);
    Ok(edited)
}

/// While it lives, SIGINT, SIGQUIT, SIGHUP and SIGTERM do not end this process (a handler
/// that does nothing: unlike an ignored signal, a handler is reset in the editor that `exec`
/// starts, so the editor reacts to them as usual).
struct Shield(Vec<(libc::c_int, libc::sighandler_t)>);

extern "C" fn do_nothing(_: libc::c_int) {}

impl Shield {
    fn new() -> Shield {
        let handler = do_nothing as extern "C" fn(libc::c_int) as libc::sighandler_t;
        Shield(
            [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTERM]
                .into_iter()
                // SAFETY: installs a handler that touches nothing (async-signal-safe); the old
                // disposition is kept and restored on drop.
                .map(|sig| (sig, unsafe { libc::signal(sig, handler) }))
                .collect(),
        )
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        for (sig, old) in &self.0 {
            // SAFETY: restores the disposition `signal` returned for this signal.
            unsafe {
                libc::signal(*sig, *old);
            }
        }
    }
}

/// Overwrites the temporary file before it is removed (hiera-eyaml's secure delete).
struct Scrub(PathBuf);

impl Drop for Scrub {
    fn drop(&mut self) {
        if let Ok(m) = std::fs::metadata(&self.0) {
            if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&self.0) {
                let zeros = vec![0u8; m.len().min(64 << 20) as usize];
                let _ = f.write_all(&zeros).and_then(|_| f.sync_all());
            }
        }
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `$VISUAL`, `$EDITOR`, else the first of Debian's editors that exists.
fn editor() -> output::Result<String> {
    for var in ["VISUAL", "EDITOR"] {
        if let Some(e) = std::env::var(var).ok().filter(|e| !e.trim().is_empty()) {
            return Ok(e);
        }
    }
    [
        "/usr/bin/sensible-editor",
        "/usr/bin/editor",
        "/usr/bin/vim",
        "/usr/bin/vi",
    ]
    .iter()
    .find(|p| Path::new(p).is_file())
    .map(|p| p.to_string())
    .ok_or_else(|| Failure("no editor found: set $EDITOR".into()))
}
