//! Facts from where Puppet keeps them (issue 14), through the binary: the fact cache under
//! `--node`, every facts file shape, `--facts -`, `--trusted=FILE`, and batch output naming
//! each node's facts source. What Puppet 8.10 can record is in
//! tests/conformance/core/fact-cache; the rest cites what Puppet printed where it has an answer.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::scratch_tree;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    c.env(
        "HIERA_LOOKUP_CACHE_DIR",
        std::env::temp_dir().join(format!("hiera-lookup-test-cache-{}", std::process::id())),
    );
    // Never the machine's own puppet.conf.
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run hiera-lookup")
}

fn run_with_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hiera-lookup");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const HIERA: &str = "version: 5\nhierarchy:\n  - name: role\n    path: \"roles/%{trusted.extensions.pp_role}.yaml\"\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n";

/// A scratch control repo (data by role, OS family, common) plus the given files.
fn scratch(name: &str, files: &[(&str, &str)]) -> scratch_tree::Tree {
    let mut all = vec![
        ("hiera.yaml", HIERA),
        ("data/roles/web.yaml", "src: role-web\n"),
        ("data/os/RedHat.yaml", "src: redhat\n"),
        (
            "data/common.yaml",
            "src: common\ncert: \"%{trusted.certname}\"\n",
        ),
    ];
    all.extend_from_slice(files);
    scratch_tree::tree("facts", name, &all)
}

const CACHED: &str = "--- !ruby/object:Puppet::Node::Facts\nname: web01.example.com\nvalues:\n  os:\n    family: RedHat\n  clientcert: web01.example.com\n  hostname: web01\n  domain: example.com\n  fqdn: web01.example.com\ntimestamp: \"2023-11-14T22:13:20.000000000Z\"\nexpiration: \"2023-11-14T22:43:20.000000000Z\"\n";

