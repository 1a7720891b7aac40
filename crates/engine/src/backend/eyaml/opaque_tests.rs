//! Opaque secrets through the whole lookup: merges, knockout, lookup_options and
//! interpolation go on with the stand-ins, which equal only the same ciphertext. The
//! ciphertexts need not be real: an opaque token is never decrypted.

use super::{contains_opaque, count_opaque, opaque_marker, Secrets};
use crate::engine::{Outcome, Session, Settings};
use crate::merge::MergeStrategy;
use crate::{EnvOptions, Scope};
use hiera_value::{Map, Value};

const A: &str = "QUFBQUFBQUFBQUFB";
const B: &str = "QkJCQkJCQkJCQkJC";

/// A control repo with two eyaml levels (`node.eyaml` over `common.eyaml`) and a plain one;
/// `key` is the eyaml levels' private key option.
struct Repo(std::path::PathBuf);

impl Repo {
    fn new(name: &str, key: &str, node: &str, common: &str, plain: &str) -> Repo {
        let dir = std::env::temp_dir().join(format!("hl-opaque-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let level = |n: &str| {
            format!("  - name: {n}\n    lookup_key: eyaml_lookup_key\n    path: {n}.eyaml\n    options:\n      pkcs7_private_key: {key}\n")
        };
        let hiera = format!(
            "version: 5\nhierarchy:\n{}{}  - name: plain\n    path: plain.yaml\n",
            level("node"),
            level("common")
        );
        std::fs::write(dir.join("hiera.yaml"), hiera).unwrap();
        std::fs::write(dir.join("data/node.eyaml"), node).unwrap();
        std::fs::write(dir.join("data/common.eyaml"), common).unwrap();
        std::fs::write(dir.join("data/plain.yaml"), plain).unwrap();
        Repo(dir)
    }

    fn session(&self, secrets: Secrets) -> Session {
        let env = EnvOptions {
            cwd: self.0.clone(),
            ..Default::default()
        };
        let settings = Settings {
            secrets,
            ..Default::default()
        };
        Session::new(
            Scope::from_facts(Map::default(), "production"),
            env.layers().unwrap(),
            settings,
        )
    }
}

impl Drop for Repo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn yaml(s: &str) -> Value {
    hiera_formats::yaml::load(s).unwrap()
}

fn lookup(s: &mut Session, key: &str, merge: Option<&str>) -> Value {
    let m = merge.map(|m| MergeStrategy::from_value(&yaml(m)).unwrap());
    match s.lookup(&[key.to_string()], m.as_ref()) {
        Ok(Outcome::Found(v)) => v,
        other => panic!("{key}: {other:?}"),
    }
}

fn enc(c: &str) -> String {
    format!("ENC[PKCS7,{c}]")
}

#[test]
fn stand_ins_equal_only_the_same_ciphertext() {
    assert_eq!(opaque_marker(A), opaque_marker(A));
    assert_ne!(opaque_marker(A), opaque_marker(B));
    let m = opaque_marker(A);
    assert!(
        m.starts_with("ENC[…") && m.ends_with(']') && !m.contains(A),
        "{m}"
    );
    assert_eq!(count_opaque(&Value::str(format!("{m}:{m}"))), 2);
    assert!(!contains_opaque(&Value::str("ENC[PKCS7,abc]")));
}

#[test]
fn merges_knockout_and_lookup_options_go_on() {
    let node = format!(
        "pw: {a}\nlist:\n  - {a}\n  - {b}\nusers:\n  alice: {a}\n  bob: {b}\ndeep:\n  db:\n    pw: {b}\nko:\n  - --{a}\nlookup_options:\n  users:\n    merge: hash\n",
        a = enc(A),
        b = enc(B)
    );
    // The same secret in block form (whitespace inside the token) is the same ciphertext.
    let common = format!(
        "pw: {b}\nlist:\n  - >\n    ENC[PKCS7,{a1}\n    {a2}]\n  - x\nusers:\n  alice: {b}\n  carol: plain\ndeep:\n  db:\n    user: u\n    pw: {a}\nko:\n  - {a}\n  - y\n",
        a = enc(A),
        b = enc(B),
        a1 = &A[..8],
        a2 = &A[8..]
    );
    let repo = Repo::new("merge", "/nonexistent/key.pem", &node, &common, "{}");
    let mut s = repo.session(Secrets::Auto);
    let (a, b) = (Value::str(opaque_marker(A)), Value::str(opaque_marker(B)));
    assert_eq!(lookup(&mut s, "pw", None), a);
    assert_eq!(
        lookup(&mut s, "list", Some("unique")),
        Value::Array(vec![a.clone(), b.clone(), Value::str("x")])
    );
    // lookup_options found in the eyaml file: a hash merge, the higher level's secret wins.
    let users = lookup(&mut s, "users", None);
    assert_eq!(users.get("alice"), Some(&a));
    assert_eq!(users.get("bob"), Some(&b));
    assert_eq!(users.get("carol"), Some(&Value::str("plain")));
    let deep = lookup(
        &mut s,
        "deep",
        Some("{strategy: deep, knockout_prefix: '--'}"),
    );
    assert_eq!(
        deep,
        yaml(&format!("{{db: {{user: u, pw: '{}'}}}}", opaque_marker(B)))
    );
    // Knocking out a secret by its stand-in's own text: `--` + the same ciphertext.
    let ko = lookup(
        &mut s,
        "ko",
        Some("{strategy: deep, knockout_prefix: '--'}"),
    );
    assert_eq!(ko, Value::Array(vec![Value::str("y")]));
}

#[test]
fn interpolation_carries_the_stand_in() {
    let node = format!(
        "pw: {a}\nother: {b}\nurl: \"u:%{{lookup('pw')}}@db\"\nsame: \"%{{alias('pw')}}\"\ntwo: \"%{{lookup('pw')}}%{{lookup('other')}}\"\n",
        a = enc(A),
        b = enc(B)
    );
    let repo = Repo::new("interp", "/nonexistent/key.pem", &node, "{}", "{}");
    let mut s = repo.session(Secrets::Opaque);
    let (a, b) = (opaque_marker(A), opaque_marker(B));
    assert_eq!(lookup(&mut s, "url", None), Value::str(format!("u:{a}@db")));
    assert_eq!(lookup(&mut s, "same", None), Value::str(a.clone()));
    assert_eq!(lookup(&mut s, "two", None), Value::str(format!("{a}{b}")));
}

#[test]
fn without_the_key_decrypt_keeps_puppets_error_and_auto_other_errors() {
    let node = format!("pw: {}\nplain: p\n", enc(A));
    let repo = Repo::new("modes", "/nonexistent/key.pem", &node, "{}", "{}");
    let e = repo
        .session(Secrets::Decrypt)
        .lookup(&["pw".into()], None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hiera-eyaml backend error decrypting")
            && e.ends_with("Error was file /nonexistent/key.pem does not exist"),
        "{e}"
    );
    // A key that is there but cannot be read is not "no key": still an error with auto.
    let dir_key = Repo::new("dirkey", "/", &node, "{}", "{}");
    let e = dir_key
        .session(Secrets::Auto)
        .lookup(&["pw".into()], None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a directory"), "{e}");
    // Opaque never reads the key.
    assert_eq!(
        lookup(&mut dir_key.session(Secrets::Opaque), "pw", None),
        Value::str(opaque_marker(A))
    );
}

#[test]
fn conversions_and_type_checks_that_need_the_plaintext_are_not_errors() {
    let node = format!(
        "port: {a}\npw: {a}\nlookup_options:\n  port:\n    convert_to: Integer\n  pw:\n    convert_to: Sensitive\n",
        a = enc(A)
    );
    let repo = Repo::new("convert", "/nonexistent/key.pem", &node, "{}", "{}");
    let mut s = repo.session(Secrets::Opaque);
    let a = Value::str(opaque_marker(A));
    assert_eq!(lookup(&mut s, "port", None), a);
    assert_eq!(
        lookup(&mut s, "pw", None),
        Value::Sensitive(Box::new(a.clone()))
    );
    let finish = crate::Finish {
        default: None,
        value_type: Some(crate::Finish::parse_type("Integer").unwrap()),
    };
    assert!(finish.apply(Outcome::Found(a)).is_ok());
    assert!(finish.apply(Outcome::Found(Value::str("x"))).is_err());
}
