//! `hiera-lookup eyaml …`: hiera-eyaml's commands, aware of the control repo: `encrypt`,
//! `decrypt`, `createkeys`, `edit`, `set` and `recrypt`, one file each under `eyaml/`.
//!
//! Keys are found as Puppet and hiera-eyaml find them ([`KeyArgs`]): the flags
//! `--pkcs7-private-key`/`--pkcs7-public-key` when given (the one key then, as hiera-eyaml's
//! flags override its configuration), else the options of the control
//! repo's eyaml level (hiera.yaml: `pkcs7_private_key`, `pkcs7_private_key_env_var`,
//! hiera-eyaml 5's `pkcs7_b64_private_key_env_var`, and the public ones), else
//! `~/.eyaml/config.yaml` and `$EYAML_CONFIG`, else hiera-eyaml's `./keys/` defaults. A
//! source whose key is not there (a production path on a laptop) is passed over; one whose
//! key is there but unreadable stops the command. The crypto is the engine's
//! (`hiera_engine::backend::eyaml`). Plaintexts are printed only where asked (`decrypt`), and
//! never in a message.

pub mod createkeys;
pub mod decrypt;
pub mod edit;
pub mod encrypt;
pub mod recrypt;
pub mod set;

use crate::flags::groups::RepoArgs;
use crate::output::{self, ExitCode, Failure};
use hiera_engine::backend::eyaml::crypt::{Cipher, PrivateKey, PublicKey};
use hiera_engine::backend::eyaml::{load_keys, KeyError};
use hiera_engine::config::{Entry, HieraConfig, Layer, LoadContext, Locations};
use hiera_value::value::{Map, Value};
use std::path::{Path, PathBuf};

/// `hiera-lookup eyaml COMMAND`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "\
Examples:
    hiera-lookup eyaml encrypt -s 'hunter2'
    hiera-lookup eyaml edit data/common.eyaml

Exit status: 0 done, 2 error.",
    after_long_help = "\
Examples:
    hiera-lookup eyaml encrypt -s 'hunter2'
    hiera-lookup eyaml edit data/common.eyaml

Commands:
    encrypt     a value for the public key (ENC[PKCS7,...]), string or block form
    decrypt     a value, or a file (every ENC[...] as DEC::PKCS7[...]!)
    createkeys  a new key pair (RSA 2048), as hiera-eyaml makes it
    edit FILE   decrypt into $EDITOR, re-encrypt only what changed
    set KEY VALUE --level NAME|--file PATH   add or replace an encrypted value
    recrypt     every value again, for a new public key or with another cipher

Keys: --pkcs7-private-key/--pkcs7-public-key, else the options of hiera.yaml's eyaml level
(pkcs7_private_key, pkcs7_private_key_env_var, pkcs7_b64_private_key_env_var and the public
ones), else ~/.eyaml/config.yaml and $EYAML_CONFIG, else ./keys/private_key.pkcs7.pem and
./keys/public_key.pkcs7.pem. encrypt and set need only the public key.

Exit status: 0 done, 2 error."
)]
pub struct EyamlArgs {
    #[command(subcommand)]
    pub command: EyamlCommand,
}

/// The eyaml commands.
#[derive(clap::Subcommand, Debug)]
pub enum EyamlCommand {
    /// Encrypt a value for the public key
    Encrypt(encrypt::Args),
    /// Decrypt a value, or every value of a file
    Decrypt(decrypt::Args),
    /// Make a new key pair
    Createkeys(createkeys::Args),
    /// Edit a file's secrets in $EDITOR
    Edit(edit::Args),
    /// Add or replace a key's encrypted value in a data file
    Set(set::Args),
    /// Encrypt every value again (a new public key, another cipher)
    Recrypt(recrypt::Args),
}

/// Runs an eyaml command.
pub fn exec(args: &EyamlArgs) -> output::Result<ExitCode> {
    match &args.command {
        EyamlCommand::Encrypt(a) => encrypt::exec(a),
        EyamlCommand::Decrypt(a) => decrypt::exec(a),
        EyamlCommand::Createkeys(a) => createkeys::exec(a),
        EyamlCommand::Edit(a) => edit::exec(a),
        EyamlCommand::Set(a) => set::exec(a),
        EyamlCommand::Recrypt(a) => recrypt::exec(a),
    }
}

