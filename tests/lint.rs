//! `hiera-lookup lint` as a user runs it: output formats, exit statuses, settings, and a run
//! over the real modules' data of the realworld control repo (a copy is committed under
//! tests/conformance/layers/realworld).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
        .arg("lint")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str, files: &[(&str, &str)]) -> Tmp {
        let dir = std::env::temp_dir().join(format!("hl-lint-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (f, text) in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Tmp(dir)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const HIERA: &str = "version: 5\nhierarchy:\n  - name: Common\n    path: common.yaml\n";

fn realworld() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/layers/realworld")
}

#[test]
fn exit_statuses_and_text() {
    let clean = Tmp::new(
        "clean",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: '0755'\n")],
    );
    let o = lint(&clean.0, &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(stdout(&o), "");

    let warn = Tmp::new(
        "warn",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: 0755\n")],
    );
    let o = lint(&warn.0, &[]);
    // A warning does not fail the default --fail-on error …
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "data/common.yaml:1:4: warning yaml11-value: '0755' is read as the integer 493 (octal) (YAML 1.1); quote it if you mean the string '0755'\n"
    );
    // … but fails --fail-on warning, and the settings file's fail-on.
    assert_eq!(
        lint(&warn.0, &["--fail-on", "warning"]).status.code(),
        Some(1)
    );
    std::fs::write(
        warn.0.join(".hiera-lookup.toml"),
        "[lint]\nfail-on = \"warning\"\n",
    )
    .unwrap();
    assert_eq!(lint(&warn.0, &[]).status.code(), Some(1));
    assert_eq!(
        lint(&warn.0, &["--fail-on", "error"]).status.code(),
        Some(0)
    );

    let broken = Tmp::new(
        "broken",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: [\n")],
    );
    let o = lint(&broken.0, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("data/common.yaml:2:1: error data-syntax: does not parse: "));

    // A path given as an argument; findings stay relative to it.
    let o = lint(Path::new("/"), &[broken.0.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("data/common.yaml:"));
}

#[test]
fn could_not_run() {
    let o = lint(Path::new("/"), &["/nonexistent/control-repo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/control-repo"));
    let o = lint(Path::new("/"), &["--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
    let bad = Tmp::new(
        "badsettings",
        &[
            ("hiera.yaml", HIERA),
            (".hiera-lookup.toml", "[lint]\ndisable = 3\n"),
        ],
    );
    let o = lint(&bad.0, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(".hiera-lookup.toml"));
    let o = lint(&bad.0, &["--facts-dir", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    // One directory named twice is that directory; two are refused.
    let two = Tmp::new(
        "twice",
        &[("x/hiera.yaml", HIERA), ("x/data/common.yaml", "a: 1\n")],
    );
    let o = lint(&two.0, &["./x", "-C", "x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = lint(&two.0, &["./x", "-C", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("given twice"), "{}", stderr(&o));
}

#[test]
fn formats() {
    let t = Tmp::new(
        "formats",
        &[("hiera.yaml", HIERA), ("data/common.yaml", "a: 1\na: 2\n")],
    );
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&lint(&t.0, &["--format", "json"]))).unwrap();
    assert_eq!(j[0]["rule"], "duplicate-key");
    assert_eq!(j[0]["line"], 2);
    assert_eq!(
        stdout(&lint(&t.0, &["--format", "github"])),
        "::error file=data/common.yaml,line=2,col=1,title=duplicate-key::key 'a' is given again (first on line 1): Psych keeps this last value and silently drops the first\n"
    );
    let o = lint(&t.0, &["--format", "sarif"]);
    assert_eq!(o.status.code(), Some(1));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["version"], "2.1.0");
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "duplicate-key");
    assert_eq!(s["runs"][0]["results"][0]["level"], "error");
}

#[test]
fn list_rules() {
    let o = lint(Path::new("/"), &["--list-rules"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text
        .lines()
        .any(|l| l.starts_with("unknown-class-parameter") && l.contains("error")));
    assert!(text.lines().count() >= 30);
}

/// The real modules' data: parses, no error; the findings are the ones a reader can check
/// by hand in the files.
#[test]
fn realworld_control_repo() {
    let env = realworld().join("environments/production");
    let o = lint(&env, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains(
        "modules/systemd/hiera.yaml:15:5: info level-no-files: level 'common' reads no file"
    ));
    assert!(!text.contains(" error "), "{text}");

    let facts = realworld().join("facts");
    let o = lint(
        &env,
        &["--facts-dir", facts.to_str().unwrap(), "--format", "json"],
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let has = |file: &str, rule: &str| {
        j.as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == file && f["rule"] == rule)
    };
    // No fact set has the custom `role` fact: the roles level reads nothing.
    assert!(has("hiera.yaml", "unknown-fact"));
    assert!(has("data/roles/webserver.yaml", "unreached-file"));
    // Solaris is not in the fleet.
    assert!(has("modules/ntp/data/Solaris-11.yaml", "unreached-file"));
    assert!(!has("data/common.yaml", "unreached-file"));
}

/// `exclude` in the `[lint]` table: a vendored module's findings are not reported, while its
/// data still counts (a key it defines is not "defined nowhere").
#[test]
fn exclude_drops_vendored_findings() {
    let files = [
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "a: 1\na: 2\nb: \"%{lookup('vendored::x')}\"\n",
        ),
        ("modules/vendored/hiera.yaml", HIERA),
        (
            "modules/vendored/data/common.yaml",
            "vendored::x: 1\nvendored::x: 2\n",
        ),
    ];
    let plain = Tmp::new("exclude-plain", &files);
    let text = stdout(&lint(&plain.0, &["--fail-on", "info"]));
    assert!(
        text.contains("data/common.yaml:2:1: error duplicate-key"),
        "{text}"
    );
    assert!(
        text.contains("modules/vendored/data/common.yaml:2:1: error duplicate-key"),
        "{text}"
    );
    let mut with_settings = files.to_vec();
    with_settings.push((
        ".hiera-lookup.toml",
        "[lint]\nexclude = [\"modules/vendored\"]\n",
    ));
    let excluded = Tmp::new("exclude", &with_settings);
    let o = lint(&excluded.0, &["--fail-on", "info"]);
    let text = stdout(&o);
    assert!(
        text.contains("data/common.yaml:2:1: error duplicate-key"),
        "{text}"
    );
    assert!(!text.contains("modules/vendored"), "{text}");
    assert!(!text.contains("interpolation-undefined-key"), "{text}");
    assert_eq!(o.status.code(), Some(1));
    // A bad exclude is a settings error.
    let bad = Tmp::new(
        "exclude-bad",
        &[
            ("hiera.yaml", HIERA),
            (".hiera-lookup.toml", "[lint]\nexclude = \"modules\"\n"),
        ],
    );
    let o = lint(&bad.0, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lint.exclude must be an array of paths"));
    // The fleet comes from one source.
    let o = lint(
        &plain.0,
        &["--facts-dir", "facts", "--puppetdb", "http://127.0.0.1:1"],
    );
    assert_eq!(o.status.code(), Some(2));
    let o = lint(&plain.0, &["--nodes-query", "inventory[certname] {}"]);
    assert_eq!(o.status.code(), Some(2));
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const ENV_HIERA: &str = "version: 5\nhierarchy:\n  - name: Common\n    path: common.yaml\n";
const MOD_HIERA: &str = "version: 5\nhierarchy:\n  - name: OS\n    path: \"%{facts.os.family}.yaml\"\n  - name: Common\n    path: common.yaml\n";

/// A control repo as r10k deploys one (issue 29, items 10–12): the modules its Puppetfile
/// installs (or its .gitignore leaves out) are not the operator's to fix, a module default
/// that the environment's data override is the normal Hiera pattern, and the commonest
/// Puppet 8 migration slip is a legacy fact under `facts.`.
#[test]
fn a_real_control_repo() {
    let t = Tmp::new(
        "real",
        &[
            ("Puppetfile", "forge 'https://forge.puppet.com'\nmod 'puppetlabs/ntp', '10.1.0'\n"),
            ("hiera.yaml", "version: 5\nhierarchy:\n  - name: OS\n    path: \"os/%{facts.osfamily}.yaml\"\n  - name: Common\n    path: common.yaml\n"),
            ("data/common.yaml", "site::x: '%{facts.operatingsystem}'\nprofile::b: 1\nntp::servers: [a]\n"),
            ("data/os/Debian.yaml", "site::y: 1\n"),
            ("environment.conf", "modulepath = modules:site\n"),
            // Vendored: a duplicate key, a finding nobody here should fix.
            ("modules/ntp/hiera.yaml", ENV_HIERA),
            ("modules/ntp/data/common.yaml", "ntp::servers: [x]\nntp::servers: [y]\n"),
            // The repo's own module: its default overridden by the environment is fine;
            // overridden inside the module for every node, it is never used.
            ("site/profile/hiera.yaml", MOD_HIERA),
            ("site/profile/data/common.yaml", "profile::b: 2\nprofile::a: 1\n"),
            ("site/profile/data/Debian.yaml", "profile::a: 2\n"),
            ("facts/web.yaml", "clientcert: web\nhostname: web\ndomain: x\nfqdn: web.x\nos:\n  family: Debian\n"),
        ],
    );
    let o = lint(&t.0, &["--facts-dir", "facts"]);
    let out = stdout(&o);
    // Vendored findings are counted on stderr, with how to see them.
    assert!(!out.contains("modules/ntp"), "{out}");
    assert!(
        stderr(&o).contains("1 finding in vendored code not shown (modules/ntp, installed by the Puppetfile); --include-vendored shows them"),
        "{}",
        stderr(&o)
    );
    let all = stdout(&lint(&t.0, &["--facts-dir", "facts", "--include-vendored"]));
    assert!(
        all.contains("modules/ntp/data/common.yaml:2:1: error duplicate-key"),
        "{all}"
    );
    // .gitignore's directories too.
    std::fs::remove_file(t.0.join("Puppetfile")).unwrap();
    std::fs::write(t.0.join(".gitignore"), "/modules/\n").unwrap();
    let o = lint(&t.0, &["--facts-dir", "facts"]);
    assert!(!stdout(&o).contains("modules/ntp"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("modules, left out by .gitignore"),
        "{}",
        stderr(&o)
    );
    // The module default the environment overrides is not "never used"; the one the
    // module's own OS level overrides for every node is.
    assert!(
        !out.contains("site/profile/data/common.yaml:1:1: warning shadowed-key"),
        "{out}"
    );
    assert!(
        out.contains("site/profile/data/common.yaml:2:1: warning shadowed-key: 'profile::a'"),
        "{out}"
    );
    // Legacy facts under `facts.`, in data and in hiera.yaml's paths.
    assert!(
        out.contains("data/common.yaml:1:11: error legacy-fact: '%{facts.operatingsystem}' reads the legacy fact 'operatingsystem'")
            && out.contains("use '%{facts.os.name}'"),
        "{out}"
    );
    assert!(
        out.contains("hiera.yaml:4:15: error legacy-fact: '%{facts.osfamily}' reads the legacy fact 'osfamily'"),
        "{out}"
    );
}

/// GitHub annotations and SARIF name files from the git root, so that they attach to the
/// pull request's files when the control repo is a directory of a bigger repository.
#[test]
fn annotations_name_files_from_the_git_root() {
    let t = Tmp::new(
        "monorepo",
        &[
            ("puppet/env/hiera.yaml", HIERA),
            ("puppet/env/data/common.yaml", "a: 1\na: 2\n"),
        ],
    );
    let git = |args: &[&str]| {
        assert!(Command::new("git")
            .current_dir(&t.0)
            .args(args)
            .status()
            .unwrap()
            .success())
    };
    git(&["init", "-q"]);
    let o = lint(&t.0.join("puppet"), &["env", "--format", "github"]);
    assert!(
        stdout(&o).starts_with("::error file=puppet/env/data/common.yaml,line=2,"),
        "{}",
        stdout(&o)
    );
    let o = lint(&t.0, &["-C", "puppet/env", "--format", "sarif"]);
    assert!(
        stdout(&o).contains("\"uri\": \"puppet/env/data/common.yaml\""),
        "{}",
        stdout(&o)
    );
    // Text stays relative to the control repo.
    let o = lint(&t.0, &["puppet/env"]);
    assert!(
        stdout(&o).starts_with("data/common.yaml:2:1:"),
        "{}",
        stdout(&o)
    );
}

/// Issue 26, items 3 and 5: a data file name holding a line break, a workflow command and a
/// terminal escape: one finding is one line, in text and in GitHub's format.
#[test]
fn hostile_file_names_stay_on_their_line() {
    let evil = "data/extra/x\n::error file=README.md::boom\x1b[2J\r.yaml";
    let t = Tmp::new(
        "hostile",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: extra\n    glob: \"extra/*.yaml\"\n",
            ),
            (evil, "v: 0755\n"),
        ],
    );
    let text = stdout(&lint(&t.0, &[]));
    assert_eq!(
        text,
        "data/extra/x\\n::error file=README.md::boom\\e[2J\\r.yaml:1:4: warning yaml11-value: '0755' is read as the integer 493 (octal) (YAML 1.1); quote it if you mean the string '0755'\n"
    );
    let gh = stdout(&lint(&t.0, &["--format", "github"]));
    assert_eq!(gh.lines().count(), 1, "{gh}");
    assert!(
        gh.starts_with("::warning file=data/extra/x\\n%3A%3Aerror file=README.md%3A%3Aboom\\e[2J\\r.yaml,line=1,col=4,title=yaml11-value::"),
        "{gh}"
    );
    // The lint's error line too.
    let o = lint(&t.0, &["no\x1b[2J\nsuch-dir"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no\\e[2J"), "{err}");
}

use crate::eyaml;

/// Issue 26, item 2: a lookup that fails on what eyaml decrypted is reported without it.
#[test]
fn lookup_fails_hides_decrypted_secrets() {
    let secrets = format!(
        "lookup_options:\n  check:\n    merge: unique\n    convert_to: \"Array[Enum[x]]\"\ncheck: {}\n",
        eyaml::OLD
    );
    let t = Tmp::new(
        "secrets",
        &[
            ("hiera.yaml", &eyaml::hiera_yaml()),
            ("data/secrets.eyaml", &secrets),
            ("data/common.yaml", "other: 1\n"),
            ("facts/n1.yaml", "clientcert: n1\n"),
        ],
    );
    for format in ["text", "json", "github", "sarif"] {
        let o = lint(&t.0, &["--facts-dir", "facts", "--format", format]);
        let (out, err) = (stdout(&o), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(1), "{format}: {out}{err}");
        assert!(out.contains("lookup-fails"), "{format}: {out}");
        assert!(out.contains("got '[redacted]'"), "{format}: {out}");
        assert!(
            !out.contains(eyaml::OLD_PLAIN) && !err.contains(eyaml::OLD_PLAIN),
            "{format}: {out}{err}"
        );
    }
}

/// A parameter's type judged on the value a node gets: when eyaml decrypted it, the
/// mismatch says `[redacted]`, never the plaintext.
#[test]
fn parameter_mismatches_hide_decrypted_secrets() {
    let t = Tmp::new(
        "param-secrets",
        &[
            ("hiera.yaml", &eyaml::hiera_yaml()),
            ("environment.conf", "modulepath = site\n"),
            (
                "site/db/manifests/init.pp",
                "class db (\n  Enum['a', 'b'] $password = 'a',\n) {}\n",
            ),
            (
                "data/secrets.eyaml",
                &format!("db::password: {}\n", eyaml::OLD),
            ),
            ("data/common.yaml", "other: 1\n"),
            ("facts/n1.yaml", "clientcert: n1\n"),
        ],
    );
    for format in ["text", "json", "github", "sarif"] {
        let o = lint(&t.0, &["--facts-dir", "facts", "--format", format]);
        let (out, err) = (stdout(&o), String::from_utf8_lossy(&o.stderr));
        assert!(
            out.contains("parameter-type-mismatch"),
            "{format}: {out}{err}"
        );
        assert!(out.contains("[redacted]"), "{format}: {out}");
        assert!(
            !out.contains(eyaml::OLD_PLAIN) && !err.contains(eyaml::OLD_PLAIN),
            "{format}: {out}{err}"
        );
    }
}

/// The fleet rules count nodes in words that agree with the number ("1 node", "2 nodes"),
/// and a fleet's facts warnings still reach stderr now that the nodes are read as they are
/// checked.
#[test]
fn fleet_counts_read_as_numbers() {
    let levels = "version: 5\nhierarchy:\n  - name: OS\n    path: \"%{facts.os.family}.yaml\"\n  - name: Common\n    path: common.yaml\n";
    let t = Tmp::new(
        "fleet-counts",
        &[
            ("hiera.yaml", levels),
            ("data/common.yaml", "a: 1\n"),
            ("data/Solaris.yaml", "a: 2\n"),
            ("facts/web.yaml", "clientcert: web\nos:\n  family: Debian\n"),
        ],
    );
    let o = lint(&t.0, &["--facts-dir", "facts"]);
    let out = stdout(&o);
    assert!(
        out.contains("no node of the fleet (1 node) reads this file"),
        "{out}"
    );
    assert!(
        stderr(&o).contains("Warning: facts/web.yaml sets some of"),
        "{}",
        stderr(&o)
    );
    std::fs::write(t.0.join("facts/db.yaml"), "os:\n  family: RedHat\n").unwrap();
    let out = stdout(&lint(&t.0, &["--facts-dir", "facts"]));
    assert!(
        out.contains("no node of the fleet (2 nodes) reads this file"),
        "{out}"
    );
}

/// Class parameters as the schema (issue 31): `parameter-type-mismatch` and `unused-key` in
/// every format, the fleet naming its nodes, and a hostile node name kept on its line.
#[test]
fn class_parameters_as_the_schema() {
    let t = Tmp::new(
        "schema",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: Nodes\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: Common\n    path: common.yaml\n",
            ),
            ("environment.conf", "modulepath = site\n"),
            (
                "site/ntp/manifests/init.pp",
                "class ntp (\n  Boolean $iburst = true,\n  Optional[String] $pool = undef,\n) {}\n",
            ),
            (
                "data/common.yaml",
                "ntp::iburst: 'yes'\nntp::pool: ~\nntp_servers: [a]\n",
            ),
            ("data/nodes/web01.yaml", "ntp::iburst: \"%{facts.flag}\"\n"),
            ("facts/web01.yaml", "clientcert: web01\nflag: 'on'\n"),
            ("facts/db01.yaml", "clientcert: db01\n"),
        ],
    );
    let o = lint(&t.0, &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(
        stdout(&o),
        "data/common.yaml:1:1: error parameter-type-mismatch: 'ntp::iburst' is 'yes' (a String), which 'Boolean $iburst = true' (site/ntp/manifests/init.pp:2:11) does not take: Puppet fails every node that gets it: Class[Ntp]: parameter 'iburst' expects a Boolean value, got String\n\
         data/common.yaml:3:1: warning unused-key: 'ntp_servers' is not a class parameter (it has no namespace), and no lookup() in the manifests, interpolation or lookup_options uses it: nothing reads this value\n"
    );
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&lint(&t.0, &["--format", "json"]))).unwrap();
    let rules: Vec<&str> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, vec!["parameter-type-mismatch", "unused-key"]);
    let gh = stdout(&lint(&t.0, &["--format", "github"]));
    assert!(
        gh.starts_with(
            "::error file=data/common.yaml,line=1,col=1,title=parameter-type-mismatch::"
        ),
        "{gh}"
    );
    assert!(
        gh.contains("::warning file=data/common.yaml,line=3,col=1,title=unused-key::"),
        "{gh}"
    );
    let s: serde_json::Value =
        serde_json::from_slice(&lint(&t.0, &["--format", "sarif"]).stdout).unwrap();
    let run = &s["runs"][0];
    for (i, rule) in ["parameter-type-mismatch", "unused-key"].iter().enumerate() {
        let r = &run["results"][i];
        assert_eq!(r["ruleId"], *rule);
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(run["tool"]["driver"]["rules"][idx]["id"], *rule);
    }
    // The fleet: web01 gets 'on' (a String) through its node file; db01 gets common's 'yes'.
    let text = stdout(&lint(&t.0, &["--facts-dir", "facts"]));
    assert!(
        text.contains("data/common.yaml:1:1: error parameter-type-mismatch: 'ntp::iburst' is 'yes' (a String)")
            && text.contains("(node db01 of the fleet gets it)"),
        "{text}"
    );
    assert!(
        text.contains("data/nodes/web01.yaml:1:1: error parameter-type-mismatch: the value of 'ntp::iburst' that node web01 of the fleet gets from here (after merges and interpolation) is one 'Boolean $iburst = true'"),
        "{text}"
    );
    // Turned off like any rule.
    std::fs::write(
        t.0.join(".hiera-lookup.toml"),
        "[lint]\ndisable = [\"parameter-type-mismatch\", \"unused-key\"]\n",
    )
    .unwrap();
    let o = lint(&t.0, &[]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "");
    // --list-rules lists them.
    let list = stdout(&lint(Path::new("/"), &["--list-rules"]));
    assert!(list.contains("parameter-type-mismatch") && list.contains("unused-key"));
}
