//! `hiera-lookup where KEY`: integration tests of the binary, and the check that `where`
//! agrees with the lookup on every key of the fixtures.

use crate::scratch_tree;
use crate::where_check;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    // Never the developer's real cache: one in the temp dir for this test process.
    c.env(
        "HIERA_LOOKUP_CACHE_DIR",
        std::env::temp_dir().join(format!("hiera-lookup-test-cache-{}", std::process::id())),
    );
    c.env_remove("NO_COLOR");
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run hiera-lookup")
}

/// `where` on the fixtures, from the repository root.
fn fixture_where(args: &[&str]) -> Output {
    let mut all = vec!["where"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--environmentpath", "fixtures/environments"]);
    run_in(&root(), &all)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory with the given files.
fn scratch(name: &str, files: &[(&str, &str)]) -> scratch_tree::Tree {
    scratch_tree::tree("where", name, files)
}

/// The JSON report: (role, file relative to `base`, line, column, key, value) per definition.
fn definitions(
    o: &Output,
    base: &Path,
) -> Vec<(String, String, i64, i64, String, serde_json::Value)> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON report");
    v["definitions"]
        .as_array()
        .expect("definitions")
        .iter()
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            let file = Path::new(file)
                .strip_prefix(base)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| file.to_string());
            (
                d["role"].as_str().unwrap().to_string(),
                file,
                d["line"].as_i64().unwrap_or(0),
                d["column"].as_i64().unwrap_or(0),
                d["key"].as_str().unwrap().to_string(),
                d["value"].clone(),
            )
        })
        .collect()
}