/// Where the keys are (every eyaml command takes these).
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Keys")]
pub struct KeyArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    /// The private key (PEM), instead of hiera.yaml's
    #[arg(
        long = "pkcs7-private-key",
        alias = "pkcs7_private_key",
        value_name = "FILE"
    )]
    pub private_key: Option<PathBuf>,

    /// The public key (certificate, PEM), instead of hiera.yaml's
    #[arg(
        long = "pkcs7-public-key",
        alias = "pkcs7_public_key",
        value_name = "FILE"
    )]
    pub public_key: Option<PathBuf>,

    /// The hiera.yaml level whose keys to use (when its eyaml levels use different keys)
    #[arg(long, value_name = "NAME")]
    pub level: Option<String>,
}

/// One place keys may be named: where (for messages) and its options, named as in hiera.yaml.
struct KeySource {
    origin: String,
    options: Map,
}

impl KeyArgs {
    /// The control repo's directory (absolute).
    pub fn root(&self) -> output::Result<PathBuf> {
        Ok(self.repo.root(&cwd()?))
    }

    /// The environment's hiera.yaml, loaded (`None` when there is none).
    pub fn hiera(&self) -> output::Result<Option<HieraConfig>> {
        let path = self.root()?.join("hiera.yaml");
        if !path.is_file() {
            return Ok(None);
        }
        let ctx = LoadContext {
            layer: Layer::Environment,
            codedir: PathBuf::from("/etc/puppetlabs/code"),
            strict_off: true,
        };
        Ok(Some(HieraConfig::load(&path, &ctx, &mut Vec::new())?))
    }

    /// The eyaml level of hiera.yaml that `--level` names, or whose files hold `file`.
    pub fn level_for(&self, file: Option<&Path>) -> output::Result<Option<Entry>> {
        let Some(config) = self.hiera()? else {
            return match &self.level {
                Some(l) => Err(Failure(format!(
                    "--level {l}: the control repo {} has no hiera.yaml",
                    self.root()?.display()
                ))),
                None => Ok(None),
            };
        };
        let eyaml: Vec<&Entry> = config
            .hierarchy
            .iter()
            .filter(|e| e.function == "eyaml_lookup_key")
            .collect();
        if let Some(name) = &self.level {
            let e = config
                .hierarchy
                .iter()
                .find(|e| &e.name == name)
                .ok_or_else(|| {
                    Failure(format!(
                        "--level {name}: hiera.yaml has no level of that name (levels: {})",
                        names(config.hierarchy.iter())
                    ))
                })?;
            if e.function != "eyaml_lookup_key" {
                return Err(Failure(format!(
                    "--level {name}: the level uses {}, not eyaml_lookup_key: Puppet would not decrypt a value there",
                    e.function
                )));
            }
            return Ok(Some(e.clone()));
        }
        if let Some(file) = file {
            let file = absolute(file)?;
            if let Some(e) = eyaml.iter().find(|e| entry_holds(e, &file)) {
                return Ok(Some((*e).clone()));
            }
        }
        // Every eyaml level with the same keys: any of them.
        let first = eyaml.first();
        match first {
            Some(f) if eyaml.iter().all(|e| key_options(e) == key_options(f)) => {
                Ok(Some((*f).clone()))
            }
            Some(_) => Err(Failure(format!(
                "hiera.yaml's eyaml levels ({}) use different keys: say which with --level NAME",
                names(eyaml.iter().copied())
            ))),
            None => Ok(None),
        }
    }

    /// Every source of keys after the flags, in the order they are tried.
    fn sources(&self, file: Option<&Path>) -> output::Result<Vec<KeySource>> {
        let mut out = Vec::new();
        if let Some(e) = self.level_for(file)? {
            let options = key_options(&e);
            if let Some((k, _)) = options
                .iter()
                .find(|(_, v)| v.as_str().is_some_and(|s| s.contains("%{")))
            {
                return Err(Failure(format!(
                    "hiera.yaml's level '{}' interpolates its {} option: give the key with --pkcs7-private-key/--pkcs7-public-key",
                    e.name,
                    k.as_str().unwrap_or("key")
                )));
            }
            out.push(KeySource {
                origin: format!("hiera.yaml's level '{}'", e.name),
                options,
            });
        }
        if let Some(c) = eyaml_config()? {
            out.push(c);
        }
        let mut defaults = Map::default();
        defaults.insert(
            Value::str("pkcs7_private_key"),
            Value::str("./keys/private_key.pkcs7.pem"),
        );
        defaults.insert(
            Value::str("pkcs7_public_key"),
            Value::str("./keys/public_key.pkcs7.pem"),
        );
        out.push(KeySource {
            origin: "hiera-eyaml's default ./keys/".into(),
            options: defaults,
        });
        Ok(out)
    }

