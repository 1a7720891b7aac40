//! `eyaml_lookup_key`'s decryption: hiera-eyaml 4.2's PKCS7 encryptor (`ENC[PKCS7,<base64
//! DER>]`, a PKCS#7 EnvelopedData with RSA PKCS#1 v1.5 key transport and AES-CBC content),
//! with hiera-eyaml's token grammar and Ruby/OpenSSL's error texts.
//!
//! What Puppet does (puppet/functions/eyaml_lookup_key.rb), and so what this module does:
//! only the found value of the looked-up key is decrypted; strings matching `/.*ENC\[.*?\]/`
//! (a token opening and closing on one line) are split into tokens by hiera-eyaml's
//! `hiera_backend_parser`, every `ENC[...]` token is decrypted (whitespace and newlines
//! inside a token are dropped, so YAML's folded `>` block form works; a `|` literal block
//! keeps its newlines, fails the one-line test and stays as written), the pieces are joined
//! and `chomp`ed. Arrays and hash values recurse; hash keys are only interpolated, never
//! decrypted. The caller interpolates every string and hash key afterwards.
//!
//! The key is read the way hiera-eyaml 5 reads it, at every token: option
//! `pkcs7_private_key_env_var` (the name of an environment variable holding the PEM text,
//! which must be set) wins over `pkcs7_b64_private_key_env_var` (hiera-eyaml 5: the same in
//! base64; hiera-eyaml 4 ignores it), which wins over `pkcs7_private_key` (a path as written, relative to the
//! working directory, like Ruby's `File.read`; a leading `~` is expanded, which Puppet does
//! not do). The public key (certificate) is not needed to decrypt: hiera-eyaml 4 builds the
//! recipient from the value's first recipient and the private key.
//!
//! Errors name the value, key and file as Puppet does and never contain key material.
//!
//! **Opaque secrets** ([`Secrets`]): without the level's private key (or when asked), a token
//! is not decrypted but replaced by its stand-in, `ENC[…` + 16 hex digits of the SHA-256 of
//! its ciphertext + `]` ([`opaque_marker`]). The stand-in is an ordinary string fragment, so
//! everything after the backend needs no case of its own: two stand-ins are equal exactly
//! when their ciphertexts are (a unique merge keeps one, a hash merge replaces one with the
//! other, a diff sees a changed secret as a changed string), interpolation carries one into a
//! bigger string and keeps it distinct, and printing shows it as it is: never the ciphertext,
//! never a plaintext. [`contains_opaque`] tells a value that holds one (a type check that needs
//! the plaintext cannot be made on it).

pub use super::custom::Secrets;
use crate::error::Error;
use hiera_value::value::{Map, Value};
use regex::Regex;
use std::sync::OnceLock;

/// Where the key pair of one hierarchy entry comes from (its interpolated options). Cheap to
/// build: nothing is read until a value needs decrypting, as in hiera-eyaml, so a broken key
/// setting only fails lookups that meet an encrypted value.
#[derive(Debug, Clone)]
pub struct EyamlKeys {
    #[cfg_attr(not(feature = "eyaml"), allow(dead_code))]
    private: Source,
    /// The certificate (`eyaml` commands only: a lookup never reads it).
    #[cfg_attr(not(feature = "eyaml"), allow(dead_code))]
    public: Source,
    /// Where key files are read (the lookup's file system).
    #[cfg_attr(not(feature = "eyaml"), allow(dead_code))]
    fs: std::sync::Arc<dyn crate::fs::Fs>,
}

/// One `pkcs7_*_key` setting: the path option and the env-var option (Ruby truthiness: a
/// missing, `~` or `false` option is not defined).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "eyaml"), allow(dead_code))]
struct Source {
    path: Option<Value>,
    env_var: Option<Value>,
    /// hiera-eyaml 5's `pkcs7_b64_*_key_env_var`: a variable holding the PEM in base64.
    b64_env_var: Option<Value>,
}

/// The options of an `eyaml_lookup_key` entry, read lazily. hiera-eyaml has no defaults
/// when called from Puppet (its `./keys/...` defaults are only the `eyaml` CLI's).
pub fn load_keys(options: &Map) -> EyamlKeys {
    load_keys_in(options, crate::fs::disk())
}