#[test]
fn text_report_on_the_fixtures() {
    let o = fixture_where(&[
        "profile::base::packages",
        "--facts",
        "fixtures/facts/web01.yaml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        r#"profile::base::packages for web01.example.com: found ["apt-transport-https", "vim", "curl"]"#
    );
    assert_eq!(
        lines[1],
        "merge: unique (from lookup_options, fixtures/environments/production/data/common.yaml:5:3); 5 locations searched"
    );
    // Aligned columns: every row has its location where the header has LOCATION.
    let col = lines[2].find("LOCATION").unwrap();
    assert!(
        lines[3].starts_with("4  contributes  environment  Per-OS defaults"),
        "{out}"
    );
    assert!(
        lines[3][col..].starts_with("fixtures/environments/production/data/os/Debian.yaml:2:1 "),
        "{out}"
    );
    assert!(
        lines[4][col..].starts_with("fixtures/environments/production/data/common.yaml:18:1"),
        "{out}"
    );
    // RedHat.yaml is a data file web01 does not reach.
    assert!(
        lines[5].starts_with("-  not reached  environment  -"),
        "{out}"
    );
    assert!(lines[5].contains("data/os/RedHat.yaml:2:1"), "{out}");
    assert!(lines[5].ends_with(r#"["yum-utils"]"#), "{out}");
    assert!(out.contains("applies         environment  fixtures/environments/production/data/common.yaml:5:3  ^profile::.*::packages$"), "{out}");
    assert!(!out.contains('\x1b'), "no colour unless asked");
}

#[test]
fn first_found_winner_and_shadowed_definitions() {
    let o = fixture_where(&[
        "profile::web::port",
        "--facts",
        "fixtures/facts/web01.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let base = root().join("fixtures/environments/production/data");
    let defs = definitions(&o, &base);
    assert_eq!(
        defs,
        vec![
            (
                "wins".into(),
                "roles/web.yaml".into(),
                2,
                1,
                "profile::web::port".into(),
                8080.into()
            ),
            (
                "shadowed".into(),
                "common.yaml".into(),
                21,
                1,
                "profile::web::port".into(),
                80.into()
            ),
        ]
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["value"], 8080);
    assert_eq!(v["merge"]["strategy"], "first");
    assert_eq!(v["merge"]["source"], "default");
    assert_eq!(v["node"], "web01.example.com");
    // The same key for db01 (role db): only common.yaml is reached; roles/web.yaml is not.
    let o = fixture_where(&[
        "profile::web::port",
        "--facts",
        "fixtures/facts/db01.json",
        "--format",
        "json",
    ]);
    let defs = definitions(&o, &base);
    assert_eq!(defs[0].0, "wins");
    assert_eq!(defs[0].1, "common.yaml");
    assert_eq!(
        (defs[1].0.as_str(), defs[1].1.as_str()),
        ("not reached", "roles/web.yaml")
    );
    // --reachable-only hides it.
    let o = fixture_where(&[
        "profile::web::port",
        "--facts",
        "fixtures/facts/db01.json",
        "--format",
        "json",
        "--reachable-only",
    ]);
    assert_eq!(definitions(&o, &base).len(), 1);
}

#[test]
fn merge_given_on_the_command_line_and_dotted_keys() {
    let base = root().join("fixtures/environments/production/data");
    let o = fixture_where(&[
        "profile::base::users.bob.shell",
        "--facts",
        "fixtures/facts/web01.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["value"], "/bin/zsh");
    assert_eq!(v["merge"]["source"], "lookup_options");
    let defs = definitions(&o, &base);
    // The node file has users but no bob; the role file's bob.shell is at its line.
    assert_eq!(defs[0].1, "nodes/web01.example.com.yaml");
    assert_eq!(defs[0].4, "profile::base::users");
    assert_eq!(
        (defs[1].1.as_str(), defs[1].2, defs[1].3),
        ("roles/web.yaml", 9, 5)
    );
    assert_eq!(defs[1].4, "profile::base::users.bob.shell");
    assert_eq!(defs[2].4, "profile::base::users.bob.shell");
    assert_eq!((defs[2].2, defs[2].3), (17, 5));
    // --merge wins over lookup_options, and says so.
    let o = fixture_where(&[
        "profile::base::users",
        "--facts",
        "fixtures/facts/web01.yaml",
        "--merge",
        "first",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["merge"]["source"], "--merge");
    let roles: Vec<String> = definitions(&o, &base).into_iter().map(|d| d.0).collect();
    assert_eq!(roles, ["wins", "shadowed", "shadowed"]);
}

#[test]
fn fleet_over_a_facts_dir() {
    let o = fixture_where(&[
        "profile::web::port",
        "--facts-dir",
        "fixtures/facts",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 2);
    let defs = v["definitions"].as_array().unwrap();
    let by_file = |suffix: &str| {
        defs.iter()
            .find(|d| d["file"].as_str().unwrap().ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix} in {v}"))
    };
    assert_eq!(
        by_file("roles/web.yaml")["wins"],
        serde_json::json!(["web01.example.com"])
    );
    assert_eq!(
        by_file("common.yaml")["wins"],
        serde_json::json!(["db01.example.com"])
    );
    assert_eq!(
        by_file("common.yaml")["shadowed"],
        serde_json::json!(["web01.example.com"])
    );
    assert_eq!(by_file("common.yaml")["reached_by"], 2);
    let text = stdout(&fixture_where(&[
        "profile::base::packages",
        "--facts-dir",
        "fixtures/facts",
    ]));
    assert!(
        text.starts_with("profile::base::packages over 2 nodes: found for 2"),
        "{text}"
    );
    assert!(text.contains("contributes 1"), "{text}");
}

#[test]
fn definitions_no_node_reaches_are_flagged() {
    let dir = scratch(
        "fleet",
        &[
            ("hiera.yaml", "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: common\n    path: common.yaml\n"),
            ("data/common.yaml", "k: common\n"),
            ("data/nodes/a.yaml", "k: a\n"),
            ("data/nodes/retired.yaml", "k: old\n"),
            ("facts/a.yaml", "clientcert: a\nhostname: a\ndomain: x\nfqdn: a.x\n"),
            ("facts/b.yaml", "clientcert: b\nhostname: b\ndomain: x\nfqdn: b.x\n"),
        ],
    );
    let o = run_in(&dir, &["where", "k", "--facts-dir", "facts"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |file: &str| {
        out.lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file}: {out}"))
            .to_string()
    };
    assert!(
        line("data/nodes/retired.yaml:1:1").starts_with("no node reaches this"),
        "{out}"
    );
    assert!(line("data/nodes/a.yaml:1:1").starts_with("wins 1"), "{out}");
    assert!(
        line("data/common.yaml:1:1").starts_with("wins 1, shadowed 1"),
        "{out}"
    );
    assert!(out.contains("nodes:\n"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 26, item 24: two facts files naming one certname are two nodes, listed by name
/// and facts file (the first one too, once the second is seen), in text and JSON.
#[test]
fn nodes_of_one_name_are_told_apart_by_source() {
    let dir = scratch(
        "dupnames",
        &[
            ("hiera.yaml", "version: 5\nhierarchy:\n  - name: role\n    path: \"%{facts.role}.yaml\"\n  - name: common\n    path: common.yaml\n"),
            ("data/common.yaml", "k: common\n"),
            ("data/web.yaml", "k: web\n"),
            ("facts/a.yaml", "clientcert: foo\nrole: web\n"),
            ("facts/b.yaml", "clientcert: foo\nrole: db\n"),
            ("facts/c.yaml", "clientcert: bar\nrole: db\n"),
        ],
    );
    let o = run_in(&dir, &["where", "k", "--facts-dir", "facts"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |file: &str| {
        out.lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file}: {out}"))
            .to_string()
    };
    assert!(line("data/web.yaml:1:1").starts_with("wins 1"), "{out}");
    assert!(out.contains("foo (facts/a.yaml)"), "{out}");
    assert!(out.contains("foo (facts/b.yaml)"), "{out}");
    assert!(!out.contains("foo, foo"), "{out}");
    // A name seen once stays as it is.
    assert!(out.contains("bar") && !out.contains("bar ("), "{out}");
    let o = run_in(
        &dir,
        &["where", "k", "--facts-dir", "facts", "--format", "json"],
    );
    let json = stdout(&o);
    assert!(json.contains("\"foo (facts/a.yaml)\""), "{json}");
    assert!(json.contains("\"foo (facts/b.yaml)\""), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn knockout_aliases_and_json_data() {
    let dir = scratch(
        "ko",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: node\n    path: node.yaml\n  - name: json\n    data_hash: json_data\n    path: common.json\n  - name: common\n    path: common.yaml\n",
            ),
            (
                "data/node.yaml",
                "lookup_options:\n  pkgs:\n    merge: {strategy: deep, knockout_prefix: '--'}\n  users:\n    merge: {strategy: deep, knockout_prefix: '--'}\npkgs: ['--curl', emacs]\nusers:\n  bob: '--'\nbase: &b\n  x: 1\nalias_user: *b\n",
            ),
            ("data/common.json", "{\n  \"pkgs\": [\"curl\"],\n  \"users\": {\"bob\": {\"uid\": 2}}\n}\n"),
            ("data/common.yaml", "pkgs: [vim]\nusers:\n  alice: {uid: 1}\n"),
            ("facts.yaml", FACTS),
        ],
    );
    let base = dir.join("data");
    let w = |key: &str| {
        run_in(
            &dir,
            &[
                "where",
                key,
                "--facts",
                "facts.yaml",
                "--hiera_config",
                "hiera.yaml",
                "--format",
                "json",
            ],
        )
    };
    let o = w("pkgs");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // deep_merge edits the higher value in place: the marker knocks out what is right below.
    assert_eq!(v["value"], serde_json::json!(["vim", "emacs"]));
    let defs = definitions(&o, &base);
    assert_eq!(
        (defs[0].0.as_str(), defs[0].1.as_str(), defs[0].2, defs[0].3),
        ("contributes", "node.yaml", 6, 1)
    );
    assert_eq!(
        (defs[1].0.as_str(), defs[1].1.as_str(), defs[1].2, defs[1].3),
        ("knocked out", "common.json", 2, 3)
    );
    assert_eq!(
        (defs[2].0.as_str(), defs[2].1.as_str()),
        ("contributes", "common.yaml")
    );
    assert_eq!(v["lookup_options_entries"][0]["line"], 2);
    // A hash knocked out: bob's definition in common.json is gone from the answer (a bare
    // marker leaves an empty string).
    let o = w("users.bob");
    let defs = definitions(&o, &base);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(defs[0].5, "--");
    assert_eq!(
        (defs[1].0.as_str(), defs[1].1.as_str()),
        ("knocked out", "common.json")
    );
    assert_eq!((defs[1].2, defs[1].3), (3, 13));
    // An alias: the definition is reported at the alias site, with the anchor.
    let o = w("alias_user.x");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v["definitions"][0];
    assert_eq!(
        (d["line"].as_i64(), d["column"].as_i64()),
        (Some(11), Some(13))
    );
    assert_eq!(d["alias_of"], serde_json::json!({"line": 10, "column": 3}));
    assert_eq!(d["role"], "wins");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn colour_on_request() {
    let o = fixture_where(&[
        "profile::web::port",
        "--facts",
        "fixtures/facts/web01.yaml",
        "--color",
        "always",
    ]);
    let out = stdout(&o);
    assert!(out.contains("\x1b[1;32mwins\x1b[0m"), "{out}");
    assert!(out.contains("\x1b[2mshadowed\x1b[0m"), "{out}");
}

#[test]
fn bad_usage_exits_2_with_one_line() {
    for (args, msg) in [
        (
            vec!["where", "a", "--explain"],
            "--explain is a flag of the lookup, not of `where`",
        ),
        (
            vec!["where", "a", "--facts", "/nonexistent/facts.yaml"],
            "/nonexistent/facts.yaml",
        ),
    ] {
        // In a control repo: elsewhere that is the first error (issue 26, item 21).
        let o = run_in(&root().join("fixtures/environments/production"), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The parser's own errors: the key, and --format's values.
    for (args, msg) in [
        (vec!["where"], "<KEY>"),
        (vec!["where", "a", "b"], "unexpected argument 'b'"),
        (
            vec!["where", "a", "--format", "yaml"],
            "[possible values: text, json]",
        ),
    ] {
        let o = run_in(&root(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }
    // A data error is the lookup's error, named with its file.
    let dir = scratch(
        "broken",
        &[
            ("hiera.yaml", HIERA),
            ("data/common.yaml", "k: [1\n"),
            ("f.yaml", FACTS),
        ],
    );
    let o = run_in(&dir, &["where", "k", "--facts", "f.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("error: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("common.yaml"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
    let o = run_in(&root(), &["where", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--reachable-only"));
}

const FACTS: &str = "clientcert: n\nhostname: n\ndomain: x\nfqdn: n.x\n";
const HIERA: &str = "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n";

/// Every key of the fixtures, for both nodes: `where` agrees with the lookup.
#[test]
fn where_agrees_with_the_lookup_on_the_fixtures() {
    use hiera_engine::environment::EnvOptions;
    use hiera_engine::scope::Scope;
    use hiera_engine::{Session, Settings};
    use hiera_facts::load_facts_file;
    let env = EnvOptions {
        environmentpath: Some(root().join("fixtures/environments")),
        cwd: root(),
        ..Default::default()
    };
    let mut checked = where_check::Checked::default();
    for facts in ["web01.yaml", "db01.json"] {
        let path = root().join("fixtures/facts").join(facts);
        let scope = Scope::from_facts(load_facts_file(&path, facts).unwrap(), "production");
        let files = hiera_engine::store::DataFiles::default();
        let mut reporter = hiera_engine::where_::Reporter::new(files.clone(), Default::default());
        let session = || {
            Session::with_files(
                scope.clone(),
                env.layers().unwrap(),
                Settings::default(),
                files.clone(),
            )
        };
        let mut keys = session().all_keys().unwrap();
        keys.extend([
            "profile::base::users.bob.shell".into(),
            "nope".into(),
            "ntp::servers.1".into(),
        ]);
        for key in &keys {
            for merge in [None, Some("unique"), Some("deep")] {
                let merge = merge.map(|m| {
                    hiera_engine::merge::MergeStrategy::from_cli(m, None, false, false).unwrap()
                });
                where_check::check(
                    &mut reporter,
                    &mut session(),
                    &mut session(),
                    key,
                    merge.as_ref(),
                    &mut checked,
                )
                .unwrap_or_else(|e| panic!("{facts}: {e}"));
            }
        }
    }
    assert!(checked.first >= 20 && checked.merged >= 20, "{checked:?}");
}

/// `--redact`: the lookup runs on the decrypted values, and no plaintext is printed: not
/// the winner's value, not a value interpolating it, not in JSON, not over a fleet.
#[test]
fn where_redacts_what_the_lookup_decrypted() {
    let dir = root().join("tests/data/redact");
    let base = ["--facts", "facts.yaml", "--hiera_config", "hiera.yaml"];
    let o = run_in(&dir, &[&["where", "secret"][..], &base].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("hunter2"), "{}", stdout(&o));
    for (key, format) in [("secret", "text"), ("dsn", "text"), ("dsn", "json")] {
        let o = run_in(
            &dir,
            &[&["where", key, "--redact", "--format", format][..], &base].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{key}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("[redacted]"), "{key} {format}: {out}");
        assert!(!out.contains("hunter2"), "{key} {format}: {out}");
    }
    let fleet = [
        "where",
        "secret",
        "--redact",
        "--facts",
        "facts.yaml",
        "--facts",
        "facts2.yaml",
        "--hiera_config",
        "hiera.yaml",
    ];
    let o = run_in(&dir, &fleet);
    let out = stdout(&o);
    assert!(
        out.contains("[redacted]") && !out.contains("hunter2"),
        "{out}"
    );
}

/// What `where` showed wrong on a real repo (issue 29, item 13): values cut at a fixed width
/// even in a pipe or a wide terminal, a file listed twice when two paths name it, fleet rows
/// out of hierarchy order, an `alias()` value shown resolved with nothing saying so.
#[test]
fn values_files_order_and_aliases_as_written() {
    let long: String = (0..25)
        .map(|i| format!("item{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let hiera = "version: 5\nhierarchy:\n  - name: node\n    path: \"nodes/%{facts.clientcert}.yaml\"\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: os\n    paths:\n      - \"os/%{facts.os.name}.yaml\"\n      - \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n";
    let dir = scratch(
        "issue29",
        &[
            ("hiera.yaml", hiera),
            (
                "data/common.yaml",
                &format!("k: common\nlong: [{long}]\nsrc: [a, b]\nal: \"%{{alias('src')}}\"\n"),
            ),
            ("data/os/Debian.yaml", "k: debian\n"),
            ("data/roles/web.yaml", "k: web\n"),
            ("data/nodes/b.yaml", "k: b\n"),
            (
                "facts/a.yaml",
                "clientcert: a\nrole: web\nos:\n  name: Debian\n  family: Debian\n",
            ),
            (
                "facts/b.yaml",
                "clientcert: b\nos:\n  name: Ubuntu\n  family: Debian\n",
            ),
            (
                "facts/c.yaml",
                "clientcert: c\nos:\n  name: Debian\n  family: Debian\n",
            ),
        ],
    );
    // In a pipe: the whole value.
    let o = run_in(&dir, &["where", "long", "--facts", "facts/a.yaml"]);
    assert!(stdout(&o).contains("\"item24\"]"), "{}", stdout(&o));
    // On a 250-column terminal: the whole value too; on a narrow one, cut to fit.
    let tty = |columns: &str| {
        let o = Command::new("script")
            .current_dir(&*dir)
            .env("COLUMNS", columns)
            .env("NO_COLOR", "1")
            .args([
                "-qec",
                &format!(
                    "{} where long --facts facts/a.yaml",
                    env!("CARGO_BIN_EXE_hiera-lookup")
                ),
                "/dev/null",
            ])
            .output();
        o.map(|o| stdout(&o)).unwrap_or_default()
    };
    if Command::new("script").arg("--version").output().is_ok() {
        let wide = tty("400");
        assert!(wide.contains("\"item24\"]"), "{wide}");
        let narrow = tty("100");
        assert!(
            !narrow.contains("item24") && narrow.contains('…'),
            "{narrow}"
        );
        assert!(
            narrow
                .lines()
                .filter(|l| !l.starts_with("Warning:"))
                .all(|l| l.trim_end().chars().count() <= 100),
            "{narrow}"
        );
    }
    // os.name == os.family: os/Debian.yaml is one definition, with a note.
    let o = run_in(
        &dir,
        &["where", "k", "--facts", "facts/c.yaml", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let debian: Vec<&serde_json::Value> = v["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["file"].as_str().unwrap().ends_with("os/Debian.yaml"))
        .collect();
    assert_eq!(debian.len(), 1, "{v}");
    assert_eq!(debian[0]["role"], "wins");
    assert!(
        debian[0]["note"]
            .as_str()
            .unwrap()
            .contains("read again as location #4 (level 'os')"),
        "{v}"
    );
    // The fleet's rows in hierarchy order, whatever order the nodes come in.
    let o = run_in(
        &dir,
        &["where", "k", "--facts-dir", "facts", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<String> = v["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let f = d["file"].as_str().unwrap();
            f[f.find("data/").unwrap()..].to_string()
        })
        .collect();
    assert_eq!(
        files,
        [
            "data/nodes/b.yaml",
            "data/roles/web.yaml",
            "data/os/Debian.yaml",
            "data/common.yaml"
        ],
        "{v}"
    );
    // An alias() value: shown resolved, with what the file writes.
    let o = run_in(
        &dir,
        &["where", "al", "--facts", "facts/a.yaml", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v["definitions"][0];
    assert_eq!(d["value"], serde_json::json!(["a", "b"]), "{v}");
    assert_eq!(d["written"], "%{alias('src')}", "{v}");
    let o = run_in(&dir, &["where", "al", "--facts", "facts/a.yaml"]);
    assert!(
        stdout(&o).contains("(written %{alias('src')})"),
        "{}",
        stdout(&o)
    );
}

/// What the tree writes (a level's name, a value as written, a node's name) reaches the
/// terminal with its control characters shown escaped, for one node and over a fleet.
#[test]
fn tree_text_sends_no_escape_sequence_to_the_terminal() {
    let dir = scratch(
        "escapes",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: \"lvl\\e[31m\"\n    path: common.yaml\n",
            ),
            ("data/common.yaml", "a: \"%{facts.x}\\e]0;pwn\\a\"\n"),
            ("f.yaml", "x: 1\n"),
            ("facts/n.yaml", "clientcert: \"n\\e[2J\"\nx: 1\n"),
        ],
    );
    for args in [
        &["where", "a", "--facts", "f.yaml"][..],
        &["where", "a", "--facts-dir", "facts"][..],
    ] {
        let o = run_in(&dir, args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}'),
            "{args:?}: {out:?}"
        );
        assert!(out.contains("\\e"), "{args:?}: {out}");
    }
}

/// Two levels with the same lookup_key function and no location are two sources, each its
/// own definition (not one "read again").
#[test]
fn levels_without_a_location_are_not_read_again() {
    let level = |name: &str, value: &str| {
        format!("  - name: {name}\n    lookup_key: command\n    options:\n      command: [sh, ./answer.sh, '{value}']\n")
    };
    let hiera = format!(
        "version: 5\nhierarchy:\n{}{}",
        level("first", "[1]"),
        level("second", "[2]")
    );
    // Answers `k` with its argument, any other key (lookup_options) not found.
    let answer = "read request\ncase \"$request\" in\n  *'\"key\":\"k\"'*) echo \"{\\\"found\\\":true,\\\"value\\\":$1}\" ;;\n  *) echo '{\"found\":false}' ;;\nesac\n";
    let dir = scratch(
        "same-function",
        &[
            ("hiera.yaml", hiera.as_str()),
            ("answer.sh", answer),
            ("f.yaml", "x: 1\n"),
        ],
    );
    let o = run_in(
        &dir,
        &[
            "where", "k", "--facts", "f.yaml", "--merge", "unique", "--format", "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let defs = report["definitions"].as_array().unwrap();
    assert_eq!(defs.len(), 2, "{report:#}");
    assert!(defs.iter().all(|d| d["note"].is_null()), "{report:#}");
}
