//! One fixture per rule: the finding, and the nearest case that is not one.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A control repo written into a fresh temporary directory, removed on drop.
pub(crate) struct Fixture {
    pub(crate) dir: PathBuf,
}

impl Fixture {
    pub(crate) fn new(files: &[(&str, &str)]) -> Fixture {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hl-lint-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        Fixture { dir }
    }

    fn lint(&self) -> Vec<Finding> {
        lint(&Options {
            root: self.dir.clone(),
            ..Default::default()
        })
        .unwrap()
        .findings
    }

    fn lint_fleet(&self) -> Vec<Finding> {
        lint(&Options {
            root: self.dir.clone(),
            facts_dir: Some(self.dir.join("facts")),
            ..Default::default()
        })
        .unwrap()
        .findings
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const HIERA: &str = "version: 5\ndefaults:\n  datadir: data\n  data_hash: yaml_data\nhierarchy:\n  - name: Nodes\n    path: \"nodes/%{trusted.certname}.yaml\"\n  - name: OS\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: Common\n    path: common.yaml\n";

/// The findings of `rule`, as `file:line:col`.
fn of(findings: &[Finding], rule: &str) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| format!("{}:{}:{}", f.file, f.line(), f.column()))
        .collect()
}

fn message<'a>(findings: &'a [Finding], rule: &str) -> &'a str {
    &findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} in {findings:#?}"))
        .message
}

#[test]
fn every_rule_is_documented() {
    let doc = include_str!("../../../docs/lint.md");
    for r in RULES {
        assert!(
            doc.contains(&format!("### `{}`", r.id)),
            "docs/lint.md lacks a section for {}",
            r.id
        );
    }
}

#[test]
fn clean_repo_has_no_finding() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "---\nntp::servers:\n  - a\nmode: '0755'\nenabled: true\n",
        ),
        ("data/os/Debian.yaml", "ntp::servers: [b]\n"),
        ("data/nodes/web01.yaml", "ntp::servers: [c]\n"),
    ]);
    assert_eq!(fx.lint(), vec![]);
}

#[test]
fn group1_data_files() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("data/common.yaml", "a: 1\n"),
        // Reached by no node of any fleet given: still read.
        ("data/os/Debian.yaml", "a: [1\n"),
        ("data/os/RedHat.yaml", "- just a list\n"),
        ("data/nodes/n1.yaml", "a: :sym\nb: 2\n"),
        ("data/nodes/n2.yaml", ""),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "data-syntax"), vec!["data/os/Debian.yaml:1:4"]);
    assert!(message(&f, "data-syntax").contains("did not find expected ',' or ']'"));
    assert_eq!(of(&f, "data-not-a-hash"), vec!["data/os/RedHat.yaml:1:1"]);
    assert_eq!(of(&f, "data-ruby-object"), vec!["data/nodes/n1.yaml:1:4"]);
    assert!(message(&f, "data-ruby-object").contains("Symbol"));
    // The empty file and common.yaml are fine.
    assert_eq!(
        f.iter()
            .filter(|x| x.file.ends_with("n2.yaml") || x.file.ends_with("common.yaml"))
            .count(),
        0
    );
}

#[test]
fn group1_json_and_hocon() {
    let fx = Fixture::new(&[
        (
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: J\n    data_hash: json_data\n    path: a.json\n  - name: H\n    data_hash: hocon_data\n    path: b.conf\n",
        ),
        ("data/a.json", "{\"a\": 1,}"),
        ("data/b.conf", "b = 1\n"),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "data-syntax").len(), 1);
    assert!(of(&f, "data-syntax")[0].starts_with("data/a.json:"));
}

#[test]
fn group1_eyaml() {
    let fx = Fixture::new(&[
        (
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: Secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: /nonexistent/private_key.pkcs7.pem\n",
        ),
        (
            "data/secrets.eyaml",
            "good: ENC[PKCS7,QUJDRA==]\nbad: ENC[PKCS7,not base64!]\ngpg: ENC[GPG,QUJDRA==]\nplain: hello\n",
        ),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "eyaml-malformed"),
        vec!["data/secrets.eyaml:2:6", "data/secrets.eyaml:3:6"]
    );
    // Keys that are not there are not tried.
    assert_eq!(of(&f, "eyaml-decrypt"), Vec::<String>::new());
}

#[test]
fn group1_eyaml_decrypt_with_keys() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/backends");
    // A real key pair from the conformance suite, if present: a value encrypted for
    // another key does not decrypt, and the message holds no plaintext.
    let Some(key) = find_file(&fixtures, "private_key.pkcs7.pem") else {
        return;
    };
    let hiera = format!(
        "version: 5\nhierarchy:\n  - name: Secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n    options:\n      pkcs7_private_key: {}\n",
        key.display()
    );
    let fx = Fixture::new(&[
        ("hiera.yaml", hiera.as_str()),
        ("data/secrets.eyaml", "wrong: ENC[PKCS7,QUJDRA==]\n"),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "eyaml-decrypt"), vec!["data/secrets.eyaml:1:8"]);
    assert!(!message(&f, "eyaml-decrypt").contains("QUJDRA"));
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = find_file(&p, name) {
                return Some(f);
            }
        } else if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
    }
    None
}

