//! What the `eyaml` commands need beyond a lookup's decryption (the `eyaml` feature):
//! encrypting for a public key (CMS EnvelopedData as OpenSSL's `PKCS7_encrypt` writes it:
//! RSA PKCS#1 v1.5 key transport, AES-CBC or 3DES-CBC content, the recipient named by the
//! certificate's issuer and serial), making a key pair as hiera-eyaml 5 does, reading who a
//! value was encrypted for (no private key needed), and decrypting with a key read once.
//!
//! Errors are one line, name the file or value they concern, and never contain key
//! material or a plaintext.

use super::pkcs7::{decrypt_der, first_tlv, parse_private_key, pem_block, OID_ENVELOPED_DATA};
use super::pkcs7::{OID_AES128_CBC, OID_AES192_CBC, OID_AES256_CBC, OID_DES_EDE3_CBC};
use super::Failure;
use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{EncryptedContentInfo, EnvelopedData, KeyTransRecipientInfo};
use cms::enveloped_data::{RecipientIdentifier, RecipientInfo, RecipientInfos};
use hiera_value::ruby::decode64;
use rsa::rand_core::{OsRng, RngCore};
use rsa::{Pkcs1v15Encrypt, RsaPrivateKey, RsaPublicKey};
use x509_cert::der::asn1::{BitString, Null, OctetString};
use x509_cert::der::{Any, Decode, Encode};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::AlgorithmIdentifierOwned;

const OID_DATA: x509_cert::der::oid::ObjectIdentifier =
    x509_cert::der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const OID_RSA_ENCRYPTION: x509_cert::der::oid::ObjectIdentifier =
    x509_cert::der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const OID_SHA256_WITH_RSA: x509_cert::der::oid::ObjectIdentifier =
    x509_cert::der::oid::ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");

/// The content cipher of an encrypted value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cipher {
    /// AES-128-CBC (`openssl smime -aes128`).
    Aes128Cbc,
    /// AES-192-CBC.
    Aes192Cbc,
    /// AES-256-CBC: what hiera-eyaml writes.
    #[default]
    Aes256Cbc,
    /// Triple DES (`openssl smime -des3`): readable by old tools only; not recommended.
    DesEde3Cbc,
}

impl Cipher {
    /// Every cipher, by its OpenSSL name.
    pub const ALL: &'static [(&'static str, Cipher)] = &[
        ("aes-128-cbc", Cipher::Aes128Cbc),
        ("aes-192-cbc", Cipher::Aes192Cbc),
        ("aes-256-cbc", Cipher::Aes256Cbc),
        ("des-ede3-cbc", Cipher::DesEde3Cbc),
    ];

    /// The cipher OpenSSL calls `name`.
    pub fn from_name(name: &str) -> Option<Cipher> {
        Self::ALL
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, c)| *c)
    }

    /// OpenSSL's name of the cipher.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("aes-256-cbc", |(n, _)| n)
    }

    fn oid(self) -> x509_cert::der::oid::ObjectIdentifier {
        match self {
            Cipher::Aes128Cbc => OID_AES128_CBC,
            Cipher::Aes192Cbc => OID_AES192_CBC,
            Cipher::Aes256Cbc => OID_AES256_CBC,
            Cipher::DesEde3Cbc => OID_DES_EDE3_CBC,
        }
    }

    fn of_oid(oid: x509_cert::der::oid::ObjectIdentifier) -> Option<Cipher> {
        Self::ALL.iter().map(|(_, c)| *c).find(|c| c.oid() == oid)
    }

    fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Cbc => 16,
            Cipher::Aes192Cbc | Cipher::DesEde3Cbc => 24,
            Cipher::Aes256Cbc => 32,
        }
    }

    fn block(self) -> usize {
        if self == Cipher::DesEde3Cbc {
            8
        } else {
            16
        }
    }
}

/// Who a value is encrypted for: a certificate's issuer and serial number (empty and 0
/// for a bare public key, as hiera-eyaml makes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipientId {
    /// The issuer, DER.
    issuer: Vec<u8>,
    /// The serial number's big-endian bytes, without leading zeros.
    serial: Vec<u8>,
}

