//! The built-in backends against their fixtures: eyaml decryption, HOCON parsing, the
//! external-command backend. Expected values are what Ruby (hiera-eyaml 3.3.0, ruby-hocon
//! 1.3.1, Puppet 7.23) returned for the same fixtures.

use super::{command, eyaml, hocon};
use crate::Error;
use hiera_value::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/backends")
}

fn map(pairs: &[(&str, Value)]) -> Map {
    pairs
        .iter()
        .map(|(k, v)| (Value::str(*k), v.clone()))
        .collect()
}

fn strs(v: &[&str]) -> Value {
    Value::Array(v.iter().map(|s| Value::str(*s)).collect())
}

// ---------------------------------------------------------------- eyaml

fn key_options(private: &str, public: &str) -> Map {
    let dir = fixtures().join("eyaml");
    map(&[
        (
            "pkcs7_private_key",
            Value::str(dir.join(private).to_string_lossy()),
        ),
        (
            "pkcs7_public_key",
            Value::str(dir.join(public).to_string_lossy()),
        ),
    ])
}

fn good_keys() -> eyaml::EyamlKeys {
    eyaml::load_keys(&key_options(
        "keys/private_key.pkcs7.pem",
        "keys/public_key.pkcs7.pem",
    ))
}

fn eyaml_data() -> Map {
    let bytes = std::fs::read(fixtures().join("eyaml/data/common.eyaml")).unwrap();
    match hiera_formats::yaml::load_document(&bytes).unwrap().value {
        Value::Hash(h) => h,
        other => panic!("not a hash: {other:?}"),
    }
}

const PATH: &str = "/x/common.eyaml";

fn decrypt(key: &str, keys: &eyaml::EyamlKeys) -> Result<Value, Error> {
    let data = eyaml_data();
    let v = data.get(&Value::str(key)).unwrap();
    eyaml::decrypt_value(v, keys, key, PATH)
}

fn decrypt_ok(key: &str) -> Value {
    decrypt(key, &good_keys()).unwrap()
}

#[test]
fn eyaml_whole_inline_and_several_tokens() {
    assert_eq!(decrypt_ok("whole"), Value::str("hunter2"));
    // Interpolation is the caller's: the `%{}` survives decryption untouched.
    assert_eq!(
        decrypt_ok("inline"),
        Value::str("postgres://app:s3cret@db/%{facts.role}")
    );
    assert_eq!(decrypt_ok("two"), Value::str("a one b two c"));
    assert_eq!(decrypt_ok("interp"), Value::str("pw-%{facts.role}"));
    assert_eq!(decrypt_ok("plain"), Value::str("role is %{facts.role}"));
}

#[test]
fn eyaml_chomp_block_and_literal_forms() {
    // "line1\nline2\n" encrypted: one trailing newline is chomped.
    assert_eq!(decrypt_ok("nl"), Value::str("line1\nline2"));
    // Folded block: spaces inside the token, trailing newline chomped.
    assert_eq!(decrypt_ok("block"), Value::str("multi word secret"));
    // Literal block: the token spans lines, so `/.*ENC\[.*?\]/` fails and Puppet returns it
    // as written.
    let lit = decrypt_ok("literal");
    let s = lit.as_str().unwrap();
    assert!(s.starts_with("ENC[PKCS7,MIIB") && s.contains('\n'), "{s}");
    assert_eq!(decrypt_ok("empty"), Value::str(""));
}

#[test]
fn eyaml_schemes_and_ciphers() {
    assert_eq!(decrypt_ok("noscheme"), Value::str("bare"));
    assert_eq!(decrypt_ok("lower"), Value::str("lower"));
    // Made with `openssl smime -encrypt -aes128` / `-des3` (eyaml itself writes AES-256).
    assert_eq!(decrypt_ok("aes128"), Value::str("aes-128 secret"));
    assert_eq!(decrypt_ok("des3"), Value::str("triple des secret"));
}

#[test]
fn eyaml_arrays_hashes_and_keys() {
    assert_eq!(
        decrypt_ok("arr"),
        Value::Array(vec![
            Value::str("first"),
            Value::str("plain"),
            Value::Int(42)
        ])
    );
    assert_eq!(
        decrypt_ok("hash"),
        Value::Hash(map(&[
            ("user", Value::str("admin")),
            ("pass", Value::str("p@ss")),
            ("nested", strs(&["deep"])),
        ]))
    );
    // Hash keys are never decrypted (only interpolated, by the caller).
    let Value::Hash(h) = decrypt_ok("keys") else {
        panic!()
    };
    let keys: Vec<&str> = h.keys().map(|k| k.as_str().unwrap()).collect();
    assert!(keys[0].starts_with("ENC[PKCS7,"));
    assert_eq!(keys[1], "%{facts.role}_key");
    assert_eq!(h[1], Value::str("keyed"));
}

