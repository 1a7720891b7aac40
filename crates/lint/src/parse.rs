//! Rule group 1: every data file of every hierarchy level parses (YAML, JSON, HOCON), holds a
//! hash, and holds no Ruby object Puppet rejects; `ENC[...]` values are well-formed and, when
//! the level's keys are configured and readable, decrypt. Plaintext is never printed.

use super::repo::{DataFile, Repo};
use super::Sink;
use hiera_value::value::Value;

pub(crate) fn check(repo: &Repo, sink: &mut Sink) {
    for f in &repo.files {
        if let Some(e) = &f.read_error {
            sink.add(
                &f.path,
                (1, 1),
                "data-unreadable",
                format!("cannot read: {e}"),
            );
            continue;
        }
        if let Some((msg, pos)) = &f.parse_error {
            let (rule, pos) = ("data-syntax", *pos);
            sink.add(&f.path, pos, rule, format!("does not parse: {msg}"));
            continue;
        }
        if let Some(class) = f.not_a_hash {
            sink.add(
                &f.path,
                (1, 1),
                "data-not-a-hash",
                format!("the file holds a {class}, not a hash of keys: Puppet fails every lookup that reads it"),
            );
        }
        for rv in &f.ruby_values {
            let key = rv.key.as_str().unwrap_or("?");
            sink.add(
                &f.path,
                (rv.line, rv.column),
                "data-ruby-object",
                format!(
                    "the value of '{key}' holds a Ruby {}: Puppet fails the lookup of '{key}'",
                    rv.class
                ),
            );
        }
        if let Some(options) = &f.eyaml {
            check_eyaml(repo, f, options, sink);
        }
    }
}

/// Every `ENC[…]` string in an eyaml level's file.
fn check_eyaml(repo: &Repo, f: &DataFile, options: &hiera_value::value::Map, sink: &mut Sink) {
    let keys_configured = options
        .get(&Value::str("pkcs7_private_key"))
        .and_then(Value::as_str)
        .map(|p| {
            // Keys with placeholders or missing files cannot be tried here.
            !p.contains("%{") && repo.fs.is_file(std::path::Path::new(p))
        })
        .unwrap_or(false);
    let keys = hiera_engine::backend::eyaml::load_keys_in(options, repo.fs.clone());
    let public = level_certificate(&keys);
    for (k, v) in &f.data {
        let Some(key) = k.as_str() else { continue };
        let mut strings = Vec::new();
        collect_strings(v, &mut strings);
        for s in strings {
            if !s.contains("ENC[") {
                continue;
            }
            let tokens = enc_tokens(s);
            if tokens.is_empty() {
                continue;
            }
            for tok in &tokens {
                if let Err(why) = well_formed(tok) {
                    let pos = f.pos_in_key(key, "ENC[");
                    sink.add(
                        &f.path,
                        pos,
                        "eyaml-malformed",
                        format!("the encrypted value of '{key}' is malformed: {why}"),
                    );
                }
            }
            if let Some(cert) = &public {
                for tok in tokens.iter().filter(|t| well_formed(t).is_ok()) {
                    wrong_recipient(f, key, tok, cert, sink);
                }
            }
            if keys_configured && tokens.iter().all(|t| well_formed(t).is_ok()) {
                let path = f.path.display().to_string();
                if let Err(e) =
                    hiera_engine::backend::eyaml::decrypt_value(&Value::str(s), &keys, key, &path)
                {
                    let pos = f.pos_in_key(key, "ENC[");
                    sink.add(
                        &f.path,
                        pos,
                        "eyaml-decrypt",
                        format!(
                            "the encrypted value of '{key}' does not decrypt with the level's keys: {}",
                            decrypt_reason(&e.to_string())
                        ),
                    );
                }
            }
        }
    }
}

/// The level's certificate (what production encrypts for) and where it was read from.
#[cfg(feature = "eyaml")]
type Certificate = (hiera_engine::backend::eyaml::crypt::PublicKey, String);
#[cfg(not(feature = "eyaml"))]
type Certificate = ();

#[cfg(feature = "eyaml")]
fn level_certificate(keys: &hiera_engine::backend::eyaml::EyamlKeys) -> Option<Certificate> {
    let t = keys.public_pem().ok()?;
    let key = hiera_engine::backend::eyaml::crypt::PublicKey::from_pem(&t.pem).ok()?;
    let shown = t
        .file
        .map_or_else(|| "(from a variable)".into(), |p| p.display().to_string());
    Some((key, shown))
}