#[test]
fn group2_hiera_config() {
    let fx = Fixture::new(&[(
        "hiera.yaml",
        "version: 5\nhierarchy:\n  - name: X\n    pth: x.yaml\n",
    )]);
    let f = fx.lint();
    assert_eq!(of(&f, "hiera-config-invalid").len(), 1, "{f:#?}");

    // Version 4 in the environment: a warning with the version 5 form.
    let fx = Fixture::new(&[
        (
            "hiera.yaml",
            "version: 4\ndatadir: data\nhierarchy:\n  - name: Common\n    backend: yaml\n    path: common\n",
        ),
        ("data/common.yaml", "a: 1\n"),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "hiera-config-deprecated"), vec!["hiera.yaml:1:1"]);
    assert!(
        message(&f, "hiera-config-deprecated")
            .contains("{name: \"Common\", data_hash: yaml_data, path: \"common.yaml\"}"),
        "{}",
        message(&f, "hiera-config-deprecated")
    );

    // Version 3 in the global layer: deprecated, spelled out.
    let fx = Fixture::new(&[
        (
            "hiera.yaml",
            ":backends:\n  - yaml\n:yaml:\n  :datadir: /nonexistent/hieradata\n:hierarchy:\n  - \"nodes/%{::trusted.certname}\"\n  - common\n",
        ),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "hiera-config-deprecated").len(), 1, "{f:#?}");
    assert!(message(&f, "hiera-config-deprecated")
        .contains("paths: [\"nodes/%{::trusted.certname}.yaml\", \"common.yaml\"]"));

    // hiera3_backend, in the global layer (the only one allowing it).
    let fx = Fixture::new(&[(
        "global/hiera.yaml",
        "version: 5\nhierarchy:\n  - name: Old\n    hiera3_backend: eyaml\n    path: x\n",
    )]);
    let f = lint(&Options {
        root: fx.dir.clone(),
        hiera_config: Some("global/hiera.yaml".into()),
        ..Default::default()
    })
    .unwrap()
    .findings;
    assert_eq!(of(&f, "hiera3-backend"), vec!["global/hiera.yaml:4:5"]);
    assert!(message(&f, "hiera3-backend").contains("eyaml_lookup_key"));
}

#[test]
fn group2_levels_without_files() {
    let fx = Fixture::new(&[("hiera.yaml", HIERA), ("data/common.yaml", "a: 1\n")]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "level-no-files"),
        vec!["hiera.yaml:6:5", "hiera.yaml:8:5"]
    );
    assert_eq!(f[0].severity, Severity::Info);
}

#[test]
fn group3_classes() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("environment.conf", "modulepath = site:modules\n"),
        (
            "site/profile/manifests/base.pp",
            "class profile::base (\n  Array $users = [],\n  $packages = [],\n) {\n  $x = lookup('profile::base::extra')\n}\n",
        ),
        ("site/profile/manifests/web.pp", "class profile::web { }\n"),
        (
            "data/common.yaml",
            "profile::base::users: []\nprofile::base::user: []\nprofile::base::extra: 1\nprofile::bse::users: []\nprofile::base::via_data: 1\nother::thing: 1\nref: \"%{lookup('profile::base::via_data')}\"\n",
        ),
        (
            "site/profile/hiera.yaml",
            "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n",
        ),
        ("site/profile/data/common.yaml", "profile::base::packages: []\nntp::servers: []\n"),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "unknown-class-parameter"),
        vec!["data/common.yaml:2:1"]
    );
    assert!(message(&f, "unknown-class-parameter").contains("did you mean 'profile::base::users'?"));
    assert_eq!(of(&f, "unknown-class"), vec!["data/common.yaml:4:1"]);
    assert!(message(&f, "unknown-class").contains("did you mean 'profile::base::users'?"));
    assert_eq!(
        of(&f, "module-key-outside-namespace"),
        vec!["site/profile/data/common.yaml:2:1"]
    );
}

/// `text` with `fixes` applied (each fix's edits; regions of different fixes do not
/// overlap here), as an editor applies them.
fn apply(text: &str, fixes: &[&Fix]) -> String {
    let lines = hiera_formats::lines::LineIndex::new(text);
    let mut edits: Vec<(usize, usize, &str)> = fixes
        .iter()
        .flat_map(|f| &f.edits)
        .map(|e| {
            (
                lines.offset(e.region.start),
                lines.offset(e.region.end),
                e.new_text.as_str(),
            )
        })
        .collect();
    edits.sort();
    let mut out = text.to_string();
    for (a, b, new) in edits.into_iter().rev() {
        out.replace_range(a..b, new);
    }
    out
}