/// [`load_keys`], the key files read from `fs`.
pub fn load_keys_in(options: &Map, fs: std::sync::Arc<dyn crate::fs::Fs>) -> EyamlKeys {
    let opt = |name: &str| {
        options
            .get(&hiera_value::value::StrKey(name))
            .filter(|v| v.truthy())
            .cloned()
    };
    EyamlKeys {
        private: Source {
            path: opt("pkcs7_private_key"),
            env_var: opt("pkcs7_private_key_env_var"),
            b64_env_var: opt("pkcs7_b64_private_key_env_var"),
        },
        public: Source {
            path: opt("pkcs7_public_key"),
            env_var: opt("pkcs7_public_key_env_var"),
            b64_env_var: opt("pkcs7_b64_public_key_env_var"),
        },
        fs,
    }
}

/// A key's PEM text as [`EyamlKeys::private_pem`] reads it, and the file it came from.
#[derive(Clone)]
pub struct KeyText {
    /// The PEM (or DER) text.
    pub pem: Vec<u8>,
    /// The file, when the key was read from one (not from a variable).
    pub file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for KeyText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyText({:?})", self.file)
    }
}

/// Why a key could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// There is none: the option is not defined, its variable is not set, its file is missing.
    Absent(String),
    /// There is one, but it cannot be read (a directory, a FIFO, no permission…).
    Unreadable(String),
}

impl EyamlKeys {
    /// The private key's text, read as hiera-eyaml 5 reads it (variable, base64 variable,
    /// file), through the lookup's file system.
    #[cfg(feature = "eyaml")]
    pub fn private_pem(&self) -> Result<KeyText, KeyError> {
        self.read(&self.private, "private_key")
    }

    /// The public key's (certificate's) text, read as [`private_pem`](Self::private_pem).
    #[cfg(feature = "eyaml")]
    pub fn public_pem(&self) -> Result<KeyText, KeyError> {
        self.read(&self.public, "public_key")
    }

    #[cfg(feature = "eyaml")]
    fn read(&self, src: &Source, what: &str) -> Result<KeyText, KeyError> {
        match pkcs7::read_source(&*self.fs, src, what) {
            Ok(pem) => Ok(KeyText {
                pem,
                file: pkcs7::source_file(src),
            }),
            Err(Failure::NoKey(m)) => Err(KeyError::Absent(m)),
            Err(Failure::Decrypt(m) | Failure::Load(m)) => Err(KeyError::Unreadable(m)),
        }
    }
}

/// True when `v` holds a string that Puppet would hand to hiera-eyaml (hash keys excluded):
/// the values `--redact` must hide.
pub(crate) fn contains_encrypted(v: &Value) -> bool {
    match v {
        Value::String(s) => is_encrypted(s),
        Value::Array(a) => a.iter().any(contains_encrypted),
        Value::Hash(h) => h.values().any(contains_encrypted),
        Value::Sensitive(inner) => contains_encrypted(inner),
        _ => false,
    }
}

/// Decrypts every token of a found value, as `eyaml_lookup_key`'s `decrypt_value` does
/// (before its interpolation, which the caller does). `key` is the root key looked up and
/// `path` the data file, for the message. Decryption failures are LookupErrors
/// (`hiera-eyaml backend error decrypting <data> when looking up <key> in <path>. Error was
/// <msg>`); an unknown scheme (`ENC[GPG,...]`) is Ruby's LoadError, which escapes the
/// function's rescue and aborts the run.
pub fn decrypt_value(v: &Value, keys: &EyamlKeys, key: &str, path: &str) -> Result<Value, Error> {
    decrypt_collect(v, keys, key, path, Secrets::Decrypt, &mut Vec::new())
}

