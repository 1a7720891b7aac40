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
    // The summary says how many answers were opaque (both nodes' users and url).
    assert!(
        text(&o.stderr).contains("4 answers held encrypted secrets"),
        "{}",
        text(&o.stderr)
    );
    // Asked to decrypt, every line is Puppet's error.
    let o = run(
        &dir,
        &["--facts-dir", "facts", "--secrets", "decrypt", "pw"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stdout).contains("does not exist"));
}

// ---------------------------------------------------------------- the eyaml commands

const FIXTURE_KEYS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/backends/eyaml");

/// A control repo with the test key pair in `keys/` (0600), an eyaml level naming them by
/// relative path, HOME and TMPDIR inside it.
fn repo(name: &str) -> Tree {
    let hiera = "version: 5\nhierarchy:\n  - name: Per-node secrets\n    lookup_key: eyaml_lookup_key\n    path: nodes/%{trusted.certname}.eyaml\n    options:\n      pkcs7_private_key: keys/private_key.pkcs7.pem\n      pkcs7_public_key: keys/public_key.pkcs7.pem\n  - name: Secrets\n    lookup_key: eyaml_lookup_key\n    path: common.eyaml\n    options:\n      pkcs7_private_key: keys/private_key.pkcs7.pem\n      pkcs7_public_key: keys/public_key.pkcs7.pem\n";
    let common = format!(
        "---\n# the database\nprofile::db::password: {OLD} # rotated yearly\nplain: text\nblock: >\n    {}\n    {}\n",
        &OLD[..40],
        &OLD[40..]
    );
    let t = tree(
        "eyaml",
        name,
        &[
            ("hiera.yaml", hiera),
            ("data/common.eyaml", &common),
            ("home/.keep", ""),
            ("tmp/.keep", ""),
        ],
    );
    std::fs::create_dir_all(t.join("keys")).unwrap();
    for f in ["private_key.pkcs7.pem", "public_key.pkcs7.pem"] {
        let to = t.join("keys").join(f);
        std::fs::copy(format!("{FIXTURE_KEYS}/keys/{f}"), &to).unwrap();
        set_mode(&to, 0o600);
    }
    t
}

