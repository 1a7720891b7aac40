//! `hiera-lookup diff` on real history: a git repository made here from the realworld control
//! repo (tests/conformance/layers/realworld: nine real modules' data, real facterdb fact
//! sets), with a commit per kind of change. Every diff is checked against batch lookups run
//! in checked-out copies of both sides: it must report exactly the node × key answers that
//! differ, with the values each side gives, and skip only keys whose answers are unchanged.

use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hiera-lookup"))
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/layers/realworld")
}

use crate::scratch_tree;
use scratch_tree::Tree;

fn temp(name: &str) -> Tree {
    scratch_tree::tree("diff", name, &[])
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The realworld fact sets, each its own node: they all say `clientcert: foo.example.com`
/// (for the conformance recordings), so each is renamed after its file here.
fn distinct_facts(dir: &Path) -> PathBuf {
    let out = dir.join("facts");
    std::fs::create_dir_all(&out).unwrap();
    // Five of them (Debian, Ubuntu, RedHat, CentOS, FreeBSD) keep the test quick.
    for name in [
        "facter4.11-debian-12-x86_64",
        "facter4.11-ubuntu-24.04-x86_64",
        "facter4.10-redhat-9-x86_64",
        "facter3.14-centos-7-x86_64",
        "facter4.10-freebsd-14-x86_64",
    ] {
        let p = fixture().join(format!("facts/{name}.json"));
        let mut v: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        v["clientcert"] = Json::String(stem.clone());
        std::fs::write(out.join(p.file_name().unwrap()), v.to_string()).unwrap();
    }
    out
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let p = repo.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

/// The answers of a checked-out copy of `rev`: (key, node) → the JSON value, "miss", or
/// "error: …" with paths relative to the copy.
fn answers(
    repo: &Path,
    rev: &str,
    facts: &Path,
    scratch: &Path,
) -> BTreeMap<(String, String), String> {
    let dest = checkout(repo, rev, scratch);
    batch_answers(&dest, facts, &[])
}

/// A plain copy of `rev` in `scratch`.
fn checkout(repo: &Path, rev: &str, scratch: &Path) -> PathBuf {
    let dest = scratch.join(format!(
        "checkout-{}",
        git(repo, &["rev-parse", "--short", rev])
    ));
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::create_dir_all(&dest).unwrap();
    // `git archive | tar -x`: a plain copy of the revision, nothing of the repository's state.
    let archive = scratch.join("rev.tar");
    git(repo, &["archive", "-o", archive.to_str().unwrap(), rev]);
    let ok = Command::new("tar")
        .args([
            "-xf",
            archive.to_str().unwrap(),
            "-C",
            dest.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    dest
}

/// Batch lookups of `keys` (every key the node sees when empty) in `dir`.
fn batch_answers(dir: &Path, facts: &Path, keys: &[String]) -> BTreeMap<(String, String), String> {
    let mut c = bin();
    c.current_dir(dir)
        .args(["--facts-dir", facts.to_str().unwrap()]);
    if keys.is_empty() {
        c.arg("--all");
    } else {
        c.args(keys);
    }
    let o = c.output().unwrap();
    let root = format!("{}/", std::fs::canonicalize(dir).unwrap().display());
    let mut out = BTreeMap::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let v: Json = serde_json::from_str(line).unwrap();
        let (node, key) = (v["node"].as_str().unwrap(), v["key"].as_str().unwrap());
        let a = if let Some(e) = v.get("error") {
            format!("error: {}", e.as_str().unwrap().replace(&root, ""))
        } else if v["found"] == Json::Bool(true) {
            v["value"].to_string()
        } else {
            "miss".to_string()
        };
        out.insert((key.to_string(), node.to_string()), a);
    }
    out
}

/// What a diff reports: (key, node) → (before, after) as in [`answers`] (`None` when the
/// group reports edits only).
type Reported = BTreeMap<(String, String), Option<(String, String)>>;

fn reported(report: &Json) -> Reported {
    let side = |s: &Json| -> String {
        if let Some(e) = s.get("error") {
            format!("error: {}", e.as_str().unwrap())
        } else if s["found"] == Json::Bool(true) {
            s["value"].to_string()
        } else {
            "miss".into()
        }
    };
    let mut out = BTreeMap::new();
    for c in report["changes"].as_array().unwrap() {
        let key = c["key"].as_str().unwrap();
        for g in c["groups"].as_array().unwrap() {
            let ba = g.get("before").map(|b| (side(b), side(&g["after"])));
            for n in g["nodes"].as_array().unwrap() {
                out.insert(
                    (key.to_string(), n.as_str().unwrap().to_string()),
                    ba.clone(),
                );
            }
        }
    }
    out
}

fn run_diff(dir: &Path, args: &[&str]) -> (i32, Json) {
    let o = bin()
        .current_dir(dir)
        .arg("diff")
        .args(args)
        .output()
        .unwrap();
    let code = o.status.code().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // 2 after the report: the change makes lookups fail (issue 26, item 23).
    let new_errors =
        code == 2 && err.contains("lookup") && err.contains(" fail (see the report above)");
    assert!(
        code == 0 || code == 1 || new_errors,
        "diff {args:?} exited {code}: {err}"
    );
    let v: Json = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    assert_eq!(
        code == 1 || new_errors,
        !v["changes"].as_array().unwrap().is_empty()
    );
    (code, v)
}

/// The diff of `base` and `head` must list exactly the answers that differ between
/// checked-out copies, with each side's answer.
fn check(repo: &Path, facts: &Path, scratch: &Path, base: &str, head: &str) -> Json {
    let facts_s = facts.to_str().unwrap();
    let (_, report) = run_diff(
        repo,
        &[
            base,
            head,
            "--facts-dir",
            facts_s,
            "--all",
            "--format",
            "json",
        ],
    );
    // Every key either side sees, looked up on both sides (a key only one side lists may
    // still fail on the other, where a file it would be in does not parse).
    let (da, db) = (checkout(repo, base, scratch), checkout(repo, head, scratch));
    // Each node's keys: those it sees on either side.
    let seen: BTreeSet<(String, String)> = batch_answers(&da, facts, &[])
        .into_keys()
        .chain(batch_answers(&db, facts, &[]).into_keys())
        .collect();
    let union: BTreeSet<&String> = seen.iter().map(|(k, _)| k).collect();
    let union: Vec<String> = union.into_iter().cloned().collect();
    let a = batch_answers(&da, facts, &union);
    let b = batch_answers(&db, facts, &union);
    let mut expected = BTreeMap::new();
    for k in &seen {
        let (x, y) = (&a[k], &b[k]);
        if x != y {
            expected.insert(k.clone(), (x.clone(), y.clone()));
        }
    }
    let got = reported(&report);
    let only_got: Vec<_> = got
        .keys()
        .filter(|k| !expected.contains_key(*k))
        .take(5)
        .collect();
    let only_expected: Vec<_> = expected
        .iter()
        .filter(|(k, _)| !got.contains_key(*k))
        .take(5)
        .collect();
    assert!(
        only_got.is_empty() && only_expected.is_empty(),
        "{base}..{head}: reported {} changes, lookups differ in {}; only reported: {only_got:?}; only in lookups: {only_expected:?}",
        got.len(),
        expected.len()
    );
    for (k, ba) in &got {
        if let Some(ba) = ba {
            assert_eq!(ba, &expected[k], "{base}..{head}: {k:?}");
        }
    }
    // Looking every key up on every node finds nothing more than the analysis let through.
    if !report["recomputed_everything"].is_null() && report["nodes_skipped"] == 0 {
        return report;
    }
    let (_, all) = run_diff(
        repo,
        &[
            base,
            head,
            "--facts-dir",
            facts_s,
            "--all",
            "--format",
            "json",
            "--no-skip",
        ],
    );
    assert_eq!(reported(&all), got, "{base}..{head}: --no-skip differs");
    report
}

/// The realworld control repo copied into `t` (and shaped by `prepare`), committed as the
/// first revision of a new repository; the distinct facts and a scratch directory beside it.
fn history(t: &Tree, prepare: impl FnOnce(&Path)) -> (PathBuf, PathBuf, PathBuf) {
    let repo = t.join("control-repo");
    copy_dir(&fixture().join("environments/production"), &repo);
    prepare(&repo);
    let facts = distinct_facts(t);
    let scratch = t.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    (repo, facts, scratch)
}

/// The diff of HEAD and the work tree must list exactly the node × key pairs whose lookups
/// differ between a copy of HEAD and the work tree; returns the report.
fn check_work_tree(repo: &Path, facts: &Path, scratch: &Path) -> Json {
    let args = ["HEAD", "--facts-dir", facts.to_str().unwrap(), "--all"];
    let (code, wt) = run_diff(repo, &[&args[..], &["--format", "json"]].concat());
    assert_eq!(code, 1);
    let expected: BTreeSet<(String, String)> = {
        let a = answers(repo, "HEAD", facts, scratch);
        let b = batch_answers(repo, facts, &[]);
        a.keys()
            .chain(b.keys())
            .filter(|k| a.get(*k) != b.get(*k))
            .cloned()
            .collect()
    };
    assert_eq!(reported(&wt).into_keys().collect::<BTreeSet<_>>(), expected);
    wt
}

#[test]
fn real_history() {
    let t = temp("history");
    let (repo, facts, scratch) = history(&t, |_| {});

    // 1. A value change, which an interpolating key (backup_dir) and an alias follow.
    edit(
        &repo,
        "data/common.yaml",
        "profile::base::data_root: '/srv'",
        "profile::base::data_root: '/data'",
    );
    edit(
        &repo,
        "data/common.yaml",
        "  - '1.pool.ntp.org'",
        "  - '2.pool.ntp.org'",
    );
    git(&repo, &["commit", "-qam", "value change"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    let keys: Vec<&str> = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"profile::base::data_root"), "{keys:?}");
    assert!(keys.contains(&"profile::base::backup_dir"), "{keys:?}");
    assert!(
        keys.contains(&"profile::base::ntp_servers_alias"),
        "{keys:?}"
    );
    assert!(r["recomputed_everything"].is_null());
    let recomputed = r["keys_recomputed"].as_u64().unwrap();
    assert!(
        recomputed < 10 && r["keys_skipped"].as_u64().unwrap() > 100,
        "{r}"
    );
    // The changed line is where the annotation goes.
    let data_root = r["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "profile::base::data_root")
        .unwrap();
    let line = data_root["sites"][0]["line"].as_u64().unwrap() as usize;
    let text = std::fs::read_to_string(repo.join("data/common.yaml")).unwrap();
    assert!(text
        .lines()
        .nth(line - 1)
        .unwrap()
        .starts_with("profile::base::data_root:"));

    // 2. A new hierarchy level, with data for some nodes.
    edit(
        &repo,
        "hiera.yaml",
        "  - name: \"Kernel\"",
        "  - name: \"Per-timezone\"\n    path: \"tz/%{facts.timezone}.yaml\"\n\n  - name: \"Kernel\"",
    );
    std::fs::create_dir_all(repo.join("data/tz")).unwrap();
    std::fs::write(
        repo.join("data/tz/UTC.yaml"),
        "---\nprofile::base::timezone: 'Etc/UTC'\nprofile::base::new_key: 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "new level"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    assert!(r["recomputed_everything"]
        .as_str()
        .unwrap()
        .contains("hiera.yaml"));

    // 3. A lookup_options change: ntp_servers now merged (unique) across levels.
    edit(
        &repo,
        "data/common.yaml",
        "  profile::base::ntp_servers:\n    merge: first",
        "  profile::base::ntp_servers:\n    merge: unique",
    );
    git(&repo, &["commit", "-qam", "lookup_options"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    assert!(r["recomputed_everything"].is_null());

    // 4. Broken YAML in an OS file: errors appear for the nodes that read it.
    edit(
        &repo,
        "data/os/Debian.yaml",
        "---",
        "---\nbroken: [unclosed",
    );
    git(&repo, &["commit", "-qam", "broken"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    let s = r.to_string();
    assert!(s.contains("Unable to parse (data/os/Debian.yaml)"), "{s}");
    // Every key is looked up, but only on the Debian and Ubuntu nodes: the RedHat, CentOS
    // and FreeBSD nodes do not read the broken file (check() compared this with lookups on
    // each side and with --no-skip).
    assert!(r["recomputed_everything"]
        .as_str()
        .unwrap()
        .contains("data/os/Debian.yaml does not load"));
    assert_eq!(r["nodes_skipped"], 3, "{}", r["nodes_skipped"]);

    // ... and disappear when it is fixed.
    edit(
        &repo,
        "data/os/Debian.yaml",
        "broken: [unclosed",
        "fixed: true",
    );
    git(&repo, &["commit", "-qam", "fixed"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    assert_eq!(r["nodes_skipped"], 3, "{r}");

    // 5. A renamed file: the data it held is no longer found where the old name was read.
    git(
        &repo,
        &["mv", "data/os/RedHat.yaml", "data/os/RedHat-family.yaml"],
    );
    git(&repo, &["commit", "-qm", "rename"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    assert!(!r["changes"].as_array().unwrap().is_empty());
    // The Debian, Ubuntu and FreeBSD nodes' hierarchies name neither file: none of their
    // keys is looked up (check() compared the diff with --no-skip and with real lookups).
    assert_eq!(r["nodes_skipped"], 3, "{r}");
    let recomputed = r["keys_recomputed"].as_u64().unwrap();
    let skipped = r["keys_skipped"].as_u64().unwrap();
    assert_eq!(r["pairs_skipped"], skipped * 5 + recomputed * 3, "{r}");
    assert_eq!(r["lookups"], recomputed * 2 * 2, "{r}");

    // The whole range at once, and a range with no data change.
    check(&repo, &facts, &scratch, "main~6", "main");
    std::fs::write(repo.join("README.md"), "notes\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "docs only"]);
    let (code, r) = run_diff(
        &repo,
        &[
            "HEAD~1",
            "HEAD",
            "--facts-dir",
            facts.to_str().unwrap(),
            "--all",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(r["lookups"], 0);

    // The work tree (HEAD omitted) and two directories give what the revisions give.
    edit(
        &repo,
        "data/common.yaml",
        "profile::base::data_root: '/data'",
        "profile::base::data_root: '/opt'",
    );
    let wt = check_work_tree(&repo, &facts, &scratch);
    let old = t.join("old");
    copy_dir(&checkout(&repo, "HEAD", &scratch), &old);
    let (_, dirs) = run_diff(
        &t,
        &[
            "old",
            "control-repo",
            "--facts-dir",
            facts.to_str().unwrap(),
            "--all",
            "--format",
            "json",
        ],
    );
    assert_eq!(reported(&dirs), reported(&wt));
}

/// A level that names a changed file through a linked directory or `..` reaches it: the
/// nodes reading it are compared, on revisions and on the work tree, and only the others
/// are skipped.
#[test]
fn reach_follows_links_and_dots() {
    let t = temp("links");
    // The datadir `data` is a link to the real directory, and the Kernel level goes
    // through `..`.
    let (repo, facts, scratch) = history(&t, |repo| {
        std::fs::rename(repo.join("data"), repo.join("hieradata")).unwrap();
        std::os::unix::fs::symlink("hieradata", repo.join("data")).unwrap();
        edit(
            repo,
            "hiera.yaml",
            "path: \"kernel/%{facts.kernel}.yaml\"",
            "path: \"os/../kernel/%{facts.kernel}.yaml\"",
        );
    });

    // Read by the RedHat and CentOS nodes only (CentOS 7 has its own value for the key).
    edit(
        &repo,
        "hieradata/os/RedHat.yaml",
        "profile::base::selinux_mode: 'enforcing'",
        "profile::base::selinux_mode: 'permissive'",
    );
    git(&repo, &["commit", "-qam", "RedHat"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    let nodes: BTreeSet<String> = reported(&r).into_keys().map(|(_, n)| n).collect();
    assert_eq!(
        nodes,
        BTreeSet::from(["facter4.10-redhat-9-x86_64".to_string()]),
        "{r}"
    );
    assert_eq!(r["nodes_skipped"], 3, "{r}");

    // Read by every Linux node, through `..`.
    edit(
        &repo,
        "hieradata/kernel/Linux.yaml",
        "fs.file-max: 2097152",
        "fs.file-max: 4194304",
    );
    git(&repo, &["commit", "-qam", "Linux"]);
    let r = check(&repo, &facts, &scratch, "HEAD~1", "HEAD");
    assert_eq!(reported(&r).len(), 4, "{r}");
    assert_eq!(r["nodes_skipped"], 1, "{r}");

    // The work tree (files on disk, links resolved by the system).
    edit(
        &repo,
        "hieradata/os/RedHat.yaml",
        "profile::base::selinux_mode: 'permissive'",
        "profile::base::selinux_mode: 'disabled'",
    );
    let wt = check_work_tree(&repo, &facts, &scratch);
    assert_eq!(reported(&wt).len(), 1, "{wt}");
    assert_eq!(wt["nodes_skipped"], 3, "{wt}");
}

#[test]
fn text_github_and_markdown_name_the_change() {
    let t = temp("formats");
    let repo = t.join("r");
    copy_dir(&fixture().join("environments/production"), &repo);
    let facts = fixture().join("facts/facter4.11-debian-12-x86_64.json");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    edit(
        &repo,
        "data/common.yaml",
        "  - '1.pool.ntp.org'",
        "  - '2.pool.ntp.org'",
    );
    let run = |format: &str| {
        let o = bin()
            .current_dir(&repo)
            .args([
                "diff",
                "HEAD",
                "--facts",
                facts.to_str().unwrap(),
                "profile::base::ntp_servers",
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let text = run("text");
    assert!(
        text.contains("profile::base::ntp_servers[1]: \"1.pool.ntp.org\" → \"2.pool.ntp.org\""),
        "{text}"
    );
    let gh = run("github");
    // The annotation is on the changed element, inside the key's block, where the YAML
    // parser saw it.
    let line = std::fs::read_to_string(repo.join("data/common.yaml"))
        .unwrap()
        .lines()
        .position(|l| l == "  - '2.pool.ntp.org'")
        .unwrap()
        + 1;
    let col = "  - '".len();
    assert!(
        gh.starts_with(&format!("::warning file=data/common.yaml,line={line},col={col},title=hiera%3A profile%3A%3Abase%3A%3Antp_servers")),
        "{gh}"
    );
    let md = run("markdown");
    assert!(
        md.starts_with("### hiera-lookup diff `HEAD` → `work tree`"),
        "{md}"
    );
    // Text and Markdown name the same place as file:line:column.
    let site = format!("data/common.yaml:{line}:{col}");
    assert!(
        text.contains(&format!("profile::base::ntp_servers  (1 node)  {site}\n")),
        "{text}"
    );
    assert!(
        md.contains(&format!("| `profile::base::ntp_servers` | 1 | {site} |")),
        "{md}"
    );
}

#[test]
fn bad_input_exits_2() {
    let t = temp("bad");
    let repo = t.join("r");
    copy_dir(&fixture().join("environments/production"), &repo);
    let facts = fixture().join("facts");
    let f = facts.to_str().unwrap();
    // Not a git repository.
    let o = bin()
        .current_dir(&repo)
        .args(["diff", "HEAD", "--facts-dir", f, "--all"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in a git repository"));
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    for (args, needle) in [
        (
            vec!["diff", "nope", "--facts-dir", f, "--all"],
            "unknown revision 'nope'",
        ),
        (vec!["diff", "HEAD", "--all"], "diff needs nodes"),
        (vec!["diff", "HEAD", "--facts-dir", f], "No keys were given"),
        (
            vec!["diff", "HEAD", "--facts", "/nonexistent.yaml", "--all"],
            "nonexistent.yaml",
        ),
    ] {
        let o = bin().current_dir(&repo).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        // One line an error: a node whose facts cannot be read is named on its own, then
        // the run fails at the end.
        assert!(
            err.contains(needle) && err.lines().all(|l| l.starts_with("Error: ")),
            "{args:?}: {err}"
        );
    }
    // --format's values are the parser's: listed in --help, refused with the list.
    let o = bin()
        .current_dir(&repo)
        .args(["diff", "HEAD", "--facts-dir", f, "--all", "--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("[possible values: text, json, github, markdown]"));
}

const NODE: &str =
    "clientcert: n1.example.com\nhostname: n1\ndomain: example.com\nfqdn: n1.example.com\n";

/// Issue 26, items 3 and 5: a committed file name holding a line break, a workflow command
/// and a terminal escape, and a key holding Markdown, HTML and a terminal escape: every
/// format keeps each on its line, in its cell, as text.
#[test]
fn what_the_tree_names_stays_in_its_place() {
    let hiera = "version: 5\nhierarchy:\n  - name: extra\n    glob: \"extra/*.yaml\"\n  - name: common\n    path: common.yaml\n";
    // As YAML writes it (`\e` is ESC).
    let key = "k|`<img src=x>`*b*\\e[2J";
    let t = scratch_tree::tree(
        "diff",
        "hostile-names",
        &[
            ("facts.yaml", NODE),
            ("r/hiera.yaml", hiera),
            ("r/data/common.yaml", &format!("\"{key}\": 1\nplain: 1\n")),
        ],
    );
    let repo = t.join("r");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    std::fs::write(
        repo.join("data/common.yaml"),
        format!("\"{key}\": 2\nplain: 1\n"),
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "key"]);
    let evil = "x\n::error file=README.md,line=1::injected\x1b[31m\r\n.yaml";
    std::fs::write(repo.join("data/extra").join(evil), "a: [unclosed\n").ok();
    if !repo.join("data/extra").join(evil).exists() {
        std::fs::create_dir_all(repo.join("data/extra")).unwrap();
        std::fs::write(repo.join("data/extra").join(evil), "a: [unclosed\n").unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "evil"]);
    let facts = t.join("facts.yaml");
    let run = |range: [&str; 2], format: &str| {
        let o = bin()
            .current_dir(&repo)
            .args(["diff", range[0], range[1], "--all", "--format", format])
            .args(["--facts", facts.to_str().unwrap()])
            .output()
            .unwrap();
        let (out, err) = (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        );
        assert!(!err.contains('\x1b'), "{err}");
        assert!(!out.contains(['\x1b', '\r']), "{format}: {out}");
        out
    };
    for range in [["HEAD~2", "HEAD~1"], ["HEAD~1", "HEAD"], ["HEAD~2", "HEAD"]] {
        let gh = run(range, "github");
        let lines: Vec<&str> = gh.lines().collect();
        // Annotations, then the summary: no line of the tree's making.
        for l in &lines[..lines.len() - 1] {
            assert!(
                l.starts_with("::warning ") || l.starts_with("::error "),
                "{range:?}: {gh}"
            );
        }
        assert!(
            !lines.last().unwrap().trim_start().starts_with("::"),
            "{gh}"
        );
        for format in ["text", "markdown"] {
            let out = run(range, format);
            assert!(
                !out.lines().any(|l| l.trim_start().starts_with("::")),
                "{range:?} {format}: {out}"
            );
        }
    }
    let text = run(["HEAD~2", "HEAD~1"], "text");
    assert!(
        text.contains("k|`<img src=x>`*b*\\e[2J  (1 node)"),
        "{text}"
    );
    let gh = run(["HEAD~1", "HEAD"], "github");
    assert!(gh.contains("x\\n%3A%3Aerror file=README.md"), "{gh}");
    let md = run(["HEAD~2", "HEAD~1"], "markdown");
    // Raw only inside a `~~~` block, where Markdown reads nothing.
    let outside_fences: String = md
        .split("\n~~~\n")
        .step_by(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!outside_fences.contains("<img"), "{md}");
    assert!(
        md.contains("\n~~~\nk|`<img src=x>`*b*\\e[2J: 1 → 2\n~~~\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "| <code>k&#124;&#96;&lt;img src=x&gt;&#96;&#42;b&#42;&#92;e&#91;2J</code> | 1 |"
        ),
        "{md}"
    );
    let md = run(["HEAD~1", "HEAD"], "markdown");
    assert!(md.contains("x\\n::error file=README.md"), "{md}");
}

/// Issue 26, item 5: an error message that quotes a file name holding a line break and a
/// terminal escape stays one line, escaped.
#[test]
fn diff_errors_are_one_printable_line() {
    let t = scratch_tree::tree(
        "diff",
        "error-line",
        &[
            ("a/hiera.yaml", "version: 5\n"),
            ("b/hiera.yaml", "version: 5\n"),
        ],
    );
    let o = bin()
        .current_dir(&t)
        .args(["diff", "a", "b", "--all", "--facts", "no\x1b[2J\nsuch.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    // The unreadable node on its line, then the failure of the run.
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.lines().all(|l| l.starts_with("Error: ")), "{err}");
    assert!(err.contains("no\\e[2J"), "{err}");
}

/// Issue 26, item 4: a JSON data file that is a link to /proc/self/environ: the parse error
/// quotes what the json gem's message quotes, up to the first NUL, never the environment.
#[test]
fn json_errors_do_not_quote_past_a_nul() {
    let hiera = "version: 5\nhierarchy:\n  - name: common\n    data_hash: json_data\n    path: common.json\n";
    let t = scratch_tree::tree(
        "diff",
        "environ",
        &[
            ("facts.yaml", NODE),
            ("a/hiera.yaml", hiera),
            ("a/data/common.json", "{\"k\": 1}"),
            ("b/hiera.yaml", hiera),
        ],
    );
    std::fs::create_dir_all(t.join("b/data")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", t.join("b/data/common.json")).unwrap();
    for format in ["json", "text"] {
        let o = bin()
            .current_dir(&t)
            .env_clear()
            .env("A_FIRST", "1")
            .env("Z_SECRET", "hunter2")
            .args([
                "diff",
                "a",
                "b",
                "--facts",
                "facts.yaml",
                "k",
                "--format",
                format,
            ])
            .output()
            .unwrap();
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(
            !out.contains("hunter2") && !err.contains("hunter2"),
            "{out}{err}"
        );
        assert!(
            out.contains("unexpected token at 'A_FIRST=1'"),
            "{out}{err}"
        );
    }
}

/// `diff OLD_DIR NEW_DIR` in `dir` with one node; stdout, stderr and the exit status.
fn diff_dirs(dir: &Path, args: &[&str]) -> (String, String, i32) {
    let o = bin()
        .current_dir(dir)
        .args(["diff", "a", "b", "--facts", "facts.yaml"])
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

/// Issue 26, item 12: a value JSON cannot hold (NaN, nesting over 100) is reported in its
/// place; the rest of the report is written.
#[test]
fn json_report_keeps_every_value_it_can_write() {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let hiera = "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n";
    let t = scratch_tree::tree(
        "diff",
        "json-values",
        &[
            ("facts.yaml", NODE),
            ("a/hiera.yaml", hiera),
            (
                "a/data/common.yaml",
                "nan: 1\ndeep: 1\nok_deep: 1\nplain: 1\n",
            ),
            ("b/hiera.yaml", hiera),
            (
                "b/data/common.yaml",
                &format!(
                    "nan: .nan\ndeep: {}\nok_deep: {}\nplain: 2\n",
                    deep(101),
                    deep(100)
                ),
            ),
        ],
    );
    let (out, err, code) = diff_dirs(&t, &["--all", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let v: Json = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let edit = |key: &str| {
        v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == key)
            .unwrap_or_else(|| panic!("{key}: {out}"))["groups"][0]["edits"][0]
            .clone()
    };
    assert_eq!(
        edit("plain"),
        serde_json::json!({"path": "", "before": 1, "after": 2})
    );
    assert_eq!(
        edit("nan"),
        serde_json::json!({"path": "", "before": 1, "after_error": "NaN not allowed in JSON"})
    );
    assert_eq!(
        edit("deep"),
        serde_json::json!({"path": "", "before": 1, "after_error": "nesting of 100 is too deep"})
    );
    // As deep as a lookup may print it: written whole.
    let mut inner = &edit("ok_deep")["after"];
    for _ in 0..100 {
        inner = &inner[0];
    }
    assert_eq!(inner, &Json::from(1), "{out}");
}

use crate::eyaml;

/// Issue 26, item 2: a rotated eyaml secret, used whole, interpolated and in an error
/// message, on both sides.
#[test]
fn diff_never_prints_what_eyaml_decrypted() {
    let hiera = eyaml::hiera_yaml();
    let common = "dsn: \"db://app:%{lookup('secret')}@db\"\n";
    let secrets = |token: &str| {
        format!(
            "secret: {token}\nlookup_options:\n  check:\n    merge: unique\n    convert_to: \"Array[Enum[x]]\"\ncheck: {token}\n"
        )
    };
    let (old, new) = (secrets(eyaml::OLD), secrets(eyaml::NEW));
    let t = scratch_tree::tree(
        "diff",
        "secrets",
        &[
            ("facts.yaml", NODE),
            ("a/hiera.yaml", &hiera),
            ("a/data/common.yaml", common),
            ("a/data/secrets.eyaml", &old),
            ("b/hiera.yaml", &hiera),
            ("b/data/common.yaml", common),
            ("b/data/secrets.eyaml", &new),
        ],
    );
    let plain = [eyaml::OLD_PLAIN, eyaml::NEW_PLAIN];
    for format in ["text", "json", "github", "markdown"] {
        for extra in [&[][..], &["--redact"][..]] {
            let mut args = vec!["--all", "--format", format];
            args.extend(extra);
            let (out, err, code) = diff_dirs(&t, &args);
            assert_eq!(code, 1, "{format}: {err}");
            for p in plain {
                assert!(
                    !out.contains(p) && !err.contains(p),
                    "{format} shows {p}:\n{out}{err}"
                );
            }
            assert!(
                out.contains("[redacted]") || out.contains("encrypted value"),
                "{out}"
            );
            if format != "json" {
                assert!(out.contains("secret: changed (encrypted value)"), "{out}");
                assert!(out.contains("dsn: changed (encrypted value)"), "{out}");
            }
        }
    }
    let (json, _, _) = diff_dirs(&t, &["--all", "--format", "json"]);
    let v: Json = serde_json::from_str(&json).unwrap();
    let secret = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "secret")
        .unwrap();
    assert_eq!(
        secret["groups"][0]["edits"][0],
        serde_json::json!({"path": "", "before": "[redacted]", "after": "[redacted]", "redacted": true}),
        "{json}"
    );
    // The error quoting the plaintext, on both sides.
    let (text, _, _) = diff_dirs(&t, &["--all"]);
    assert!(text.contains("got '[redacted]'"), "{text}");
    assert!(
        text.contains("(was the same error about another encrypted value)"),
        "{text}"
    );
    // Shown when asked for.
    let (shown, _, code) = diff_dirs(&t, &["--all", "--show-secrets"]);
    assert_eq!(code, 1);
    assert!(
        shown.contains("secret: \"OLDSECRET1\" → \"NEWSECRET2\""),
        "{shown}"
    );
    let (_, err, code) = diff_dirs(&t, &["--all", "--show-secrets", "--redact"]);
    assert_eq!(code, 2, "{err}");
}

/// A repository of its own in `t`: `files` committed on `main`.
fn small_repo(t: &Tree, files: &[(&str, &str)]) -> PathBuf {
    let repo = t.join("r");
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    repo
}

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = bin().current_dir(dir).args(args).output().unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const NODE_FACTS: &str = "hostname: web01\ndomain: example.com\nfqdn: web01.example.com\nclientcert: web01.example.com\nrole: web\n";

/// A branch whose hiera.yaml adds a `command` level (a program that leaves a mark, found in
/// PATH) is compared, linted and asked `where` without running it; each says so in one line
/// naming the file and the flag, and runs it only when given the flag. The repo's own
/// .hiera-lookup.toml cannot give it.
#[test]
fn analysing_a_tree_runs_none_of_its_programs() {
    let t = temp("exec");
    let base_hiera = "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n";
    let repo = small_repo(
        &t,
        &[
            ("hiera.yaml", base_hiera),
            (
                "data/common.yaml",
                "k: 1\nm: [a]\nlookup_options:\n  m:\n    merge: unique\n",
            ),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    let mark = repo.join("ran");
    let evil = "version: 5\nhierarchy:\n  - name: vault\n    lookup_key: command\n    options:\n      command: [sh, -c, \"touch ran; echo '{\\\"found\\\":false}'\"]\n  - name: common\n    path: common.yaml\n";
    git(&repo, &["checkout", "-qb", "evil"]);
    std::fs::write(repo.join("hiera.yaml"), evil).unwrap();
    std::fs::write(
        repo.join(".hiera-lookup.toml"),
        "[diff]\nallow-exec = true\n[where]\nallow-exec = true\n",
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "evil"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "settings"]);
    git(&repo, &["checkout", "-q", "main"]);

    let refused = |args: &[&str], cwd: &Path, who: &str| {
        let (code, out, err) = run_in(cwd, args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!mark.exists(), "{args:?} ran the program");
        let line = (err.lines().chain(out.lines()))
            .find(|l| l.contains("Not running"))
            .unwrap_or_else(|| {
                panic!("{args:?}: no refusal in {err}{out}");
            });
        assert!(
            line.contains("hierarchy level 'vault' (lookup_key: command) in ")
                && line.contains("hiera.yaml")
                && line.ends_with(&format!(
                    "{who} runs no program {} unless given --allow-exec",
                    match who {
                        "diff" => "a compared tree names",
                        "lint" => "the linted tree names",
                        _ => "a hierarchy names",
                    }
                )),
            "{args:?}: {line}"
        );
    };
    let diff = ["diff", "main", "evil", "--facts", "facts/web01.yaml", "k"];
    refused(&diff, &repo, "diff");
    refused(
        &["diff", "main", "evil", "--facts-dir", "facts", "--all"],
        &repo,
        "diff",
    );
    // The checked-out branch: lint over a fleet, where over a fleet.
    git(&repo, &["checkout", "-q", "evil"]);
    refused(&["lint", ".", "--facts-dir", "facts"], &repo, "lint");
    refused(
        &["where", "m", "--facts-dir", "facts"],
        &repo,
        "where over a fleet",
    );
    // The settings file of the tree is not asked (its [lint] table cannot say it either).
    std::fs::write(
        repo.join(".hiera-lookup.toml"),
        "[lint]\nallow-exec = true\n",
    )
    .unwrap();
    let (code, _, err) = run_in(&repo, &["lint", ".", "--facts-dir", "facts"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown setting lint.allow-exec") && !mark.exists(),
        "{err}"
    );
    git(&repo, &["checkout", "-q", "."]);
    git(&repo, &["checkout", "-q", "main"]);

    // Given the flag, it runs.
    let (code, _, err) = run_in(&repo, &[&diff[..], &["--allow-exec"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(mark.exists());
}

/// `diff ARGS` in `dir` under resource limits (address space and stack, in MiB): what a
/// hostile repository would exhaust shows as a failed run here, not a stalled machine.
fn run_limited(dir: &Path, args: &[&str], mem_mib: u64, stack_kib: u64) -> (i32, String, String) {
    use std::os::unix::process::CommandExt;
    let mut c = bin();
    c.current_dir(dir).args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = |n: u64| libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim(mem_mib << 20));
            libc::setrlimit(libc::RLIMIT_STACK, &lim(stack_kib << 10));
            Ok(())
        });
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `git` with `input` on stdin.
fn git_in(dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A commit of tree `tree` on top of HEAD, without touching the index or the work tree.
fn commit_tree(repo: &Path, tree: &str) -> String {
    let head = git(repo, &["rev-parse", "HEAD"]);
    git(repo, &["commit-tree", tree, "-p", &head, "-m", "crafted"])
}

const COMMON_HIERA: &str = "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n";

/// The change of one key, as the JSON report gives it for its first group: (before, after)
/// of the answers, or of the first edit inside the values (`[0]: "a"`) when both were found.
fn one_change(report: &Json, key: &str) -> Option<(String, String)> {
    let side = |s: &Json| {
        s.get("value")
            .map_or_else(|| s.to_string(), |v| v.to_string())
    };
    let c = report["changes"]
        .as_array()?
        .iter()
        .find(|c| c["key"] == key)?;
    let g = &c["groups"][0];
    if g.get("before").is_some() {
        return Some((side(&g["before"]), side(&g["after"])));
    }
    let e = &g["edits"][0];
    let at = |v: &Json| match e["path"].as_str() {
        Some("") | None => v.to_string(),
        Some(p) => format!("{p}: {v}"),
    };
    Some((at(&e["before"]), at(&e["after"])))
}

/// A committed symbolic link is read through: a change to its target (a data file, or the
/// hiera.yaml itself) is a change for every name of it, not "No change" because the link's
/// own blob (its target's name) did not change.
#[test]
fn changes_behind_committed_links_are_seen() {
    let t = temp("symlinks");
    let repo = small_repo(
        &t,
        &[
            ("config/hiera.yaml", "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n  - name: other\n    path: other.yaml\n"),
            ("real/common.yaml", "k: 1\n"),
            ("data/other.yaml", "k: other\nj: 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    std::os::unix::fs::symlink("../real/common.yaml", repo.join("data/common.yaml")).unwrap();
    std::os::unix::fs::symlink("config/hiera.yaml", repo.join("hiera.yaml")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "links"]);
    let json = |args: &[&str]| {
        let all: Vec<&str> = [args, &["--facts", "facts/web01.yaml", "--format", "json"]].concat();
        run_diff(&repo, &all).1
    };

    // The data file's target.
    std::fs::write(repo.join("real/common.yaml"), "k: 2\n").unwrap();
    git(&repo, &["commit", "-qam", "target"]);
    for extra in [&[][..], &["--no-skip"]] {
        let r = json(&[&["HEAD~1", "HEAD", "k"][..], extra].concat());
        assert_eq!(one_change(&r, "k"), Some(("1".into(), "2".into())), "{r}");
    }

    // hiera.yaml's target: the levels swap, a configuration change.
    std::fs::write(
        repo.join("config/hiera.yaml"),
        "version: 5\nhierarchy:\n  - name: other\n    path: other.yaml\n  - name: common\n    path: common.yaml\n",
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "hiera target"]);
    let r = json(&["HEAD~1", "HEAD", "k"]);
    assert_eq!(
        one_change(&r, "k"),
        Some(("2".into(), "\"other\"".into())),
        "{r}"
    );
    assert!(
        r["recomputed_everything"]
            .as_str()
            .unwrap()
            .contains("hiera.yaml changed"),
        "{r}"
    );
}

/// Data and modules outside the control repo's directory (-C) but in the same git
/// repository are read from each revision, and their changes are found.
#[test]
fn data_and_modules_outside_the_control_repo_are_compared() {
    let t = temp("outside");
    let repo = small_repo(
        &t,
        &[
            (
                "envs/production/hiera.yaml",
                "version: 5\ndefaults:\n  datadir: ../../shared\n  data_hash: yaml_data\nhierarchy:\n  - name: common\n    path: common.yaml\n",
            ),
            ("envs/production/environment.conf", "modulepath = ../../mods\n"),
            ("shared/common.yaml", "k: 1\n"),
            ("mods/ntp/hiera.yaml", COMMON_HIERA),
            ("mods/ntp/data/common.yaml", "ntp::servers: [a]\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    let facts = repo.join("facts/web01.yaml");
    let diff = |args: &[&str]| {
        let all: Vec<&str> = [
            args,
            &["-C", "envs/production", "--facts", facts.to_str().unwrap()],
            &["k", "ntp::servers", "--format", "json"],
        ]
        .concat();
        run_diff(&repo, &all).1
    };
    std::fs::write(repo.join("shared/common.yaml"), "k: 2\n").unwrap();
    std::fs::write(
        repo.join("mods/ntp/data/common.yaml"),
        "ntp::servers: [b]\n",
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "outside"]);
    let r = diff(&["HEAD~1", "HEAD"]);
    assert_eq!(one_change(&r, "k"), Some(("1".into(), "2".into())), "{r}");
    assert_eq!(
        one_change(&r, "ntp::servers"),
        Some(("[0]: \"a\"".into(), "[0]: \"b\"".into())),
        "{r}"
    );
    // The work tree against HEAD, and the annotation names the file in the repository.
    std::fs::write(repo.join("shared/common.yaml"), "k: 3\n").unwrap();
    let r = diff(&["HEAD"]);
    assert_eq!(one_change(&r, "k"), Some(("2".into(), "3".into())), "{r}");
    let o = bin()
        .current_dir(&repo)
        .args(["diff", "HEAD", "-C", "envs/production", "--facts"])
        .args([facts.to_str().unwrap(), "k", "--format", "github"])
        .output()
        .unwrap();
    let gh = String::from_utf8_lossy(&o.stdout);
    assert!(
        gh.starts_with("::warning file=shared/common.yaml,line=1,"),
        "{gh}"
    );
}

/// `include file(…)` in HOCON data is read from the revision compared, not from the work
/// tree.
#[test]
fn hocon_includes_come_from_the_revision() {
    let t = temp("hocon");
    let repo = small_repo(
        &t,
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    data_hash: hocon_data\n    path: common.conf\n",
            ),
            ("data/common.conf", "include file(\"data/inc.conf\")\nj = 1\n"),
            ("data/inc.conf", "k = 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    std::fs::write(repo.join("data/inc.conf"), "k = 2\n").unwrap();
    git(&repo, &["commit", "-qam", "include"]);
    // The work tree says something else again.
    std::fs::write(repo.join("data/inc.conf"), "k = 3\n").unwrap();
    let args = ["--facts", "facts/web01.yaml", "k", "--format", "json"];
    let r = run_diff(&repo, &[&["HEAD~1", "HEAD"][..], &args].concat()).1;
    assert_eq!(one_change(&r, "k"), Some(("1".into(), "2".into())), "{r}");
    let r = run_diff(&repo, &[&["HEAD"][..], &args].concat()).1;
    assert_eq!(one_change(&r, "k"), Some(("2".into(), "3".into())), "{r}");
}

/// A HOCON data file depends on what it `include`s: a change to the included file alone is a
/// change of the including file's keys, whether the include sits inside an object (the key
/// that changes is the object's) or names a file no hierarchy reaches and no listing holds.
#[test]
fn a_change_to_a_hocon_include_is_seen() {
    let t = temp("hocon-deps");
    let repo = small_repo(
        &t,
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: common\n    data_hash: hocon_data\n    path: common.conf\n",
            ),
            (
                "data/common.conf",
                "x { include file(\"data/inc.conf\") }\ninclude file(\"shared/top.hocon\")\nj = 1\n",
            ),
            ("data/inc.conf", "a = 1\n"),
            ("shared/top.hocon", "b = 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    let args = ["--facts", "facts/web01.yaml", "--all", "--format", "json"];
    std::fs::write(repo.join("data/inc.conf"), "a = 2\n").unwrap();
    git(&repo, &["commit", "-qam", "nested"]);
    let (code, r) = run_diff(&repo, &[&["HEAD~1", "HEAD"][..], &args].concat());
    assert_eq!(code, 1, "{r}");
    assert_eq!(
        one_change(&r, "x"),
        Some((".a: 1".into(), ".a: 2".into())),
        "{r}"
    );
    std::fs::write(repo.join("shared/top.hocon"), "b = 2\n").unwrap();
    git(&repo, &["commit", "-qam", "outside"]);
    let (code, r) = run_diff(&repo, &[&["HEAD~1", "HEAD"][..], &args].concat());
    assert_eq!(code, 1, "{r}");
    assert_eq!(one_change(&r, "b"), Some(("1".into(), "2".into())), "{r}");
    // The work tree against HEAD: the same.
    std::fs::write(repo.join("shared/top.hocon"), "b = 3\n").unwrap();
    let (code, r) = run_diff(&repo, &[&["HEAD"][..], &args].concat());
    assert_eq!(code, 1, "{r}");
    assert_eq!(one_change(&r, "b"), Some(("2".into(), "3".into())), "{r}");
}

/// A module vendored as a git submodule is read from the submodule's own objects: a bump is
/// a change, an unchanged submodule is no change; a clone without the submodule's objects
/// says it cannot compare instead of reporting every key as added.
#[test]
fn submodules_are_read_or_refused() {
    let t = temp("submodule");
    let module = t.join("ntp");
    for (path, text) in [
        ("hiera.yaml", COMMON_HIERA),
        ("data/common.yaml", "ntp::servers: [a]\n"),
    ] {
        std::fs::create_dir_all(module.join(path).parent().unwrap()).unwrap();
        std::fs::write(module.join(path), text).unwrap();
    }
    git(&module, &["init", "-q"]);
    git(&module, &["add", "-A"]);
    git(&module, &["commit", "-qm", "a"]);
    let repo = small_repo(
        &t,
        &[
            ("hiera.yaml", COMMON_HIERA),
            ("data/common.yaml", "k: 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    let sub = ["-c", "protocol.file.allow=always", "submodule", "-q", "add"];
    git(
        &repo,
        &[&sub[..], &[module.to_str().unwrap(), "modules/ntp"]].concat(),
    );
    git(&repo, &["commit", "-qm", "submodule"]);
    std::fs::write(module.join("data/common.yaml"), "ntp::servers: [b]\n").unwrap();
    git(&module, &["commit", "-qam", "b"]);
    let checkout = repo.join("modules/ntp");
    git(
        &checkout,
        &["-c", "protocol.file.allow=always", "pull", "-q"],
    );
    git(&repo, &["commit", "-qam", "bump"]);

    let args = ["--facts", "facts/web01.yaml", "--all", "--format", "json"];
    let r = run_diff(&repo, &[&["HEAD~1", "HEAD"][..], &args].concat()).1;
    assert_eq!(
        one_change(&r, "ntp::servers"),
        Some(("[0]: \"a\"".into(), "[0]: \"b\"".into())),
        "{r}"
    );
    assert_eq!(r["changes"].as_array().unwrap().len(), 1, "{r}");
    // Nothing changed between HEAD and the work tree: nothing to report.
    let (code, r) = run_diff(&repo, &[&["HEAD"][..], &args].concat());
    assert_eq!(code, 0, "{r}");

    // A clone whose submodule was never fetched.
    let clone = t.join("clone");
    git(
        &t,
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let (code, out, err) = run_in(&clone, &[&["diff", "HEAD~1", "HEAD"][..], &args].concat());
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("modules/ntp is a git submodule whose commit")
            && err.contains("git submodule update --init modules/ntp")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// `diff --all` compares the keys of eyaml (lookup_key) levels too: a changed secret and a
/// comment in hiera.yaml (which makes every key be recomputed) is a change.
#[test]
fn all_keys_include_eyaml_levels() {
    let t = temp("eyaml-all");
    let hiera = "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.eyaml\n  - name: common\n    path: common.yaml\n";
    let repo = small_repo(
        &t,
        &[
            ("hiera.yaml", hiera),
            ("data/secrets.eyaml", "secret: old\n"),
            ("data/common.yaml", "k: 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    std::fs::write(repo.join("hiera.yaml"), format!("# reviewed\n{hiera}")).unwrap();
    std::fs::write(repo.join("data/secrets.eyaml"), "secret: new\n").unwrap();
    git(&repo, &["commit", "-qam", "secret"]);
    let args = [
        "HEAD~1",
        "HEAD",
        "--facts",
        "facts/web01.yaml",
        "--all",
        "--format",
        "json",
    ];
    let r = run_diff(&repo, &args).1;
    assert!(r["recomputed_everything"].is_string(), "{r}");
    assert!(one_change(&r, "secret").is_some(), "{r}");
}

/// Hostile repositories: a 300-byte tree naming 10^8 paths, and an object whose header
/// claims 2.5 GB, stop with an error (under a 1 GiB address-space cap) instead of
/// exhausting memory.
#[test]
fn hostile_git_objects_are_bounded() {
    let t = temp("hostile-git");
    let repo = small_repo(
        &t,
        &[
            ("hiera.yaml", COMMON_HIERA),
            ("data/common.yaml", "k: 1\n"),
            ("facts/web01.yaml", NODE_FACTS),
        ],
    );
    let args = ["--facts", "facts/web01.yaml", "k"];

    // 100 × 100 × 100 × 100 files: four small trees.
    let blob = git_in(&repo, &["hash-object", "-w", "--stdin"], "x\n");
    let mut entries: String = (0..100)
        .map(|i| format!("100644 blob {blob}\tf{i}\n"))
        .collect();
    let mut tree = git_in(&repo, &["mktree"], &entries);
    for _ in 0..3 {
        entries = (0..100)
            .map(|i| format!("040000 tree {tree}\td{i}\n"))
            .collect();
        tree = git_in(&repo, &["mktree"], &entries);
    }
    let wide = commit_tree(&repo, &tree);
    let (code, out, err) = run_limited(
        &repo,
        &[&["diff", "HEAD", &wide][..], &args].concat(),
        1024,
        8192,
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("has more than 1000000 files and directories"),
        "{err}"
    );

    // A loose object whose header says 2.5 GB (a stored zlib stream of a few bytes).
    let id = "0123456789abcdef0123456789abcdef01234567";
    let mut raw = b"blob 2500000000\0".to_vec();
    raw.extend(std::iter::repeat_n(b'k', 4000));
    let dir = repo.join(".git/objects/01");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&id[2..]), zlib_stored(&raw)).unwrap();
    let data = git_in(
        &repo,
        &["mktree", "--missing"],
        &format!("100644 blob {id}\tcommon.yaml\n"),
    );
    let root: String = git(&repo, &["ls-tree", "HEAD"])
        .lines()
        .map(|l| {
            if l.ends_with("\tdata") {
                format!("040000 tree {data}\tdata\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let big = commit_tree(&repo, &git_in(&repo, &["mktree", "--missing"], &root));
    let (code, out, err) = run_limited(
        &repo,
        &[&["diff", "HEAD", &big][..], &args, &["--format", "json"]].concat(),
        1024,
        8192,
    );
    // The report says why, and the new error fails the diff (issue 26, item 23).
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains(&format!(
            "git object {id} is larger than 256 MiB (the file size limit)"
        )),
        "{out}{err}"
    );
}

/// A zlib stream holding `data` in stored (uncompressed) blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let chunks: Vec<&[u8]> = data.chunks(65535).collect();
    for (i, c) in chunks.iter().enumerate() {
        out.push(u8::from(i + 1 == chunks.len()));
        let len = c.len() as u16;
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend(*c);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend(((b << 16) | a).to_be_bytes());
    out
}

/// Two facts files naming the same certname are two nodes: counted as two, and listed by
/// name and facts file.
#[test]
fn nodes_of_the_same_name_are_told_apart() {
    let t = temp("dupnames");
    let repo = small_repo(
        &t,
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: role\n    path: \"%{facts.role}.yaml\"\n",
            ),
            ("data/web.yaml", "k: 1\n"),
            ("data/db.yaml", "k: 1\n"),
            ("facts/a.yaml", "clientcert: foo\nrole: web\n"),
            ("facts/b.yaml", "clientcert: foo\nrole: db\n"),
        ],
    );
    std::fs::write(repo.join("data/web.yaml"), "k: 2\n").unwrap();
    std::fs::write(repo.join("data/db.yaml"), "k: 2\n").unwrap();
    git(&repo, &["commit", "-qam", "both"]);
    let (code, out, err) = run_in(
        &repo,
        &["diff", "HEAD~1", "HEAD", "--facts-dir", "facts", "k"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("2 of 2 nodes"), "{out}");
    assert!(
        out.contains("foo (facts/a.yaml), foo (facts/b.yaml)"),
        "{out}"
    );
}

/// Issue 26, item 23: a change that makes lookups fail (broken YAML, a type error) exits 2
/// after printing its report, so `|| test $? -eq 1` in a CI job does not pass it; a change
/// that only changes answers exits 1, and one that mends a failing lookup too.
#[test]
fn a_change_that_breaks_lookups_exits_2() {
    let hiera = "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n";
    let typed = "lookup_options:\n  port:\n    convert_to: Integer\n";
    let t = scratch_tree::tree(
        "diff",
        "new-errors",
        &[
            ("facts.yaml", NODE),
            ("a/hiera.yaml", hiera),
            (
                "a/data/common.yaml",
                &format!("{typed}port: '80'\nname: a\n"),
            ),
            ("b/hiera.yaml", hiera),
            (
                "b/data/common.yaml",
                &format!("{typed}port: eighty\nname: a\n"),
            ),
            ("c/hiera.yaml", hiera),
            (
                "c/data/common.yaml",
                &format!("{typed}port: '81'\nname: b\n"),
            ),
        ],
    );
    let run = |old: &str, new: &str| {
        let o = bin()
            .current_dir(&*t)
            .args(["diff", old, new, "--facts", "facts.yaml", "--all"])
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.status.code().unwrap_or(-1),
        )
    };
    let (out, err, code) = run("a", "b");
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("port"), "the report is printed: {out}");
    assert!(
        err.contains("makes 1 lookup fail") && err.lines().count() == 1,
        "{err}"
    );
    // Answers that change, with no new error: 1.
    let (out, err, code) = run("a", "c");
    assert_eq!(code, 1, "{out}{err}");
    // Mending the broken lookup is an ordinary change.
    let (out, err, code) = run("b", "a");
    assert_eq!(code, 1, "{out}{err}");
}