/// [`decrypt_value`] with the session's [`Secrets`] mode, also pushing onto `plaintexts`
/// what each token decrypted to and each decrypted string: what `--redact` hides when it is
/// printed. Opaque tokens are replaced by their stand-ins and push nothing.
pub(crate) fn decrypt_collect(
    v: &Value,
    keys: &EyamlKeys,
    key: &str,
    path: &str,
    mode: Secrets,
    plaintexts: &mut Vec<String>,
) -> Result<Value, Error> {
    match v {
        Value::String(s) if is_encrypted(s) => {
            let mut decrypted = false;
            match decrypt_string(s, keys, mode, plaintexts, &mut decrypted) {
                Ok(out) => {
                    if decrypted {
                        plaintexts.push(out.clone());
                    }
                    Ok(Value::String(out))
                }
                Err(Failure::Load(msg)) => Err(Error::run(msg)),
                Err(Failure::Decrypt(msg) | Failure::NoKey(msg)) => Err(Error::lookup(format!(
                    "hiera-eyaml backend error decrypting {s} when looking up {key} in {path}. Error was {msg}"
                ))),
            }
        }
        Value::Array(a) => a
            .iter()
            .map(|e| decrypt_collect(e, keys, key, path, mode, plaintexts))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Hash(h) => {
            let mut out = Map::with_capacity_and_hasher(h.len(), Default::default());
            for (k, e) in h {
                out.insert(
                    k.clone(),
                    decrypt_collect(e, keys, key, path, mode, plaintexts)?,
                );
            }
            Ok(Value::Hash(out))
        }
        other => Ok(other.clone()),
    }
}

/// What an opaque stand-in starts with ([`opaque_marker`]).
pub const OPAQUE_OPEN: &str = "ENC[…";

/// The stand-in of an encrypted token whose ciphertext (base64, whitespace removed) is
/// `cipher`: `ENC[…` + the first 16 hex digits of its SHA-256 + `]`. Equal stand-ins mean
/// equal ciphertexts; nothing of the ciphertext or plaintext can be read from it.
pub fn opaque_marker(cipher: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(cipher.as_bytes());
    let mut out = String::with_capacity(OPAQUE_OPEN.len() + 17);
    out.push_str(OPAQUE_OPEN);
    for b in &digest[..8] {
        out.push_str(&format!("{b:02x}"));
    }
    out.push(']');
    out
}

/// The stand-ins in `s` ([`opaque_marker`]), in order.
pub fn opaque_markers(s: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| re(r"ENC\[…[0-9a-f]{16}\]"));
    s.contains(OPAQUE_OPEN)
        .then(|| re.find_iter(s).map(|m| m.as_str()))
        .into_iter()
        .flatten()
}

/// Whether `v` holds an opaque secret: a string (or hash key) with a stand-in, at any depth.
pub fn contains_opaque(v: &Value) -> bool {
    count_opaque(v) > 0
}

/// How many stand-ins `v` holds, at any depth (hash keys included).
pub fn count_opaque(v: &Value) -> usize {
    match v {
        Value::String(s) => opaque_markers(s).count(),
        Value::Array(a) => a.iter().map(count_opaque).sum(),
        Value::Hash(h) => h
            .iter()
            .map(|(k, e)| count_opaque(k) + count_opaque(e))
            .sum(),
        Value::Sensitive(inner) => count_opaque(inner),
        Value::Object(o) => o.fields.iter().map(|(_, f)| count_opaque(f)).sum(),
        _ => 0,
    }
}

/// Why a string could not be decrypted.
#[derive(Debug, Clone, PartialEq)]
enum Failure {
    /// A StandardError inside hiera-eyaml: its message.
    Decrypt(String),
    /// Ruby's LoadError for an encryptor plugin that is not installed.
    Load(String),
    /// No private key to decrypt with (the option is not defined, its variable is not set,
    /// its file does not exist): Puppet's error, or an opaque secret ([`Secrets::Auto`]).
    NoKey(String),
}

fn decrypt_err(msg: impl Into<String>) -> Failure {
    Failure::Decrypt(msg.into())
}

/// eyaml_lookup_key's `encrypted?`: `/.*ENC\[.*?\]/` (`.` stops at newlines).
fn is_encrypted(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    s.contains("ENC[") && RE.get_or_init(|| re(r"ENC\[.*?\]")).is_match(s)
}

fn re(pattern: &str) -> Regex {
    // The patterns are constants of this file; a typo is caught by the unit tests.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad built-in regex {pattern}: {e}"))
}

