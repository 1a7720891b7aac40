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
//! The key is read the way hiera-eyaml 4 reads it, at every token: option
//! `pkcs7_private_key_env_var` (the name of an environment variable holding the PEM text,
//! which must be set) wins over `pkcs7_private_key` (a path as written, relative to the
//! working directory, like Ruby's `File.read`; a leading `~` is expanded, which Puppet does
//! not do). The public key (certificate) is not needed to decrypt: hiera-eyaml 4 builds the
//! recipient from the value's first recipient and the private key.
//!
//! Errors name the value, key and file as Puppet does and never contain key material.

use crate::error::Error;
use crate::value::{Map, Value};
use cms::content_info::ContentInfo;
use cms::enveloped_data::{EnvelopedData, RecipientInfo};
use regex::Regex;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use x509_cert::der::{self, Decode};

/// Where the key pair of one hierarchy entry comes from (its interpolated options). Cheap to
/// build: nothing is read until a value needs decrypting, as in hiera-eyaml, so a broken key
/// setting only fails lookups that meet an encrypted value.
#[derive(Debug, Clone)]
pub struct EyamlKeys {
    private: Source,
    /// Where key files are read (the lookup's file system).
    fs: std::sync::Arc<dyn crate::fs::Fs>,
}

/// One `pkcs7_*_key` setting: the path option and the env-var option (Ruby truthiness: a
/// missing, `~` or `false` option is not defined).
#[derive(Debug, Clone)]
struct Source {
    path: Option<Value>,
    env_var: Option<Value>,
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
            .get(&crate::value::StrKey(name))
            .filter(|v| v.truthy())
            .cloned()
    };
    EyamlKeys {
        private: Source {
            path: opt("pkcs7_private_key"),
            env_var: opt("pkcs7_private_key_env_var"),
        },
        fs,
    }
}

/// True when `v` holds a string that Puppet would hand to hiera-eyaml (hash keys excluded):
/// the values `--redact` must hide.
pub fn contains_encrypted(v: &Value) -> bool {
    match v {
        Value::String(s) => is_encrypted(s),
        Value::Array(a) => a.iter().any(contains_encrypted),
        Value::Hash(h) => h.values().any(contains_encrypted),
        Value::Sensitive(inner) => contains_encrypted(inner),
        _ => false,
    }
}