/// A rule that knows the fix gives it: the finding's region is the key or scalar, and the
/// edit replaces exactly it (the whole `ntp::serverz`, not up to its first `:`; the `1:30`
/// value left alone by the rename and quoted whole by its own fix).
#[test]
fn fixes_rename_keys_and_quote_scalars() {
    let common = "ntp::serverz: 1:30\n'ntp::iburts': yes\nntp::confg::x: 1\n\"ntp::x\": [a]\nntp::nothing_like_it: 1\n";
    let hiera = format!("{HIERA}  - name: Json\n    data_hash: json_data\n    path: common.json\n");
    let fx = Fixture::new(&[
        ("hiera.yaml", &hiera),
        (
            "modules/ntp/manifests/init.pp",
            "class ntp (\n  $servers = [],\n  $iburst = true,\n  $y = 1,\n) {}\n",
        ),
        (
            "modules/ntp/manifests/config.pp",
            "class ntp::config ($x = 1) {}\n",
        ),
        ("data/common.yaml", common),
        ("data/common.json", "{\"ntp::serverz\": 1}\n"),
    ]);
    let f = fx.lint();
    let at = |rule: &str, line: usize| {
        f.iter()
            .find(|x| x.rule == rule && x.file == "data/common.yaml" && x.line() == line)
            .unwrap_or_else(|| panic!("no {rule} on line {line}: {f:#?}"))
    };
    let rename = at("unknown-class-parameter", 1);
    assert_eq!(
        rename.region,
        Region::on_line(Pos { line: 1, column: 1 }, 12)
    );
    let fix = rename.fix.as_ref().unwrap();
    assert_eq!(fix.title, "Rename to 'ntp::servers'");
    let quote = at("yaml11-value", 1);
    assert_eq!(
        quote.region,
        Region::on_line(
            Pos {
                line: 1,
                column: 15
            },
            4
        )
    );
    assert_eq!(quote.fix.as_ref().unwrap().title, "Quote '1:30' (a string)");
    assert_eq!(
        apply(common, &[fix]).lines().next(),
        Some("ntp::servers: 1:30")
    );
    assert_eq!(
        apply(common, &[fix, quote.fix.as_ref().unwrap()])
            .lines()
            .next(),
        Some("ntp::servers: '1:30'")
    );
    // A quoted key keeps its quotes.
    let quoted = at("unknown-class-parameter", 2);
    assert_eq!(
        apply(common, &[quoted.fix.as_ref().unwrap()])
            .lines()
            .nth(1),
        Some("'ntp::iburst': yes")
    );
    let quoted = at("unknown-class-parameter", 4);
    assert_eq!(
        apply(common, &[quoted.fix.as_ref().unwrap()])
            .lines()
            .nth(3),
        Some("\"ntp::y\": [a]")
    );
    let yes = at("yaml11-value", 2).fix.as_ref().unwrap();
    assert_eq!(
        apply(common, &[yes]).lines().nth(1),
        Some("'ntp::iburts': 'yes'")
    );
    // A misspelt class.
    let class = at("unknown-class", 3).fix.as_ref().unwrap();
    assert_eq!(class.title, "Rename to 'ntp::config::x'");
    assert_eq!(
        apply(common, &[class]).lines().nth(2),
        Some("ntp::config::x: 1")
    );
    // No suggestion, no fix; the region is still the key's.
    let none = at("unknown-class-parameter", 5);
    assert_eq!(none.fix, None);
    assert_eq!(none.region, Region::on_line(Pos { line: 5, column: 1 }, 20));
    // JSON: the key in its quotes.
    let json = f
        .iter()
        .find(|x| x.rule == "unknown-class-parameter" && x.file == "data/common.json")
        .unwrap();
    assert_eq!(json.region, Region::on_line(Pos { line: 1, column: 2 }, 14));
    let text = std::fs::read_to_string(fx.dir.join("data/common.json")).unwrap();
    assert_eq!(
        apply(&text, &[json.fix.as_ref().unwrap()]),
        "{\"ntp::servers\": 1}\n"
    );
}

/// A manifest with a Latin-1 byte: Puppet refuses it, an error at the byte; its classes
/// still judge the data (not "unused", not skipped).
#[test]
fn group3_manifest_not_utf8() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("environment.conf", "modulepath = site\n"),
        ("data/common.yaml", "foo::x: str\n"),
    ]);
    let pp = fx.dir.join("site/foo/manifests/init.pp");
    std::fs::create_dir_all(pp.parent().unwrap()).unwrap();
    std::fs::write(&pp, b"# caf\xe9\nclass foo (Integer $x) {}\n").unwrap();
    let f = fx.lint();
    assert_eq!(
        of(&f, "manifest-not-utf8"),
        vec!["site/foo/manifests/init.pp:1:6"]
    );
    assert!(message(&f, "manifest-not-utf8").contains("0xE9"), "{f:?}");
    assert_eq!(
        of(&f, "parameter-type-mismatch"),
        vec!["data/common.yaml:1:1"]
    );
    assert!(f.iter().all(|x| x.rule != "unused-key"), "{f:?}");
    assert!(f.iter().any(|x| x.severity == Severity::Error), "{f:?}");
}

#[test]
fn group4_interpolations() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "a: \"%{foo('x')}\"\nb: \"%{lookup('nope')}\"\nc: \"x %{alias('d')}\"\nd: [1]\ne: \"%{alias('d')}\"\nf: \"%{lookup('g')}\"\ng: \"%{hiera('f')}\"\nh: \"%{::osfamily}\"\ni: \"%{facts.os.family} %{literal('%')} %{lookup('d.0')}\"\n",
        ),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "interpolation-unknown-function"),
        vec!["data/common.yaml:1:5"]
    );
    assert_eq!(
        of(&f, "interpolation-undefined-key"),
        vec!["data/common.yaml:2:5"]
    );
    assert_eq!(of(&f, "alias-not-alone"), vec!["data/common.yaml:3:7"]);
    assert_eq!(
        of(&f, "interpolation-recursion"),
        vec!["data/common.yaml:6:1"]
    );
    assert!(message(&f, "interpolation-recursion").contains("'f' → 'g' → 'f'"));
    assert_eq!(of(&f, "legacy-fact"), vec!["data/common.yaml:8:5"]);
    assert!(message(&f, "legacy-fact").contains("%{facts.os.family}"));
    assert_eq!(
        f.iter().filter(|x| x.rule != "level-no-files").count(),
        5,
        "{f:#?}"
    );
}