fn err_text(e: Error) -> (bool, String) {
    (e.is_lookup_error(), e.message())
}

#[test]
fn eyaml_errors_read_like_puppet() {
    let data = eyaml_data();
    let corrupt = data[&Value::str("corrupt")].as_str().unwrap().to_string();
    assert_eq!(
        err_text(decrypt("corrupt", &good_keys()).unwrap_err()),
        (
            true,
            format!(
                "hiera-eyaml backend error decrypting {corrupt} when looking up corrupt in {PATH}. Error was Could not parse the PKCS7: no start line (Expecting: PKCS7)"
            )
        )
    );
    // Ruby's LoadError escapes eyaml_lookup_key's rescue: Puppet prints it bare.
    assert_eq!(
        err_text(decrypt("gpg", &good_keys()).unwrap_err()),
        (
            false,
            "cannot load such file -- hiera/backend/eyaml/encryptors/gpg".to_string()
        )
    );
    let msg = |key: &str, keys: &eyaml::EyamlKeys| {
        let m = decrypt(key, keys).unwrap_err().message();
        m.split(". Error was ").nth(1).unwrap().to_string()
    };
    assert_eq!(msg("wrongkey", &good_keys()), "bad decrypt");
    let other = eyaml::load_keys(&key_options(
        "other/keys/private_key.pkcs7.pem",
        "other/keys/public_key.pkcs7.pem",
    ));
    assert_eq!(msg("whole", &other), "bad decrypt");
    // hiera-eyaml 4 reads only the private key: the certificate setting is ignored, so a
    // mismatched, foreign-serial or unreadable certificate changes nothing.
    for cert in [
        "keys/other_serial_cert.pem",
        "other/keys/public_key.pkcs7.pem",
        "keys/private_key.pkcs7.pem",
        "keys/nope.pem",
    ] {
        let keys = eyaml::load_keys(&key_options("keys/private_key.pkcs7.pem", cert));
        assert_eq!(
            decrypt("whole", &keys).unwrap(),
            Value::str("hunter2"),
            "{cert}"
        );
    }
    let missing = eyaml::load_keys(&map(&[
        ("pkcs7_private_key", Value::str("keys/nope.pem")),
        ("pkcs7_public_key", Value::str("keys/public_key.pkcs7.pem")),
    ]));
    assert_eq!(msg("whole", &missing), "file keys/nope.pem does not exist");
    let garbage = eyaml::load_keys(&key_options(
        "keys/public_key.pkcs7.pem",
        "keys/public_key.pkcs7.pem",
    ));
    assert_eq!(msg("whole", &garbage), "Neither PUB key nor PRIV key");
    let dir = eyaml::load_keys(&key_options("keys", "keys/public_key.pkcs7.pem"));
    // hiera-eyaml's words first (the conformance suite records them), then plain ones.
    let m = msg("whole", &dir);
    assert!(m.starts_with("Is a directory @ io_fread - /"), "{m}");
    assert!(
        m.ends_with(
            "/keys is a directory, not a key file: pkcs7_private_key in hiera.yaml's options \
             must name the PEM file)"
        ),
        "{m}"
    );
    assert_eq!(
        msg("whole", &eyaml::load_keys(&Map::default())),
        "pkcs7_private_key is not defined"
    );
    // Plain values never touch the keys.
    assert_eq!(
        decrypt("plain", &missing).unwrap(),
        Value::str("role is %{facts.role}")
    );
}

#[test]
fn eyaml_errors_never_show_key_material() {
    let private =
        std::fs::read_to_string(fixtures().join("eyaml/keys/private_key.pkcs7.pem")).unwrap();
    let body: Vec<&str> = private
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let swapped = eyaml::load_keys(&key_options(
        "keys/public_key.pkcs7.pem",
        "keys/private_key.pkcs7.pem",
    ));
    for keys in [swapped, good_keys()] {
        for key in ["whole", "corrupt", "wrongkey", "gpg"] {
            if let Err(e) = decrypt(key, &keys) {
                let m = e.message();
                for line in &body {
                    assert!(!m.contains(line), "key material in: {m}");
                }
            }
        }
    }
}