impl RecipientId {
    fn of(issuer: &Name, serial: &SerialNumber) -> RecipientId {
        let serial = serial.as_bytes();
        let first = serial.iter().position(|b| *b != 0).unwrap_or(serial.len());
        RecipientId {
            issuer: issuer.to_der().unwrap_or_default(),
            serial: serial[first..].to_vec(),
        }
    }
}

impl std::fmt::Display for RecipientId {
    /// `issuer CN=eyaml, serial 0x1a2b…` (OpenSSL's one-line form of the name).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let issuer = Name::from_der(&self.issuer)
            .map(|n| n.to_string())
            .unwrap_or_default();
        let issuer = if issuer.is_empty() {
            "(empty)".to_string()
        } else {
            issuer
        };
        let serial: String = self.serial.iter().map(|b| format!("{b:02x}")).collect();
        let serial = if serial.is_empty() {
            "0".into()
        } else {
            serial
        };
        write!(f, "issuer {issuer}, serial 0x{serial}")
    }
}

/// A public key to encrypt for: hiera-eyaml's `pkcs7_public_key` file (a certificate, or a
/// bare `PUBLIC KEY`).
#[derive(Debug, Clone)]
pub struct PublicKey {
    key: RsaPublicKey,
    id: RecipientId,
}

impl PublicKey {
    /// Reads the PEM text of a certificate (or a `PUBLIC KEY`), as hiera-eyaml's encrypt
    /// does. `Err` says what is wrong, in one line.
    pub fn from_pem(text: &[u8]) -> Result<PublicKey, String> {
        use rsa::pkcs8::DecodePublicKey;
        if let Some((_, der)) = pem_block(text, &["CERTIFICATE"]) {
            let cert = x509_cert::Certificate::from_der(first_tlv(&der))
                .map_err(|e| format!("not a readable certificate ({e})"))?;
            let tbs = &cert.tbs_certificate;
            let spki = tbs
                .subject_public_key_info
                .to_der()
                .map_err(|e| e.to_string())?;
            let key = RsaPublicKey::from_public_key_der(&spki)
                .map_err(|_| "the certificate's key is not an RSA key".to_string())?;
            return Ok(PublicKey {
                key,
                id: RecipientId::of(&tbs.issuer, &tbs.serial_number),
            });
        }
        if let Some((_, der)) = pem_block(text, &["PUBLIC KEY"]) {
            let key = RsaPublicKey::from_public_key_der(&der)
                .map_err(|_| "not a readable RSA public key".to_string())?;
            // hiera-eyaml puts a bare key in an empty certificate: no issuer, serial 0.
            return Ok(PublicKey {
                key,
                id: RecipientId {
                    issuer: Name::default().to_der().unwrap_or_default(),
                    serial: Vec::new(),
                },
            });
        }
        Err("invalid public key format: neither a certificate nor a PUBLIC KEY".into())
    }

    /// Who a value encrypted for this key names as its recipient.
    pub fn recipient(&self) -> &RecipientId {
        &self.id
    }

    /// Whether a value (the base64 inside `ENC[PKCS7,…]`) was encrypted for this key, as far
    /// as can be told without the private key: a recipient names this certificate's issuer
    /// and serial, with a wrapped key as long as this key's modulus. (Key pairs made by
    /// hiera-eyaml 5.0.1 and older all have an empty issuer and the same serial: two such
    /// pairs of the same size cannot be told apart.) `Err`: not a PKCS7 enveloped value.
    pub fn is_recipient_of(&self, cipher_b64: &str) -> Result<bool, String> {
        use rsa::traits::PublicKeyParts;
        let size = self.key.size();
        Ok(enveloped(cipher_b64)?
            .recip_infos
            .0
            .iter()
            .any(|r| match r {
                RecipientInfo::Ktri(k) => {
                    k.enc_key.as_bytes().len() == size
                        && matches!(&k.rid, RecipientIdentifier::IssuerAndSerialNumber(i)
                        if RecipientId::of(&i.issuer, &i.serial_number) == self.id)
                }
                _ => false,
            }))
    }