#[test]
fn node_reads_the_fact_cache() {
    let dir = scratch(
        "cache",
        &[("var/yaml/facts/web01.example.com.yaml", CACHED)],
    );
    // Puppet 8.10, `puppet lookup --vardir var --node web01.example.com src`: "--- redhat".
    let o = run_in(
        &dir,
        &["src", "--vardir", "var", "--node", "web01.example.com"],
    );
    assert_eq!(stdout(&o), "--- redhat\n", "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn node_without_facts_anywhere_is_puppets_error() {
    let dir = scratch(
        "nofacts",
        &[("var/yaml/facts/web01.example.com.yaml", CACHED)],
    );
    // Puppet 8.10: "Error: Could not run: No facts available for target node: nope.example.com"
    let o = run_in(
        &dir,
        &["src", "--vardir", "var", "--node", "nope.example.com"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with("Error: No facts available for target node: nope.example.com ("),
        "{err}"
    );
    assert!(
        err.contains("var/yaml/facts/nope.example.com.yaml"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Asked for explicitly: the node known by its name only.
    let o = run_in(
        &dir,
        &[
            "cert",
            "--vardir",
            "var",
            "--node",
            "nope.example.com",
            "--no-facts",
        ],
    );
    assert_eq!(stdout(&o), "--- nope.example.com\n", "{}", stderr(&o));
}

#[test]
fn malformed_cache_file_is_one_line_exit_2() {
    let dir = scratch(
        "badcache",
        &[(
            "var/yaml/facts/w.yaml",
            "--- !ruby/object:Puppet::Node::Facts\nname: w\nvalues: [1\n",
        )],
    );
    let o = run_in(&dir, &["src", "--vardir", "var", "--node", "w"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("Error: Could not parse YAML data for facts w: ("),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // A node name that would leave the cache directory (Puppet: "invalid key").
    let o = run_in(&dir, &["src", "--vardir", "var", "--node", "../w"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("Error: invalid key"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn facts_from_stdin_and_every_shape() {
    let dir = scratch("shapes", &[]);
    let plain = r#"{"os":{"family":"RedHat"}}"#;
    let o = run_with_stdin(&dir, &["src", "--facts", "-"], plain);
    assert_eq!(stdout(&o), "--- redhat\n", "{}", stderr(&o));
    let yaml = "os:\n  family: RedHat\n";
    let o = run_with_stdin(&dir, &["src", "--facts", "-"], yaml);
    assert_eq!(stdout(&o), "--- redhat\n", "{}", stderr(&o));
    // The fact cache's own file, given with --facts (Puppet: "Tried to load unspecified
    // class: Puppet::Node::Facts"; hiera-lookup reads it).
    let o = run_with_stdin(&dir, &["cert", "--facts", "-"], CACHED);
    assert_eq!(stdout(&o), "--- web01.example.com\n", "{}", stderr(&o));
    let shapes = [
        // /pdb/query/v4/facts rows
        r#"[{"certname":"w","environment":"production","name":"os","value":{"family":"RedHat"}}]"#,
        // /pdb/query/v4/inventory, one object and a list
        r#"{"certname":"w","environment":"production","facts":{"os":{"family":"RedHat"}},"trusted":{"authenticated":"remote","certname":"w","extensions":{}}}"#,
        r#"[{"certname":"w","facts":{"os":{"family":"RedHat"}}}]"#,
        // /pdb/query/v4/factsets
        r#"[{"certname":"w","facts":{"href":"/pdb/query/v4/factsets/w/facts","data":[{"name":"os","value":{"family":"RedHat"}}]}}]"#,
        // puppet facts find
        r#"{"name":"w","values":{"os":{"family":"RedHat"}},"timestamp":"2024-01-01T00:00:00Z","expiration":"2024-01-01T00:30:00Z"}"#,
    ];
    for s in shapes {
        let o = run_with_stdin(&dir, &["src", "--facts", "-"], s);
        assert_eq!(stdout(&o), "--- redhat\n", "{s}: {}", stderr(&o));
    }
}

#[test]
fn facts_shapes_that_cannot_be_read_are_refused() {
    let dir = scratch(
        "refused",
        &[
            (
                "facts/mixed.json",
                r#"{"facts":{"os":{"family":"RedHat"}},"os":"x"}"#,
            ),
            (
                "facts/href.json",
                r#"{"certname":"w","facts":{"href":"/x"}}"#,
            ),
            ("facts/empty.json", "[]"),
            (
                "facts/two.json",
                r#"[{"certname":"a","facts":{"x":1}},{"certname":"b","facts":{"x":2}}]"#,
            ),
        ],
    );
    for f in ["mixed", "href", "empty", "two"] {
        let file = format!("facts/{f}.json");
        let o = run_in(&dir, &["src", "--facts", &file]);
        assert_eq!(o.status.code(), Some(2), "{f}: {}", stdout(&o));
        assert_eq!(stdout(&o), "");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&file), "{err}");
    }
    // Several nodes in one file: --node picks one.
    let o = run_in(&dir, &["cert", "--facts", "facts/two.json", "--node", "b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn partial_host_names_warn_instead_of_failing() {
    let dir = scratch(
        "partial",
        &[(
            "facts/w.yaml",
            "clientcert: w.example.com\nhostname: w\nfqdn: w.example.com\nos:\n  family: RedHat\n",
        )],
    );
    // Puppet 8.10 refuses the file ("When overriding any of the hostname,domain,fqdn,clientcert
    // facts with facts/w.yaml given via the --facts flag, they must all be overridden."): it
    // would merge the host's own domain. hiera-lookup merges nothing.
    let o = run_in(&dir, &["src", "--facts", "facts/w.yaml"]);
    assert_eq!(stdout(&o), "--- redhat\n", "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.starts_with("Warning: facts/w.yaml sets some of"),
        "{err}"
    );
    assert!(err.contains("but not domain"), "{err}");
    // A file with none of the four: no warning.
    let o = run_with_stdin(&dir, &["src", "--facts", "-"], "os:\n  family: RedHat\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn trusted_file_and_bare_trusted() {
    let dir = scratch(
        "trusted",
        &[
            ("facts/w.yaml", "clientcert: w.example.com\nhostname: w\ndomain: example.com\nfqdn: w.example.com\n"),
            ("trusted.yaml", "extensions:\n  pp_role: web\n"),
        ],
    );
    let o = run_in(
        &dir,
        &["src", "--facts", "facts/w.yaml", "--trusted=trusted.yaml"],
    );
    assert_eq!(stdout(&o), "--- role-web\n", "{}", stderr(&o));
    let o = run_in(
        &dir,
        &["cert", "--facts", "facts/w.yaml", "--trusted=trusted.yaml"],
    );
    assert_eq!(stdout(&o), "--- w.example.com\n", "{}", stderr(&o));
    // Puppet's `--trusted` takes no value and does nothing ("not yet supported").
    let o = run_in(&dir, &["--trusted", "src", "--facts", "facts/w.yaml"]);
    assert_eq!(stdout(&o), "--- common\n", "{}", stderr(&o));
    let o = run_in(
        &dir,
        &["src", "--facts", "facts/w.yaml", "--trusted=nope.yaml"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.yaml"), "{}", stderr(&o));
}

#[test]
fn dash_c_is_compile() {
    let dir = scratch("flags", &[]);
    // Puppet: `-c` is `--compile`.
    let o = run_in(&dir, &["src", "-c", "--facts", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--compile"), "{}", stderr(&o));
}

/// `--config FILE` is puppet.conf: `[server]` over `[master]` over `[main]`, `$setting`
/// interpolation, Puppet's flags over the file (checked with Puppet 8.10's `--configprint`).
#[test]
fn config_is_puppet_conf() {
    let dir = scratch(
        "conf",
        &[
            ("code/environments/prod2/hiera.yaml", HIERA),
            ("code/environments/prod2/data/common.yaml", "src: from-prod2\n"),
            ("var/yaml/facts/web01.example.com.yaml", CACHED),
            ("confdir/README", "puppet.conf is given with --config\n"),
            (
                "puppet.conf",
                "[main]\ncodedir = $confdir/../code\nvardir = /nonexistent\n[agent]\nvardir = /agent\n[server]\nvardir = $codedir/../var\nenvironmentpath = $codedir/environments\n",
            ),
        ],
    );
    let conf = dir.join("puppet.conf");
    let conf = conf.to_str().unwrap();
    let confdir = dir.join("confdir");
    let confdir = confdir.to_str().unwrap();
    // The fact cache under [server] vardir; the environment under environmentpath.
    let o = run_in(
        &dir,
        &[
            "src",
            "--config",
            conf,
            "--confdir",
            confdir,
            "--node",
            "web01.example.com",
            "-E",
            "prod2",
        ],
    );
    assert_eq!(stdout(&o), "--- from-prod2\n", "{}", stderr(&o));
    // --vardir (a flag) wins over the file.
    let o = run_in(
        &dir,
        &[
            "src",
            "--config",
            conf,
            "--confdir",
            confdir,
            "--vardir",
            "elsewhere",
            "--node",
            "web01.example.com",
            "-E",
            "prod2",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("elsewhere/yaml/facts/web01.example.com.yaml"),
        "{}",
        stderr(&o)
    );
    // The default puppet.conf ($HIERA_LOOKUP_PUPPET_CONF stands in for it) gives the layout
    // when a layout flag is given ...
    let o = bin()
        .current_dir(&dir)
        .env("HIERA_LOOKUP_PUPPET_CONF", conf)
        .args([
            "src",
            "--node",
            "web01.example.com",
            "--confdir",
            confdir,
            "-E",
            "prod2",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "--- from-prod2\n", "{}", stderr(&o));
    // ... but never leaves control-repo mode, while still saying where the fact cache is.
    let machine = dir.join("machine.conf");
    std::fs::write(
        &machine,
        format!(
            "[main]\ncodedir = /nonexistent/code\nenvironmentpath = /nonexistent\nhiera_config = /nonexistent/hiera.yaml\n[server]\nvardir = {}/var\n",
            dir.display()
        ),
    )
    .unwrap();
    let o = bin()
        .current_dir(&dir)
        .env("HIERA_LOOKUP_PUPPET_CONF", &machine)
        .args(["src", "--node", "web01.example.com"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "--- redhat\n",
        "control-repo mode: {}",
        stderr(&o)
    );
    // A --config that does not exist, or that Puppet could not parse: one line, exit 2.
    let o = run_in(&dir, &["src", "--config", "nope.conf", "--facts", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nope.conf"), "{}", stderr(&o));
    std::fs::write(dir.join("bad.conf"), "[production]\nx = 1\n").unwrap();
    let o = run_in(&dir, &["src", "--config", "bad.conf", "--facts", "-"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("Illegal section 'production'"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// puppet.conf's environment, as `puppet lookup` (run mode server) reads it: `--confdir DIR`
/// names `DIR/puppet.conf` even when the machine's configuration is switched off; the
/// machine's puppet.conf never renames a control repo's environment.
#[test]
fn puppet_conf_environment() {
    let dir = scratch(
        "conf-env",
        &[
            ("code/environments/production/hiera.yaml", HIERA),
            (
                "code/environments/production/data/common.yaml",
                "src: from-production\nenv: \"%{environment}\"\n",
            ),
            ("code/environments/dev/hiera.yaml", HIERA),
            ("code/environments/dev/data/common.yaml", "src: from-dev\n"),
            (
                "confdir/puppet.conf",
                "[agent]\nenvironment = production\n[main]\nenvironment = \"dev\"\n",
            ),
            ("data/common.yaml", "src: common\nenv: \"%{environment}\"\n"),
        ],
    );
    let args = [
        "src",
        "--confdir",
        "confdir",
        "--codedir",
        "code",
        "--node",
        "n1",
        "--no-facts",
    ];
    let o = run_in(&dir, &args);
    assert_eq!(stdout(&o), "--- from-dev\n", "{}", stderr(&o));
    let o = run_in(&dir, &[&args[..], &["-E", "production"]].concat());
    assert_eq!(stdout(&o), "--- from-production\n", "{}", stderr(&o));
    let o = bin()
        .current_dir(&dir)
        .env("HIERA_LOOKUP_PUPPET_CONF", dir.join("confdir/puppet.conf"))
        .args(["env", "--node", "n1", "--no-facts"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "--- production\n",
        "control-repo mode: {}",
        stderr(&o)
    );
}

/// Batch lines name their facts source; a duplicate node warns; an unreadable file answers
/// errors for its node only (exit 2 at the end); trusted data resolves per node.
#[test]
fn batch_names_sources_and_survives_bad_files() {
    let dir = scratch(
        "batch",
        &[
            (
                "fleet/a.json",
                r#"{"certname":"web01.example.com","facts":{"os":{"family":"RedHat"}},"trusted":{"authenticated":"remote","certname":"web01.example.com","extensions":{"pp_role":"web"}}}"#,
            ),
            ("fleet/b.yaml", "clientcert: web01.example.com\nhostname: web01\ndomain: example.com\nfqdn: web01.example.com\n"),
            ("fleet/c.yaml", "os: [1\n"),
            ("fleet/d.json", r#"{"os":{"family":"RedHat"}}"#),
            ("empty/README", "no facts here\n"),
        ],
    );
    let o = run_in(&dir, &["src", "--facts-dir", "fleet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"node":"web01.example.com","facts":"fleet/a.json","key":"src","found":true,"value":"role-web"}"#,
            r#"{"node":"web01.example.com","facts":"fleet/b.yaml","key":"src","found":true,"value":"common"}"#,
            r#"{"node":"c","facts":"fleet/c.yaml","key":"src","error":"(fleet/c.yaml): did not find expected ',' or ']' while parsing a flow sequence at line 1 column 5"}"#,
            r#"{"node":"d","facts":"fleet/d.json","key":"src","found":true,"value":"redhat"}"#,
        ]
    );
    let err = stderr(&o);
    assert!(
        err.contains(
            "Warning: node web01.example.com is given 2 times (by fleet/a.json, fleet/b.yaml)"
        ),
        "{err}"
    );
    // An empty directory is an error, not a vacuous success.
    let o = run_in(&dir, &["src", "--facts-dir", "empty"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("No facts files (*.yaml, *.yml, *.json) in the facts directory empty"),
        "{}",
        stderr(&o)
    );
}

/// Puppet's routes.yaml sending facts to PuppetDB makes PuppetDB the `--node` source, at
/// puppetdb.conf's server_urls (here a closed loopback port, so the attempt shows).
#[test]
fn routes_yaml_sends_node_facts_to_puppetdb() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let dir = scratch(
        "routes",
        &[
            (
                "conf/routes.yaml",
                "---\nserver:\n  facts:\n    terminus: puppetdb\n    cache: yaml\n",
            ),
            ("var/yaml/facts/web01.example.com.yaml", CACHED),
        ],
    );
    std::fs::write(
        dir.join("conf/puppetdb.conf"),
        format!("[main]\nserver_urls = http://127.0.0.1:{port}\n"),
    )
    .unwrap();
    let o = run_in(
        &dir,
        &[
            "src",
            "--confdir",
            "conf",
            "--vardir",
            "var",
            "--hiera_config",
            "hiera.yaml",
            "--node",
            "web01.example.com",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "Error: Could not reach PuppetDB at http://127.0.0.1:{port}: "
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Without routes.yaml, the fact cache.
    std::fs::remove_file(dir.join("conf/routes.yaml")).unwrap();
    let o = run_in(
        &dir,
        &[
            "src",
            "--confdir",
            "conf",
            "--vardir",
            "var",
            "--hiera_config",
            "hiera.yaml",
            "--node",
            "web01.example.com",
        ],
    );
    assert_eq!(stdout(&o), "--- redhat\n", "{}", stderr(&o));
}

/// One rule for every fleet command: each node whose facts cannot be read is reported
/// (file, line and column where a parser says), the others are answered, and the run fails at
/// the end. lint and diff used to stop at the first broken file with no report.
#[test]
fn unreadable_nodes_are_reported_and_the_others_answered() {
    let dir = scratch_tree::tree(
        "facts",
        "unreadable-fleet",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n",
            ),
            ("data/common.yaml", "a: common\n"),
            ("data/os/Debian.yaml", "a: debian\n"),
            ("data/os/Gone.yaml", "a: gone\n"),
            ("fleet/a.yaml", "clientcert: a\nos: {family: Debian}\n"),
            ("fleet/b.json", "{\"clientcert\": \"b\", \"os\": {\"family\":"),
            ("fleet/c.yaml", "clientcert: c\nos: {family: [x\n"),
            ("fleet/d.yaml", "clientcert: d\nos: {family: RedHat}\n"),
        ],
    );
    let o = run_in(&dir, &["lint", "--facts-dir", "fleet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // The fleet rules judged a and d: Gone.yaml is reached by neither.
    assert!(
        stdout(&o).contains(
            "data/os/Gone.yaml:1:1: warning unreached-file: no node of the fleet (2 nodes)"
        ),
        "{}",
        stdout(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains(
            "Error: node b: The facts file fleet/b.json is not valid JSON at line 1, column 36"
        ) && err.contains("Error: node c: (fleet/c.yaml): ")
            && err.contains("Error: 2 nodes could not be read (above): the others were linted"),
        "{err}"
    );
    // diff: the same nodes, the others compared.
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .current_dir(&dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@x",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &*dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "init"]);
    std::fs::write(dir.join("data/os/Debian.yaml"), "a: debian2\n").unwrap();
    let o = run_in(&dir, &["diff", "HEAD", "--facts-dir", "fleet", "a"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("1 key changed on 1 of 2 nodes between HEAD and work tree")
            && stdout(&o).contains("2 nodes whose facts could not be read"),
        "{}",
        stdout(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("Error: node b: ")
            && err.contains("Error: node c: ")
            && err.contains("Error: 2 nodes could not be read (above): the others were compared"),
        "{err}"
    );
}