#[test]
fn eyaml_env_var_keys() {
    let dir = fixtures().join("eyaml/keys");
    let private = std::fs::read_to_string(dir.join("private_key.pkcs7.pem")).unwrap();
    let public = std::fs::read_to_string(dir.join("public_key.pkcs7.pem")).unwrap();
    // Unique names: tests run in parallel threads of one process.
    std::env::set_var("HIERA_LOOKUP_TEST_EYAML_PRIV", private);
    std::env::set_var("HIERA_LOOKUP_TEST_EYAML_PUB", public);
    let keys = eyaml::load_keys(&map(&[
        (
            "pkcs7_private_key_env_var",
            Value::str("HIERA_LOOKUP_TEST_EYAML_PRIV"),
        ),
        (
            "pkcs7_public_key_env_var",
            Value::str("HIERA_LOOKUP_TEST_EYAML_PUB"),
        ),
        // hiera-eyaml reads the variable when it is set, whatever the path says (its
        // warning claims the opposite).
        ("pkcs7_private_key", Value::str("/nonexistent/private.pem")),
    ]));
    assert_eq!(decrypt("whole", &keys).unwrap(), Value::str("hunter2"));
}

#[test]
fn eyaml_b64_env_var_key() {
    // hiera-eyaml 5: the variable holds the PEM text in base64; it wins over the path and
    // loses to the plain variable.
    let dir = fixtures().join("eyaml/keys");
    let private = std::fs::read(dir.join("private_key.pkcs7.pem")).unwrap();
    std::env::set_var(
        "HIERA_LOOKUP_TEST_EYAML_B64",
        hiera_value::ruby::strict_encode64(&private),
    );
    let keys = eyaml::load_keys(&map(&[
        (
            "pkcs7_b64_private_key_env_var",
            Value::str("HIERA_LOOKUP_TEST_EYAML_B64"),
        ),
        ("pkcs7_private_key", Value::str("/nonexistent/private.pem")),
    ]));
    assert_eq!(decrypt("whole", &keys).unwrap(), Value::str("hunter2"));
    let unset = eyaml::load_keys(&map(&[
        (
            "pkcs7_private_key_env_var",
            Value::str("HIERA_LOOKUP_TEST_EYAML_UNSET_PLAIN"),
        ),
        (
            "pkcs7_b64_private_key_env_var",
            Value::str("HIERA_LOOKUP_TEST_EYAML_B64"),
        ),
    ]));
    let e = decrypt("whole", &unset).unwrap_err().to_string();
    assert!(
        e.ends_with("env HIERA_LOOKUP_TEST_EYAML_UNSET_PLAIN is not set"),
        "{e}"
    );
}

#[test]
fn eyaml_finds_encrypted_values() {
    let data = eyaml_data();
    assert!(eyaml::contains_encrypted(&data[&Value::str("hash")]));
    assert!(eyaml::contains_encrypted(&data[&Value::str("arr")]));
    assert!(!eyaml::contains_encrypted(&data[&Value::str("plain")]));
    assert!(!eyaml::contains_encrypted(&data[&Value::str("literal")]));
}

// ---------------------------------------------------------------- command

fn command_dir() -> PathBuf {
    fixtures().join("command")
}

fn command_options(argv: &[&str]) -> Map {
    map(&[("command", strs(argv))])
}

fn scope(role: &str) -> Value {
    Value::Hash(map(&[(
        "facts",
        Value::Hash(map(&[("role", Value::str(role))])),
    )]))
}

fn run_command(key: &str, options: &Map, role: &str) -> Result<Option<Value>, String> {
    command::command_lookup(
        key,
        options,
        None,
        &scope(role),
        &command_dir(),
        Duration::from_secs(10),
    )
}

#[test]
fn command_example_backend_answers() {
    let mut o = command_options(&["./bin/vault-lookup"]);
    o.insert(Value::str("store"), Value::str("data/store.json"));
    assert_eq!(
        run_command("db::password", &o, "web"),
        Ok(Some(Value::str("web-secret")))
    );
    assert_eq!(
        run_command("db::password", &o, "db"),
        Ok(Some(Value::str("common-secret")))
    );
    assert_eq!(run_command("nope", &o, "web"), Ok(None));
    // JSON types and key order come through as the json gem would read them.
    assert_eq!(
        run_command("tuning", &o, "web"),
        Ok(Some(Value::Hash(map(&[
            ("workers", Value::Int(4)),
            ("ratio", Value::Float(0.5)),
            ("debug", Value::Bool(false)),
            ("extra", Value::Null),
        ]))))
    );
    // Arguments reach the program.
    let mut up = command_options(&["./bin/vault-lookup", "--upcase"]);
    up.insert(Value::str("store"), Value::str("data/store.json"));
    assert_eq!(
        run_command("db::password", &up, "web"),
        Ok(Some(Value::str("WEB-SECRET")))
    );
}

