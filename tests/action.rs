//! What ships besides the binary for CI users (issue 42, item 10): the GitHub Action
//! (action.yml and the scripts it runs), the OCI image's Dockerfile and the release step of
//! .ci/run. The action's run step is run here for real, against the binary under test.

use crate::diff::git;
use crate::scratch_tree;
use hiera_value::value::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &str) -> String {
    std::fs::read_to_string(repo().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The action's run step in `dir`, its inputs as action.yml passes them, the binary under
/// test first on PATH.
fn action_run(dir: &Path, inputs: &[(&str, &str)], env: &[(&str, &str)]) -> Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("bash");
    c.arg(repo().join(".ci/action-run.sh"))
        .current_dir(dir)
        .env("PATH", path)
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GITHUB_BASE_REF");
    for (k, _) in std::env::vars() {
        if k.starts_with("INPUT_") {
            c.env_remove(k);
        }
    }
    for (k, v) in inputs.iter().chain(env) {
        c.env(k, v);
    }
    c.output().expect("bash")
}

fn yaml(text: &str) -> Value {
    hiera_formats::yaml::load(text).unwrap_or_else(|e| panic!("{e}"))
}

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    match v {
        Value::Hash(h) => h
            .get(&Value::str(key))
            .unwrap_or_else(|| panic!("no {key} in {v:?}")),
        _ => panic!("{key}: not a mapping: {v:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        _ => panic!("not a string: {v:?}"),
    }
}

/// action.yml is a composite action whose steps run scripts of this repository, and the
/// inputs it passes are the ones the run script reads, each declared as an input.
#[test]
fn the_action_passes_its_inputs_to_scripts_that_exist() {
    let action = yaml(&read("action.yml"));
    let runs = get(&action, "runs");
    assert_eq!(text(get(runs, "using")), "composite");
    let Value::Hash(inputs) = get(&action, "inputs") else {
        panic!("inputs")
    };
    let declared: Vec<String> = inputs.keys().map(text).collect();
    let Value::Array(steps) = get(runs, "steps") else {
        panic!("steps")
    };
    let script = read(".ci/action-run.sh");
    let mut passed = Vec::new();
    for step in steps {
        let run = text(get(step, "run"));
        let file = run
            .split('"')
            .find_map(|w| w.split("/.ci/").nth(1))
            .unwrap_or_else(|| panic!("a step runs a script of .ci/: {run}"));
        assert!(repo().join(".ci").join(file).is_file(), "{file}");
        assert_eq!(text(get(step, "shell")), "bash");
        if let Value::Hash(env) = get(step, "env") {
            for (k, v) in env {
                let (k, v) = (text(k), text(v));
                if let Some(input) = v
                    .strip_prefix("${{ inputs.")
                    .and_then(|r| r.strip_suffix(" }}"))
                {
                    assert!(declared.iter().any(|d| d == input), "{input} not declared");
                    assert!(script.contains(&k), ".ci/action-run.sh never reads {k}");
                    passed.push(input.to_string());
                }
            }
        }
    }
    for d in &declared {
        let used = passed.contains(d) || read("action.yml").contains(&format!("inputs.{d} }}}}"));
        assert!(used, "input {d} is declared and never passed");
    }
}

/// The run step lints, diffs with the exit codes README's CI recipes give (diff's 1, "answers
/// changed", passes; 2 fails), and refuses an unknown command in one line.
#[test]
fn the_action_lints_and_diffs() {
    let t = scratch_tree::tree(
        "action",
        "repo",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            ),
            ("data/common.yaml", "a: 1\n"),
            ("facts/web01.json", "{\"clientcert\": \"web01\"}\n"),
        ],
    );
    let dir: &Path = &t;
    let lint = action_run(dir, &[("INPUT_COMMAND", "lint")], &[]);
    let direct = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .current_dir(dir)
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .args(["lint", "--format", "github"])
        .output()
        .unwrap();
    assert_eq!(
        (lint.status.code(), &lint.stdout),
        (direct.status.code(), &direct.stdout),
        "{}",
        String::from_utf8_lossy(&lint.stderr)
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "one"]);
    std::fs::write(dir.join("data/common.yaml"), "a: 2\n").unwrap();
    git(dir, &["commit", "-qam", "two"]);
    let inputs = [
        ("INPUT_COMMAND", "diff"),
        ("INPUT_FACTS_DIR", "facts"),
        ("INPUT_FORMAT", "text"),
    ];
    // Answers changed: exit 1 from diff, a passing step; the change is reported.
    let o = action_run(dir, &inputs, &[("INPUT_BASE", "HEAD~1")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("web01"), "{out}");
    // The base from the pull request's branch, fetched when it is not there.
    let o = action_run(dir, &inputs, &[("GITHUB_BASE_REF", "main")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        (o.status.code(), err.lines().count()),
        (Some(2), 1),
        "{err}"
    );
    assert!(err.contains("could not fetch origin/main"), "{err}");
    // Fetched: a clone of the repository at the first commit, whose origin has both.
    let clone = dir.join("clone");
    git(
        dir,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", dir.display()),
            "clone",
        ],
    );
    git(dir, &["branch", "-q", "base", "HEAD~1"]);
    let o = action_run(&clone, &inputs, &[("GITHUB_BASE_REF", "base")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("web01"), "{out}");
    // A base that does not exist: diff's own error, exit 2, the step fails.
    let o = action_run(dir, &inputs, &[("INPUT_BASE", "nosuch")]);
    assert_eq!(o.status.code(), Some(2));
    // Without a base or a pull request: one line saying what to give.
    let o = action_run(dir, &inputs, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        (o.status.code(), err.lines().count()),
        (Some(2), 1),
        "{err}"
    );
    // More arguments are split as words and reach the command.
    let o = action_run(
        dir,
        &[
            ("INPUT_COMMAND", "lint"),
            ("INPUT_ARGS", "--fail-on  nosuch"),
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'nosuch'") && err.contains("--fail-on"),
        "{err}"
    );
    let o = action_run(dir, &[("INPUT_COMMAND", "where")], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        (o.status.code(), err.lines().count()),
        (Some(2), 1),
        "{err}"
    );
    assert!(err.contains("give lint or diff"), "{err}");
}

/// The image builds with the toolchain CI builds with, through the release script, for a
/// target that script knows, and ends FROM scratch with the binary as its entry point; CI
/// builds the release packages on a tag.
#[test]
fn the_image_and_the_release_follow_the_tree() {
    let dockerfile = read("Dockerfile");
    let cargo = read("Cargo.toml");
    let rust_version = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|r| r.strip_suffix('"'))
        .expect("rust-version");
    assert!(
        dockerfile.contains(&format!("/rust:{rust_version}-")),
        "the Dockerfile's Rust image is Cargo.toml's rust-version {rust_version}"
    );
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(stages.last(), Some(&"FROM scratch"));
    let target = dockerfile
        .split(".ci/build-static.sh ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("the Dockerfile runs .ci/build-static.sh TARGET");
    assert!(read(".ci/build-static.sh").contains(&format!("{target})")));
    assert!(dockerfile.contains(&format!("target/{target}/release/hiera-lookup")));
    assert!(dockerfile.contains("ENTRYPOINT [\"/hiera-lookup\"]"));
    // .ci/run builds the packages on a tag, and the release refuses a tag that is not the
    // version.
    assert!(read(".ci/run").contains(".ci/release \"$tag\""));
    let o = Command::new("bash")
        .arg(repo().join(".ci/release"))
        .arg("v0.0.0-not-the-version")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("Cargo.toml's version is"), "{err}");
}