#[test]
fn group4_facts_of_the_fleet() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "a: \"%{facts.os.family}\"\nb: \"%{facts.role}\"\nc: \"%{datacenter}\"\nd: \"%{trusted.certname} %{environment}\"\ne: \"%{::os.name}\"\n",
        ),
        ("facts/n1.yaml", "os: {family: Debian, name: Debian}\n"),
    ]);
    let f = fx.lint_fleet();
    assert_eq!(of(&f, "unknown-fact"), vec!["data/common.yaml:2:5"]);
    assert_eq!(of(&f, "undefined-variable"), vec!["data/common.yaml:3:5"]);
}

#[test]
fn group5_lookup_options() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "lookup_options:\n  a:\n    merge: deep\n  nope:\n    merge: unique\n  '^zz::':\n    merge: hash\n  '^b(':\n    merge: hash\n  c:\n    merge: deeper\n  d:\n    convert_to: 'Array[String'\n  e:\n    merge: first\n    convert_to: Sensitive\n    mrege: deep\n  f: 1\na: {}\nb: 1\nc: []\nd: []\ne: x\nf: 1\n",
        ),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "lookup-options-undefined-key"),
        vec!["data/common.yaml:4:3"]
    );
    assert_eq!(
        of(&f, "lookup-options-pattern-unused"),
        vec!["data/common.yaml:6:3"]
    );
    assert_eq!(
        of(&f, "lookup-options-invalid-pattern"),
        vec!["data/common.yaml:8:3"]
    );
    assert_eq!(
        of(&f, "lookup-options-merge"),
        vec!["data/common.yaml:11:5"]
    );
    assert_eq!(
        of(&f, "lookup-options-convert-to"),
        vec!["data/common.yaml:13:5"]
    );
    assert_eq!(
        of(&f, "lookup-options-unknown-option"),
        vec!["data/common.yaml:17:5"]
    );
    assert_eq!(
        of(&f, "lookup-options-not-a-hash"),
        vec!["data/common.yaml:18:3"]
    );
}

/// Findings point where the file's own reader puts the key (libyaml's marks, the json gem's
/// offsets, ruby-hocon's fields): inside flow mappings, in JSON and HOCON files (not at a
/// key of the same name elsewhere), at the definition Psych keeps of a key given twice, and
/// at the alias that brings a key in through `<<`.
#[test]
fn positions_come_from_the_readers() {
    let hiera = "version: 5\ndefaults:\n  datadir: data\n  data_hash: yaml_data\nhierarchy:\n  - name: Y\n    path: common.yaml\n  - name: J\n    data_hash: json_data\n    path: common.json\n  - name: H\n    data_hash: hocon_data\n    path: common.conf\n";
    let fx = Fixture::new(&[
        ("hiera.yaml", hiera),
        (
            "data/common.yaml",
            "base: &b\n  merge: bogus\nlookup_options:\n  a: {merge: deep}\nlookup_options:\n  a: {merge: deeper}\n  b: {convert_to: 5}\n  c:\n    <<: *b\na: 1\nb: 1\nc: 1\n",
        ),
        (
            "data/common.json",
            "{\n  \"x\": {\"lookup_options\": 1},\n  \"lookup_options\": {\n    \"j\": {\"merge\": \"bogus\"}\n  },\n  \"j\": 1\n}\n",
        ),
        (
            "data/common.conf",
            "a { lookup_options = 1 }\nlookup_options {\n  h { merge = bogus }\n}\nh = 1\n",
        ),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "lookup-options-merge"),
        vec![
            "data/common.conf:3:7",
            "data/common.json:4:11",
            "data/common.yaml:6:7",
            "data/common.yaml:9:9",
        ]
    );
    assert_eq!(
        of(&f, "lookup-options-convert-to"),
        vec!["data/common.yaml:7:7"]
    );
}

#[test]
fn group6_fleet() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("data/nodes/n1.yaml", "a: node\nsame: 1\n"),
        ("data/nodes/gone.yaml", "a: x\n"),
        ("data/os/Debian.yaml", "a: debian\nsame: 1\nm: [x]\n"),
        ("data/os/RedHat.yaml", "a: redhat\n"),
        (
            "data/common.yaml",
            "lookup_options:\n  m:\n    merge: unique\na: common\nsame: 1\nm: {x: 1}\n",
        ),
        // The certname is the facts' (`clientcert`), as batch mode takes it: a facts file
        // without one is a node of that name with no certname.
        ("facts/n1.yaml", "clientcert: n1\nos: {family: Debian}\n"),
        ("facts/n2.yaml", "clientcert: n2\nos: {family: RedHat}\n"),
    ]);
    let f = fx.lint_fleet();
    assert_eq!(of(&f, "unreached-file"), vec!["data/nodes/gone.yaml:1:1"]);
    // n1 reads node, Debian, common: Debian's `same` equals common's.
    // n1 reads its node file, Debian, common; n2 reads RedHat, common. The node file's
    // `same` is what Debian gives; Debian's `same` is never used (the node file is above).
    assert_eq!(of(&f, "redundant-value"), vec!["data/nodes/n1.yaml:2:1"]);
    // common's `a` is under the node file for n1 and under RedHat for n2; common's `same`
    // is used by n2.
    assert_eq!(
        of(&f, "shadowed-key"),
        vec![
            "data/common.yaml:4:1",
            "data/os/Debian.yaml:1:1",
            "data/os/Debian.yaml:2:1"
        ]
    );
    assert_eq!(of(&f, "lookup-fails"), vec!["data/os/Debian.yaml:3:1"]);
    assert!(message(&f, "lookup-fails").contains("node n1"));
}

