//! eyaml secrets on the command line: opaque values without the private key (a single lookup
//! keeps Puppet's error unless `--secrets opaque`; batch mode goes on), and the `eyaml`
//! commands.

use crate::eyaml::{NEW, OLD};
use crate::scratch_tree::{tree, Tree};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
}

pub fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

/// A control repo whose eyaml level names a private key that is not there (CI).
fn keyless(name: &str) -> Tree {
    let hiera = "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: /nonexistent/private_key.pkcs7.pem\n      pkcs7_public_key: /nonexistent/public_key.pkcs7.pem\n  - name: common\n    path: common.yaml\n";
    let secrets = format!(
        "pw: {OLD}\nusers:\n  alice: {OLD}\n  bob: {NEW}\nurl: \"postgres://u:%{{lookup('pw')}}@db\"\nlookup_options:\n  users:\n    merge: hash\n"
    );
    tree(
        "secrets",
        name,
        &[
            ("hiera.yaml", hiera),
            ("data/secrets.eyaml", &secrets),
            ("data/common.yaml", "users:\n  carol: plain\n"),
            (
                "facts/a.yaml",
                "hostname: a\ndomain: example.com\nfqdn: a.example.com\nclientcert: a.example.com\n",
            ),
            (
                "facts/b.yaml",
                "hostname: b\ndomain: example.com\nfqdn: b.example.com\nclientcert: b.example.com\n",
            ),
        ],
    )
}

fn run(dir: &Tree, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

fn cipher_of(token: &str) -> &str {
    &token["ENC[PKCS7,".len()..token.len() - 1]
}

#[test]
fn a_single_lookup_keeps_puppets_error_unless_opaque() {
    let dir = keyless("single");
    let o = run(&dir, &["--facts", "facts/a.yaml", "pw"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    // Puppet 8.10's words (tests/conformance/backends/eyaml-errors, `missing`).
    assert!(
        err.contains("hiera-eyaml backend error decrypting")
            && err.contains("Error was file /nonexistent/private_key.pkcs7.pem does not exist"),
        "{err}"
    );
    let o = run(
        &dir,
        &[
            "--facts",
            "facts/a.yaml",
            "--secrets",
            "opaque",
            "users",
            "--render-as",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let old = hiera_engine::backend::eyaml::opaque_marker(cipher_of(OLD));
    let new = hiera_engine::backend::eyaml::opaque_marker(cipher_of(NEW));
    assert_eq!(
        out,
        format!("{{\"carol\":\"plain\",\"alice\":\"{old}\",\"bob\":\"{new}\"}}\n")
    );
    // Interpolated into a bigger string, the stand-in stays; the ciphertext never shows.
    let o = run(
        &dir,
        &["--facts", "facts/a.yaml", "--secrets", "opaque", "url"],
    );
    assert_eq!(text(&o.stdout), format!("--- postgres://u:{old}@db\n"));
    let o = run(
        &dir,
        &["--facts", "facts/a.yaml", "--secrets", "sometimes", "pw"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--secrets 'sometimes'"));
}

#[test]
fn a_batch_goes_on_without_the_key() {
    let dir = keyless("batch");
    let o = run(&dir, &["--facts-dir", "facts", "users", "url"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(!out.contains("MIIB") && out.contains("ENC[…"), "{out}");
    // Asked to decrypt, every line is Puppet's error.
    let o = run(
        &dir,
        &["--facts-dir", "facts", "--secrets", "decrypt", "pw"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("does not exist"));
}
