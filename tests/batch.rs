//! Batch mode must give, for every node × key, exactly what single lookups give.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hiera-lookup"));
    // Never the machine's own puppet.conf.
    c.env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null");
    c
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// (node, key) -> the JSON a single lookup prints, or "miss"/"error".
fn single(facts: &str, key: &str, extra: &[&str]) -> String {
    let o = bin()
        .current_dir(repo())
        .args([
            "--environmentpath",
            "fixtures/environments",
            "--facts",
            facts,
            "--render-as",
            "json",
            key,
        ])
        .args(extra)
        .output()
        .unwrap();
    match o.status.code() {
        Some(0) => String::from_utf8_lossy(&o.stdout).trim_end().to_string(),
        Some(1) => "miss".into(),
        _ => "error".into(),
    }
}

fn batch(args: &[&str]) -> (Vec<serde_json::Value>, i32) {
    let o = bin()
        .current_dir(repo())
        .args(["--environmentpath", "fixtures/environments"])
        .args(args)
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (lines, o.status.code().unwrap_or(-1))
}

fn facts_file(node: &str) -> &'static str {
    match node {
        "web01.example.com" => "fixtures/facts/web01.yaml",
        "db01.example.com" => "fixtures/facts/db01.json",
        other => panic!("unknown node {other}"),
    }
}

#[test]
fn all_keys_match_single_lookups() {
    let (lines, code) = batch(&["--facts-dir", "fixtures/facts", "--all"]);
    assert_eq!(code, 0);
    assert!(lines.len() > 20, "{lines:?}");
    let nodes: Vec<&str> = lines.iter().map(|l| l["node"].as_str().unwrap()).collect();
    // Node order is the facts files' order, whatever the threads did.
    let first_web = nodes
        .iter()
        .position(|n| *n == "web01.example.com")
        .unwrap();
    assert!(nodes[..first_web].iter().all(|n| *n == "db01.example.com"));
    for l in &lines {
        let node = l["node"].as_str().unwrap();
        let key = l["key"].as_str().unwrap();
        assert_eq!(l["found"], serde_json::Value::Bool(true), "{l}");
        let expected = single(facts_file(node), key, &[]);
        assert_eq!(
            serde_json::to_string(&l["value"]).unwrap(),
            expected,
            "{node} {key}"
        );
    }
}

#[test]
fn misses_and_merges_match_and_set_the_exit_status() {
    let keys = ["profile::base::users", "nope", "ntp::servers"];
    let mut args = vec![
        "--facts",
        "fixtures/facts/web01.yaml",
        "--facts",
        "fixtures/facts/db01.json",
        "--merge",
        "unique",
    ];
    args.extend(keys);
    let (lines, code) = batch(&args);
    assert_eq!(
        code, 2,
        "a hash cannot be merged with unique: an error wins over a miss"
    );
    assert_eq!(lines.len(), 6);
    for l in &lines {
        let node = l["node"].as_str().unwrap();
        let key = l["key"].as_str().unwrap();
        let expected = single(facts_file(node), key, &["--merge", "unique"]);
        let got = if l.get("error").is_some() {
            "error".to_string()
        } else if l["found"] == serde_json::Value::Bool(false) {
            "miss".to_string()
        } else {
            serde_json::to_string(&l["value"]).unwrap()
        };
        assert_eq!(got, expected, "{node} {key}");
    }
    let (_, code) = batch(&[
        "--facts",
        "fixtures/facts/web01.yaml",
        "--facts",
        "fixtures/facts/db01.json",
        "nope",
    ]);
    assert_eq!(code, 1);
}

/// A single lookup's stdout and exit status, with the given flags.
fn single_raw(facts: &str, key: &str, extra: &[&str]) -> (String, i32) {
    let o = bin()
        .current_dir(repo())
        .args([
            "--environmentpath",
            "fixtures/environments",
            "--facts",
            facts,
            key,
        ])
        .args(extra)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        o.status.code().unwrap_or(-1),
    )
}

#[test]
fn every_answer_changing_flag_applies_as_in_single_lookups() {
    let keys = ["profile::base::users", "nope", "ntp::servers"];
    let flag_sets: &[&[&str]] = &[
        &["--merge", "deep"],
        &["--merge", "hash"],
        &["--merge", "deep", "--knock-out-prefix", "--"],
        &[
            "--merge",
            "deep",
            "--sort-merged-arrays",
            "--merge-hash-arrays",
        ],
        &["--strict", "off"],
        &["--var", "role=db"],
        &["--environment", "production"],
        &["--default", "fallback"],
        &["--type", "Array"],
        &["--type", "Hash", "--default", "x"],
        &["--default", "x", "--type", "String"],
        &["--render-as", "s"],
        &["--render-as", "yaml", "--default", "d"],
        &["--render-as", "binary"],
    ];
    for &flags in flag_sets {
        let mut args = vec![
            "--facts",
            "fixtures/facts/web01.yaml",
            "--facts",
            "fixtures/facts/db01.json",
        ];
        args.extend(flags);
        args.extend(keys);
        let (lines, code) = batch(&args);
        assert_eq!(lines.len(), 6, "{flags:?}");
        let mut want_code = 0;
        for l in &lines {
            let node = l["node"].as_str().unwrap();
            let key = l["key"].as_str().unwrap();
            let (out, status) = single_raw(facts_file(node), key, flags);
            want_code = want_code.max(status);
            match status {
                0 => {
                    assert!(l.get("error").is_none(), "{flags:?} {l}");
                    if let Some(r) = l.get("rendered") {
                        assert_eq!(r.as_str().unwrap(), out, "{flags:?} {node} {key}");
                    } else {
                        // Compare through the JSON renderer.
                        let mut f = flags.to_vec();
                        f.extend(["--render-as", "json"]);
                        let (json, _) = single_raw(facts_file(node), key, &f);
                        assert_eq!(
                            serde_json::to_string(&l["value"]).unwrap(),
                            json.trim_end(),
                            "{flags:?} {node} {key}"
                        );
                    }
                    let defaulted = l.get("default").is_some();
                    assert_eq!(l["found"], serde_json::Value::Bool(!defaulted), "{l}");
                }
                1 => assert_eq!(l["found"], serde_json::Value::Bool(false), "{flags:?} {l}"),
                _ => assert!(l.get("error").is_some(), "{flags:?} {node} {key}: {l}"),
            }
        }
        assert_eq!(code, want_code, "{flags:?}");
    }
}