    /// The private key for `file` (or for the repo), from the first source that has one.
    pub fn private_key(&self, file: Option<&Path>) -> output::Result<PrivateKey> {
        let text = self.find(file, true)?;
        if let Some(f) = &text.file {
            warn_if_unprotected(f);
        }
        PrivateKey::from_pem(&text.pem).map_err(|e| {
            Failure(format!(
                "the eyaml private key {}: {e}",
                shown(text.file.as_deref())
            ))
        })
    }

    /// The public key for `file` (or for the repo), from the first source that has one.
    pub fn public_key(&self, file: Option<&Path>) -> output::Result<PublicKey> {
        let text = self.find(file, false)?;
        PublicKey::from_pem(&text.pem).map_err(|e| {
            Failure(format!(
                "the eyaml public key {}: {e}",
                shown(text.file.as_deref())
            ))
        })
    }

    fn find(
        &self,
        file: Option<&Path>,
        private: bool,
    ) -> output::Result<hiera_engine::backend::eyaml::KeyText> {
        let which = if private { "private" } else { "public" };
        // A key given on the command line is the one: missing, it is an error.
        let flag = if private {
            &self.private_key
        } else {
            &self.public_key
        };
        if let Some(p) = flag {
            let mut options = Map::default();
            options.insert(Value::str(format!("pkcs7_{which}_key")), path_value(p));
            let keys = load_keys(&options);
            let r = if private {
                keys.private_pem()
            } else {
                keys.public_pem()
            };
            return r.map_err(|e| {
                let (KeyError::Absent(why) | KeyError::Unreadable(why)) = e;
                Failure(format!("--pkcs7-{which}-key: {why}"))
            });
        }
        let mut tried = Vec::new();
        for s in self.sources(file)? {
            let keys = load_keys(&s.options);
            let r = if private {
                keys.private_pem()
            } else {
                keys.public_pem()
            };
            match r {
                Ok(t) => return Ok(t),
                Err(KeyError::Absent(why)) => tried.push(format!("{}: {why}", s.origin)),
                Err(KeyError::Unreadable(why)) => {
                    return Err(Failure(format!(
                        "the eyaml {which} key of {}: {why}",
                        s.origin
                    )))
                }
            }
        }
        Err(Failure(format!(
            "no eyaml {which} key found ({}); give one with --pkcs7-{which}-key FILE",
            tried.join("; ")
        )))
    }
}