/// Every file the lint reads goes through [`Options::fs`]: an editor's unsaved buffers (the
/// workspace's overlays) are what the rules judge, a node's globbed files and the settings
/// file among them.
#[test]
fn the_rules_read_through_the_given_file_system() {
    let fx = Fixture::new(&[
        (
            "hiera.yaml",
            "version: 5\nhierarchy:\n  - name: Roles\n    glob: \"roles/%{facts.role}/*.yaml\"\n  - name: Common\n    path: common.yaml\n",
        ),
        ("data/roles/web/a.yaml", "a: 1\n"),
        ("data/common.yaml", "c: 1\n"),
        ("facts/n1.yaml", "role: web\n"),
    ]);
    let root = fx.dir.canonicalize().unwrap();
    let ws = hiera_engine::Workspace::open(
        hiera_engine::environment::EnvOptions {
            cwd: root.clone(),
            ..Default::default()
        },
        Default::default(),
    )
    .unwrap();
    // A new file the editor has not saved, which the node's glob reaches.
    ws.set_overlay(
        &root.join("data/roles/web/new.yaml"),
        Some("b: yes\n".into()),
    );
    let opts = Options {
        root: root.clone(),
        facts_dir: Some(root.join("facts")),
        fs: Some(ws.fs()),
        ..Default::default()
    };
    let f = lint(&opts).unwrap().findings;
    assert_eq!(of(&f, "yaml11-value"), vec!["data/roles/web/new.yaml:1:4"]);
    assert_eq!(of(&f, "unreached-file"), Vec::<String>::new(), "{f:#?}");
    // The settings file as the editor holds it.
    ws.set_overlay(
        &root.join(".hiera-lookup.toml"),
        Some("[lint]\ndisable = [\"yaml11-value\"]\n".into()),
    );
    let f = lint(&opts).unwrap().findings;
    assert_eq!(of(&f, "yaml11-value"), Vec::<String>::new());
}

#[test]
fn group7_hygiene() {
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "::ntp::servers: []\nmode: 0755\nenabled: no\nwhen: 1:30\nsize: 1e3\nversion: 1.10\nok: '0755'\nfine: true\nlist:\n  - on\n  - off # hiera-lookup: disable=yaml11-value\nh:\n  x: 1\n  x: 2\nk:\tv\non: 1\n",
        ),
        ("data/os/Debian.yaml", "x: 1\nx: 2\n"),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "leading-colons"), vec!["data/common.yaml:1:1"]);
    assert_eq!(
        of(&f, "yaml11-value"),
        vec![
            "data/common.yaml:2:7",
            "data/common.yaml:3:10",
            "data/common.yaml:4:7",
            "data/common.yaml:5:7",
            "data/common.yaml:6:10",
            "data/common.yaml:10:5",
            "data/common.yaml:16:1"
        ]
    );
    assert!(f
        .iter()
        .any(|x| x.message.contains("the integer 493 (octal)")));
    assert!(f.iter().any(|x| x.message.contains("the float 1.1")));
    assert_eq!(
        of(&f, "duplicate-key"),
        vec!["data/common.yaml:14:3", "data/os/Debian.yaml:2:1"]
    );
    assert_eq!(of(&f, "tab"), vec!["data/common.yaml:15:3"]);
}