    /// `plaintext` encrypted for this key with `cipher`: the DER of a CMS EnvelopedData,
    /// as `OpenSSL::PKCS7.encrypt([cert], plaintext, cipher, BINARY).to_der` makes it.
    pub fn encrypt(&self, plaintext: &[u8], cipher: Cipher) -> Result<Vec<u8>, String> {
        let mut cek = vec![0u8; cipher.key_len()];
        let mut iv = vec![0u8; cipher.block()];
        OsRng.fill_bytes(&mut cek);
        OsRng.fill_bytes(&mut iv);
        if cipher == Cipher::DesEde3Cbc {
            set_des_parity(&mut cek);
        }
        let content = cbc_encrypt(cipher, &cek, &iv, plaintext)?;
        let enc_key = self
            .key
            .encrypt(&mut OsRng, Pkcs1v15Encrypt, &cek)
            .map_err(|e| format!("RSA encryption failed ({e})"))?;
        let der_err = |e: x509_cert::der::Error| format!("encoding the value failed ({e})");
        let issuer = Name::from_der(&self.id.issuer).map_err(der_err)?;
        let serial = SerialNumber::new(if self.id.serial.is_empty() {
            &[0]
        } else {
            &self.id.serial
        })
        .map_err(der_err)?;
        let recipient = RecipientInfo::Ktri(KeyTransRecipientInfo {
            version: CmsVersion::V0,
            rid: RecipientIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer,
                serial_number: serial,
            }),
            key_enc_alg: AlgorithmIdentifierOwned {
                oid: OID_RSA_ENCRYPTION,
                parameters: Some(Any::from(Null)),
            },
            enc_key: OctetString::new(enc_key).map_err(der_err)?,
        });
        let env = EnvelopedData {
            version: CmsVersion::V0,
            originator_info: None,
            recip_infos: RecipientInfos(
                x509_cert::der::asn1::SetOfVec::try_from(vec![recipient]).map_err(der_err)?,
            ),
            encrypted_content: EncryptedContentInfo {
                content_type: OID_DATA,
                content_enc_alg: AlgorithmIdentifierOwned {
                    oid: cipher.oid(),
                    parameters: Some(
                        Any::encode_from(&OctetString::new(iv).map_err(der_err)?)
                            .map_err(der_err)?,
                    ),
                },
                encrypted_content: Some(OctetString::new(content).map_err(der_err)?),
            },
            unprotected_attrs: None,
        };
        ContentInfo {
            content_type: OID_ENVELOPED_DATA,
            content: Any::encode_from(&env).map_err(der_err)?,
        }
        .to_der()
        .map_err(der_err)
    }
}

/// DES keys carry odd parity in each byte's low bit (OpenSSL sets it on random keys).
fn set_des_parity(key: &mut [u8]) {
    for b in key {
        let ones = (*b >> 1).count_ones();
        *b = (*b & 0xfe) | u8::from(ones % 2 == 0);
    }
}

/// CBC with PKCS#7 padding.
fn cbc_encrypt(cipher: Cipher, key: &[u8], iv: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    use cbc::cipher::block_padding::Pkcs7;
    use cbc::cipher::{BlockEncryptMut, KeyIvInit};
    let block = cipher.block();
    let mut buf = vec![0u8; (data.len() / block + 1) * block];
    buf[..data.len()].copy_from_slice(data);
    let bad = |_| "the content cipher refused its key".to_string();
    let pad = |_| "padding failed".to_string();
    let n = match cipher {
        Cipher::Aes128Cbc => cbc::Encryptor::<aes::Aes128>::new_from_slices(key, iv)
            .map_err(bad)?
            .encrypt_padded_mut::<Pkcs7>(&mut buf, data.len())
            .map_err(pad)?
            .len(),
        Cipher::Aes192Cbc => cbc::Encryptor::<aes::Aes192>::new_from_slices(key, iv)
            .map_err(bad)?
            .encrypt_padded_mut::<Pkcs7>(&mut buf, data.len())
            .map_err(pad)?
            .len(),
        Cipher::Aes256Cbc => cbc::Encryptor::<aes::Aes256>::new_from_slices(key, iv)
            .map_err(bad)?
            .encrypt_padded_mut::<Pkcs7>(&mut buf, data.len())
            .map_err(pad)?
            .len(),
        Cipher::DesEde3Cbc => cbc::Encryptor::<des::TdesEde3>::new_from_slices(key, iv)
            .map_err(bad)?
            .encrypt_padded_mut::<Pkcs7>(&mut buf, data.len())
            .map_err(pad)?
            .len(),
    };
    buf.truncate(n);
    Ok(buf)
}

/// A private key, read once, to decrypt many values with.
pub struct PrivateKey {
    key: RsaPrivateKey,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PrivateKey(..)")
    }
}

