//! Integration tests of the binary for behaviour that Puppet cannot record: where
//! hiera-lookup deliberately differs (exit codes, facts handling) or goes beyond Puppet.

use crate::scratch_tree;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    // Never the machine's own puppet.conf.
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run hiera-lookup")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory with the given files.
fn scratch(name: &str, files: &[(&str, &str)]) -> scratch_tree::Tree {
    scratch_tree::tree("cli", name, files)
}

const HIERA: &str = "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: common\n    path: common.yaml\n";

#[test]
fn readme_example_runs_on_the_fixture() {
    let o = run_in(
        &fixtures().join(".."),
        &[
            "profile::base::users",
            "--environmentpath",
            "fixtures/environments",
            "--facts",
            "fixtures/facts/web01.yaml",
            "--render-as",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // lookup_options ask for a deep merge: node, role and common users all appear.
    let out = stdout(&o);
    for user in ["alice", "bob", "carol", "deploy"] {
        assert!(out.contains(user), "{out}");
    }
    assert!(
        out.contains("/bin/zsh"),
        "role data wins over common: {out}"
    );
}

#[test]
fn control_repo_mode_uses_the_current_directory() {
    let repo = fixtures().join("environments/production");
    let o = run_in(
        &repo,
        &["ntp::service_name", "--facts", "../../facts/web01.yaml"],
    );
    assert_eq!(stdout(&o), "--- ntp\n", "{}", stderr(&o));
    let o = run_in(
        &repo,
        &["profile::web::service", "--facts", "../../facts/db01.json"],
    );
    assert_eq!(stdout(&o), "--- httpd\n", "{}", stderr(&o));
}

#[test]
fn not_found_exits_1_silently() {
    let dir = scratch(
        "miss",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: 1\n")],
    );
    let o = run_in(&dir, &["nope", "--node", "n1", "--no-facts"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
    assert_eq!(stderr(&o), "");
}

#[test]
fn data_errors_exit_2_with_file_and_position() {
    let dir = scratch(
        "bad",
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", "a: [1, 2\nb: 2\n"),
        ],
    );
    let o = run_in(&dir, &["a", "--node", "n1", "--no-facts"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("data/common.yaml"), "{err}");
    assert!(err.contains("line"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A data file whose value or parse fails: Puppet's words (which the conformance suite
/// records), then where to look, as Puppet's own issues say it: `(file: PATH, line: N)`. Also
/// for an error raised by a nested `lookup()` and in batch's JSON lines; `--explain` keeps
/// Puppet's text on stdout.
#[test]
fn data_file_errors_name_the_file_and_line() {
    let cases: &[(&str, &str, &str, usize)] = &[
        ("float", "a: 1\nk: !!float abc\n", "Unable to parse invalid value for Float(): \"abc\"", 2),
        ("strmap", "a: 1\nk: !!str\n  x: 1\n", "Unable to parse can't modify frozen NilClass: nil", 2),
        ("anchor", "a: 1\nk: *nope\n", "Unable to parse An alias referenced an unknown anchor: nope", 2),
        ("selfref", "a: 1\nk: &x [*x]\n", "Unable to parse stack level too deep", 2),
        ("lonothash", "a: 1\nlookup_options: 3\nk: 1\n", "value of lookup_options must be a hash", 2),
        ("regexp", "lookup_options:\n  \"^k(\":\n    merge: deep\nk: 1\n", "end pattern with unmatched parenthesis: /^k(/", 1),
        ("strategy", "a: 1\nlookup_options:\n  k:\n    merge: bogus\nk: 1\n", "Unknown merge strategy: 'bogus'", 2),
        ("function", "a: 1\nk: \"%{bogus('x')}\"\n", "Unknown interpolation method 'bogus'", 2),
        ("alias", "a: 1\nj: 1\nk: \"a %{alias('j')}\"\n", "'alias' interpolation is only permitted if the expression is equal to the entire string", 3),
        ("nested", "a: 1\nj: \"%{bogus('x')}\"\nk: \"%{lookup('j')}\"\n", "Unknown interpolation method 'bogus'", 2),
        // Puppet's words end with "; " (a name with parentheses is a variable to it).
        ("undefined", "a: 1\nk: \"%{foo(1)}\"\n", "Undefined variable 'foo(1)';", 2),
        ("undefined-nested", "a: 1\nj: \"x%{nope}\"\nk: \"%{lookup('j')}\"\n", "Undefined variable 'nope';", 2),
    ];
    for (name, data, words, line) in cases {
        let dir = scratch(
            &format!("located-{name}"),
            &[("hiera.yaml", HIERA), ("data/common.yaml", data)],
        );
        let o = run_in(&dir, &["k", "--node", "n1", "--no-facts"]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let file = dir.join("data/common.yaml");
        assert_eq!(
            stderr(&o),
            format!("Error: {words} (file: {}, line: {line})\n", file.display()),
            "{name}"
        );
        // A key beside a broken value is answered, with nothing on stderr.
        if ["function", "alias", "nested"].contains(name) {
            let o = run_in(&dir, &["a", "--node", "n1", "--no-facts"]);
            assert_eq!(
                (o.status.code(), stderr(&o)),
                (Some(0), String::new()),
                "{name}"
            );
        }
    }
    // lookup_options from two files are merged: which holds the bad entry is not known, and
    // no file is named rather than the wrong one (the last one read was common.yaml).
    let dir = scratch(
        "located-two-options",
        &[
            ("hiera.yaml", HIERA),
            (
                "data/nodes/n1.yaml",
                "lookup_options:\n  k:\n    merge: bogus\n",
            ),
            (
                "data/common.yaml",
                "lookup_options:\n  other:\n    merge: deep\nk: 1\n",
            ),
        ],
    );
    let o = run_in(&dir, &["k", "--node", "n1", "--no-facts"]);
    assert_eq!(
        stderr(&o),
        "Error: Unknown merge strategy: 'bogus'\n",
        "{}",
        stderr(&o)
    );
    // Batch's error field says where too.
    let dir = scratch(
        "located-batch",
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", "a: 1\nk: \"%{bogus('x')}\"\n"),
            (
                "facts/n1.json",
                r#"{"clientcert": "n1", "fqdn": "n1", "hostname": "n1", "domain": ""}"#,
            ),
        ],
    );
    let o = run_in(&dir, &["k", "a", "--facts-dir", "facts"]);
    let out = stdout(&o);
    assert!(out.contains("line: 2)"), "{out}");
    assert!(
        out.contains("\"value\":1") || out.contains("\"value\": 1"),
        "{out}"
    );
}

/// A glob over file names that are not UTF-8 (a Latin-1 `café.yaml`): Ruby globs and reads
/// the bytes, so the file is found and read; the names sort by their bytes, and `?` matches
/// one character (a UTF-8 sequence, or a byte outside one). Each answer here is Puppet
/// 8.10's for the same tree.
#[test]
fn globs_read_file_names_that_are_not_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let glob =
        |pattern: &str| format!("version: 5\nhierarchy:\n  - name: g\n    glob: \"{pattern}\"\n");
    let dir = scratch("non-utf8-glob", &[("data/g/b.yaml", "m: 2\n")]);
    for (name, text) in [
        (&b"caf\xe9.yaml"[..], "k: latin\nm: 5\n"),
        (&b"a\x80.yaml"[..], "m: 3\n"),
        ("a\u{e9}.yaml".as_bytes(), "m: 4\n"),
    ] {
        std::fs::write(dir.join("data/g").join(OsStr::from_bytes(name)), text).unwrap();
    }
    let answer = |hiera: &str, key: &str| {
        std::fs::write(dir.join("hiera.yaml"), hiera).unwrap();
        let o = run_in(&dir, &[key, "--node", "n1", "--no-facts"]);
        (o.status.code(), stdout(&o), stderr(&o))
    };
    let found = |v: &str| (Some(0), format!("--- {v}\n"), String::new());
    assert_eq!(answer(&glob("g/*.yaml"), "k"), found("latin"));
    // By bytes, a\x80 (0x80) sorts before a\u{e9} (0xC3): its value wins.
    assert_eq!(answer(&glob("g/*.yaml"), "m"), found("3"));
    assert_eq!(answer(&glob("g/caf?.yaml"), "k"), found("latin"));
    assert_eq!(answer(&glob("g/a?.yaml"), "m"), found("3"));
    // Both names `a?` matches are searched (for lookup_options); a byte that is not UTF-8
    // shows as the private-use character U+10FF00 + byte (tests/conformance/DIVERGENCES.md).
    std::fs::write(dir.join("hiera.yaml"), glob("g/a?.yaml")).unwrap();
    let o = run_in(&dir, &["m", "--node", "n1", "--no-facts", "--explain"]);
    let explained = stdout(&o);
    for name in ["a\u{10FF80}.yaml\"", "a\u{e9}.yaml\""] {
        assert!(
            explained.contains(&format!("/data/g/{name}")),
            "{explained}"
        );
    }
}

#[test]
fn missing_facts_file_is_an_error() {
    let dir = scratch(
        "nofacts",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: 1\n")],
    );
    let o = run_in(&dir, &["a", "--facts", "missing.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    // Plain words and what to do, then Puppet's own text (which the conformance suite
    // records), on one line.
    assert_eq!(
        stderr(&o),
        "Error: The facts file missing.yaml does not exist: check the path given to --facts \
         (No such file or directory @ rb_sysopen - missing.yaml)\n"
    );
    // A directory is a fleet: said so.
    let o = run_in(&dir, &["a", "--facts", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "Error: The facts file . is a directory, not a file: to answer for every node of it, \
         give --facts-dir .\n"
    );
    std::fs::write(dir.join("facts.yaml"), "clientcert: n1\n").unwrap();
    let o = run_in(&dir, &["a", "--facts", "facts.yaml", "--trusted=nope.yaml"]);
    assert_eq!(
        stderr(&o),
        "Error: The trusted data file nope.yaml does not exist: check the path given to \
         --trusted=FILE (No such file or directory @ rb_sysopen - nope.yaml)\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Puppet's usage errors point at `puppet lookup --help`; ours keep Puppet's sentence (which
/// the conformance suite records) and point at this program.
#[test]
fn usage_errors_point_at_this_program() {
    let dir = scratch(
        "usage",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: 1\n")],
    );
    let o = run_in(&dir, &["a", "--merge", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "Error: The --merge option only accepts 'first', 'hash', 'unique', or 'deep' (and \
         hiera-lookup's 'reverse_deep' and 'unconstrained_deep'), not 'bogus'. Run \
         'hiera-lookup --help' for more details.\n"
    );
    // A misspelt flag: Puppet's words, and the flag it was probably meant to be.
    let o = run_in(&dir, &["a", "--fatcs", "f.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "Error: Could not parse application options: invalid option: --fatcs (did you mean \
         '--facts'?) (to look up a key that starts with '-', put '--' before it); see \
         'hiera-lookup --help'\n"
    );
    // Puppet's abbreviations still work: --fac is --facts.
    std::fs::write(dir.join("n.yaml"), "clientcert: n\n").unwrap();
    let o = run_in(&dir, &["a", "--fac", "n.yaml"]);
    assert_eq!(stdout(&o), "--- 1\n", "{}", stderr(&o));
    let o = run_in(&dir, &["a", "--merge", "hash", "--sort-merged-arrays"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "Error: The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays \
         are only available with '--merge deep': add --merge deep, or leave them out. Run \
         'hiera-lookup --help' for more details.\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn puppet_facts_wrapper_is_unwrapped() {
    let dir = scratch(
        "wrapper",
        &[
            ("hiera.yaml", HIERA),
            (
                "data/nodes/w1.example.com.yaml",
                "a: from node %{facts.os.family}\n",
            ),
            (
                "facts.json",
                r#"{"name":"w1.example.com","values":{"clientcert":"w1.example.com","hostname":"w1","domain":"example.com","fqdn":"w1.example.com","os":{"family":"Debian"}},"timestamp":"2024-01-01T00:00:00Z"}"#,
            ),
        ],
    );
    let o = run_in(&dir, &["a", "--facts", "facts.json"]);
    assert_eq!(stdout(&o), "--- from node Debian\n", "{}", stderr(&o));
}

#[test]
fn node_without_facts_names_the_node() {
    let dir = scratch(
        "nodeonly",
        &[("hiera.yaml", HIERA), ("data/nodes/n9.yaml", "a: nine\n")],
    );
    // Puppet 8.10 on an empty vardir: "Error: Could not run: No facts available for target
    // node: n9".
    let o = run_in(&dir, &["a", "--node", "n9", "--vardir", "novardir"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with("Error: No facts available for target node: n9 ("),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // The node known only by its name, when asked for.
    let o = run_in(&dir, &["a", "--node", "n9", "--no-facts"]);
    assert_eq!(stdout(&o), "--- nine\n", "{}", stderr(&o));
}

#[test]
fn var_adds_a_top_scope_variable() {
    let dir = scratch(
        "var",
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", "a: \"%{role}-%{::n}\"\n"),
        ],
    );
    let o = run_in(
        &dir,
        &[
            "a",
            "--node",
            "x",
            "--no-facts",
            "--var",
            "role=web",
            "--var",
            "n=3",
        ],
    );
    assert_eq!(stdout(&o), "--- web-3\n", "{}", stderr(&o));
}

#[test]
fn unknown_flag_and_no_keys_are_usage_errors() {
    let dir = scratch("usage", &[("hiera.yaml", HIERA)]);
    assert_eq!(run_in(&dir, &["--bogus"]).status.code(), Some(2));
    let o = run_in(&dir, &["--strict", "off"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("No keys were given to lookup."));
}

#[test]
fn broken_pipe_exits_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut big = String::from("a:\n");
    for i in 0..20000 {
        big.push_str(&format!("  - item number {i}\n"));
    }
    let dir = scratch("pipe", &[("hiera.yaml", HIERA), ("data/common.yaml", &big)]);
    let mut child = bin()
        .current_dir(&dir)
        .args(["a", "--node", "n", "--no-facts"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn redact_hides_decrypted_secrets_in_values_and_traces() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/backends/eyaml-basic");
    let base = [
        "--node",
        "web01.example.com",
        "--facts",
        "facts.yaml",
        "--hiera_config",
        "hiera.yaml",
        "whole",
    ];
    let plain = run_in(&case, &base);
    assert_eq!(stdout(&plain), "--- hunter2\n", "{}", stderr(&plain));
    let mut args = base.to_vec();
    args.push("--redact");
    assert_eq!(stdout(&run_in(&case, &args)), "--- \"[redacted]\"\n");
    args.push("--explain");
    let trace = stdout(&run_in(&case, &args));
    assert!(
        trace.contains("Found key: \"whole\" value: \"[redacted]\""),
        "{trace}"
    );
    assert!(!trace.contains("hunter2"), "{trace}");
}

/// tests/data/redact: eyaml values (`secret`, `quoted`, `inline`, `broken`) and plain data
/// interpolating them (`dsn`, `nested`).
fn redact_run(args: &[&str]) -> Output {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/redact");
    let mut all = vec!["--facts", "facts.yaml", "--hiera_config", "hiera.yaml"];
    all.extend_from_slice(args);
    run_in(&dir, &all)
}

/// What the fixture's tokens decrypt to, whole and in the forms JSON, YAML and Ruby's
/// inspect print them.
const PLAINTEXTS: [&str; 7] = [
    "hunter2", "tok3n", "pa\"ss", "pa\\\"ss", "ss\\wo", "ss\\\\wo", "pw-%{",
];

/// Neither stream holds any plaintext.
fn assert_no_plaintext(o: &Output) {
    let (out, err) = (stdout(o), stderr(o));
    for p in PLAINTEXTS {
        assert!(!out.contains(p), "stdout shows {p:?}:\n{out}");
        assert!(!err.contains(p), "stderr shows {p:?}:\n{err}");
    }
}

#[test]
fn redact_changes_only_what_is_printed() {
    // Interpolated into plain data, the secret is hidden inside the string.
    let o = redact_run(&["dsn"]);
    assert_eq!(stdout(&o), "--- postgres://app:hunter2-xyz@db\n");
    let o = redact_run(&["dsn", "--redact"]);
    assert_eq!(stdout(&o), "--- postgres://app:[redacted]@db\n");
    assert_no_plaintext(&o);
    // A decrypted value that fails to interpolate is still an error.
    for redact in [false, true] {
        let mut args = vec!["broken"];
        args.extend(redact.then_some("--redact"));
        let o = redact_run(&args);
        assert_eq!(o.status.code(), Some(2), "redact {redact}: {}", stdout(&o));
        // Puppet's words, then where the broken value is.
        let err = stderr(&o);
        assert!(
            err.starts_with("Error: Unknown interpolation method 'oops' (file: ")
                && err.ends_with("data/secrets.eyaml, line: 3)\n"),
            "{err}"
        );
        assert_eq!(stdout(&o), "");
        assert_no_plaintext(&o);
    }
    // --type checks the real value ...
    let o = redact_run(&["secret", "--redact", "--type", "Pattern[/\\Ahunter2-/]"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "--- \"[redacted]\"\n");
    let o = redact_run(&["secret", "--redact", "--type", "Enum['[redacted]']"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    // ... and its message hides it (without --redact it names it).
    assert_eq!(
        stderr(&o),
        "Error: Found value has wrong type, expects a match for Enum['[redacted]'], got '[redacted]'\n"
    );
    let o = redact_run(&[
        "nested",
        "--type",
        "Struct[{password=>Enum['x'],quoted=>String,plain=>String}]",
    ]);
    assert!(stderr(&o).contains("got 'hunter2-xyz'"), "{}", stderr(&o));
    let o = redact_run(&[
        "nested",
        "--redact",
        "--type",
        "Struct[{password=>Enum['x'],quoted=>String,plain=>String}]",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("got '[redacted]'"), "{}", stderr(&o));
    assert_no_plaintext(&o);
    // Values with quotes, backslashes and line breaks, in every format.
    for format in ["yaml", "json", "s"] {
        let o = redact_run(&["nested", "--redact", "--render-as", format]);
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        assert!(stdout(&o).contains("visible"), "{format}: {}", stdout(&o));
        assert!(
            stdout(&o).contains("[redacted]"),
            "{format}: {}",
            stdout(&o)
        );
        assert_no_plaintext(&o);
    }
}

#[test]
fn redact_covers_batch_and_explain() {
    let o = redact_run(&[
        "--facts",
        "facts2.yaml",
        "--redact",
        "--render-as",
        "json",
        "secret",
        "inline",
        "nested",
        "broken",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert_eq!(out.lines().count(), 8, "{out}");
    assert!(
        out.contains(
            r#""key":"inline","found":true,"value":"[redacted]","rendered":"\"[redacted]\"\n"}"#
        ),
        "{out}"
    );
    assert!(
        out.contains(
            r#""value":{"password":"[redacted]","quoted":"[redacted]","plain":"visible"}"#
        ),
        "{out}"
    );
    assert!(
        out.contains(r#""key":"broken","error":"Unknown interpolation method 'oops' (file: "#)
            && out.contains(r#"data/secrets.eyaml, line: 3)"}"#),
        "{out}"
    );
    assert_no_plaintext(&o);
    // Without --redact the same batch shows them (so the checks above can fail).
    let o = redact_run(&[
        "--facts",
        "facts2.yaml",
        "--render-as",
        "json",
        "secret",
        "inline",
    ]);
    assert!(stdout(&o).contains("hunter2-xyz") && stdout(&o).contains("user:tok3n"));
    for format in [None, Some("json"), Some("yaml")] {
        let mut args = vec!["nested", "--explain", "--redact"];
        if let Some(f) = format {
            args.extend(["--render-as", f]);
        }
        let o = redact_run(&args);
        assert_eq!(o.status.code(), Some(0), "{format:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("[redacted]") && out.contains("visible"),
            "{out}"
        );
        assert_no_plaintext(&o);
        args.retain(|a| *a != "--redact");
        assert!(stdout(&redact_run(&args)).contains("hunter2-xyz"));
    }
}

#[test]
fn color_highlights_only_when_asked() {
    let repo = fixtures().join("environments/production");
    let args = [
        "ntp::servers",
        "--facts",
        "../../facts/web01.yaml",
        "--explain",
    ];
    let plain = stdout(&run_in(&repo, &args));
    assert!(!plain.contains('\x1b'));
    let mut colored = args.to_vec();
    colored.extend(["--color", "always"]);
    let c = stdout(&run_in(&repo, &colored));
    assert!(c.contains("\x1b[32m"), "{c}");
    // Without the escapes, the text is the plain trace.
    let stripped: String = c
        .replace("\x1b[0m", "")
        .replace("\x1b[32m", "")
        .replace("\x1b[1;32m", "")
        .replace("\x1b[36m", "")
        .replace("\x1b[2m", "")
        .replace("\x1b[31m", "");
    assert_eq!(stripped, plain);
}

/// The server facts that depend on the host (Puppet takes them from Facter on the machine
/// running `puppet lookup`): the name is the kernel's hostname (plus a domain), `serverip` an
/// IPv4 address; `$server_facts` holds them with the Puppet version and the environment.
#[test]
fn server_facts_describe_this_host() {
    let dir = scratch(
        "serverfacts",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: c\n    path: c.yaml\n",
            ),
            (
                "data/c.yaml",
                "sn: \"%{servername}\"\nsv: \"%{serverversion}\"\nsfn: \"%{server_facts.servername}\"\nsfe: \"%{server_facts.environment}\"\nsip: \"%{server_facts.serverip}\"\n",
            ),
            (
                "facts.yaml",
                "clientcert: n1.example.com\nhostname: n1\ndomain: example.com\nfqdn: n1.example.com\n",
            ),
        ],
    );
    let get = |key: &str| {
        let o = run_in(
            &dir,
            &[
                "--hiera_config",
                "hiera.yaml",
                "--facts",
                "facts.yaml",
                "--render-as",
                "s",
                key,
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{key}: {}", stderr(&o));
        stdout(&o).trim_end().to_string()
    };
    assert_eq!(get("sv"), "8.10.0");
    assert_eq!(get("sfe"), "production");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let name = get("sn");
    assert!(name.starts_with(host.trim()), "{name} vs {host}");
    assert_eq!(get("sfn"), name);
    let ip = get("sip");
    assert!(
        ip.is_empty() || ip.parse::<std::net::Ipv4Addr>().is_ok(),
        "{ip}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_and_man_page() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (shell, marker) in [
        ("bash", "_hiera__lookup()"),
        ("zsh", "#compdef hiera-lookup"),
        ("fish", "complete -c hiera-lookup"),
        ("elvish", "hiera-lookup"),
        ("powershell", "hiera-lookup"),
    ] {
        let o = run_in(repo, &["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        assert!(text.contains("environmentpath"), "{shell}");
        // The commands and their own flags are completed too.
        for word in [
            "where",
            "reachable-only",
            "diff",
            "lint",
            "completions",
            "list-rules",
            "no-skip",
        ] {
            assert!(text.contains(word), "{shell} completes {word}");
        }
    }
    let o = run_in(repo, &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{}",
        stderr(&o)
    );
    // The manual pages: tests/help.rs.
}

/// A command is recognised only as the first argument: with anything before it (`--`, a
/// flag), a word named like a command is a key, as in `puppet lookup`.
#[test]
fn a_key_named_like_a_command_is_looked_up() {
    let data = "---\ndiff: d\nlint: l\nman: m\ncompletions: c\nhelp: h\nwhere: w\nserve: s\n";
    let dir = scratch(
        "command-keys",
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", data),
            ("facts.yaml", "clientcert: n1\n"),
        ],
    );
    for (key, value) in [
        ("diff", "d"),
        ("lint", "l"),
        ("serve", "s"),
        ("man", "m"),
        ("completions", "c"),
    ] {
        let o = run_in(&dir, &["--facts", "facts.yaml", key]);
        assert_eq!(
            stdout(&o),
            format!("--- {value}\n"),
            "{key}: {}",
            stderr(&o)
        );
        let o = run_in(&dir, &["--", key]);
        assert_eq!(
            stdout(&o),
            format!("--- {value}\n"),
            "{key}: {}",
            stderr(&o)
        );
    }
    // `help` first is the help command (as git's and cargo's), a key after `--`; words
    // that are no command are keys even first.
    let o = run_in(&dir, &["help"]);
    assert!(stdout(&o).contains("Usage: hiera-lookup"), "{}", stdout(&o));
    let o = run_in(&dir, &["--", "help"]);
    assert_eq!(stdout(&o), "--- h\n", "{}", stderr(&o));
    let o = run_in(&dir, &["wher", "--facts", "facts.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // First, a command's name is the command.
    let o = run_in(&dir, &["man"]);
    assert!(stdout(&o).contains(".TH hiera-lookup 1"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `hiera-lookup ...` command in README.md's `sh` blocks runs as written from the
/// repository root and succeeds; commands that redirect into the user's files (install
/// steps) only run with the redirection left out.
#[test]
fn readme_examples_run() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let home = scratch("readme-home", &[]);
    let mut in_sh = false;
    let mut ran = 0;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        let Some(cmd) = line.strip_prefix("hiera-lookup ").filter(|_| in_sh) else {
            continue;
        };
        let cmd = cmd.split(" #").next().unwrap_or(cmd);
        let cmd = cmd.split(" > ").next().unwrap_or(cmd);
        // `~/…` (an install step's directory) is a scratch HOME's.
        let words: Vec<String> = cmd
            .split_whitespace()
            .map(|w| match w.strip_prefix("~/") {
                Some(rest) => home.join(rest).display().to_string(),
                None => w.to_string(),
            })
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let o = run_in(repo, &words);
        assert_eq!(o.status.code(), Some(0), "{line}: {}", stderr(&o));
        assert!(!o.stdout.is_empty(), "{line}");
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} README examples found");
}

/// The `yaml` blocks of a Markdown text.
fn yaml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(b), "```") => {
                blocks.push(std::mem::take(b));
                current = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Every string inside a value (hash keys included).
fn strings(v: &hiera_value::value::Value, out: &mut Vec<String>) {
    use hiera_value::value::Value;
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Hash(h) => h.iter().for_each(|(k, v)| {
            strings(k, out);
            strings(v, out);
        }),
        _ => {}
    }
}

/// README's CI section (a GitHub Actions job, a GitLab CI job, the pre-commit config), the
/// GitHub job in docs/lint.md and `.pre-commit-hooks.yaml`: each is valid YAML of the shape
/// its tool expects, and every `hiera-lookup` command in them is one the binary has, with
/// flags its `--help` lists.
#[test]
fn ci_snippets_parse_and_use_real_flags() {
    use hiera_value::value::Value;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(repo.join(p)).unwrap();
    let readme = read("README.md");
    let ci = readme
        .split("### In CI")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("README has an `In CI` section");
    let mut docs = yaml_blocks(ci);
    assert_eq!(docs.len(), 4, "GitHub, the action, GitLab, pre-commit");
    // The action's steps: only inputs action.yml declares.
    let action = hiera_formats::yaml::load(&docs.remove(1)).unwrap();
    let declared = hiera_formats::yaml::load(&read("action.yml")).unwrap();
    let Value::Array(steps) = action else {
        panic!("the action snippet is a list of steps")
    };
    let Value::Hash(inputs) = &declared else {
        panic!()
    };
    let Some(Value::Hash(inputs)) = inputs.get(&Value::str("inputs")) else {
        panic!("action.yml declares inputs")
    };
    let mut used = 0;
    for step in &steps {
        let Value::Hash(step) = step else { panic!() };
        if let Some(Value::Hash(with)) = step.get(&Value::str("with")) {
            if step
                .get(&Value::str("uses"))
                .is_some_and(|u| matches!(u, Value::String(s) if s.contains("/hiera-lookup@")))
            {
                used += 1;
                for k in with.keys() {
                    assert!(
                        inputs.contains_key(k),
                        "{k:?} is not an input of action.yml"
                    );
                }
            }
        }
    }
    assert_eq!(used, 2, "the snippet uses the action for lint and diff");
    docs.extend(yaml_blocks(&read("docs/lint.md")));
    docs.push(read(".pre-commit-hooks.yaml"));
    let parsed: Vec<Value> = docs
        .iter()
        .map(|d| hiera_formats::yaml::load(d).unwrap_or_else(|e| panic!("{e}:\n{d}")))
        .collect();
    let at = |v: &Value, path: &[&str]| -> Option<Value> {
        let mut v = v.clone();
        for p in path {
            v = match v {
                Value::Hash(h) => h.get(&Value::str(*p))?.clone(),
                Value::Array(a) => a.get(p.parse::<usize>().ok()?)?.clone(),
                _ => return None,
            };
        }
        Some(v)
    };
    // The shapes: a workflow with steps, a GitLab job with a script, a pre-commit hook
    // whose id is the one the repository defines.
    let github = at(&parsed[0], &["jobs", "hiera", "steps"]).expect("GitHub job steps");
    assert!(matches!(github, Value::Array(ref s) if s.len() >= 4));
    // YAML 1.1 (Psych, and so our reader) reads the key `on` as true; GitHub reads YAML 1.2.
    let Value::Hash(workflow) = &parsed[0] else {
        panic!()
    };
    assert!(
        workflow.contains_key(&Value::Bool(true)),
        "the workflow has `on`"
    );
    let gitlab = at(&parsed[1], &["hiera", "script"]).expect("GitLab job script");
    assert!(matches!(gitlab, Value::Array(ref s) if s.len() >= 2));
    let hook_id = at(&parsed[2], &["repos", "0", "hooks", "0", "id"]).unwrap();
    let defined = parsed.last().unwrap();
    assert_eq!(at(defined, &["0", "id"]), Some(hook_id));
    assert_eq!(
        at(defined, &["0", "entry"]),
        Some(Value::str("hiera-lookup lint"))
    );

    // Every hiera-lookup command: its command exists and takes each of its flags.
    let mut commands = Vec::new();
    for doc in &parsed {
        let mut all = Vec::new();
        strings(doc, &mut all);
        for s in all {
            for line in s.lines() {
                if let Some(i) = line.find("hiera-lookup ") {
                    if !line[..i].contains("install") {
                        commands.push(line[i..].to_string());
                    }
                }
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for cmd in &commands {
        let cmd = cmd
            .split(" > ")
            .next()
            .unwrap()
            .split(" || ")
            .next()
            .unwrap();
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let command = words[1];
        assert!(["lint", "diff"].contains(&command), "{cmd}");
        seen.insert(command);
        let help = stdout(&run_in(repo, &[command, "--help"]));
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "`{cmd}`: `{command} --help` has no {flag}"
            );
        }
        // Values of --format are ones the command knows.
        if let Some(i) = words.iter().position(|w| *w == "--format") {
            let o = run_in(repo, &[command, "--format", words[i + 1], "--help"]);
            assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
            assert!(
                help.contains(words[i + 1]),
                "{cmd}: format {}",
                words[i + 1]
            );
        }
    }
    assert_eq!(seen.len(), 2, "both lint and diff run in CI: {commands:?}");
    assert!(commands.len() >= 6, "{commands:?}");
}

/// A stdout that is /dev/null opened read-write (Python's `subprocess.DEVNULL`) is open: the
/// lookup answers (a closed stdout is exit 2: tests/hostile).
#[test]
fn dev_null_opened_read_write_is_an_open_stdout() {
    let dir = scratch(
        "devnull-rw",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "k: v\n")],
    );
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .unwrap();
    let o = bin()
        .current_dir(&dir)
        .args(["k", "--hiera_config", "hiera.yaml", "--no-facts"])
        .stdout(null)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let _ = std::fs::remove_dir_all(dir);
}

/// Puppet 8.10 manages `hiera_config` as a file when it starts: a directory (`''` is the
/// working directory) fails with two notices on stdout, before anything is read, and nothing
/// is written.
#[test]
fn hiera_config_naming_a_directory_fails_as_puppet_starts() {
    let dir = scratch(
        "hcdir",
        &[
            ("hiera.yaml", HIERA),
            ("conf/keep", ""),
            ("data/common.yaml", "a: 1\n"),
        ],
    );
    let root = dir.display().to_string();
    for (flag, path) in [("conf", format!("{root}/conf")), ("", root.clone())] {
        let o = run_in(
            &dir,
            &["a", "--no-facts", "--node", "n1", "--hiera_config", flag],
        );
        assert_eq!(o.status.code(), Some(2), "{flag:?}");
        let notice =
            format!("Notice: /File[{path}]: Not removing directory; use 'force' to override\n");
        assert_eq!(stdout(&o), notice.repeat(2), "{flag:?}");
        assert_eq!(
            stderr(&o),
            format!(
                "Error: Could not set 'file' on ensure: Is a directory @ rb_sysopen - {path}\n"
            ),
            "{flag:?}"
        );
    }
    let mut names: Vec<_> = std::fs::read_dir(dir.join("conf"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["keep"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Long flags abbreviated as Puppet's option parser (Ruby's OptionParser) takes them.
/// Compared with Puppet 8.10 (`puppet8 lookup --hiera_config hiera.yaml ARGS` in this test's
/// directory: one `common` level, `a: 1`, `h: {x: 1}`); Puppet answered:
///   --env production a, --Env production a, --environm production a     `--- 1` (--environment)
///   --environmentp /tmp a                                                `--- 1` (--environmentpath)
///   --exp a, --expl a, --EXP a                  the --explain trace (`Searching for "lookup_options"`)
///   --explain-o a, --exp-o a, --e-o a, --explain_opt a       the --explain-options trace
///   --merg deep h; --m-h-a --merge deep h; --sort-m --merge deep h       `---\nx: 1`
///   --render_a json a, --rend json a                                     `1`
///   --hiera_c hiera.yaml a, --hiera-c hiera.yaml a                       `--- 1`
///   --def --exp nope                                                     `--- "--exp"`
///   --e, --s, --m:  `Error: Could not parse application options: ambiguous option: --e`
/// (Puppet also finds `--fa` and `--k` ambiguous, against its hundreds of settings such as
/// factpath and keylength; hiera-lookup has fewer flags, so those complete to --facts and
/// --knock-out-prefix here.)
#[test]
fn puppet_style_abbreviations() {
    let dir = scratch(
        "abbrev",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            ),
            ("data/common.yaml", "a: 1\nh:\n  x: 1\n"),
        ],
    );
    let run = |args: &[&str]| {
        let mut all = vec!["--hiera_config", "hiera.yaml", "--node", "n1", "--no-facts"];
        all.extend_from_slice(args);
        run_in(&dir, &all)
    };
    let same = |abbreviated: &[&str], full: &[&str], expected_start: &str| {
        let (a, f) = (run(abbreviated), run(full));
        assert_eq!(a.status.code(), Some(0), "{abbreviated:?}: {}", stderr(&a));
        assert_eq!(stdout(&a), stdout(&f), "{abbreviated:?} is {full:?}");
        assert!(
            stdout(&a).starts_with(expected_start),
            "{abbreviated:?}: {}",
            stdout(&a)
        );
    };
    let env = &["--environment", "production", "a"][..];
    same(&["--env", "production", "a"], env, "--- 1\n");
    same(&["--Env", "production", "a"], env, "--- 1\n");
    same(&["--environm", "production", "a"], env, "--- 1\n");
    same(&["--env=production", "a"], env, "--- 1\n");
    same(
        &["--environmentp", "/tmp", "a"],
        &["--environmentpath", "/tmp", "a"],
        "--- 1\n",
    );
    for explain in ["--exp", "--expl", "--EXP"] {
        same(
            &[explain, "a"],
            &["--explain", "a"],
            "Searching for \"lookup_options\"",
        );
    }
    for options in ["--explain-o", "--exp-o", "--e-o", "--explain_opt"] {
        same(
            &[options, "a"],
            &["--explain-options", "a"],
            "Global Data Provider",
        );
    }
    let deep = &["--merge", "deep", "h"][..];
    same(&["--merg", "deep", "h"], deep, "---\nx: 1\n");
    same(
        &["--m-h-a", "--merge", "deep", "h"],
        &["--merge-hash-arrays", "--merge", "deep", "h"],
        "---\nx: 1\n",
    );
    same(
        &["--sort-m", "--merge", "deep", "h"],
        &["--sort-merged-arrays", "--merge", "deep", "h"],
        "---\nx: 1\n",
    );
    let json = &["--render-as", "json", "a"][..];
    same(&["--render_a", "json", "a"], json, "1\n");
    same(&["--rend", "json", "a"], json, "1\n");
    // A value that looks like a flag is the value (`--default --exp`).
    same(
        &["--def", "--exp", "nope"],
        &["--default", "--exp", "nope"],
        "--- \"--exp\"",
    );
    for ambiguous in ["--e", "--s", "--m"] {
        let o = run(&[ambiguous, "x", "a"]);
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!(
                "Error: Could not parse application options: ambiguous option: {ambiguous} (it abbreviates --"
            )),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let err = stderr(&run(&["--e", "x", "a"]));
    assert!(
        err.contains("--environment, --environmentpath, --explain or --explain-options"),
        "{err}"
    );
    // After `--`, nothing is a flag.
    let o = run(&["--", "--exp"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The commands complete their own flags the same way.
    let o = run_in(
        &dir,
        &[
            "where",
            "a",
            "--reach",
            "--hiera_c",
            "hiera.yaml",
            "--node",
            "n1",
            "--no-f",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Messages say what happened in the user's terms, where (file:line), and what to do, with
/// Puppet's recorded words kept inside them (the conformance suite checks those), and no Ruby
/// or library internals.
#[test]
fn messages_say_what_where_and_how_to_fix() {
    let dir = scratch(
        "messages",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n  - nam: x\n    path: y.yaml\n",
            ),
            ("data/common.yaml", "a: 1\n"),
            ("empty.json", ""),
            ("empty.yaml", "\n"),
            ("bad.json", "{\"a\": }"),
            (
                "broken/hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    path: [common.yaml\n",
            ),
            ("ok/hiera.yaml", HIERA),
            ("ok/data/common.yaml", "a: 1\n"),
        ],
    );
    let err = |dir: &Path, args: &[&str]| {
        let o = run_in(dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        for internal in ["rb_sysopen", "delegate", "NthAncestor", "(in "] {
            assert!(!e.contains(internal), "{args:?}: {e}");
        }
        e
    };
    // An empty facts file: Puppet's JSON::ParserError, with what the file should hold.
    let e = err(&dir, &["a", "--facts", "empty.json"]);
    assert!(
        e.contains("The facts file empty.json is empty")
            && e.contains("JSON::ParserError")
            && e.contains("puppet facts show"),
        "{e}"
    );
    let e = err(&dir, &["a", "--facts", "empty.yaml"]);
    assert!(e.contains("the file is empty"), "{e}");
    let e = err(&dir, &["a", "--facts", "bad.json"]);
    assert!(
        e.contains("The facts file bad.json is not valid JSON at line "),
        "{e}"
    );
    // A truncated facts file: where the parser stopped, in lines and columns.
    std::fs::write(
        dir.join("truncated.json"),
        format!(
            "{{\n  \"clientcert\": \"n1\",\n  \"packages\": [{}",
            "\"p\", ".repeat(300)
        ),
    )
    .unwrap();
    let e = err(&dir, &["a", "--facts", "truncated.json"]);
    assert!(
        e.contains("The facts file truncated.json is not valid JSON at line 3, column 1515: "),
        "{e}"
    );
    // --type's syntax error names --type and shows what it takes.
    let ok = dir.join("ok");
    let e = err(
        &ok,
        &["a", "--node", "n", "--no-facts", "--type", "Array[Strin"],
    );
    assert!(
        e.contains("--type 'Array[Strin': Syntax error at end of input")
            && e.contains("Array[String]"),
        "{e}"
    );
    // An unknown --render-as lists the valid ones.
    let e = err(
        &ok,
        &["a", "--node", "n", "--no-facts", "--render-as", "jsn"],
    );
    assert!(
        e.contains(
            "Unknown rendering format 'jsn': --render-as takes yaml, json, s, console or flat"
        ),
        "{e}"
    );
    // A hiera.yaml with an unknown key: Puppet's words, then file:line and the valid keys.
    let e = err(&dir, &["a", "--node", "n", "--no-facts"]);
    assert!(
        e.contains("entry 'hierarchy' index 1 unrecognized key 'nam' (")
            && e.contains("hiera.yaml:5: valid keys here: name,"),
        "{e}"
    );
    // A broken hiera.yaml: where, and that it is the configuration (not a key) that failed.
    let broken = dir.join("broken");
    for args in [
        &["a", "--node", "n", "--no-facts"][..],
        &[
            "a",
            "--node",
            "n",
            "--no-facts",
            "--hiera_config",
            "hiera.yaml",
        ],
    ] {
        let e = err(&broken, args);
        assert!(
            e.starts_with("Error: The Hiera configuration could not be loaded: ")
                && e.contains("hiera.yaml:4:11: this Hiera configuration is not valid YAML"),
            "{e}"
        );
    }
    // An unknown git revision, in git's terms.
    let repo = dir.join("ok");
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qm",
            "a",
        ],
    ] {
        assert!(std::process::Command::new("git")
            .current_dir(&repo)
            .args(args)
            .status()
            .unwrap()
            .success());
    }
    std::fs::write(repo.join("f.yaml"), "clientcert: n\n").unwrap();
    let e = err(&repo, &["diff", "HEAD~5", "--facts", "f.yaml", "--all"]);
    assert!(
        e.contains(
            "unknown revision 'HEAD~5': 'HEAD' exists, but its history does not go back that far"
        ),
        "{e}"
    );
    let e = err(&repo, &["diff", "nope", "--facts", "f.yaml", "--all"]);
    assert!(
        e.contains("unknown revision 'nope': no branch, tag or commit"),
        "{e}"
    );
}

/// Issue 26, item 4: a JSON data file linked to /proc/self/environ is quoted as Puppet's
/// message quotes it, up to the first NUL: the first variable, not the environment.
#[test]
fn json_error_stops_at_the_first_nul() {
    let t = scratch(
        "environ",
        &[(
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: common\n    data_hash: json_data\n    path: common.json\n",
        )],
    );
    std::fs::create_dir_all(t.join("data")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", t.join("data/common.json")).unwrap();
    let o = bin()
        .current_dir(&t)
        .env_clear()
        .env("A_FIRST", "1")
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .env("Z_SECRET", "hunter2")
        .args(["--hiera_config", "hiera.yaml", "k"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.ends_with("unexpected token at 'A_FIRST=1'\n"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// Issue 26, item 21: a lookup, `where` or `lint` run where there is no control repo (an
/// empty directory, the one above the repo) says so in one line and exits 2, instead of
/// answering "not found" or "no findings".
#[test]
fn not_a_control_repo_is_an_error() {
    let t = scratch("not-a-repo", &[("notes/readme.txt", "x\n")]);
    for args in [&["ntp::servers"][..], &["where", "ntp::servers"], &["lint"]] {
        let o = run_in(&t, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is not a control repo") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // A directory with only data/ may be a repo that relies on Puppet's defaults: looked up.
    let t = scratch("data-only", &[("data/common.yaml", "k: 1\n")]);
    let o = run_in(&t, &["k", "--facts", "data/common.yaml"]);
    assert_ne!(o.status.code(), Some(2), "{o:?}");
}

/// Issue 26, item 22: a lookup given no facts at all warns, in one line, and still answers.
#[test]
fn a_lookup_without_facts_warns() {
    let production = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/environments/production");
    let o = run_in(&production, &["ntp::servers"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("Warning: no facts given") && err.lines().count() == 1,
        "{err}"
    );
    let facts = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/facts/web01.yaml");
    let o = run_in(
        &production,
        &["ntp::servers", "--facts", facts.to_str().unwrap()],
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Issue 42, item 5: what a control repo's layout lacks is said once, in one line each —
/// a modulepath directory that does not exist, the Puppetfile's modules not installed, an
/// `--environment` that names neither production nor the checked-out branch — and the answer
/// is still Puppet's. lint says the same, so its "never used" findings have their reason.
#[test]
fn a_layout_missing_what_it_names_is_said() {
    let t = scratch(
        "layout-warnings",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: c\n    path: common.yaml\n",
            ),
            ("data/common.yaml", "a: 1\n"),
            (
                "environment.conf",
                "modulepath = site:modules:$basemodulepath\n",
            ),
            (
                "Puppetfile",
                "moduledir 'modules'\nmod 'puppetlabs/stdlib', '9.4.1'\nmod 'puppetlabs-ntp'\n",
            ),
            ("modules/stdlib/manifests/init.pp", "class stdlib {}\n"),
        ],
    );
    let o = run_in(&t, &["a", "--no-facts"]);
    let err = stderr(&o);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "--- 1\n"),
        "{err}"
    );
    assert!(
        err.contains("Puppetfile: 1 of the 2 modules it installs are not installed (modules/ntp)"),
        "{err}"
    );
    assert!(
        err.contains("environment.conf's modulepath names site (")
            && err.contains("which is not a directory"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    // The repo is read whatever --environment says: a name that is not production says so.
    let o = run_in(&t, &["a", "--no-facts", "--environment", "nosuch"]);
    let err = stderr(&o);
    assert_eq!(stdout(&o), "--- 1\n", "{err}");
    assert!(
        err.contains("environment 'nosuch':") && err.contains("--environmentpath"),
        "{err}"
    );
    assert!(!stderr(&run_in(
        &t,
        &["a", "--no-facts", "--environment", "production"]
    ))
    .contains("environment '"));
    // lint gives the reason for the findings the missing modules cause.
    let o = run_in(&t, &["lint"]);
    assert!(
        stderr(&o).contains("1 of the 2 modules it installs are not installed"),
        "{}",
        stderr(&o)
    );
    // Everything in place: nothing said.
    std::fs::create_dir_all(t.join("site")).unwrap();
    std::fs::create_dir_all(t.join("modules/ntp")).unwrap();
    let o = run_in(&t, &["a", "--no-facts"]);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}

/// Install and packaging (issue 29, item 16): install lines that work on a fresh HOME, no
/// placeholder nobody can fill, a .deb that ships what README links to and its man pages,
/// and build scripts that check their prerequisites before building.
#[test]
fn install_lines_and_packaging() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(repo.join(p)).unwrap();
    let readme = read("README.md");
    // Every redirection into ~/… comes after a `mkdir -p` of its directory.
    let mut made: Vec<String> = Vec::new();
    for line in readme.lines() {
        if let Some(rest) = line.strip_prefix("mkdir -p ") {
            made.extend(rest.split_whitespace().map(str::to_string));
        }
        for target in line
            .split(" > ")
            .skip(1)
            .chain(line.split("--dir ").skip(1))
        {
            let target = target.split_whitespace().next().unwrap_or("");
            if let Some(dir) = target.strip_prefix("~/") {
                let dir = format!("~/{}", dir.rsplit_once('/').map_or(dir, |(d, _)| d));
                let dir = if target.ends_with("man1") {
                    target.to_string()
                } else {
                    dir
                };
                assert!(made.contains(&dir), "{line}: no `mkdir -p {dir}` before it");
            }
        }
    }
    for doc in [
        "README.md",
        "docs/lint.md",
        "docs/backends.md",
        "CONTRIBUTING.md",
    ] {
        let text = read(doc);
        for placeholder in ["<repository URL>", "<this repository>", "rev: v0."] {
            assert!(!text.contains(placeholder), "{doc}: {placeholder}");
        }
    }
    // The .deb: every page of `man --dir`, README's local links, dependencies from the
    // binary's shared libraries.
    let cargo = read("Cargo.toml");
    let deb = &cargo[cargo.find("[package.metadata.deb]").unwrap()..];
    assert!(deb.contains("depends = \"$auto\""));
    assert!(
        deb.contains("[\"target/assets/man/*.1.gz\", \"usr/share/man/man1/\""),
        "{deb}"
    );
    for (i, _) in readme.match_indices("](") {
        let link = &readme[i + 2..];
        let link = &link[..link.find(')').unwrap()];
        if link.starts_with("http") || link.starts_with('#') || !link.ends_with(".md") {
            continue;
        }
        let (dir, _) = link.rsplit_once('/').unwrap_or(("", link));
        let dest = format!(
            "usr/share/doc/hiera-lookup/{dir}{}",
            if dir.is_empty() { "" } else { "/" }
        );
        assert!(
            deb.contains(&format!("[\"{link}\", \"{dest}\"")),
            "README links {link}: the .deb ships no {dest}{link}"
        );
    }
    let build_deb = read(".ci/build-deb.sh");
    assert!(
        build_deb.contains("man --dir target/assets/man"),
        "{build_deb}"
    );
    // build-static.sh: a missing target is said first, with the command that installs it.
    // (rustup lives in ~/.cargo/bin, not on this PATH: no target is installed.)
    let o = Command::new("/bin/bash")
        .arg(repo.join(".ci/build-static.sh"))
        .arg("x86_64-unknown-linux-musl")
        .env("PATH", "/usr/bin:/bin")
        .env_remove("RUSTUP_HOME")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rustup target add x86_64-unknown-linux-musl"),
        "{}",
        stderr(&o)
    );
}