#[test]
fn command_request_format() {
    let mut o = command_options(&["bin/echo-request"]);
    o.insert(Value::str("path"), Value::str("/etc/x.yaml"));
    let got = command::command_lookup(
        "a::b",
        &o,
        Some("/etc/x.yaml"),
        &scope("web"),
        &command_dir(),
        Duration::from_secs(10),
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        got,
        Value::Hash(map(&[
            ("protocol", Value::Int(1)),
            ("kind", Value::str("lookup_key")),
            ("key", Value::str("a::b")),
            ("location", Value::str("/etc/x.yaml")),
            (
                "options",
                Value::Hash(map(&[
                    ("command", strs(&["bin/echo-request"])),
                    ("path", Value::str("/etc/x.yaml")),
                ]))
            ),
            ("scope", scope("web")),
        ]))
    );
}

#[test]
fn command_errors_name_command_and_key() {
    let err = |arg: &str, timeout: u64| {
        command::command_lookup(
            "k",
            &command_options(&["./bin/misbehave", arg]),
            None,
            &scope("web"),
            &command_dir(),
            Duration::from_secs(timeout),
        )
        .unwrap_err()
    };
    assert_eq!(
        err("sleep", 1),
        "lookup_key command './bin/misbehave sleep' failed for key 'k': timed out after 1s"
    );
    assert_eq!(
        err("fail", 10),
        "lookup_key command './bin/misbehave fail' failed for key 'k': exited with status 3: vault is sealed"
    );
    assert!(err("garbage", 10).contains("its answer is not JSON"));
    assert!(err("shape", 10).ends_with(
        r#"the answer must be {"found": true, "value": ...} or {"found": false}, got: {"value": 1}"#
    ));
    assert!(err("silent", 10).ends_with("it printed no answer (the answer must be {\"found\": true, \"value\": ...} or {\"found\": false})"));
    let missing = command::command_lookup(
        "k",
        &command_options(&["./bin/does-not-exist"]),
        None,
        &scope("web"),
        &command_dir(),
        Duration::from_secs(1),
    )
    .unwrap_err();
    assert_eq!(
        missing,
        "lookup_key command './bin/does-not-exist' failed for key 'k': cannot run it: No such file or directory"
    );
    // options.timeout overrides the caller's default.
    let mut o = command_options(&["./bin/misbehave", "sleep"]);
    o.insert(Value::str("timeout"), Value::Float(0.2));
    let e = command::command_lookup(
        "k",
        &o,
        None,
        &scope("web"),
        &command_dir(),
        Duration::from_secs(30),
    )
    .unwrap_err();
    assert!(e.ends_with("timed out after 0.2s"), "{e}");
}

#[test]
fn hocon_fixture_matches_ruby_hocon() {
    let dir = fixtures().join("hocon");
    let text = std::fs::read_to_string(dir.join("common.conf")).unwrap();
    // common.expected.json: `JSON.generate(Hocon.parse(text))` from ruby-hocon 1.3.1.
    let want = std::fs::read_to_string(dir.join("common.expected.json")).unwrap();
    let got = hocon::parse_hocon(&text).unwrap();
    assert_eq!(
        hiera_formats::json::to_serde(&got).to_string(),
        want.trim_end()
    );
    // Types survive as Ruby has them (the JSON text alone would not tell 5 from 5.0).
    let Value::Hash(h) = got else { panic!() };
    let app = h.get(&Value::str("app")).unwrap();
    assert_eq!(app.get("retries"), Some(&Value::Int(5)));
    assert_eq!(app.get("ratio"), Some(&Value::Float(0.75)));
    assert_eq!(app.get("nothing"), Some(&Value::Null));
}

/// A session told not to run programs (diff, lint, where over a fleet) fails the lookup that
/// reaches a `command` level with one line naming the level, its file and how to allow it,
/// records it, and runs nothing; a plain session runs it.
#[test]
fn command_levels_are_refused_when_the_session_says_so() {
    use crate::engine::{Exec, Layers, Outcome, Session, Settings};
    let dir = command_dir();
    let layers = Layers {
        environment_dir: Some(dir.clone()),
        ..Default::default()
    };
    let facts = map(&[("role", Value::str("web"))]);
    let scope = crate::scope::Scope::from_facts(facts, "production");
    let key = ["db::password".to_string()];

    let mut refused = Session::new(scope.clone(), layers.clone(), Settings::default());
    refused.set_exec(Exec::Refused {
        how_to_allow: "give --allow-exec to run it",
    });
    let e = refused.lookup(&key, None).unwrap_err().to_string();
    let hiera = dir.join("hiera.yaml").display().to_string();
    assert_eq!(
        e,
        format!("Not running the program of hierarchy level 'Vault (external command)' (lookup_key: command) in {hiera}: give --allow-exec to run it")
    );
    assert_eq!(refused.refused_exec(), Some(e.as_str()));

    let mut plain = Session::new(scope, layers, Settings::default());
    assert_eq!(
        plain.lookup(&key, None).unwrap(),
        Outcome::Found(Value::str("WEB-SECRET"))
    );
    assert_eq!(plain.refused_exec(), None);
}