/// `v` with every string that would be decrypted replaced by `[redacted]` (same shape as
/// the decrypted value: hash keys are kept).
pub fn redact_encrypted(v: &Value) -> Value {
    match v {
        Value::String(s) if is_encrypted(s) => Value::str("[redacted]"),
        Value::Array(a) => Value::Array(a.iter().map(redact_encrypted).collect()),
        Value::Hash(h) => Value::Hash(
            h.iter()
                .map(|(k, v)| (k.clone(), redact_encrypted(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Decrypts every token of a found value, as `eyaml_lookup_key`'s `decrypt_value` does
/// (before its interpolation, which the caller does). `key` is the root key looked up and
/// `path` the data file, for the message. Decryption failures are LookupErrors
/// (`hiera-eyaml backend error decrypting <data> when looking up <key> in <path>. Error was
/// <msg>`); an unknown scheme (`ENC[GPG,...]`) is Ruby's LoadError, which escapes the
/// function's rescue and aborts the run.
pub fn decrypt_value(v: &Value, keys: &EyamlKeys, key: &str, path: &str) -> Result<Value, Error> {
    match v {
        Value::String(s) if is_encrypted(s) => match decrypt_string(s, keys) {
            Ok(plain) => Ok(Value::String(plain)),
            Err(Failure::Load(msg)) => Err(Error::run(msg)),
            Err(Failure::Decrypt(msg)) => Err(Error::lookup(format!(
                "hiera-eyaml backend error decrypting {s} when looking up {key} in {path}. Error was {msg}"
            ))),
        },
        Value::Array(a) => a
            .iter()
            .map(|e| decrypt_value(e, keys, key, path))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Hash(h) => {
            let mut out = Map::with_capacity_and_hasher(h.len(), Default::default());
            for (k, e) in h {
                out.insert(k.clone(), decrypt_value(e, keys, key, path)?);
            }
            Ok(Value::Hash(out))
        }
        other => Ok(other.clone()),
    }
}

/// Why a string could not be decrypted.
#[derive(Debug, Clone, PartialEq)]
enum Failure {
    /// A StandardError inside hiera-eyaml: its message.
    Decrypt(String),
    /// Ruby's LoadError for an encryptor plugin that is not installed.
    Load(String),
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
fn decrypt_string(s: &str, keys: &EyamlKeys) -> Result<String, Failure> {
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
        // Encryptor.find requires "hiera/backend/eyaml/encryptors/<scheme downcased>";
        // only pkcs7 ships with hiera-eyaml.
        if !scheme.eq_ignore_ascii_case("pkcs7") {
            return Err(Failure::Load(format!(
                "cannot load such file -- hiera/backend/eyaml/encryptors/{}",
                scheme.to_ascii_lowercase()
            )));
        }
        let cipher = caps.get(2).map_or("", |g| g.as_str());
        out.push_str(&pkcs7_decrypt(cipher, keys)?);
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

/// A private key as hiera-eyaml loads it, with the plaintexts it already produced (RSA
/// decryption is the slow part of a lookup that meets many secrets).
struct LoadedKey {
    private: RsaPrivateKey,
    plaintexts: Mutex<HashMap<String, String>>,
}

/// Parsed private keys by their PEM texts: each key is parsed once per process.
type KeyCache = Mutex<HashMap<Vec<u8>, Arc<LoadedKey>>>;

fn key_cache() -> &'static KeyCache {
    static CACHE: OnceLock<KeyCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Pkcs7.decrypt for one token's base64 text.
fn pkcs7_decrypt(cipher_b64: &str, keys: &EyamlKeys) -> Result<String, Failure> {
    let loaded = load_private(keys)?;
    if let Some(p) = lock(&loaded.plaintexts).get(cipher_b64) {
        return Ok(p.clone());
    }
    let der = ruby_decode64(cipher_b64);
    let plain = decrypt_der(&der, &loaded.private)?;
    let plain = String::from_utf8_lossy(&plain).into_owned();
    lock(&loaded.plaintexts).insert(cipher_b64.to_string(), plain.clone());
    Ok(plain)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// hiera-eyaml 4's `Pkcs7.decrypt`: only the private key is read (for every token) and
/// parsed; the public key setting is never consulted.
fn load_private(keys: &EyamlKeys) -> Result<Arc<LoadedKey>, Failure> {
    let text = read_source(&*keys.fs, &keys.private, "private_key")?;
    if let Some(hit) = lock(key_cache()).get(&text) {
        return Ok(hit.clone());
    }
    let loaded = Arc::new(LoadedKey {
        private: parse_private_key(&text)?,
        plaintexts: Mutex::new(HashMap::default()),
    });
    lock(key_cache()).insert(text, loaded.clone());
    Ok(loaded)
}

/// `load_ANY_key_pem`: the env-var setting wins when given (and must name a set variable),
/// else the file setting (which must exist), else the setting is not defined.
fn read_source(fs: &dyn crate::fs::Fs, src: &Source, what: &str) -> Result<Vec<u8>, Failure> {
    if let Some(var) = &src.env_var {
        let name = ruby_string(var)?;
        return match std::env::var_os(name) {
            Some(text) => Ok(text.into_encoded_bytes()),
            None => Err(decrypt_err(format!("env {name} is not set"))),
        };
    }
    let Some(path) = &src.path else {
        return Err(decrypt_err(format!("pkcs7_{what} is not defined")));
    };
    let path = ruby_string(path)?;
    let real = expand_tilde(path);
    if !fs.exists(&real) {
        return Err(decrypt_err(format!("file {path} does not exist")));
    }
    read_file(fs, &real, path)
}

/// Ruby's implicit String conversion of an option value.
fn ruby_string(v: &Value) -> Result<&str, Failure> {
    match v {
        Value::String(s) => Ok(s),
        Value::Bool(true) => Err(decrypt_err("no implicit conversion of true into String")),
        other => Err(decrypt_err(format!(
            "no implicit conversion of {} into String",
            other.ruby_class()
        ))),
    }
}

/// `~` and `~/...` are the user's home (beyond Puppet, whose File.read takes `~` literally).
fn expand_tilde(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").filter(|h| !h.is_empty());
    if path == "~" {
        if let Some(h) = home() {
            return PathBuf::from(h);
        }
    } else if let Some(rest) = path.strip_prefix("~/") {
        if let Some(h) = home() {
            return PathBuf::from(h).join(rest);
        }
    }
    PathBuf::from(path)
}

/// `File.read`, with Ruby's errno texts naming the path as written.
fn read_file(
    fs: &dyn crate::fs::Fs,
    real: &std::path::Path,
    shown: &str,
) -> Result<Vec<u8>, Failure> {
    let errno = |e: &std::io::Error, at: &str| {
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
            _ if e.raw_os_error() == Some(21) => "Is a directory".to_string(),
            _ => {
                // Rust appends " (os error N)"; Ruby's strerror text has no suffix.
                let t = e.to_string();
                t.split(" (os error").next().unwrap_or(&t).to_string()
            }
        };
        decrypt_err(format!("{reason} @ {at} - {shown}"))
    };
    fs.read(real).map_err(|e| {
        // Ruby opens a directory and fails reading it.
        let at = if e.raw_os_error() == Some(libc::EISDIR) {
            "io_fread"
        } else {
            "rb_sysopen"
        };
        errno(&e, at)
    })
}

/// `OpenSSL::PKey::RSA.new(text)`: PEM (PKCS#1 or PKCS#8, the first such block) or DER.
fn parse_private_key(text: &[u8]) -> Result<RsaPrivateKey, Failure> {
    let der = match pem_block(text, &["RSA PRIVATE KEY", "PRIVATE KEY"]) {
        Some((_, der)) => der,
        None => text.to_vec(),
    };
    RsaPrivateKey::from_pkcs1_der(&der)
        .ok()
        .or_else(|| RsaPrivateKey::from_pkcs8_der(&der).ok())
        .ok_or_else(|| decrypt_err("Neither PUB key nor PRIV key"))
}

/// The first PEM block with one of `labels` (OpenSSL skips blocks of other types), decoded.
/// Blocks with headers (`Proc-Type: 4,ENCRYPTED`) are passphrase-protected: not supported.
fn pem_block(text: &[u8], labels: &[&str]) -> Option<(String, Vec<u8>)> {
    let text = String::from_utf8_lossy(text);
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(label) = line
            .trim_end()
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        if !labels.contains(&label) {
            continue;
        }
        let end = format!("-----END {label}-----");
        let mut body = String::new();
        for l in lines.by_ref() {
            let l = l.trim();
            if l == end {
                break;
            }
            if l.contains(':') {
                return None;
            }
            body.push_str(l);
        }
        return Some((label.to_string(), ruby_decode64(&body)));
    }
    None
}

/// The first DER element of `der` (OpenSSL's d2i ignores what follows it).
fn first_tlv(der: &[u8]) -> &[u8] {
    let len = (|| {
        let first = *der.get(1)?;
        if first < 0x80 {
            return Some(2 + first as usize);
        }
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let mut l = 0usize;
        for i in 0..n {
            l = (l << 8) | *der.get(2 + i)? as usize;
        }
        Some(2 + n + l)
    })();
    match len {
        Some(l) if l <= der.len() => &der[..l],
        _ => der,
    }
}

const OID_AES128_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.2");
const OID_AES192_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.22");
const OID_AES256_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.42");
const OID_DES_EDE3_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.3.7");
const OID_ENVELOPED_DATA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.3");

/// `OpenSSL::PKCS7.new(der).decrypt(key, cert)`, with OpenSSL 3.0's error for each failure.
fn decrypt_der(der: &[u8], key: &RsaPrivateKey) -> Result<Vec<u8>, Failure> {
    // OpenSSL tries DER, then PEM: a failed parse reports the PEM reader's complaint.
    let unparsable = || decrypt_err("Could not parse the PKCS7: no start line (Expecting: PKCS7)");
    let info = ContentInfo::from_der(first_tlv(der)).map_err(|_| unparsable())?;
    if info.content_type != OID_ENVELOPED_DATA {
        return Err(decrypt_err("wrong content type"));
    }
    let env: EnvelopedData = info.content.decode_as().map_err(|_| unparsable())?;

    // PKCS7_dataDecode's failures all surface as "decrypt error".
    let decrypt_error = || decrypt_err("decrypt error");
    let content = env
        .encrypted_content
        .encrypted_content
        .as_ref()
        .ok_or_else(decrypt_error)?
        .as_bytes();
    let alg = &env.encrypted_content.content_enc_alg;
    let key_len = match alg.oid {
        OID_AES128_CBC => 16,
        OID_AES192_CBC => 24,
        OID_AES256_CBC => 32,
        OID_DES_EDE3_CBC => 24,
        _ => return Err(decrypt_error()),
    };
    let iv = alg
        .parameters
        .as_ref()
        .and_then(|p| p.decode_as::<der::asn1::OctetString>().ok())
        .ok_or_else(decrypt_error)?;
    // hiera-eyaml 4 builds the certificate from the first recipient's issuer and serial and
    // the private key's public half, so the first recipient is the one decrypted for.
    let recipient = match env.recip_infos.0.iter().next() {
        Some(RecipientInfo::Ktri(k)) => k,
        Some(_) => return Err(decrypt_error()),
        None => return Err(decrypt_err("undefined method `serial' for nil")),
    };
    // A failed unwrap is not reported (Bleichenbacher defence): OpenSSL goes on with a random
    // key, and the content's padding check then fails.
    let bad_decrypt = || decrypt_err("bad decrypt");
    let cek = key
        .decrypt(Pkcs1v15Encrypt, recipient.enc_key.as_bytes())
        .map_err(|_| bad_decrypt())?;
    if cek.len() != key_len {
        return Err(bad_decrypt());
    }
    cbc_decrypt(alg.oid, &cek, iv.as_bytes(), content)
}

/// CBC with PKCS#7 padding, with EVP_DecryptFinal's errors.
fn cbc_decrypt(
    oid: der::oid::ObjectIdentifier,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
) -> Result<Vec<u8>, Failure> {
    use cbc::cipher::block_padding::Pkcs7;
    use cbc::cipher::{BlockDecryptMut, KeyIvInit};
    let block = if oid == OID_DES_EDE3_CBC { 8 } else { 16 };
    if iv.len() != block {
        return Err(decrypt_err("decrypt error"));
    }
    if data.is_empty() || data.len() % block != 0 {
        return Err(decrypt_err("wrong final block length"));
    }
    let bad = |_| decrypt_err("bad decrypt");
    let bad_key = |_| decrypt_err("bad decrypt");
    let mut buf = data.to_vec();
    let n = match oid {
        OID_AES128_CBC => cbc::Decryptor::<aes::Aes128>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .decrypt_padded_mut::<Pkcs7>(&mut buf)
            .map_err(bad)?
            .len(),
        OID_AES192_CBC => cbc::Decryptor::<aes::Aes192>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .decrypt_padded_mut::<Pkcs7>(&mut buf)
            .map_err(bad)?
            .len(),
        OID_AES256_CBC => cbc::Decryptor::<aes::Aes256>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .decrypt_padded_mut::<Pkcs7>(&mut buf)
            .map_err(bad)?
            .len(),
        _ => cbc::Decryptor::<des::TdesEde3>::new_from_slices(key, iv)
            .map_err(bad_key)?
            .decrypt_padded_mut::<Pkcs7>(&mut buf)
            .map_err(bad)?
            .len(),
    };
    buf.truncate(n);
    Ok(buf)
}

/// Ruby's lenient `Base64.decode64` (`unpack1("m")`): characters outside the alphabet are
/// skipped, a `=` in the third or fourth place of a quantum ends the data.
fn ruby_decode64(s: &str) -> Vec<u8> {
    fn val(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some((c - b'A') as u32),
            b'a'..=b'z' => Some((c - b'a') as u32 + 26),
            b'0'..=b'9' => Some((c - b'0') as u32 + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() * 3 / 4);
    let mut i = 0;
    // Next alphabet character; `stop_at_pad` makes a `=` end the data.
    let next = |i: &mut usize, stop_at_pad: bool| -> Option<u32> {
        while *i < b.len() {
            let c = b[*i];
            *i += 1;
            if let Some(v) = val(c) {
                return Some(v);
            }
            if stop_at_pad && c == b'=' {
                *i = b.len();
                return None;
            }
        }
        None
    };
    while let Some(a) = next(&mut i, false) {
        let Some(b1) = next(&mut i, false) else { break };
        let Some(c) = next(&mut i, true) else {
            out.push((a << 2 | b1 >> 4) as u8);
            break;
        };
        let Some(d) = next(&mut i, true) else {
            out.push((a << 2 | b1 >> 4) as u8);
            out.push((b1 << 4 | c >> 2) as u8);
            break;
        };
        out.push((a << 2 | b1 >> 4) as u8);
        out.push((b1 << 4 | c >> 2) as u8);
        out.push((c << 6 | d) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_base64_leniency() {
        // Values from Ruby 3.1's Base64.decode64.
        assert_eq!(ruby_decode64("QUJD=RA=="), b"ABCD");
        assert_eq!(ruby_decode64("QUJDRA"), b"ABCD");
        assert_eq!(ruby_decode64("QUJDR"), b"ABC");
        assert_eq!(ruby_decode64("Q=UJD"), b"ABC");
        assert_eq!(ruby_decode64("QU=JD"), b"A");
        assert_eq!(ruby_decode64(""), b"");
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
        assert_eq!(decrypt_string("ENC[]", &keys).unwrap(), "ENC[]");
        assert_eq!(
            decrypt_string("a ENC[x-y] b\n", &keys).unwrap(),
            "a ENC[x-y] b"
        );
    }

    #[test]
    fn token_errors_in_hiera_eyaml_words() {
        let keys = load_keys(&Map::default());
        assert_eq!(
            decrypt_string("ENC[ ]", &keys),
            Err(decrypt_err("undefined method `[]' for nil"))
        );
        assert_eq!(
            decrypt_string("ENC[GPG,aGVsbG8=]", &keys),
            Err(Failure::Load(
                "cannot load such file -- hiera/backend/eyaml/encryptors/gpg".into()
            ))
        );
        assert_eq!(
            decrypt_string("ENC[PKCS7,abc]", &keys),
            Err(decrypt_err("pkcs7_private_key is not defined"))
        );
        let mut o = Map::default();
        o.insert(Value::str("pkcs7_public_key"), Value::str("x"));
        assert_eq!(
            decrypt_string("ENC[abc]", &load_keys(&o)),
            Err(decrypt_err("pkcs7_private_key is not defined"))
        );
        o.insert(Value::str("pkcs7_private_key"), Value::Int(5));
        assert_eq!(
            decrypt_string("ENC[abc]", &load_keys(&o)),
            Err(decrypt_err("no implicit conversion of Integer into String"))
        );
        o.insert(Value::str("pkcs7_private_key"), Value::Bool(false));
        o.insert(
            Value::str("pkcs7_private_key_env_var"),
            Value::str("HIERA_LOOKUP_TEST_UNSET_VAR"),
        );
        assert_eq!(
            decrypt_string("ENC[abc]", &load_keys(&o)),
            Err(decrypt_err("env HIERA_LOOKUP_TEST_UNSET_VAR is not set"))
        );
    }

    #[test]
    fn first_tlv_ignores_trailing_bytes() {
        assert_eq!(first_tlv(&[0x30, 0x01, 0x05, 0xff]), &[0x30, 0x01, 0x05]);
        assert_eq!(
            first_tlv(&[0x30, 0x81, 0x01, 0x05, 0xff]),
            &[0x30, 0x81, 0x01, 0x05]
        );
        assert_eq!(first_tlv(&[0x30]), &[0x30]);
        assert_eq!(first_tlv(&[0x30, 0x05, 0x01]), &[0x30, 0x05, 0x01]);
    }
}
