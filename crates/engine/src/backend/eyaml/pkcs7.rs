//! hiera-eyaml's PKCS7 decryption (the `eyaml` feature): private keys read and parsed
//! once per process, CMS EnvelopedData with RSA PKCS#1 v1.5 key transport, AES/3DES-CBC.

use super::{decrypt_err, EyamlKeys, Failure, Source};
use cms::content_info::ContentInfo;
use cms::enveloped_data::{EnvelopedData, RecipientInfo};
use hiera_value::ruby::decode64;
use hiera_value::value::Value;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use x509_cert::der::{self, Decode};

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
pub(super) fn pkcs7_decrypt(cipher_b64: &str, keys: &EyamlKeys) -> Result<String, Failure> {
    let loaded = load_private(keys)?;
    if let Some(p) = lock(&loaded.plaintexts).get(cipher_b64) {
        return Ok(p.clone());
    }
    let der = decode64(cipher_b64);
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

/// `load_ANY_key_pem` (hiera-eyaml 5's): the env-var setting wins when given (and must name
/// a set variable), then the base64 env-var setting (hiera-eyaml 5; the variable holds the
/// PEM text in base64), else the file setting (which must exist), else the setting is not
/// defined. The three "no key" failures are [`Failure::NoKey`].
pub(super) fn read_source(
    fs: &dyn crate::fs::Fs,
    src: &Source,
    what: &str,
) -> Result<Vec<u8>, Failure> {
    let no_key = |m: String| Failure::NoKey(m);
    if let Some(var) = &src.env_var {
        let name = ruby_string(var)?;
        return match std::env::var_os(name) {
            Some(text) => Ok(text.into_encoded_bytes()),
            None => Err(no_key(format!("env {name} is not set"))),
        };
    }
    if let Some(var) = &src.b64_env_var {
        let name = ruby_string(var)?;
        return match std::env::var_os(name) {
            Some(text) => Ok(decode64(&text.to_string_lossy())),
            None => Err(no_key(format!("env {name} is not set"))),
        };
    }
    let Some(path) = &src.path else {
        return Err(no_key(format!("pkcs7_{what} is not defined")));
    };
    let path = ruby_string(path)?;
    let real = expand_tilde(path);
    if !fs.exists(&real) {
        return Err(no_key(format!("file {path} does not exist")));
    }
    read_file(fs, &real, path, what)
}

/// The file `src` reads, when no variable setting wins over it.
pub(super) fn source_file(src: &Source) -> Option<PathBuf> {
    if src.env_var.is_some() || src.b64_env_var.is_some() {
        return None;
    }
    src.path
        .as_ref()
        .and_then(|p| ruby_string(p).ok())
        .map(expand_tilde)
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
/// hiera-eyaml's message (`Is a directory @ io_fread - keys`) is followed by what happened in
/// plain words and what to do.
fn read_file(
    fs: &dyn crate::fs::Fs,
    real: &std::path::Path,
    shown: &str,
    what: &str,
) -> Result<Vec<u8>, Failure> {
    let errno = |e: &std::io::Error, at: &str| {
        let plain = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist",
            std::io::ErrorKind::PermissionDenied => "cannot be read (permission denied)",
            _ if e.raw_os_error() == Some(libc::EISDIR) => "is a directory, not a key file",
            _ => "cannot be read",
        };
        let plain = format!(
            " (the eyaml key {shown} {plain}: pkcs7_{what} in hiera.yaml's options must name the PEM file)"
        );
        let reason = match e.kind() {
            std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
            _ if e.raw_os_error() == Some(libc::EISDIR) => "Is a directory".to_string(),
            _ => {
                // Rust appends " (os error N)"; Ruby's strerror text has no suffix.
                let t = e.to_string();
                t.split(" (os error").next().unwrap_or(&t).to_string()
            }
        };
        decrypt_err(format!("{reason} @ {at} - {shown}{plain}"))
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
pub(super) fn parse_private_key(text: &[u8]) -> Result<RsaPrivateKey, Failure> {
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
pub(super) fn pem_block(text: &[u8], labels: &[&str]) -> Option<(String, Vec<u8>)> {
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
        return Some((label.to_string(), decode64(&body)));
    }
    None
}

/// The first DER element of `der` (OpenSSL's d2i ignores what follows it).
pub(super) fn first_tlv(der: &[u8]) -> &[u8] {
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

pub(super) const OID_AES128_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.2");
pub(super) const OID_AES192_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.22");
pub(super) const OID_AES256_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.1.42");
pub(super) const OID_DES_EDE3_CBC: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.3.7");
pub(super) const OID_ENVELOPED_DATA: der::oid::ObjectIdentifier =
    der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.3");

/// `OpenSSL::PKCS7.new(der).decrypt(key, cert)`, with OpenSSL 3.0's error for each failure.
pub(super) fn decrypt_der(der: &[u8], key: &RsaPrivateKey) -> Result<Vec<u8>, Failure> {
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
    if data.is_empty() || !data.len().is_multiple_of(block) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
