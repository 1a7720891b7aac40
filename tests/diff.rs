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

#[path = "common/scratch.rs"]
mod scratch_tree;
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

fn git(dir: &Path, args: &[&str]) -> String {
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
    assert!(
        code == 0 || code == 1,
        "diff {args:?} exited {code}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Json = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    assert_eq!(code == 1, !v["changes"].as_array().unwrap().is_empty());
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
        assert!(
            err.contains(needle) && err.lines().count() == 1,
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