/// hiera-eyaml's `hiera_backend_parser` + `to_plain_text` + `join.chomp`.
/// Each token's plaintext is pushed onto `plaintexts` (and `decrypted` set); an opaque token
/// ([`Secrets`]) becomes its stand-in.
fn decrypt_string(
    s: &str,
    keys: &EyamlKeys,
    mode: Secrets,
    plaintexts: &mut Vec<String>,
    decrypted: &mut bool,
) -> Result<String, Failure> {
    // EncHieraTokenType: spaces and newlines may sit inside the base64 (block form).
    static HIERA: OnceLock<Regex> = OnceLock::new();
    // EncStringTokenType, applied to the token with its whitespace removed.
    static STRING: OnceLock<Regex> = OnceLock::new();
    let hiera = HIERA.get_or_init(|| re(r"ENC\[([A-Za-z0-9_]+,)?([a-zA-Z0-9+/ =\n]+?)\]"));
    let string = STRING.get_or_init(|| re(r"ENC\[([A-Za-z0-9_]+,)?([a-zA-Z0-9+/=]+?)\]"));
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for m in hiera.find_iter(s) {
        out.push_str(&s[last..m.start()]);
        last = m.end();
        let compact: String = m
            .as_str()
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let caps = string
            .captures(&compact)
            .ok_or_else(|| decrypt_err("undefined method `[]' for nil"))?;
        let scheme = caps
            .get(1)
            .map_or("PKCS7", |g| g.as_str().trim_end_matches(','));
        let cipher = caps.get(2).map_or("", |g| g.as_str());
        if mode == Secrets::Opaque {
            out.push_str(&opaque_marker(cipher));
            continue;
        }
        // Encryptor.find requires "hiera/backend/eyaml/encryptors/<scheme downcased>";
        // only pkcs7 ships with hiera-eyaml.
        if !scheme.eq_ignore_ascii_case("pkcs7") {
            return Err(Failure::Load(format!(
                "cannot load such file -- hiera/backend/eyaml/encryptors/{}",
                scheme.to_ascii_lowercase()
            )));
        }
        let plain = match pkcs7_decrypt(cipher, keys) {
            Err(Failure::NoKey(_)) if mode == Secrets::Auto => {
                out.push_str(&opaque_marker(cipher));
                continue;
            }
            r => r?,
        };
        out.push_str(&plain);
        plaintexts.push(plain);
        *decrypted = true;
    }
    out.push_str(&s[last..]);
    // Ruby's String#chomp: one trailing "\r\n", "\n" or "\r".
    if out.ends_with("\r\n") {
        out.truncate(out.len() - 2);
    } else if out.ends_with('\n') || out.ends_with('\r') {
        out.pop();
    }
    Ok(out)
}

#[cfg(feature = "eyaml")]
pub mod crypt;
#[cfg(feature = "eyaml")]
mod pkcs7;
pub mod tokens;
#[cfg(feature = "eyaml")]
use pkcs7::pkcs7_decrypt;

/// Built without the `eyaml` feature: no cryptography, so no key to decrypt with (every
/// `ENC[...]` token fails, or is opaque with [`Secrets::Auto`]).
#[cfg(not(feature = "eyaml"))]
fn pkcs7_decrypt(_cipher_b64: &str, _keys: &EyamlKeys) -> Result<String, Failure> {
    Err(Failure::NoKey(
        "hiera-lookup was built without its `eyaml` feature and cannot decrypt".into(),
    ))
}

/// `eyaml_lookup_key`: the key's value in a YAML file, its `ENC[...]` tokens decrypted.
pub(crate) struct EyamlLookupKey;

impl EyamlLookupKey {
    fn find(
        fs: std::sync::Arc<dyn crate::fs::Fs>,
        key: &str,
        path: &str,
        hash: &crate::backend::DataHash,
        options: &Map,
        mode: Secrets,
        plaintexts: &mut Vec<String>,
    ) -> crate::Result<Option<Value>> {
        let Some(v) = hash.get(key)? else {
            return Ok(None);
        };
        crate::backend::validate_data_value(
            &*fs,
            hash,
            key,
            &v,
            format_args!("lookup_key function 'eyaml_lookup_key'"),
            path,
        )?;
        Ok(Some(if contains_encrypted(&v) {
            decrypt_collect(&v, &load_keys_in(options, fs), key, path, mode, plaintexts)?
        } else {
            v
        }))
    }
}