#[cfg(not(feature = "eyaml"))]
fn level_certificate(_: &hiera_engine::backend::eyaml::EyamlKeys) -> Option<Certificate> {
    None
}

/// `eyaml-wrong-recipient` (or `eyaml-malformed` for a value that is no PKCS7 structure).
#[cfg(feature = "eyaml")]
fn wrong_recipient(f: &DataFile, key: &str, tok: &str, cert: &Certificate, sink: &mut Sink) {
    let (cert, shown) = cert;
    let b64: String = tok
        .trim_start_matches("ENC[")
        .trim_end_matches(']')
        .trim_start_matches("PKCS7,")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let pos = f.pos_in_key(key, "ENC[");
    match cert.is_recipient_of(&b64) {
        Ok(true) => {}
        Ok(false) => sink.add(
            &f.path,
            pos,
            "eyaml-wrong-recipient",
            format!(
                "the encrypted value of '{key}' was not encrypted for the level's public key {shown} ({}): the private key of that pair cannot decrypt it",
                cert.recipient()
            ),
        ),
        Err(why) => sink.add(
            &f.path,
            pos,
            "eyaml-malformed",
            format!("the encrypted value of '{key}' is malformed: {why}"),
        ),
    }
}

#[cfg(not(feature = "eyaml"))]
fn wrong_recipient(_: &DataFile, _: &str, _: &str, _: &Certificate, _: &mut Sink) {}

/// The error's reason without the ciphertext it quotes.
fn decrypt_reason(m: &str) -> String {
    match m.find("Error was ") {
        Some(i) => m[i + 10..].to_string(),
        None => m.to_string(),
    }
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|e| collect_strings(e, out)),
        Value::Hash(h) => h.values().for_each(|e| collect_strings(e, out)),
        _ => {}
    }
}

/// The `ENC[…]` tokens of a string (hiera-eyaml's non-greedy match).
fn enc_tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("ENC[") {
        match rest[i..].find(']') {
            Some(j) => {
                out.push(&rest[i..i + j + 1]);
                rest = &rest[i + j + 1..];
            }
            None => {
                out.push(&rest[i..]);
                break;
            }
        }
    }
    out
}

/// hiera-eyaml's token syntax: `ENC[PKCS7,base64]` (spaces and newlines allowed in the
/// base64, as in the block form), or `ENC[GPG,…]`, which needs a plugin Puppet rarely has.
fn well_formed(tok: &str) -> Result<(), String> {
    let Some(inner) = tok.strip_prefix("ENC[").and_then(|t| t.strip_suffix(']')) else {
        return Err("no closing `]`".into());
    };
    let (scheme, data) = match inner.split_once(',') {
        Some((s, d)) => (s.trim(), d),
        None => ("PKCS7", inner),
    };
    match scheme {
        "PKCS7" => {}
        "GPG" => return Err("the GPG scheme needs the hiera-eyaml-gpg plugin, which this tool and most Puppet servers lack".into()),
        other => return Err(format!("unknown encryption scheme '{other}' (hiera-eyaml knows PKCS7)")),
    }
    let b64: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    if b64.is_empty() {
        return Err("no data after `PKCS7,`".into());
    }
    let valid = b64
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=');
    let padded = b64.trim_end_matches('=');
    if !valid
        || !b64.len().is_multiple_of(4)
        || b64.len() - padded.len() > 2
        || padded.contains('=')
    {
        return Err("the data is not base64".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(
            enc_tokens("a ENC[PKCS7,QUJD] b ENC[x]"),
            vec!["ENC[PKCS7,QUJD]", "ENC[x]"]
        );
        assert!(well_formed("ENC[PKCS7,QUJD]").is_ok());
        assert!(well_formed("ENC[PKCS7,QU\n  JD]").is_ok());
        assert!(well_formed("ENC[PKCS7,QUJ]").is_err());
        assert!(well_formed("ENC[PKCS7,Q!JD]").is_err());
        assert!(well_formed("ENC[PKCS7,]").is_err());
        assert!(well_formed("ENC[GPG,QUJD]").unwrap_err().contains("GPG"));
        assert!(well_formed("ENC[RSA,QUJD]").unwrap_err().contains("RSA"));
        assert!(well_formed("ENC[PKCS7,QUJD").is_err());
    }
}