fn set_mode(p: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn eyaml(dir: &Tree, args: &[&str]) -> Output {
    eyaml_with(dir, args, &[])
}

fn eyaml_with(dir: &Tree, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = bin();
    c.current_dir(dir)
        .arg("eyaml")
        .args(args)
        .env("HOME", dir.join("home"))
        .env("TMPDIR", dir.join("tmp"))
        .env_remove("EYAML_CONFIG")
        .env_remove("VISUAL")
        .env_remove("EDITOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// The second test key pair's private key, copied 0600 into `dir`.
fn other_private(dir: &Tree) -> String {
    let to = dir.join("other_private.pem");
    std::fs::copy(
        format!("{FIXTURE_KEYS}/other/keys/private_key.pkcs7.pem"),
        &to,
    )
    .unwrap();
    set_mode(&to, 0o600);
    to.display().to_string()
}

/// One line on stderr, exit 2, and no plaintext in it.
fn failed(o: &Output, plain: &[&str]) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for p in plain {
        assert!(!err.contains(p), "{err}");
    }
    err
}

fn tokens(text: &str) -> Vec<String> {
    hiera_engine::backend::eyaml::tokens::encrypted_pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            hiera_engine::backend::eyaml::tokens::Piece::Enc(e) => Some(e.raw.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn encrypt_and_decrypt_with_the_repos_keys() {
    let dir = repo("roundtrip");
    let o = eyaml(&dir, &["encrypt", "-s", "hunter2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let token = text(&o.stdout).trim_end().to_string();
    assert!(
        token.starts_with("ENC[PKCS7,MII") && !token.contains('\n'),
        "{token}"
    );
    let o = eyaml(&dir, &["decrypt", "-s", &token]);
    assert_eq!(
        (text(&o.stdout).as_str(), o.status.code()),
        ("hunter2\n", Some(0))
    );
    // Block form with a label, and standard input.
    let mut c = bin();
    let child = c
        .current_dir(&dir)
        .args(["eyaml", "encrypt", "--output", "block", "--label", "k"])
        .env("HOME", dir.join("home"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .as_ref()
        .unwrap()
        .write_all(b"from stdin")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let block = text(&o.stdout);
    assert!(block.starts_with("k: >\n  ENC[PKCS7,"), "{block}");
    assert!(block.lines().skip(1).all(|l| l.len() <= 62), "{block}");
    let value = hiera_formats::yaml::load(&block).unwrap();
    let folded = value.get("k").unwrap().as_str().unwrap().to_string();
    let o = eyaml(&dir, &["decrypt", "-s", &folded]);
    assert_eq!(text(&o.stdout), "from stdin\n");
    // A file: every token as a DEC marker, everything else as it is.
    let o = eyaml(&dir, &["decrypt", "-f", "data/common.eyaml"]);
    assert_eq!(
        text(&o.stdout),
        "---\n# the database\nprofile::db::password: DEC::PKCS7[OLDSECRET1]! # rotated yearly\nplain: text\nblock: >\n    DEC::PKCS7[OLDSECRET1]!\n"
    );
}

#[test]
fn keys_come_from_flags_hiera_yaml_then_eyaml_config() {
    let dir = repo("keys");
    // hiera.yaml's relative key paths are read from the working directory (as Ruby does):
    // elsewhere they are absent, and ~/.eyaml/config.yaml is next.
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let run_in = |cwd: &std::path::Path, args: &[&str], env: &[(&str, &str)]| {
        let mut c = bin();
        c.current_dir(cwd)
            .arg("eyaml")
            .args(args)
            .env("HOME", dir.join("home"))
            .env_remove("EYAML_CONFIG");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let o = run_in(&sub, &["decrypt", "-C", "..", "-s", OLD], &[]);
    let err = failed(&o, &["OLDSECRET1"]);
    assert!(
        err.contains("no eyaml private key found") && err.contains("--pkcs7-private-key"),
        "{err}"
    );
    let keys = dir.join("keys");
    std::fs::create_dir_all(dir.join("home/.eyaml")).unwrap();
    std::fs::write(
        dir.join("home/.eyaml/config.yaml"),
        format!(
            "pkcs7_private_key: {}\n",
            keys.join("private_key.pkcs7.pem").display()
        ),
    )
    .unwrap();
    let o = run_in(&sub, &["decrypt", "-C", "..", "-s", OLD], &[]);
    assert_eq!(text(&o.stdout), "OLDSECRET1\n", "{}", text(&o.stderr));
    // EYAML_CONFIG over it: a key that does not decrypt this value.
    let cfg = dir.join("other.yaml");
    std::fs::write(
        &cfg,
        format!("pkcs7_private_key: {}\n", other_private(&dir)),
    )
    .unwrap();
    let o = run_in(
        &sub,
        &["decrypt", "-C", "..", "-s", OLD],
        &[("EYAML_CONFIG", cfg.to_str().unwrap())],
    );
    let err = failed(&o, &["OLDSECRET1"]);
    assert!(
        err.contains("does not decrypt with this private key"),
        "{err}"
    );
    // The flag wins over everything.
    let flag = keys.join("private_key.pkcs7.pem");
    let o = run_in(
        &sub,
        &[
            "decrypt",
            "-s",
            OLD,
            "--pkcs7-private-key",
            flag.to_str().unwrap(),
        ],
        &[("EYAML_CONFIG", cfg.to_str().unwrap())],
    );
    assert_eq!(text(&o.stdout), "OLDSECRET1\n");
    // hiera-eyaml 5's base64 variable, named by the level.
    let hiera = std::fs::read_to_string(dir.join("hiera.yaml"))
        .unwrap()
        .replace(
            "pkcs7_private_key: keys/private_key.pkcs7.pem",
            "pkcs7_b64_private_key_env_var: TEST_EYAML_B64",
        );
    std::fs::write(dir.join("hiera.yaml"), hiera).unwrap();
    let b64 = hiera_value::ruby::strict_encode64(&std::fs::read(&flag).unwrap());
    let o = eyaml_with(&dir, &["decrypt", "-s", OLD], &[("TEST_EYAML_B64", &b64)]);
    assert_eq!(text(&o.stdout), "OLDSECRET1\n", "{}", text(&o.stderr));
}

#[test]
fn bad_keys_and_values_are_one_line_errors() {
    let dir = repo("bad");
    let corrupt = "ENC[PKCS7,MIIBeQYJKoZIhvcNAQcDoIIBajCCAWYCAQAxggEhMIIBHQ]";
    let err = failed(&eyaml(&dir, &["decrypt", "-s", corrupt]), &[]);
    assert!(err.contains("does not decrypt"), "{err}");
    let other = other_private(&dir);
    let err = failed(
        &eyaml(&dir, &["decrypt", "-s", OLD, "--pkcs7-private-key", &other]),
        &["OLDSECRET1"],
    );
    assert!(
        err.contains("bad decrypt") || err.contains("decrypt error"),
        "{err}"
    );
    // A key named on the command line is the one: missing, an error (not the repo's).
    let err = failed(
        &eyaml(
            &dir,
            &["decrypt", "-s", OLD, "--pkcs7-private-key", "nope.pem"],
        ),
        &[],
    );
    assert!(
        err.contains("--pkcs7-private-key: file nope.pem does not exist"),
        "{err}"
    );
    // A directory, a FIFO.
    let d = dir.join("keys");
    let err = failed(
        &eyaml(
            &dir,
            &[
                "decrypt",
                "-s",
                OLD,
                "--pkcs7-private-key",
                d.to_str().unwrap(),
            ],
        ),
        &[],
    );
    assert!(err.contains("is a directory"), "{err}");
    let fifo = dir.join("fifo.pem");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path of our own scratch tree.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = failed(
        &eyaml(
            &dir,
            &[
                "decrypt",
                "-s",
                OLD,
                "--pkcs7-private-key",
                fifo.to_str().unwrap(),
            ],
        ),
        &[],
    );
    assert!(err.contains("not a regular file"), "{err}");
    // World-readable: a warning as ssh gives, and the value all the same.
    let key = dir.join("keys/private_key.pkcs7.pem");
    set_mode(&key, 0o644);
    let o = eyaml(&dir, &["decrypt", "-s", OLD]);
    assert_eq!(text(&o.stdout), "OLDSECRET1\n");
    let err = text(&o.stderr);
    assert!(
        err.contains("UNPROTECTED PRIVATE KEY FILE") && err.contains("0644"),
        "{err}"
    );
}

#[test]
fn createkeys_writes_a_new_pair_and_never_overwrites() {
    let dir = repo("createkeys");
    let o = eyaml(
        &dir,
        &[
            "createkeys",
            "--pkcs7-private-key",
            "new/private.pem",
            "--pkcs7-public-key",
            "new/public.pem",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (private, public) = (dir.join("new/private.pem"), dir.join("new/public.pem"));
    assert_eq!((mode(&private), mode(&public)), (0o600, 0o644));
    let pem = std::fs::read_to_string(&private).unwrap();
    assert!(pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
    let o = eyaml(
        &dir,
        &[
            "encrypt",
            "-s",
            "new pair",
            "--pkcs7-public-key",
            "new/public.pem",
        ],
    );
    let token = text(&o.stdout);
    let o = eyaml(
        &dir,
        &[
            "decrypt",
            "-s",
            token.trim(),
            "--pkcs7-private-key",
            "new/private.pem",
        ],
    );
    assert_eq!(text(&o.stdout), "new pair\n");
    // Again: refused, nothing replaced.
    let o = eyaml(
        &dir,
        &[
            "createkeys",
            "--pkcs7-private-key",
            "new/private.pem",
            "--pkcs7-public-key",
            "new/public.pem",
        ],
    );
    let err = failed(&o, &[]);
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&private).unwrap(), pem);
}

/// An editor: a shell script that records what it was given (the file's and its
/// directory's modes) beside the repo, then runs `edit` on the file.
fn editor(dir: &Tree, edit: &str) -> String {
    let script = dir.join("editor.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nf=\"$1\"\necho $(stat -c %a \"$f\") $(stat -c %a \"$(dirname \"$f\")\") > '{log}'\necho \"$f\" >> '{log}'\n{edit}\n",
            log = dir.join("editor.log").display()
        ),
    )
    .unwrap();
    set_mode(&script, 0o755);
    script.display().to_string()
}

#[test]
fn edit_re_encrypts_only_what_changed() {
    let dir = repo("edit");
    let file = dir.join("data/common.eyaml");
    let before = std::fs::read_to_string(&file).unwrap();
    let old_tokens = tokens(&before);
    assert_eq!(old_tokens.len(), 2);
    // The editor changes the first plaintext and adds a value; the block one is untouched.
    let ed = editor(
        &dir,
        "sed -i -e 's/DEC(\\([0-9]*\\))::PKCS7\\[OLDSECRET1\\]! # rotated/DEC(\\1)::PKCS7[changed]! # rotated/' -e 's/^plain: text$/plain: text\\nadded: DEC::PKCS7[brand new]!/' \"$f\"",
    );
    let o = eyaml_with(&dir, &["edit", "data/common.eyaml"], &[("EDITOR", &ed)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let log = std::fs::read_to_string(dir.join("editor.log")).unwrap();
    assert!(log.starts_with("600 700\n"), "{log}");
    let temp = log.lines().nth(1).unwrap();
    assert!(
        temp.starts_with(dir.join("tmp").to_str().unwrap()),
        "{temp}"
    );
    assert!(!std::path::Path::new(temp).exists());
    assert_eq!(
        std::fs::read_dir(dir.join("tmp")).unwrap().count(),
        1,
        "only .keep left"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    let new_tokens = tokens(&after);
    assert_eq!(new_tokens.len(), 3, "{after}");
    // The untouched block value: its exact bytes.
    assert_eq!(new_tokens[2], old_tokens[1]);
    assert_ne!(new_tokens[0], old_tokens[0]);
    // Every other byte as it was.
    let mut expected = before.replacen(&old_tokens[0], &new_tokens[0], 1);
    expected = expected.replacen(
        "plain: text\n",
        &format!("plain: text\nadded: {}\n", new_tokens[1]),
        1,
    );
    assert_eq!(after, expected);
    let o = eyaml(&dir, &["decrypt", "-f", "data/common.eyaml"]);
    let shown = text(&o.stdout);
    assert!(
        shown.contains("DEC::PKCS7[changed]! # rotated")
            && shown.contains("added: DEC::PKCS7[brand new]!"),
        "{shown}"
    );
}

#[test]
fn a_failing_editor_leaves_the_file_and_no_temp() {
    let dir = repo("edit-fails");
    let file = dir.join("data/common.eyaml");
    let before = std::fs::read(&file).unwrap();
    let ed = editor(&dir, "sed -i 's/OLDSECRET1/leaked/' \"$f\"; exit 3");
    let o = eyaml_with(&dir, &["edit", "data/common.eyaml"], &[("EDITOR", &ed)]);
    let err = failed(&o, &["OLDSECRET1", "leaked"]);
    assert!(
        err.contains("exited with status 3") && err.contains("left as it was"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 1);
    // Signals while the editor runs (Ctrl-C, a closed terminal): the temporary file is still
    // removed. The editor's shell is `sh -c`, whose parent is hiera-lookup.
    let ed = editor(
        &dir,
        "me=$(cut -d' ' -f4 /proc/$PPID/stat); kill -INT $me; kill -TERM $me; kill -HUP $me; sleep 0.2; exit 1",
    );
    let o = eyaml_with(&dir, &["edit", "data/common.eyaml"], &[("EDITOR", &ed)]);
    let err = failed(&o, &["OLDSECRET1"]);
    assert!(err.contains("exited with status 1"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 1);
    // No editor change: nothing written.
    let ed = editor(&dir, "true");
    let o = eyaml_with(&dir, &["edit", "data/common.eyaml"], &[("EDITOR", &ed)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn set_writes_an_encrypted_value_with_the_public_key_only() {
    let dir = repo("set");
    // The private key is not needed: take it away.
    std::fs::remove_file(dir.join("keys/private_key.pkcs7.pem")).unwrap();
    let file = dir.join("data/common.eyaml");
    let before = std::fs::read_to_string(&file).unwrap();
    let o = eyaml(
        &dir,
        &[
            "set",
            "profile::db::password",
            "s3cret",
            "--level",
            "Secrets",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let after = std::fs::read_to_string(&file).unwrap();
    let t = tokens(&after);
    assert_eq!(after, before.replacen(OLD, &t[0], 1));
    // A per-node level, for the node; then its value decrypts to what was set.
    let o = eyaml(
        &dir,
        &[
            "set",
            "api::token",
            "-tok-",
            "--level",
            "Per-node secrets",
            "--node",
            "web01.example.com",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let node = std::fs::read_to_string(dir.join("data/nodes/web01.example.com.eyaml")).unwrap();
    assert!(node.starts_with("---\napi::token: ENC[PKCS7,"), "{node}");
    std::fs::copy(
        format!("{FIXTURE_KEYS}/keys/private_key.pkcs7.pem"),
        dir.join("keys/private_key.pkcs7.pem"),
    )
    .unwrap();
    set_mode(&dir.join("keys/private_key.pkcs7.pem"), 0o600);
    let o = eyaml(&dir, &["decrypt", "-s", tokens(&node)[0].as_str()]);
    assert_eq!(text(&o.stdout), "-tok-\n");
    // A file that is not a mapping: refused, unchanged.
    std::fs::write(dir.join("data/list.eyaml"), "- a\n- b\n").unwrap();
    let o = eyaml(&dir, &["set", "k", "v", "--file", "data/list.eyaml"]);
    let err = failed(&o, &["v\n"]);
    assert!(err.contains("not a YAML mapping"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("data/list.eyaml")).unwrap(),
        "- a\n- b\n"
    );
}

#[test]
fn recrypt_changes_only_the_tokens() {
    let dir = repo("recrypt");
    let file = dir.join("data/common.eyaml");
    let before = std::fs::read_to_string(&file).unwrap();
    let new_public = format!("{FIXTURE_KEYS}/other/keys/public_key.pkcs7.pem");
    let o = eyaml(
        &dir,
        &[
            "recrypt",
            "--all",
            "--to-public-key",
            &new_public,
            "--cipher",
            "aes-128-cbc",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("2 value(s) in 1 file(s)"),
        "{}",
        text(&o.stdout)
    );
    let after = std::fs::read_to_string(&file).unwrap();
    let (old, new) = (tokens(&before), tokens(&after));
    assert_eq!(new.len(), 2);
    let mut expected = before.clone();
    for (o, n) in old.iter().zip(&new) {
        expected = expected.replacen(o.as_str(), n, 1);
    }
    assert_eq!(after, expected);
    // The block value stays in block form.
    assert!(new[1].starts_with(">\n    ENC[PKCS7,"), "{}", new[1]);
    let other = other_private(&dir);
    let o = eyaml(
        &dir,
        &[
            "decrypt",
            "-f",
            "data/common.eyaml",
            "--pkcs7-private-key",
            &other,
        ],
    );
    assert!(
        text(&o.stdout).contains("DEC::PKCS7[OLDSECRET1]! # rotated"),
        "{}",
        text(&o.stderr)
    );
    // The old key cannot decrypt them any more: recrypt fails and writes nothing.
    let o = eyaml(&dir, &["recrypt", "data/common.eyaml"]);
    let err = failed(&o, &["OLDSECRET1"]);
    assert!(
        err.contains("common.eyaml:3") && err.contains("nothing was changed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
}

// ---------------------------------------------------------------- interop corpus

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/eyaml-interop");

fn corpus(name: &str) -> String {
    std::fs::read_to_string(format!("{CORPUS}/{name}")).unwrap()
}

fn plaintexts() -> std::collections::BTreeMap<String, String> {
    serde_json::from_str(&corpus("plaintexts.json")).unwrap()
}

/// The plaintext name a corpus label ends with (`eyaml_block_unicode` → `unicode`).
fn name_of(label: &str) -> &str {
    label.rsplit('_').next().unwrap()
}

/// `label → plaintext` of a text with `label: DEC::PKCS7[…]!` markers.
fn markers(text: &str) -> Vec<(String, String)> {
    use hiera_engine::backend::eyaml::tokens::{decrypted_pieces, DecPiece};
    let mut out = Vec::new();
    let mut label = String::new();
    for p in decrypted_pieces(text) {
        match p {
            DecPiece::Text(t) => {
                let line = t.rsplit('\n').next().unwrap_or(t);
                label = line.split(':').next().unwrap_or("").trim().to_string();
            }
            DecPiece::Dec(d) => out.push((label.clone(), d.plain.to_string())),
        }
    }
    out
}

#[test]
fn ours_decrypts_what_ruby_hiera_eyaml_and_openssl_encrypted() {
    let plain = plaintexts();
    let theirs = corpus("theirs.eyaml");
    let dir = repo("interop-theirs");
    std::fs::write(dir.join("data/common.eyaml"), &theirs).unwrap();
    // The file: every value (string and block output, every cipher) back as a marker.
    let o = eyaml(&dir, &["decrypt", "-f", "data/common.eyaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let found = markers(&text(&o.stdout));
    assert_eq!(found.len(), 30, "{found:?}");
    for (label, p) in &found {
        assert_eq!(p, &plain[name_of(label)], "{label}");
    }
    for cipher in ["aes128", "aes192", "aes256", "des3"] {
        assert!(found
            .iter()
            .any(|(l, _)| l.starts_with(&format!("smime_{cipher}_"))));
    }
    // A lookup of each: the eyaml level decrypts them as Puppet does (chomped).
    std::fs::create_dir_all(dir.join("facts")).unwrap();
    std::fs::write(
        dir.join("facts/a.yaml"),
        "hostname: a\ndomain: example.com\nfqdn: a.example.com\nclientcert: a.example.com\n",
    )
    .unwrap();
    let labels: Vec<&str> = found.iter().map(|(l, _)| l.as_str()).collect();
    let mut args = vec!["--facts-dir", "facts", "--render-as", "json"];
    args.extend(labels.iter().copied());
    let o = bin().current_dir(&dir).args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines = text(&o.stdout);
    assert_eq!(lines.lines().count(), 30);
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let label = v["key"].as_str().unwrap();
        // eyaml chomps the looked-up string once: a block-form value's own line break (YAML's
        // folding keeps one after the token), else the plaintext's.
        let p = plain[name_of(label)].as_str();
        let want = if label.contains("_block_") {
            p
        } else {
            p.strip_suffix('\n').unwrap_or(p)
        };
        assert_eq!(v["value"].as_str(), Some(want), "{line}");
    }
}

#[test]
fn ruby_hiera_eyaml_and_openssl_decrypted_what_ours_encrypted() {
    let plain = plaintexts();
    let ours = corpus("ours.eyaml");
    let values = match hiera_formats::yaml::load(&ours).unwrap() {
        hiera_value::Value::Hash(h) => h,
        other => panic!("{other:?}"),
    };
    assert_eq!(values.len(), 25);
    // Ruby hiera-eyaml 4.2's `eyaml decrypt -e ours.eyaml`.
    let ruby = markers(&corpus("ours.decrypted"));
    assert_eq!(ruby.len(), values.len());
    for (label, p) in &ruby {
        assert!(
            values
                .get(&hiera_value::Value::str(label.as_str()))
                .is_some(),
            "{label}"
        );
        assert_eq!(p, &plain[name_of(label)], "{label}");
    }
    // openssl smime -decrypt, each line naming the digest of the value it decrypted: the
    // recording belongs to the committed ours.eyaml.
    let openssl = corpus("ours.openssl");
    assert_eq!(openssl.lines().count(), values.len());
    for line in openssl.lines() {
        let mut w = line.splitn(3, ' ');
        let (label, digest, json) = (w.next().unwrap(), w.next().unwrap(), w.next().unwrap());
        let token = values[&hiera_value::Value::str(label)]
            .as_str()
            .unwrap()
            .trim();
        let cipher: String = token["ENC[PKCS7,".len()..token.len() - 1]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let marker = hiera_engine::backend::eyaml::opaque_marker(&cipher);
        assert_eq!(&marker["ENC[…".len()..marker.len() - 1], digest, "{label}");
        let p: String = serde_json::from_str(json).unwrap();
        assert_eq!(p, plain[name_of(label)], "{label}");
    }
    // Every cipher we write is in the corpus, each in its own OID.
    for (prefix, cipher) in [
        (
            "ours_aes128_",
            hiera_engine::backend::eyaml::crypt::Cipher::Aes128Cbc,
        ),
        (
            "ours_aes192_",
            hiera_engine::backend::eyaml::crypt::Cipher::Aes192Cbc,
        ),
        (
            "ours_des3_",
            hiera_engine::backend::eyaml::crypt::Cipher::DesEde3Cbc,
        ),
        (
            "ours_string_",
            hiera_engine::backend::eyaml::crypt::Cipher::Aes256Cbc,
        ),
    ] {
        let (label, v) = values
            .iter()
            .find(|(k, _)| k.as_str().unwrap().starts_with(prefix))
            .unwrap();
        let token = v.as_str().unwrap();
        let (_, c) =
            hiera_engine::backend::eyaml::crypt::recipients(&token[10..token.len() - 1]).unwrap();
        assert_eq!(c, Some(cipher), "{label:?}");
    }
}

// ---------------------------------------------------------------- lint

fn lint_in(dir: &Tree, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn lint_skips_and_counts_type_checks_on_opaque_secrets() {
    let dir = keyless("lint-opaque");
    std::fs::write(dir.join("environment.conf"), "modulepath = site\n").unwrap();
    std::fs::create_dir_all(dir.join("site/db/manifests")).unwrap();
    std::fs::write(
        dir.join("site/db/manifests/init.pp"),
        "class db (\n  Enum['a', 'b'] $password = 'a',\n  Integer $port = 1,\n) {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("data/secrets.eyaml"),
        format!("db::password: {OLD}\ndb::port: '%{{facts.hostname}}'\n"),
    )
    .unwrap();
    let o = lint_in(&dir, &["--facts-dir", "facts"]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    // The secret's type is not judged (a stand-in is no Enum value); the port still is.
    assert!(!out.contains("db::password"), "{out}");
    assert!(
        out.contains("'db::port'") && out.contains("parameter-type-mismatch"),
        "{out}"
    );
    assert!(
        err.contains("2 type checks of the fleet's values skipped"),
        "{err}"
    );
    assert!(!out.contains("MIIB") && !err.contains("MIIB"), "{out}{err}");
    // Asked to decrypt, nothing is opaque (the lookup without its key fails, as Puppet's).
    let o = lint_in(&dir, &["--facts-dir", "facts", "--secrets", "decrypt"]);
    assert!(!text(&o.stderr).contains("skipped"), "{}", text(&o.stderr));
}

#[test]
fn lint_finds_values_encrypted_for_another_key_pair() {
    let dir = repo("lint-recipient");
    std::fs::copy(
        format!("{FIXTURE_KEYS}/keys/other_serial_cert.pem"),
        dir.join("keys/other_serial_cert.pem"),
    )
    .unwrap();
    let hiera = std::fs::read_to_string(dir.join("hiera.yaml")).unwrap();
    let o = lint_in(&dir, &[]);
    assert!(
        !text(&o.stdout).contains("eyaml-wrong-recipient"),
        "{}",
        text(&o.stdout)
    );
    // The level's certificate names another serial: every value is for another recipient.
    std::fs::write(
        dir.join("hiera.yaml"),
        hiera.replace("keys/public_key.pkcs7.pem", "keys/other_serial_cert.pem"),
    )
    .unwrap();
    // No private key is needed.
    std::fs::remove_file(dir.join("keys/private_key.pkcs7.pem")).unwrap();
    let o = lint_in(&dir, &[]);
    let out = text(&o.stdout);
    assert_eq!(out.matches("eyaml-wrong-recipient").count(), 2, "{out}");
    assert!(out.contains("data/common.eyaml:3:"), "{out}");
    assert!(
        !out.contains("MIIB") && !out.contains("OLDSECRET1"),
        "{out}"
    );
}

// ---------------------------------------------------------------- diff

#[test]
fn diff_without_the_key_reports_changed_secrets_and_the_rest() {
    let hiera = "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: /nonexistent/private_key.pkcs7.pem\n  - name: common\n    path: common.yaml\n";
    let side = |pw: &str, bob: &str, port: u32| {
        format!(
            "db::password: {pw}\nusers:\n  alice: {OLD}\n  bob: {bob}\n  carol: {port}\nlookup_options:\n  users:\n    merge: hash\n"
        )
    };
    let facts =
        "hostname: a\ndomain: example.com\nfqdn: a.example.com\nclientcert: a.example.com\n";
    let dir = tree(
        "secrets",
        "diff",
        &[
            ("a/hiera.yaml", hiera),
            ("a/data/secrets.eyaml", &side(OLD, OLD, 1)),
            ("a/data/common.yaml", "users:\n  dave: d\n"),
            ("b/hiera.yaml", hiera),
            ("b/data/secrets.eyaml", &side(NEW, NEW, 2)),
            ("b/data/common.yaml", "users:\n  dave: d\n"),
            ("facts/a.yaml", facts),
        ],
    );
    let o = bin()
        .current_dir(&dir)
        .args(["diff", "a", "b", "--facts-dir", "facts", "--all"])
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    // The secret itself, and the secret inside a merged hash beside a plain change.
    assert!(
        out.contains("db::password: encrypted value changed"),
        "{out}"
    );
    assert!(out.contains("users.bob: encrypted value changed"), "{out}");
    assert!(out.contains("users.carol: 1 → 2"), "{out}");
    assert!(out.contains("secrets.eyaml:1"), "{out}");
    assert!(out.contains("a.example.com"), "{out}");
    // How many answers were opaque: db::password and users, on both sides.
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains("4 values held encrypted secrets"),
        "{out}"
    );
    assert!(!out.contains("MIIB") && !err.contains("MIIB"), "{out}{err}");
    // JSON: the edit is marked, its values carry the ciphertexts' digests.
    let o = bin()
        .current_dir(&dir)
        .args([
            "diff",
            "a",
            "b",
            "--facts-dir",
            "facts",
            "--all",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let json = text(&o.stdout);
    assert!(
        json.contains("\"encrypted\":true") && json.contains("\"opaque_values\":4"),
        "{json}"
    );
    let old = hiera_engine::backend::eyaml::opaque_marker(cipher_of(OLD));
    assert!(json.contains(&old) && !json.contains("MIIB"), "{json}");
}