#[test]
fn disabling_rules() {
    let files = [
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "# hiera-lookup: disable=duplicate-key\na: no\na: yes\nb: on # hiera-lookup: disable=yaml11-value\n",
        ),
        (".hiera-lookup.toml", "[lint]\ndisable = [\"level-no-files\"]\n"),
    ];
    let fx = Fixture::new(&files);
    let f = fx.lint();
    // Line 2's comment-only line above it covers `a: no` (line 2) only.
    assert_eq!(of(&f, "duplicate-key"), vec!["data/common.yaml:3:1"]);
    assert_eq!(
        of(&f, "yaml11-value"),
        vec!["data/common.yaml:2:4", "data/common.yaml:3:4"]
    );
    assert_eq!(of(&f, "level-no-files"), Vec::<String>::new());

    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "# hiera-lookup: disable-file=yaml11-value\na: no\n",
        ),
        (".hiera-lookup.toml", "[lint]\ndisable = [\"nope\"]\n"),
    ]);
    let err = lint(&Options {
        root: fx.dir.clone(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("unknown rule 'nope'"), "{err}");
}

#[test]
fn missing_repo_is_an_error() {
    let err = lint(&Options {
        root: PathBuf::from("/nonexistent/repo"),
        ..Default::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/repo"));
}

#[test]
fn group7_bom() {
    // Puppet 8.10 answers `a` and misses `b` here: libyaml counts the BOM as a column.
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("data/common.yaml", "\u{feff}a: 1\nb: 2\n"),
        ("data/os/Debian.yaml", "\u{feff}a: 1\n"),
        ("data/nodes/n1.yaml", "a: 1\n"),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, "bom"),
        vec!["data/common.yaml:1:1", "data/os/Debian.yaml:1:1"]
    );
    assert!(
        f[0].message.contains("the 1 other top-level key"),
        "{}",
        f[0].message
    );
    assert!(!f[1].message.contains("other top-level"));
}

#[test]
fn inline_disable_comments() {
    let d = repo::InlineDisables::parse(
        "# hiera-lookup: disable=tab\n# a reason\na: 1\nb: 2 # hiera-lookup: disable=bom,yaml11-value\n\n# hiera-lookup: disable=tab\n\nc: 3\n",
    );
    let f = |line, rule| Finding {
        file: String::new(),
        region: Region::at(line, 1),
        severity: Severity::Warning,
        rule,
        message: String::new(),
        fix: None,
    };
    assert!(d.covers(&f(3, "tab")));
    assert!(!d.covers(&f(3, "bom")));
    assert!(d.covers(&f(4, "bom")));
    assert!(d.covers(&f(4, "yaml11-value")));
    assert!(!d.covers(&f(4, "tab")));
    // A blank line ends the comment's reach.
    assert!(!d.covers(&f(8, "tab")));
    let d = repo::InlineDisables::parse("a: 1\n# hiera-lookup: disable-file=all\n");
    assert!(d.covers(&f(1, "duplicate-key")));
}

const NTP_CLASS: &str = "class ntp (
  Boolean $iburst = true,
  Optional[String] $opt = 'x',
  String $nodef,
  Optional[String] $optnodef,
  String $withdef = 'd',
  Sensitive[String] $secret = Sensitive('s'),
  Sensitive[String] $secret2 = Sensitive('s'),
  Array[String] $servers = [],
  Ntp::Port $port = 123,
  Foo::Unknown $unknown = 1,
  Integer $conv = 1,
  $any = 1,
  Hash[String, Integer] $limits = {},
) {}
";

fn ntp_repo(common: &str, debian: &str) -> Fixture {
    Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("environment.conf", "modulepath = site\n"),
        ("site/ntp/manifests/init.pp", NTP_CLASS),
        (
            "site/ntp/types/port.pp",
            "type Ntp::Port = Integer[1, 65535]\n",
        ),
        ("data/common.yaml", common),
        ("data/os/Debian.yaml", debian),
        ("facts/n1.yaml", "os: {family: Debian}\niburst: maybe\n"),
        ("facts/n2.yaml", "os: {family: RedHat}\n"),
        ("facts/n3.yaml", "os: {family: RedHat}\n"),
    ])
}

const NTP_COMMON: &str = "lookup_options:
  ntp::secret2:
    convert_to: Sensitive
  ntp::servers:
    merge: unique
  ntp::conv:
    convert_to: Integer
ntp::iburst: 'yes'
ntp::opt: ~
ntp::nodef: ~
ntp::optnodef: ~
ntp::withdef: ~
ntp::secret: plain
ntp::secret2: plain
ntp::servers: a
ntp::port: 70000
ntp::unknown: x
ntp::conv: '12'
ntp::any: [1]
ntp::limits: {a: 1, b: two}
";

/// Written values against the declared types: Boolean, undef with and without a default,
/// Optional, Sensitive with and without convert_to, a merged key (not judged), an alias, a
/// type defined nowhere (not judged), untyped, a Hash entry.
#[test]
fn group3_parameter_types_written() {
    let fx = ntp_repo(NTP_COMMON, "ntp::iburst: \"%{facts.iburst}\"\n");
    let f = fx.lint();
    assert_eq!(
        of(&f, "parameter-type-mismatch"),
        vec![
            "data/common.yaml:8:1",
            "data/common.yaml:10:1",
            "data/common.yaml:13:1",
            "data/common.yaml:16:1",
            "data/common.yaml:20:1",
        ],
        "{f:#?}"
    );
    let msgs: Vec<&str> = f
        .iter()
        .filter(|x| x.rule == "parameter-type-mismatch")
        .map(|x| x.message.as_str())
        .collect();
    assert_eq!(
        msgs[0],
        "'ntp::iburst' is 'yes' (a String), which 'Boolean $iburst = true' (site/ntp/manifests/init.pp:2:11) does not take: Puppet fails every node that gets it: Class[Ntp]: parameter 'iburst' expects a Boolean value, got String"
    );
    assert!(
        msgs[1].contains("'ntp::nodef' is ~ (undef), and 'String $nodef' (site/ntp/manifests/init.pp:4:10) has no default")
            && msgs[1].ends_with("Class[Ntp]: parameter 'nodef' expects a String value, got Undef"),
        "{}",
        msgs[1]
    );
    assert!(
        msgs[2].ends_with("parameter 'secret' expects a Sensitive[String] value, got String"),
        "{}",
        msgs[2]
    );
    assert!(
        msgs[3].contains(
            "parameter 'port' expects an Integer[1, 65535] value, got Integer[70000, 70000]"
        ),
        "{}",
        msgs[3]
    );
    assert!(
        msgs[4].contains("parameter 'limits' entry 'b' expects an Integer value, got String"),
        "{}",
        msgs[4]
    );
    assert_eq!(f[0].severity, Severity::Error);
}