/// The key options of an eyaml level (`pkcs7_*`).
fn key_options(e: &Entry) -> Map {
    e.options
        .iter()
        .flatten()
        .filter(|(k, _)| k.as_str().is_some_and(|k| k.starts_with("pkcs7_")))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn names<'a>(entries: impl Iterator<Item = &'a Entry>) -> String {
    entries
        .map(|e| e.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `file` (absolute) is one of the files `e` can read: its locations with every
/// `%{…}` standing for any name.
fn entry_holds(e: &Entry, file: &Path) -> bool {
    let patterns: Vec<&String> = match &e.locations {
        Locations::Paths(p) | Locations::Globs(p) => p.iter().collect(),
        Locations::Mapped(_, _, t) => vec![t],
        Locations::None | Locations::Uris(_) => Vec::new(),
    };
    let file = file.to_string_lossy();
    patterns.iter().any(|p| {
        let full = hiera_engine::config::path_plus(&e.datadir, p);
        glob_match(&placeholders_as_stars(&full), &file)
    })
}

/// `%{anything}` as `*`.
fn placeholders_as_stars(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("%{") {
        out.push_str(&rest[..i]);
        out.push('*');
        rest = match rest[i..].find('}') {
            Some(j) => &rest[i + j + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// A glob of `*` (any run of characters but `/`), `**` (any) and `?`; braces and classes are
/// taken literally.
fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => {
                let (any, rest) = match rest.split_first() {
                    Some((b'*', r)) => (true, r),
                    _ => (false, rest),
                };
                (0..=t.len())
                    .take_while(|&i| any || !t[..i].contains(&b'/'))
                    .any(|i| go(rest, &t[i..]))
            }
            Some((b'?', rest)) => t.first().is_some_and(|c| *c != b'/') && go(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

/// hiera-eyaml's configuration files: `~/.eyaml/config.yaml`, then `$EYAML_CONFIG` over it.
fn eyaml_config() -> output::Result<Option<KeySource>> {
    let mut files = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        files.push(PathBuf::from(home).join(".eyaml/config.yaml"));
    }
    if let Some(c) = std::env::var_os("EYAML_CONFIG").filter(|c| !c.is_empty()) {
        files.push(PathBuf::from(c));
    }
    let mut options = Map::default();
    let mut read = Vec::new();
    for f in files {
        if !f.is_file() {
            continue;
        }
        let text = hiera_value::limits::read_text(&f)
            .map_err(|e| Failure(format!("{}: cannot be read ({e})", f.display())))?;
        match hiera_formats::yaml::load(&text) {
            Ok(Value::Hash(h)) => options.extend(h),
            Ok(Value::Null) => {}
            Ok(_) => {
                return Err(Failure(format!(
                    "{}: not a mapping of hiera-eyaml options",
                    f.display()
                )))
            }
            Err(e) => return Err(Failure(format!("{}: {e}", f.display()))),
        }
        read.push(f.display().to_string());
    }
    Ok((!read.is_empty()).then(|| KeySource {
        origin: read.join(" and "),
        options,
    }))
}

/// ssh's warning for a private key file others can read.
fn warn_if_unprotected(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(file) {
        let mode = m.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            output::warn(&format!(
                "UNPROTECTED PRIVATE KEY FILE: permissions {mode:04o} for '{}' are too open: others can read the eyaml private key (chmod 600 it)",
                file.display()
            ));
        }
    }
}

fn shown(file: Option<&Path>) -> String {
    match file {
        Some(f) => f.display().to_string(),
        None => "(from the environment)".into(),
    }
}

fn path_value(p: &Path) -> Value {
    Value::str(p.to_string_lossy())
}

/// The working directory.
pub fn cwd() -> output::Result<PathBuf> {
    std::env::current_dir()
        .map_err(|e| Failure(format!("the current directory cannot be read ({e})")))
}

/// `p` made absolute against the working directory.
pub fn absolute(p: &Path) -> output::Result<PathBuf> {
    Ok(hiera_engine::environment::absolute(&cwd()?, p))
}

/// `--cipher`: the content cipher of what a command encrypts.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CipherArgs {
    /// The content cipher: aes-256-cbc (hiera-eyaml's), aes-192-cbc, aes-128-cbc, des-ede3-cbc
    #[arg(long, value_name = "CIPHER", value_parser = crate::flags::groups::Listed(CIPHERS))]
    pub cipher: Option<String>,
}

/// `--cipher`'s values.
pub const CIPHERS: &[&str] = &["aes-256-cbc", "aes-192-cbc", "aes-128-cbc", "des-ede3-cbc"];

impl CipherArgs {
    /// The cipher asked for (hiera-eyaml's AES-256-CBC by default).
    pub fn cipher(&self) -> output::Result<Cipher> {
        match &self.cipher {
            None => Ok(Cipher::default()),
            Some(c) => Cipher::from_name(c).ok_or_else(|| {
                Failure(format!(
                    "--cipher '{c}': not a cipher ({})",
                    CIPHERS.join(", ")
                ))
            }),
        }
    }
}

/// Reads a data file as UTF-8 text (bounded like every file a lookup reads).
pub fn read_data_file(path: &Path) -> output::Result<String> {
    hiera_value::limits::read_text(path)
        .map_err(|e| Failure(format!("{}: cannot be read ({e})", path.display())))
}

/// Replaces `path` with `text` atomically (a temporary file beside it, renamed over it),
/// keeping its permissions: a failure leaves the old file as it was.
pub fn replace_file(path: &Path, text: &str) -> output::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Failure(format!("{}: cannot be written ({e})", path.display()));
    let mut tmp = tempfile::Builder::new()
        .prefix(".hiera-lookup-")
        .tempfile_in(dir)
        .map_err(fail)?;
    if let Ok(m) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), m.permissions()).map_err(fail)?;
    }
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// A token's ciphertext (base64) for `plain`, encrypted for `key` with `cipher`.
pub fn encrypt_b64(key: &PublicKey, plain: &[u8], cipher: Cipher) -> output::Result<String> {
    key.encrypt(plain, cipher)
        .map(|der| hiera_value::ruby::strict_encode64(&der))
        .map_err(|e| Failure(format!("encryption failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_placeholders() {
        assert!(glob_match("/r/data/*.eyaml", "/r/data/common.eyaml"));
        assert!(!glob_match("/r/data/*.eyaml", "/r/data/nodes/a.eyaml"));
        assert!(glob_match("/r/data/**.eyaml", "/r/data/nodes/a.eyaml"));
        assert_eq!(
            placeholders_as_stars("/r/nodes/%{trusted.certname}.eyaml"),
            "/r/nodes/*.eyaml"
        );
    }
}