impl crate::backend::custom::LookupKeyBackend for EyamlLookupKey {
    /// Outside the engine: `options` holds `path` and the key options.
    fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String> {
        let path = options
            .get(&Value::str("path"))
            .and_then(Value::as_str)
            .ok_or("eyaml_lookup_key needs a 'path' option")?;
        let hash = crate::backend::load(
            &*crate::fs::disk(),
            hiera_formats::DataFormat::Yaml,
            path,
            crate::scope::Strict::Error,
            &mut Vec::new(),
        )
        .map_err(|e| e.to_string())?;
        Self::find(
            crate::fs::disk(),
            key,
            path,
            &hash,
            options,
            Secrets::Decrypt,
            &mut Vec::new(),
        )
        .map_err(|e| e.to_string())
    }

    fn lookup_key_call(
        &self,
        key: &str,
        call: &crate::backend::custom::Call,
        host: &mut dyn crate::backend::custom::Host,
    ) -> crate::Result<Option<crate::backend::custom::Found>> {
        let Some(path) = call.path() else {
            return Err(call.missing_path("lookup_key", ":"));
        };
        let hash = host.load_data(hiera_formats::DataFormat::Yaml, path)?;
        let mut plaintexts = Vec::new();
        let found = Self::find(
            host.fs(),
            key,
            path,
            &hash,
            call.options,
            host.secrets(),
            &mut plaintexts,
        );
        // Recorded even when a later token fails: the message must not show the earlier ones.
        for p in &plaintexts {
            host.decrypted(p);
        }
        let found = found?;
        // Puppet's function interpolates what it decrypted.
        Ok(found.map(crate::backend::custom::Found::Interpolate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` decrypted as Puppet does ([`Secrets::Decrypt`]).
    fn dec(s: &str, keys: &EyamlKeys) -> Result<String, Failure> {
        decrypt_string(s, keys, Secrets::Decrypt, &mut Vec::new(), &mut false)
    }

    #[test]
    fn encrypted_test_is_one_line() {
        assert!(is_encrypted("ENC[PKCS7,abc]"));
        assert!(is_encrypted("x ENC[] y"));
        assert!(!is_encrypted("ENC[PKCS7,ab\nc]"));
        assert!(!is_encrypted("ENC[abc"));
        assert!(!is_encrypted("plain"));
    }

    #[test]
    fn non_tokens_pass_through_without_keys() {
        let keys = load_keys(&Map::default());
        // Matches encrypted? but holds no hiera-eyaml token: returned as written.
        assert_eq!(dec("ENC[]", &keys).unwrap(), "ENC[]");
        assert_eq!(dec("a ENC[x-y] b\n", &keys).unwrap(), "a ENC[x-y] b");
    }

    #[test]
    fn token_errors_in_hiera_eyaml_words() {
        let keys = load_keys(&Map::default());
        assert_eq!(
            dec("ENC[ ]", &keys),
            Err(decrypt_err("undefined method `[]' for nil"))
        );
        assert_eq!(
            dec("ENC[GPG,aGVsbG8=]", &keys),
            Err(Failure::Load(
                "cannot load such file -- hiera/backend/eyaml/encryptors/gpg".into()
            ))
        );
        assert_eq!(
            dec("ENC[PKCS7,abc]", &keys),
            Err(Failure::NoKey("pkcs7_private_key is not defined".into()))
        );
        let mut o = Map::default();
        o.insert(Value::str("pkcs7_public_key"), Value::str("x"));
        assert_eq!(
            dec("ENC[abc]", &load_keys(&o)),
            Err(Failure::NoKey("pkcs7_private_key is not defined".into()))
        );
        o.insert(Value::str("pkcs7_private_key"), Value::Int(5));
        assert_eq!(
            dec("ENC[abc]", &load_keys(&o)),
            Err(decrypt_err("no implicit conversion of Integer into String"))
        );
        o.insert(Value::str("pkcs7_private_key"), Value::Bool(false));
        o.insert(
            Value::str("pkcs7_private_key_env_var"),
            Value::str("HIERA_LOOKUP_TEST_UNSET_VAR"),
        );
        assert_eq!(
            dec("ENC[abc]", &load_keys(&o)),
            Err(Failure::NoKey(
                "env HIERA_LOOKUP_TEST_UNSET_VAR is not set".into()
            ))
        );
    }
}

#[cfg(test)]
mod opaque_tests;