impl PrivateKey {
    /// Reads a PEM (PKCS#1 or PKCS#8) or DER private key, as OpenSSL does.
    pub fn from_pem(text: &[u8]) -> Result<PrivateKey, String> {
        parse_private_key(text)
            .map(|key| PrivateKey { key })
            .map_err(|_| "not a readable RSA private key".to_string())
    }

    /// The plaintext of one value's ciphertext (the base64 inside `ENC[PKCS7,…]`; whitespace
    /// is skipped). `Err` is OpenSSL's reason ("bad decrypt"), never the plaintext.
    pub fn decrypt(&self, cipher_b64: &str) -> Result<Vec<u8>, String> {
        decrypt_der(&decode64(cipher_b64), &self.key).map_err(|f| match f {
            Failure::Decrypt(m) | Failure::Load(m) | Failure::NoKey(m) => m,
        })
    }

    /// Whether `public` is this key's public half.
    pub fn matches(&self, public: &PublicKey) -> bool {
        RsaPublicKey::from(&self.key) == public.key
    }
}

/// The recipients a value names (the base64 inside `ENC[PKCS7,…]`), and its content
/// cipher: what can be read without any private key. `Err`: not a PKCS7 EnvelopedData.
pub fn recipients(cipher_b64: &str) -> Result<(Vec<RecipientId>, Option<Cipher>), String> {
    let env = enveloped(cipher_b64)?;
    let ids = env
        .recip_infos
        .0
        .iter()
        .filter_map(|r| match r {
            RecipientInfo::Ktri(k) => match &k.rid {
                RecipientIdentifier::IssuerAndSerialNumber(i) => {
                    Some(RecipientId::of(&i.issuer, &i.serial_number))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    Ok((
        ids,
        Cipher::of_oid(env.encrypted_content.content_enc_alg.oid),
    ))
}

/// The EnvelopedData of a value's base64.
fn enveloped(cipher_b64: &str) -> Result<EnvelopedData, String> {
    let der = decode64(cipher_b64);
    let bad = || "not a PKCS7 enveloped value".to_string();
    let info = ContentInfo::from_der(first_tlv(&der)).map_err(|_| bad())?;
    if info.content_type != OID_ENVELOPED_DATA {
        return Err(bad());
    }
    info.content.decode_as().map_err(|_| bad())
}

/// A new key pair as hiera-eyaml 5's `createkeys` makes it: RSA 2048, the private key in
/// PKCS#1 PEM, a self-signed v3 certificate (subject and issuer `CN=eyaml`, a random 19-byte
/// serial, valid 50 years, signed with SHA-256). Returns (private PEM, certificate PEM).
pub fn create_keys() -> Result<(String, String), String> {
    use rsa::pkcs1::EncodeRsaPrivateKey;
    use rsa::pkcs8::EncodePublicKey;
    use std::str::FromStr;
    use x509_cert::der::EncodePem;
    fn err(what: &'static str) -> impl Fn(&dyn std::fmt::Display) -> String {
        move |e| format!("{what} failed ({e})")
    }
    let key = RsaPrivateKey::new(&mut OsRng, 2048).map_err(|e| err("key generation")(&e))?;
    let private_pem = key
        .to_pkcs1_pem(rsa::pkcs8::LineEnding::LF)
        .map_err(|e| err("encoding the private key")(&e))?
        .to_string();
    let der_err = |e: x509_cert::der::Error| err("building the certificate")(&e);
    let name = Name::from_str("CN=eyaml").map_err(der_err)?;
    let mut serial = [0u8; 19];
    OsRng.fill_bytes(&mut serial);
    serial[0] &= 0x7f;
    serial[0] |= 0x01;
    let spki_der = RsaPublicKey::from(&key)
        .to_public_key_der()
        .map_err(|e| err("encoding the public key")(&e))?;
    let now = std::time::SystemTime::now();
    let fifty_years = std::time::Duration::from_secs(50 * 365 * 24 * 60 * 60);
    let time = |t: std::time::SystemTime| -> Result<x509_cert::time::Time, String> {
        // RFC 5280: UTCTime through 2049, GeneralizedTime after.
        match x509_cert::der::asn1::UtcTime::from_system_time(t) {
            Ok(u) => Ok(u.into()),
            Err(_) => x509_cert::der::asn1::GeneralizedTime::from_system_time(t)
                .map(Into::into)
                .map_err(der_err),
        }
    };
    let sig_alg = AlgorithmIdentifierOwned {
        oid: OID_SHA256_WITH_RSA,
        parameters: Some(Any::from(Null)),
    };
    let tbs = x509_cert::TbsCertificate {
        version: x509_cert::Version::V3,
        serial_number: SerialNumber::new(&serial).map_err(der_err)?,
        signature: sig_alg.clone(),
        issuer: name.clone(),
        validity: x509_cert::time::Validity {
            not_before: time(now)?,
            not_after: time(now + fifty_years)?,
        },
        subject: name,
        subject_public_key_info: x509_cert::spki::SubjectPublicKeyInfoOwned::from_der(
            spki_der.as_bytes(),
        )
        .map_err(der_err)?,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: None,
    };
    let tbs_der = tbs.to_der().map_err(der_err)?;
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&tbs_der);
    let signature = key
        .sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &digest)
        .map_err(|e| err("signing the certificate")(&e))?;
    let cert = x509_cert::Certificate {
        tbs_certificate: tbs,
        signature_algorithm: sig_alg,
        signature: BitString::from_bytes(&signature).map_err(der_err)?,
    };
    let cert_pem = cert
        .to_pem(x509_cert::der::pem::LineEnding::LF)
        .map_err(der_err)?;
    Ok((private_pem, cert_pem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/backends/eyaml");
        std::fs::read(dir.join(name)).unwrap()
    }

    #[test]
    fn encrypt_then_decrypt_every_cipher() {
        let public = PublicKey::from_pem(&fixture("keys/public_key.pkcs7.pem")).unwrap();
        let private = PrivateKey::from_pem(&fixture("keys/private_key.pkcs7.pem")).unwrap();
        assert!(private.matches(&public));
        for (name, cipher) in Cipher::ALL {
            for plain in ["", "x", "exactly sixteen!", "naïve\nmulti-line ✓"] {
                let der = public.encrypt(plain.as_bytes(), *cipher).unwrap();
                let b64 = hiera_value::ruby::strict_encode64(&der);
                assert_eq!(
                    private.decrypt(&b64).unwrap(),
                    plain.as_bytes(),
                    "{name} {plain:?}"
                );
                let (ids, c) = recipients(&b64).unwrap();
                assert_eq!(ids, vec![public.recipient().clone()]);
                assert_eq!(c, Some(*cipher));
            }
        }
    }

    #[test]
    fn wrong_key_and_corrupt_values_fail_in_one_line() {
        let public = PublicKey::from_pem(&fixture("keys/public_key.pkcs7.pem")).unwrap();
        let other = PrivateKey::from_pem(&fixture("other/keys/private_key.pkcs7.pem")).unwrap();
        assert!(!other.matches(&public));
        let b64 = hiera_value::ruby::strict_encode64(
            &public.encrypt(b"s3cret", Cipher::Aes256Cbc).unwrap(),
        );
        let e = other.decrypt(&b64).unwrap_err();
        assert!(!e.contains("s3cret") && !e.contains('\n'), "{e}");
        assert!(other.decrypt("bm90IGEgdmFsdWU=").is_err());
        assert!(recipients("bm90IGEgdmFsdWU=").is_err());
        assert!(PublicKey::from_pem(b"garbage").is_err());
        assert!(PrivateKey::from_pem(b"garbage").is_err());
    }
}

#[cfg(test)]
mod keygen_tests {
    use super::*;

    #[test]
    fn created_keys_are_a_pair_with_a_random_serial() {
        let (private, cert) = create_keys().unwrap();
        assert!(
            private.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"),
            "{private}"
        );
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----\n"), "{cert}");
        let private = PrivateKey::from_pem(private.as_bytes()).unwrap();
        let public = PublicKey::from_pem(cert.as_bytes()).unwrap();
        assert!(private.matches(&public));
        let b64 = hiera_value::ruby::strict_encode64(
            &public.encrypt(b"pair", Cipher::Aes256Cbc).unwrap(),
        );
        assert_eq!(private.decrypt(&b64).unwrap(), b"pair");
        let id = public.recipient().to_string();
        assert!(
            id.starts_with("issuer CN=eyaml, serial 0x") && id.len() > 60,
            "{id}"
        );
    }
}