/// With a fleet: the value each node gets after interpolation and merges, at the file it
/// comes from, naming the nodes; a written mismatch says which nodes get it.
#[test]
fn group3_parameter_types_fleet() {
    let fx = ntp_repo(
        NTP_COMMON,
        "ntp::iburst: \"%{facts.iburst}\"\nntp::servers: [1]\nntp::port: 80\n",
    );
    let f = fx.lint_fleet();
    let mine: Vec<&Finding> = f
        .iter()
        .filter(|x| x.rule == "parameter-type-mismatch")
        .collect();
    let at = |file: &str, line: usize| {
        mine.iter()
            .find(|x| x.file == file && x.line() == line)
            .map(|x| x.message.as_str())
            .unwrap_or_else(|| panic!("no finding at {file}:{line} in {mine:#?}"))
    };
    // n1 (Debian) gets 'maybe' through the interpolation, and a merged [1, 'a'].
    assert_eq!(
        at("data/os/Debian.yaml", 1),
        "the value of 'ntp::iburst' that node n1 of the fleet gets from here (after merges and interpolation) is one 'Boolean $iburst = true' (site/ntp/manifests/init.pp:2:11) does not take: Puppet fails: Class[Ntp]: parameter 'iburst' expects a Boolean value, got String"
    );
    assert!(
        at("data/os/Debian.yaml", 2)
            .contains("parameter 'servers' index 0 expects a String value, got Integer"),
        "{}",
        at("data/os/Debian.yaml", 2)
    );
    // The written 'yes' reaches n2 and n3; the written 70000 is overridden for n1 and
    // reaches n2 and n3; `nodef: ~` every node.
    assert!(at("data/common.yaml", 8).ends_with("(2 nodes (n2, n3) of the fleet get it)"));
    assert!(at("data/common.yaml", 10).ends_with("(3 nodes (n1, n2, n3) of the fleet get it)"));
    assert!(at("data/common.yaml", 16).ends_with("(2 nodes (n2, n3) of the fleet get it)"));
    assert_eq!(mine.len(), 7, "{mine:#?}");
}

/// Without a fleet, what only a node can judge is not judged; a type the repo does not
/// define, a convert_to that fails, and conflicting convert_to are not judged either.
#[test]
fn group3_parameter_types_not_judged() {
    let fx = ntp_repo(
        "lookup_options:\n  ntp::conv:\n    convert_to: Integer\n  '^ntp::w':\n    convert_to: Sensitive\nntp::conv: 'twelve'\nntp::unknown: [x]\nntp::withdef: 1\n",
        "lookup_options:\n  ntp::withdef:\n    convert_to: Integer\nntp::iburst: \"%{facts.iburst}\"\n",
    );
    let f = fx.lint();
    assert_eq!(
        of(&f, "parameter-type-mismatch"),
        Vec::<String>::new(),
        "{f:#?}"
    );
}

fn unused_repo(puppetfile: bool) -> Fixture {
    let mut files = vec![
        ("hiera.yaml", HIERA),
        ("environment.conf", "modulepath = site:modules
"),
        (
            "manifests/site.pp",
            "class role::web {}
node default { lookup('classes', Array[String], 'unique', []).include }
",
        ),
        (
            "site/profile/manifests/base.pp",
            "class profile::base (Array $users = []) {
  $a = lookup('site_wide')
  $b = lookup(\"profile::dyn::${a}\")
}
",
        ),
        (
            "site/profile/templates/motd.epp",
            "<%= lookup('motd_text') %>
",
        ),
        // A vendored module whose classes are in another namespace.
        ("modules/vendored/manifests/init.pp", "class othername::x ($a = 1) {}
"),
        (
            "data/common.yaml",
            "lookup_options:\n  opts_only:\n    merge: first\n  '^pat':\n    merge: first\nclasses: []\nsite_wide: 1\norphan: 1\nref_target: 1\nref: \"%{lookup('ref_target')}\"\nopts_only: 1\nprofile::base::users: []\nprofile::base::nope: 1\nprofile::dyn::x: 1\nrole::web::x: 1\nrole::other::y: 1\nexternal::thing: 1\nothername::y::z: 1\nmotd_text: hi\npattern_only: 1\n::colons: 1\n",
        ),
    ];
    if puppetfile {
        files.push((
            "Puppetfile",
            "mod 'someone/vendored', '1.0.0'
",
        ));
    }
    Fixture::new(&files)
}

/// unused-key: keys without a namespace nothing uses, and namespaced keys of the repo's own
/// classes' namespaces that the class rules do not already report; vendored namespaces and
/// namespaces without code are left alone.
#[test]
fn group3_unused_keys() {
    let fx = unused_repo(true);
    let f = fx.lint();
    let lines: Vec<String> = of(&f, "unused-key");
    // orphan (8), ref (10: nothing reads `ref` itself), role::other::y (16), pattern_only (20).
    assert_eq!(
        lines,
        vec![
            "data/common.yaml:8:1",
            "data/common.yaml:10:1",
            "data/common.yaml:16:1",
            "data/common.yaml:20:1"
        ],
        "{f:#?}"
    );
    assert_eq!(
        message(&f, "unused-key"),
        "'orphan' is not a class parameter (it has no namespace), and no lookup() in the manifests, interpolation or lookup_options uses it: nothing reads this value"
    );
    assert!(f
        .iter()
        .any(|x| x.rule == "unused-key" && x.message.contains("the repo's 'role' classes")));
    // Reported once, by the class rules.
    assert_eq!(
        of(&f, "unknown-class-parameter"),
        vec!["data/common.yaml:13:1", "data/common.yaml:15:1"]
    );
    assert_eq!(
        f.iter().find(|x| x.rule == "unused-key").unwrap().severity,
        Severity::Warning
    );

    // Without the Puppetfile, the module's classes are the repo's own: `othername::y::z` too.
    let fx = unused_repo(false);
    let f = fx.lint();
    assert!(
        of(&f, "unused-key").contains(&"data/common.yaml:18:1".to_string()),
        "{f:#?}"
    );

    // No class in the repo's own code: the rule is off (the code is elsewhere).
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        (
            "data/common.yaml",
            "orphan: 1
",
        ),
        (
            "manifests/site.pp",
            "node default { }
",
        ),
    ]);
    assert_eq!(of(&fx.lint(), "unused-key"), Vec::<String>::new());
}

