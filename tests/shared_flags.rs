//! The flags every command shares (declared once in src/flags/groups.rs): `-C DIR`, the
//! facts sources, --hiera_config/--modulepath, --color, listed values and placeholders.

use crate::scratch_tree;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c.env_remove("NO_COLOR");
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

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
}

const HIERA: &str = "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{facts.role}.yaml\"\n  - name: common\n    path: common.yaml\n";

/// A control repo under `repo/` (a git repository with one commit), the node's facts under
/// `facts/`, and the test runs from the scratch directory above both.
fn layout(name: &str) -> scratch_tree::Tree {
    let dir = scratch_tree::tree(
        "shared-flags",
        name,
        &[
            ("repo/hiera.yaml", HIERA),
            ("repo/data/common.yaml", "k: common\nntp: [a]\n"),
            ("repo/data/roles/web.yaml", "k: web\n"),
            ("repo/site/m/hiera.yaml", "version: 5\n"),
            ("repo/site/m/data/common.yaml", "m::x: from-site\n"),
            (
                "facts/web01.yaml",
                "clientcert: web01\nhostname: web01\ndomain: x\nfqdn: web01.x\nrole: web\n",
            ),
        ],
    );
    git(&dir.join("repo"), &["init", "-q"]);
    git(&dir.join("repo"), &["add", "-A"]);
    git(&dir.join("repo"), &["commit", "-qm", "base"]);
    dir
}

