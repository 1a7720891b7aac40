//! The node context Puppet users have beyond facts (issue 29, items 14 and 15): an External
//! Node Classifier's parameters and environment (`--enc`), and one fact set by hand
//! (`--fact NAME=VALUE`), for a lookup and for every node of batch, where, lint and diff.

use crate::scratch_tree;
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A classifier as Foreman's or a CMDB's: the certname in, YAML out; `fail*` nodes fail.
const ENC: &str = r#"#!/bin/sh
echo "$1" >> "$(dirname "$0")/calls.log"
case "$1" in
  fail*) echo "no such node $1" >&2; exit 1 ;;
  db*) role=db ;;
  *) role=web ;;
esac
cat <<YAML
---
classes:
  - role::$role
parameters:
  role: $role
  datacenter: ams
  nested:
    a: 1
environment: staging
YAML
"#;

const HIERA: &str = "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{role}.yaml\"\n  - name: dc\n    path: \"dc/%{::datacenter}.yaml\"\n  - name: common\n    path: common.yaml\n";

fn facts(name: &str) -> String {
    format!("clientcert: {name}\nhostname: {name}\ndomain: x\nfqdn: {name}.x\nrole: fact-role\n")
}

/// Puppet's layout (codedir/environments/{production,staging}) and a control repo (repo/),
/// the classifier in bin/ and two nodes' facts.
fn tree(name: &str) -> scratch_tree::Tree {
    let mut files: Vec<(String, String)> = Vec::new();
    for env in ["production", "staging"] {
        files.push((format!("code/environments/{env}/hiera.yaml"), HIERA.into()));
        files.push((
            format!("code/environments/{env}/data/common.yaml"),
            format!("k: {env}-common\nn: \"%{{nested.a}}\"\nenvname: \"%{{environment}}\"\nfactrole: \"%{{facts.role}}\"\n"),
        ));
        files.push((
            format!("code/environments/{env}/data/roles/web.yaml"),
            format!("k: {env}-web\n"),
        ));
    }
    files.push(("repo/hiera.yaml".into(), HIERA.into()));
    files.push((
        "repo/data/common.yaml".into(),
        "k: common\nenvname: \"%{environment}\"\nsfenv: \"%{server_facts.environment}\"\nsetenv: \"%{settings::environment}\"\n".into(),
    ));
    files.push(("repo/data/roles/web.yaml".into(), "k: web\n".into()));
    files.push(("repo/data/roles/db.yaml".into(), "k: db\n".into()));
    files.push(("repo/data/dc/ams.yaml".into(), "dc: ams\n".into()));
    files.push(("bin/enc".into(), ENC.into()));
    files.push(("facts/web01.yaml".into(), facts("web01")));
    files.push(("facts/db01.yaml".into(), facts("db01")));
    files.push(("fail.yaml".into(), facts("fail1")));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let t = scratch_tree::tree("node-context", name, &refs);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.join("bin/enc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    t
}

/// `--enc=COMMAND` for one node, compared with Puppet 8.10: `puppet lookup --compile --node
/// web01 --facts F --codedir code KEY` with puppet.conf's `node_terminus = exec` and
/// `external_nodes` naming this classifier answered `--- staging-web` for k (parameters are
/// top-scope variables, the classifier's environment is the node's), `--- staging` for
/// envname, `--- '1'` for n (`%{nested.a}`); for a node the classifier fails on:
/// `Error: Could not run: Failed to find fail1 via exec: Execution of '…/enc fail1'
/// returned 1: `. Without --compile, `puppet lookup` does not ask the classifier at all
/// (`--- production-common`), which is why hiera-lookup asks it only with --enc.
#[test]
fn a_classifier_for_one_node() {
    let t = tree("one");
    let enc = format!("--enc={}", t.join("bin/enc").display());
    let lookup = |extra: &[&str]| {
        let mut args = vec![
            "--codedir",
            "code",
            "--node",
            "web01",
            "--facts",
            "facts/web01.yaml",
        ];
        args.extend_from_slice(extra);
        run_in(&t, &args)
    };
    for (key, puppet) in [
        ("k", "--- staging-web\n"),
        ("envname", "--- staging\n"),
        ("n", "--- '1'\n"),
    ] {
        let o = lookup(&[&enc, key]);
        assert_eq!(stdout(&o), puppet, "{key}: {}", stderr(&o));
    }
    // $facts keeps the fact; the top-scope variable is the classifier's.
    assert_eq!(stdout(&lookup(&[&enc, "factrole"])), "--- fact-role\n");
    // Without --enc, as `puppet lookup` without --compile.
    assert_eq!(stdout(&lookup(&["k"])), "--- production-common\n");
    // --environment on the command line wins over the classifier's, as in Puppet.
    assert_eq!(
        stdout(&lookup(&[&enc, "-E", "production", "k"])),
        "--- production-web\n"
    );
    // A failing classifier: exit 2, Puppet's words, then its stderr and what to do.
    let o = run_in(
        &t,
        &["--codedir", "code", "--facts", "fail.yaml", &enc, "k"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "Error: Failed to find fail1 via exec: Execution of '{} fail1' returned 1: no such node fail1",
            t.join("bin/enc").display()
        )),
        "{err}"
    );
    // Bare --enc: the classifier puppet.conf names (node_terminus = exec).
    std::fs::write(
        t.join("puppet.conf"),
        format!(
            "[server]\nnode_terminus = exec\nexternal_nodes = {}\n",
            t.join("bin/enc").display()
        ),
    )
    .unwrap();
    let o = bin()
        .current_dir(&*t)
        .env("HIERA_LOOKUP_PUPPET_CONF", t.join("puppet.conf"))
        .args([
            "--codedir",
            "code",
            "--node",
            "web01",
            "--facts",
            "facts/web01.yaml",
            "--enc",
            "k",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "--- staging-web\n", "{}", stderr(&o));
    let o = lookup(&["--enc", "k"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give --enc=COMMAND"), "{}", stderr(&o));
    // where sees the same node.
    let o = run_in(
        &t,
        &[
            "where",
            "k",
            "--codedir",
            "code",
            "--node",
            "web01",
            "--facts",
            "facts/web01.yaml",
            &enc,
        ],
    );
    assert!(
        stdout(&o).starts_with("k for web01: found \"staging-web\""),
        "{}",
        stdout(&o)
    );
}

/// Every node of a fleet is classified: batch mode, where, lint and diff. A classifier in
/// the tree a command analyses runs only with --allow-exec.
#[test]
fn a_classifier_for_every_node() {
    let t = tree("fleet");
    let enc = format!("--enc={}", t.join("bin/enc").display());
    let repo = t.join("repo");
    let run = |args: &[&str]| run_in(&repo, args);
    // Batch mode in a control repo: each node its own role; the repo is the environment,
    // the classifier's names it.
    let o = run(&["--facts-dir", "../facts", &enc, "k", "envname"]);
    let out = stdout(&o);
    assert!(
        out.contains("\"node\":\"web01\",\"facts\":\"../facts/web01.yaml\",\"key\":\"k\",\"found\":true,\"value\":\"web\""),
        "{out}"
    );
    assert!(
        out.contains("\"node\":\"db01\",\"facts\":\"../facts/db01.yaml\",\"key\":\"k\",\"found\":true,\"value\":\"db\""),
        "{out}"
    );
    assert!(out.contains("\"value\":\"staging\""), "{out}");
    // The node's environment is its environment everywhere, in batch mode as in a single
    // lookup: `$server_facts['environment']` and `$settings::environment` too.
    for key in ["sfenv", "setenv"] {
        let single = run(&[
            "--node",
            "web01",
            "--facts",
            "../facts/web01.yaml",
            &enc,
            key,
        ]);
        assert_eq!(
            stdout(&single),
            "--- staging\n",
            "{key}: {}",
            stderr(&single)
        );
        let o = run(&["--facts-dir", "../facts", &enc, key]);
        let out = stdout(&o);
        assert_eq!(
            out.matches("\"value\":\"staging\"").count(),
            2,
            "{key}: {out}"
        );
    }
    // In Puppet's layout a node the classifier puts in another environment is answered from
    // that environment's data, as Puppet compiles it there (the single lookup above is
    // Puppet's recording: `--- staging-web`), in batch mode and where alike.
    let o = run_in(
        &t,
        &[
            "--codedir",
            "code",
            "--facts-dir",
            "facts",
            &enc,
            "k",
            "envname",
        ],
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(
        out.contains("\"node\":\"web01\",\"facts\":\"facts/web01.yaml\",\"key\":\"k\",\"found\":true,\"value\":\"staging-web\""),
        "{out}"
    );
    assert!(
        out.contains("\"node\":\"db01\",\"facts\":\"facts/db01.yaml\",\"key\":\"k\",\"found\":true,\"value\":\"staging-common\""),
        "{out}"
    );
    assert!(!out.contains("production"), "{out}");
    let o = run_in(
        &t,
        &[
            "where",
            "k",
            "--codedir",
            "code",
            "--facts-dir",
            "facts",
            &enc,
            "--allow-exec",
            "--format",
            "json",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains("staging/data/roles/web.yaml"),
        "{out}{}",
        stderr(&o)
    );
    assert!(!out.contains("production/data/roles/web.yaml\",\"line\":1,\"column\":1,\"value\":\"production-web\",\"wins\":[\"web01"), "{out}");

    let o = run_in(
        &t,
        &[
            "--codedir",
            "code",
            "--facts-dir",
            "facts",
            &enc,
            "-E",
            "staging",
            "k",
        ],
    );
    assert!(
        stdout(&o).contains("\"value\":\"staging-web\""),
        "{}",
        stdout(&o)
    );
    // where over the fleet.
    let o = run(&[
        "where",
        "k",
        "--facts-dir",
        "../facts",
        &enc,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let wins: Vec<String> = v["definitions"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter(|d| !d["wins"].as_array().unwrap().is_empty())
                .map(|d| {
                    d["file"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        wins,
        ["db.yaml", "web.yaml"],
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    // lint: the classified roles reach both role files (no unreached-file), and dc/ams.yaml.
    let o = run(&["lint", "--facts-dir", "../facts", &enc]);
    assert!(
        !stdout(&o).contains("unreached-file"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    let o = run(&["lint", "--facts-dir", "../facts"]);
    assert!(stdout(&o).contains("unreached-file"), "{}", stdout(&o));
    // diff: what a change does to the classified nodes.
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .current_dir(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@x"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    std::fs::write(repo.join("data/roles/db.yaml"), "k: db2\n").unwrap();
    let o = run(&["diff", "HEAD", "--facts-dir", "../facts", &enc, "k"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("k: \"db\" → \"db2\""), "{}", stdout(&o));
    assert!(stdout(&o).contains("1 node: db01"), "{}", stdout(&o));
    // A classifier inside the analysed tree: refused unless --allow-exec.
    std::fs::create_dir_all(repo.join("bin")).unwrap();
    std::fs::copy(t.join("bin/enc"), repo.join("bin/enc")).unwrap();
    for args in [
        &[
            "diff",
            "HEAD",
            "--facts-dir",
            "../facts",
            "--enc=bin/enc",
            "k",
        ][..],
        &["lint", "--facts-dir", "../facts", "--enc=bin/enc"],
        &["where", "k", "--facts-dir", "../facts", "--enc=bin/enc"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("runs it only with --allow-exec"),
            "{args:?}: {}",
            stderr(&o)
        );
        let mut allowed = args.to_vec();
        allowed.push("--allow-exec");
        let o = run(&allowed);
        assert_ne!(o.status.code(), Some(2), "{allowed:?}: {}", stderr(&o));
    }
    // serve too refuses it before it listens (with --allow-exec it would serve until
    // stopped: tests/serve.rs starts servers).
    let mut server = bin()
        .current_dir(&repo)
        .args(["serve", "--facts-dir", "../facts", "--enc=bin/enc"])
        .args(["--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while server.try_wait().unwrap().is_none() && started.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = server.kill();
    let o = server.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("serve runs it only with --allow-exec"),
        "{}",
        stderr(&o)
    );
    // A plain lookup is the user's own: it runs.
    let o = run(&["--facts", "../facts/db01.yaml", "--enc=bin/enc", "k"]);
    assert_eq!(stdout(&o), "--- db2\n", "{}", stderr(&o));
}

/// `--fact NAME=VALUE`: one fact over any facts source, dotted names nested, VALUE as YAML,
/// for every node of a fleet.
#[test]
fn one_fact_set_by_hand() {
    let t = tree("fact");
    let repo = t.join("repo");
    let hiera = "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n";
    std::fs::write(repo.join("hiera.yaml"), hiera).unwrap();
    std::fs::create_dir_all(repo.join("data/os")).unwrap();
    std::fs::write(repo.join("data/os/RedHat.yaml"), "pkg: dnf\nport: 1\n").unwrap();
    std::fs::write(
        repo.join("data/common.yaml"),
        "k: common\npkg: apt\nr: \"%{facts.role}\"\nports: \"%{facts.ports}\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| run_in(&repo, args);
    let facts = ["--facts", "../facts/web01.yaml"];
    assert_eq!(stdout(&run(&[&facts[..], &["k"]].concat())), "--- common\n");
    assert_eq!(
        stdout(&run(&[&facts[..], &["--fact", "role=db", "k"]].concat())),
        "--- db\n"
    );
    // Dotted names set nested facts; the value is YAML.
    assert_eq!(
        stdout(&run(
            &[&facts[..], &["--fact", "os.family=RedHat", "pkg"]].concat()
        )),
        "--- dnf\n"
    );
    let o = run(&[
        &facts[..],
        &["--fact", "ports=[80, 443]", "--render-as", "json", "ports"],
    ]
    .concat());
    assert_eq!(stdout(&o), "\"[80, 443]\"\n", "{}", stderr(&o));
    // Over every node of a fleet.
    let o = run(&["--facts-dir", "../facts", "--fact", "role=db", "k"]);
    assert_eq!(
        stdout(&o).matches("\"value\":\"db\"").count(),
        2,
        "{}",
        stdout(&o)
    );
    // Over the fact cache of --node.
    let vardir = t.join("vardir/yaml/facts");
    std::fs::create_dir_all(&vardir).unwrap();
    std::fs::write(vardir.join("web01.yaml"), facts_of_cache()).unwrap();
    let o = run(&[
        "--vardir",
        "../vardir",
        "--node",
        "web01",
        "--fact",
        "role=db",
        "k",
    ]);
    assert_eq!(stdout(&o), "--- db\n", "{}", stderr(&o));
    // A bad --fact is a usage error that says the form.
    let o = run(&[&facts[..], &["--fact", "role", "k"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--fact expects NAME=VALUE"),
        "{}",
        stderr(&o)
    );
}

fn facts_of_cache() -> &'static str {
    "--- !ruby/object:Puppet::Node::Facts\nname: web01\nvalues:\n  clientcert: web01\n  hostname: web01\n  domain: x\n  fqdn: web01.x\n  role: web\n"
}

/// One node, every front end: the lookup, `where`, batch mode, the web view's API (one node
/// and the key across the fleet), the editor's hover and lint's fleet check all take the
/// node from the one node context, so the classifier's parameters, `--var`s, `--fact`s and
/// `$settings::` reach every one of them alike (each used to build nodes its own way: the
/// editor and lint knew no classifier and no `--var`).
#[test]
fn every_front_end_answers_a_node_alike() {
    let t = scratch_tree::tree(
        "node-context",
        "alike",
        &[
            ("repo/hiera.yaml", HIERA),
            (
                "repo/data/common.yaml",
                "profile::k: \"%{role}-%{datacenter}-%{extra}-%{facts.site}-%{settings::environment}\"\n",
            ),
            (
                "repo/modules/profile/manifests/init.pp",
                "class profile(Enum['nothing'] $k) {}\n",
            ),
            ("bin/enc", ENC),
            ("facts/web01.yaml", &facts("web01")),
            ("facts/db01.yaml", &facts("db01")),
        ],
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.join("bin/enc"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The classifier puts web01 in staging (a control repo is its own environment, whatever
    // its name: `$settings::environment` is the name).
    let want = "web-ams-v-s1-staging";
    let flags = ["--enc=bin/enc", "--var", "extra=v", "--fact", "site=s1"];
    let with = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(flags.iter().map(|s| s.to_string()));
        all
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_in(&t, &args)
    };

    let o = run(with(&[
        "-C",
        "repo",
        "--facts",
        "facts/web01.yaml",
        "profile::k",
    ]));
    assert_eq!(stdout(&o), format!("--- {want}\n"), "{}", stderr(&o));

    let o = run(with(&[
        "where",
        "-C",
        "repo",
        "--facts",
        "facts/web01.yaml",
        "profile::k",
        "--format",
        "json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["value"], want, "{}", stderr(&o));

    let o = run(with(&["-C", "repo", "--facts-dir", "facts", "profile::k"]));
    assert!(
        stdout(&o).contains(&format!("\"node\":\"web01\",\"facts\":\"facts/web01.yaml\",\"key\":\"profile::k\",\"found\":true,\"value\":\"{want}\"")),
        "{}",
        stdout(&o)
    );

    let server = crate::serve::start(
        &t,
        &with(&["-C", "repo", "--facts-dir", "facts"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let node = crate::serve::json(&server, "/api/v1/nodes/web01/keys/profile::k");
    assert_eq!(node["value"], want, "{node}");
    let across = crate::serve::json(&server, "/api/v1/keys/profile::k");
    let web = across["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["nodes"] == serde_json::json!(["web01"]))
        .unwrap_or_else(|| panic!("{across}"));
    assert_eq!(web["value"], want);
    drop(server);

    let repo = t.join("repo");
    let mut editor = crate::lsp::Client::init(
        &repo,
        serde_json::json!({
            "facts": "../facts/web01.yaml",
            "enc": "../bin/enc",
            "vars": ["extra=v"],
            "fact": ["site=s1"],
        }),
    );
    let common = crate::lsp::uri(&repo, "data/common.yaml");
    let hover = crate::lsp::hover_text(&mut editor, &common, 0, 3);
    assert!(hover.contains(want), "{hover}");
    drop(editor);

    let o = run(with(&["lint", "-C", "repo", "--facts-dir", "facts"]));
    let lint = stdout(&o);
    assert!(
        lint.contains("node web01 of the fleet gets from here")
            && lint.contains(&format!("got '{want}'")),
        "{lint}"
    );
    // What the classifier and --var set are variables of every node: none undefined.
    assert!(!lint.contains("undefined-variable"), "{lint}");
}