/// A data file that does not parse is one finding: what it would have defined is unknown,
/// not absent, so interpolations and lookup_options naming its keys are not reported as
/// looking up keys nobody defines (one broken line used to cascade into dozens).
#[test]
fn a_file_that_does_not_parse_is_one_finding() {
    let hiera = "version: 5\nhierarchy:\n  - name: OS\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: Common\n    path: common.yaml\n  - name: Extra\n    path: extra.json\n    data_hash: json_data\n";
    let fx = Fixture::new(&[
        ("hiera.yaml", hiera),
        (
            "data/common.yaml",
            "lookup_options:\n  b:\n    merge: deep\na: \"%{alias('b')}\"\nm: \"%{lookup('c')}\"\nb: 1\nc: 2\ndefaults::x: [a, b\n",
        ),
        ("data/os/Debian.yaml", "z: \"%{lookup('nowhere')}\"\n"),
    ]);
    let f = fx.lint();
    assert_eq!(of(&f, "data-syntax").len(), 1, "{f:#?}");
    assert!(of(&f, "lookup-options-undefined-key").is_empty(), "{f:#?}");
    // A key no file writes is still one no file defines.
    assert_eq!(
        of(&f, "interpolation-undefined-key"),
        vec!["data/os/Debian.yaml:1:5"]
    );
    // A JSON file that does not parse: its keys cannot be read off its text.
    std::fs::write(fx.dir.join("data/extra.json"), "{\"nowhere\": 1,").unwrap();
    let f = fx.lint();
    assert_eq!(of(&f, "data-syntax").len(), 2, "{f:#?}");
    assert!(of(&f, "interpolation-undefined-key").is_empty(), "{f:#?}");
}

#[test]
fn openvox9_compat() {
    let rule = "openvox9-compat";
    // An environment Puppet 8 reads through the default hierarchy: its data is lost in OpenVox 9.
    let fx = Fixture::new(&[
        (
            "environment.conf",
            "modulepath = modules\nenvironment_data_provider = 'hiera'\n",
        ),
        ("data/common.yaml", "k: v\n"),
        (
            "modules/legacy/lib/puppet/indirector/data_binding/ldap.rb",
            "# a terminus\n",
        ),
        ("modules/legacy/manifests/init.pp", "class legacy {}\n"),
    ]);
    let f = fx.lint();
    assert_eq!(
        of(&f, rule),
        [
            "environment.conf:2:1",
            "modules/legacy/lib/puppet/indirector/data_binding/ldap.rb:1:1"
        ]
    );
    let m = message(&f, rule);
    assert!(
        m.starts_with("environment_data_provider = hiera: OpenVox 9 no longer reads"),
        "{m}"
    );
    assert!(m.contains("add a version 5 hiera.yaml"), "{m}");
    // Behind a version 5 hiera.yaml the setting is dead already.
    let fx = Fixture::new(&[
        ("environment.conf", "environment_data_provider = function\n"),
        ("hiera.yaml", HIERA),
        ("data/common.yaml", "k: v\n"),
    ]);
    let f = fx.lint();
    assert!(
        message(&f, rule).contains("Puppet 8 already ignores it"),
        "{f:?}"
    );
    // puppet.conf's data-binding settings, in any section.
    let fx = Fixture::new(&[
        ("hiera.yaml", HIERA),
        ("data/common.yaml", "k: v\n"),
        (
            "puppet.conf",
            "[main]\ncertname = x\n[server]\n  data_binding_terminus = none\n",
        ),
    ]);
    let f = lint(&Options {
        root: fx.dir.clone(),
        puppet_conf: Some(fx.dir.join("puppet.conf")),
        ..Default::default()
    })
    .unwrap()
    .findings;
    assert_eq!(of(&f, rule), ["puppet.conf:4:3"]);
    assert!(
        message(&f, rule).contains("the global hiera.yaml this setting turns off is read there")
    );
    // Nothing of the kind: no finding.
    assert_eq!(of(&fx.lint(), rule), Vec::<String>::new());
}