/// `-C DIR` names the control repo for every command; other flags' files stay relative to
/// the current directory.
#[test]
fn dash_c_for_every_command() {
    let dir = layout("dash-c");
    let facts = ["--facts", "facts/web01.yaml"];
    let o = run_in(&dir, &[&["k", "-C", "repo"][..], &facts].concat());
    assert_eq!(stdout(&o), "--- web\n", "{}", stderr(&o));
    // The same as running in the repo.
    let o = run_in(&dir.join("repo"), &["k", "--facts", "../facts/web01.yaml"]);
    assert_eq!(stdout(&o), "--- web\n", "{}", stderr(&o));
    let o = run_in(&dir, &[&["where", "k", "-C", "repo"][..], &facts].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("data/roles/web.yaml"), "{}", stdout(&o));
    let o = run_in(
        &dir,
        &[&["diff", "HEAD", "-C", "repo", "--all"][..], &facts].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("No change"), "{}", stdout(&o));
    // lint: -C DIR, or PATH as before; the same findings.
    std::fs::write(dir.join("repo/data/common.yaml"), "k: 1\nk: 2\n").unwrap();
    let by_c = run_in(&dir, &["lint", "-C", "repo"]);
    let by_path = run_in(&dir, &["lint", "repo"]);
    assert_eq!(by_c.status.code(), Some(1), "{}", stderr(&by_c));
    assert_eq!(stdout(&by_c), stdout(&by_path));
    assert!(stdout(&by_c).contains("duplicate-key"), "{}", stdout(&by_c));
    let o = run_in(&dir, &["lint", "repo", "-C", "elsewhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give PATH or -C DIR"), "{}", stderr(&o));
    // -C names the control repo: it cannot be combined with Puppet's layout flags.
    let o = run_in(&dir, &["k", "-C", "repo", "--environmentpath", "envs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-C DIR"), "{}", stderr(&o));
    let o = run_in(&dir, &["k", "-C", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("-C nope: no such directory"),
        "{}",
        stderr(&o)
    );
}

/// lint takes the facts sources a lookup takes (--facts: a fleet of one), diff takes
/// --hiera_config and --modulepath, and every command takes --color.
#[test]
fn the_same_flags_everywhere() {
    let dir = layout("same-flags");
    // lint --facts: the fleet rules run (a data file no node reaches).
    std::fs::write(dir.join("repo/data/roles/db.yaml"), "k: db\n").unwrap();
    let o = run_in(&dir, &["lint", "-C", "repo", "--facts", "facts/web01.yaml"]);
    assert!(
        stdout(&o).contains("roles/db.yaml") && stdout(&o).contains("unreached"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    let o = run_in(&dir, &["lint", "-C", "repo"]);
    assert!(!stdout(&o).contains("unreached"), "{}", stdout(&o));
    // lint's settings file is --lint-config; --config still works, unlisted.
    std::fs::write(
        dir.join("lint.toml"),
        "[lint]\ndisable = [\"unreached-file\"]\n",
    )
    .unwrap();
    for flag in ["--lint-config", "--config"] {
        let o = run_in(
            &dir,
            &[
                "lint",
                "-C",
                "repo",
                "--facts",
                "facts/web01.yaml",
                flag,
                "lint.toml",
            ],
        );
        assert!(!stdout(&o).contains("unreached"), "{flag}: {}", stdout(&o));
    }
    let help = stdout(&run_in(&dir, &["lint", "--help"]));
    assert!(help.contains("--lint-config <FILE>"), "{help}");
    assert!(!help.contains("--config"), "{help}");
    // diff --modulepath and --hiera_config: the module's data, a global layer.
    std::fs::write(
        dir.join("global.yaml"),
        "version: 5\nhierarchy:\n  - name: g\n    path: g.yaml\n    datadir: gdata\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("gdata")).unwrap();
    std::fs::write(dir.join("gdata/g.yaml"), "k: global\n").unwrap();
    std::fs::write(dir.join("repo/site/m/data/common.yaml"), "m::x: changed\n").unwrap();
    std::fs::write(dir.join("repo/data/roles/web.yaml"), "k: web2\n").unwrap();
    let diff = |extra: &[&str]| {
        let mut args = vec![
            "diff",
            "HEAD",
            "-C",
            "repo",
            "--facts",
            "facts/web01.yaml",
            "--modulepath",
            "repo/site",
            "m::x",
            "k",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = run_in(&dir, &args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stdout(&o)
    };
    let out = diff(&[]);
    assert!(
        out.contains("\"key\":\"m::x\"") && out.contains("\"key\":\"k\""),
        "{out}"
    );
    // The global layer wins for k on both sides: only m::x changed.
    let out = diff(&["--hiera_config", "global.yaml"]);
    assert!(
        out.contains("\"key\":\"m::x\"") && !out.contains("\"key\":\"k\""),
        "{out}"
    );
    let o = run_in(
        &dir,
        &[
            "m::x",
            "-C",
            "repo",
            "--facts",
            "facts/web01.yaml",
            "--modulepath",
            "repo/site",
        ],
    );
    assert_eq!(stdout(&o), "--- changed\n", "{}", stderr(&o));
    // --color: always/never/auto (and Puppet's true/false) everywhere; nothing else.
    for args in [
        &[
            "lint",
            "-C",
            "repo",
            "--facts",
            "facts/web01.yaml",
            "--color",
            "always",
        ][..],
        &[
            "where",
            "k",
            "-C",
            "repo",
            "--facts",
            "facts/web01.yaml",
            "--color",
            "true",
        ],
        &[
            "diff",
            "HEAD",
            "-C",
            "repo",
            "--facts",
            "facts/web01.yaml",
            "--all",
            "--color",
            "always",
        ],
    ] {
        let o = run_in(&dir, args);
        assert!(
            stdout(&o).contains("\x1b["),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let never: Vec<&str> = args[..args.len() - 1]
            .iter()
            .copied()
            .chain(["never"])
            .collect();
        assert!(!stdout(&run_in(&dir, &never)).contains('\x1b'), "{never:?}");
    }
    for bad in ["ansi", "yes"] {
        let o = run_in(&dir, &["k", "--color", bad]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("[possible values: always, never, auto]"),
            "{}",
            stderr(&o)
        );
    }
}

/// Every flag with a fixed set of values lists them in --help (and completes them), and the
/// same thing has the same placeholder in every command.
#[test]
fn listed_values_and_placeholders() {
    let help = |args: &[&str]| stdout(&run_in(&fixtures(), args));
    let lookup = help(&["--help"]);
    for listed in [
        "[possible values: first, unique, hash, deep, reverse_deep, unconstrained_deep]",
        "[possible values: error, warning, off]",
        "[possible values: yaml, json, s]",
        "[possible values: always, never, auto]",
        "--threads <N>",
    ] {
        assert!(lookup.contains(listed), "{listed}: {lookup}");
    }
    let diff = help(&["diff", "--help"]);
    for listed in [
        "[possible values: text, json, github, markdown]",
        "--threads <N>",
        "[possible values: always, never, auto]",
    ] {
        assert!(diff.contains(listed), "{listed}: {diff}");
    }
    let lint = help(&["lint", "--help"]);
    for listed in [
        "[possible values: text, json, github, sarif]",
        "--fail-on <SEVERITY>",
        "[possible values: error, warning, info]",
    ] {
        assert!(lint.contains(listed), "{listed}: {lint}");
    }
    assert!(help(&["where", "--help"]).contains("[possible values: text, json]"));
    // Puppet's messages for a wrong --merge, --strict or --render-as are kept (the
    // conformance suite records them), the values only listed.
    let o = run_in(&fixtures(), &["k", "--render-as", "jsn"]);
    assert!(
        stderr(&o).starts_with("Error: Unknown rendering format 'jsn'"),
        "{}",
        stderr(&o)
    );
}

/// On a terminal, the human outputs that are not Puppet's byte-exact text colour by default
/// (where's table, lint's findings, diff's report); the lookup's answer does not.
#[test]
fn human_outputs_colour_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` to run under a terminal");
        return;
    }
    let dir = layout("tty");
    std::fs::write(dir.join("repo/data/common.yaml"), "k: 1\nk: 2\nntp: [b]\n").unwrap();
    let tty = |cmd: &str| {
        let o = Command::new("script")
            .current_dir(&*dir)
            .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
            .env_remove("NO_COLOR")
            .args(["-qec", cmd, "/dev/null"])
            .output()
            .unwrap();
        stdout(&o)
    };
    let exe = env!("CARGO_BIN_EXE_hiera-lookup");
    for cmd in [
        format!("{exe} where ntp -C repo --facts facts/web01.yaml"),
        format!("{exe} lint -C repo"),
        format!("{exe} diff HEAD -C repo --facts facts/web01.yaml --all"),
    ] {
        assert!(tty(&cmd).contains("\x1b["), "{cmd}: {}", tty(&cmd));
        assert!(
            !tty(&format!("NO_COLOR=1 {cmd}")).contains("\x1b["),
            "{cmd}"
        );
    }
    let plain = tty(&format!("{exe} ntp -C repo --facts facts/web01.yaml"));
    assert!(!plain.contains('\x1b'), "{plain}");
}
