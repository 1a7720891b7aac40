//! `hiera-lookup eyaml createkeys`: a new key pair as hiera-eyaml 5 makes it (RSA 2048, a
//! self-signed `CN=eyaml` certificate with a random serial), the private key written 0600 and
//! the certificate 0644. An existing file is never overwritten.

use super::KeyArgs;
use crate::output::{self, ExitCode, Failure};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// `hiera-lookup eyaml createkeys`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup eyaml createkeys
    hiera-lookup eyaml createkeys --pkcs7-private-key ~/.eyaml/private.pem --pkcs7-public-key keys/public.pem

Where: --pkcs7-private-key/--pkcs7-public-key, else ~/.eyaml/config.yaml or $EYAML_CONFIG,
else ./keys/private_key.pkcs7.pem and ./keys/public_key.pkcs7.pem (hiera-eyaml's).

Exit status: 0 created, 2 error (a key file already there: nothing is written).")]
pub struct Args {
    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Makes and writes the pair.
pub fn exec(args: &Args) -> output::Result<ExitCode> {
    let (private, public) = paths(&args.keys)?;
    for p in [&private, &public] {
        if std::fs::symlink_metadata(p).is_ok() {
            return Err(Failure(format!(
                "{} already exists: createkeys never overwrites a key (move it away first)",
                p.display()
            )));
        }
    }
    let (private_pem, cert_pem) =
        hiera_engine::backend::eyaml::crypt::create_keys().map_err(Failure)?;
    write_new(&private, &private_pem, 0o600)?;
    if let Err(e) = write_new(&public, &cert_pem, 0o644) {
        // Half a pair is no pair.
        let _ = std::fs::remove_file(&private);
        return Err(e);
    }
    output::stdout(
        &format!(
            "Keys created: {} (private, 0600) and {} (public)\n",
            private.display(),
            public.display()
        ),
        ExitCode::Success,
    )
}

/// Where the pair goes.
fn paths(keys: &KeyArgs) -> output::Result<(PathBuf, PathBuf)> {
    let config = super::eyaml_config()?;
    let option = |name: &str| -> Option<PathBuf> {
        config
            .as_ref()
            .and_then(|c| c.options.get(&hiera_value::Value::str(name)))
            .and_then(hiera_value::Value::as_str)
            .map(expand_tilde)
    };
    let private = keys
        .private_key
        .clone()
        .or_else(|| option("pkcs7_private_key"))
        .unwrap_or_else(|| PathBuf::from("./keys/private_key.pkcs7.pem"));
    let public = keys
        .public_key
        .clone()
        .or_else(|| option("pkcs7_public_key"))
        .unwrap_or_else(|| PathBuf::from("./keys/public_key.pkcs7.pem"));
    Ok((super::absolute(&private)?, super::absolute(&public)?))
}

fn expand_tilde(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

/// Writes a new file with `mode` (its directory made if missing); never replaces one.
fn write_new(path: &Path, text: &str, mode: u32) -> output::Result<()> {
    let fail = |e: std::io::Error| Failure(format!("{}: cannot be written ({e})", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(fail)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(fail)?;
    // Whatever the umask says.
    f.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(fail)?;
    f.write_all(text.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)
}
