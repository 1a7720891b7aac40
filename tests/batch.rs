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

/// A temp dir holding the inputs some flags name: a global hiera.yaml with its data, an empty
/// module directory and a trusted-data file.
fn flag_inputs() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hiera-lookup-batch-{}", std::process::id()));
    std::fs::create_dir_all(d.join("global")).unwrap();
    std::fs::create_dir_all(d.join("nomodules")).unwrap();
    std::fs::write(
        d.join("hiera.yaml"),
        "version: 5\nhierarchy:\n  - name: global\n    datadir: global\n    path: common.yaml\n",
    )
    .unwrap();
    std::fs::write(
        d.join("global/common.yaml"),
        "ntp::servers: [global.example, \"--0.pool.ntp.org\", 1.pool.ntp.org]\n\
         profile::base::users: {dave: {uid: 1004}}\n\
         global::undef: \"x%{no_such_var}\"\n\
         global::role: \"%{role}\"\n",
    )
    .unwrap();
    // Every node claims web01's certname: its node data answers for db01 too.
    std::fs::write(d.join("trusted.yaml"), "certname: web01.example.com\n").unwrap();
    d
}

/// Asserts that a batch line answers as the single lookup of its node and key with `flags`
/// does; returns that lookup's exit status.
fn same_as_single(l: &serde_json::Value, flags: &[&str]) -> i32 {
    let node = l["node"].as_str().unwrap();
    let key = l["key"].as_str().unwrap();
    let (out, status) = single_raw(facts_file(node), key, flags);
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
    status
}

#[test]
fn all_keys_with_answer_changing_flags_match_single_lookups() {
    // --all answers every key a node sees: the flags apply to each as in a single lookup.
    let flag_sets: &[&[&str]] = &[
        &["--merge", "deep"],
        &["--merge", "unique"],
        &["--render-as", "s"],
        &["--type", "String", "--default", "d"],
    ];
    for &flags in flag_sets {
        let (lines, code) = batch(&[&["--facts-dir", "fixtures/facts", "--all"], flags].concat());
        assert!(lines.len() > 20, "{flags:?} {lines:?}");
        let mut want_code = 0;
        for l in &lines {
            want_code = want_code.max(same_as_single(l, flags));
        }
        assert_eq!(code, want_code, "{flags:?}");
    }
}

#[test]
fn every_answer_changing_flag_applies_as_in_single_lookups() {
    let keys = [
        "profile::base::users",
        "nope",
        "ntp::servers",
        "profile::web::vhosts",
        "profile::base::motd",
        "global::undef",
        "global::role",
    ];
    let inputs = flag_inputs();
    let hiera_config = format!("--hiera_config={}", inputs.join("hiera.yaml").display());
    let modulepath = format!("--modulepath={}", inputs.join("nomodules").display());
    let trusted = format!("--trusted={}", inputs.join("trusted.yaml").display());
    // Sets that start with --hiera_config are compared with that flag alone (its global data
    // is what the other flags act on), the others with no flags.
    let flag_sets: &[&[&str]] = &[
        &["--merge", "first"],
        &["--merge", "unique"],
        &["--merge", "hash"],
        &[&hiera_config],
        &[&hiera_config, "--merge", "deep"],
        &[&hiera_config, "--merge", "deep", "--knock-out-prefix", "--"],
        &[
            &hiera_config,
            "--merge",
            "deep",
            "--sort-merged-arrays",
            "--merge-hash-arrays",
        ],
        &[&hiera_config, "--strict", "warning"],
        &[&hiera_config, "--strict", "off"],
        &[&hiera_config, "--var", "role=db"],
        &[&modulepath],
        &[&trusted],
        &["--environment", "staging"],
        &["--default", "fallback"],
        &["--type", "Array"],
        &["--type", "Hash", "--default", "x"],
        &["--default", "x", "--type", "String"],
        &["--type", "Integer", "--default", "5"],
        &["--type", "Optional[String]"],
        &[
            "--merge",
            "unique",
            "--type",
            "Array[String]",
            "--render-as",
            "s",
        ],
        &["--render-as", "json"],
        &["--render-as", "s"],
        &["--render-as", "yaml", "--default", "d"],
        &["--render-as", "binary"],
    ];
    let base = [
        "--facts",
        "fixtures/facts/web01.yaml",
        "--facts",
        "fixtures/facts/db01.json",
    ];
    let (plain, _) = batch(&[&base[..], &keys[..]].concat());
    let (plain_hc, _) = batch(&[&base[..], &[hiera_config.as_str()], &keys[..]].concat());
    let mut unchanged = Vec::new();
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
        if lines.is_empty() {
            // An error before any node (e.g. an unknown environment): every single lookup fails.
            assert_eq!(code, 2, "{flags:?}");
            for node in ["web01.example.com", "db01.example.com"] {
                for key in keys {
                    let (_, status) = single_raw(facts_file(node), key, flags);
                    assert_eq!(status, 2, "{flags:?} {node} {key}");
                }
            }
            continue;
        }
        assert_eq!(lines.len(), 2 * keys.len(), "{flags:?}");
        let baseline = if flags.len() > 1 && flags[0] == hiera_config {
            &plain_hc
        } else {
            &plain
        };
        if lines == *baseline {
            unchanged.push(flags);
        }
        let mut want_code = 0;
        for l in &lines {
            want_code = want_code.max(same_as_single(l, flags));
        }
        assert_eq!(code, want_code, "{flags:?}");
    }
    std::fs::remove_dir_all(inputs).unwrap();
    // Each flag set changes some answer, or it would prove nothing here.
    assert!(unchanged.is_empty(), "no answer changed with {unchanged:?}");
}

/// `--facts-dir FLEET --all | head -1`: once stdout's reader has left, the batch stops (no
/// worker takes another node) and exits quietly, instead of answering the whole fleet. The
/// fleet here would take a debug build minutes to answer; the bound is generous, as the
/// test measures no speed, only that the batch stops at all.
#[test]
fn a_batch_stops_when_its_reader_leaves() {
    use std::io::BufRead;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    const NODES: usize = 8000;
    const KEYS: usize = 200;
    let mut common = String::new();
    for k in 0..KEYS {
        common.push_str(&format!("key{k}: \"%{{facts.os.family}} {k}\"\n"));
    }
    let hiera = "---\nversion: 5\nhierarchy:\n  - name: os\n    path: \"os/%{facts.os.family}.yaml\"\n  - name: common\n    path: common.yaml\n";
    let dir = crate::scratch_tree::tree(
        "batch",
        "reader-leaves",
        &[("hiera.yaml", hiera), ("data/common.yaml", &common)],
    );
    std::fs::create_dir_all(dir.join("facts")).unwrap();
    for n in 0..NODES {
        let facts = format!(
            "{{\"os\":{{\"family\":\"{}\"}}}}",
            ["Debian", "RedHat", "Suse"][n % 3]
        );
        std::fs::write(dir.join(format!("facts/node{n:05}.json")), facts).unwrap();
    }
    let mut child = bin()
        .current_dir(&dir)
        .args(["--facts-dir", "facts", "--all", "--threads", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader leaves (the BufReader, and with it the pipe, was dropped above).
    assert!(first.starts_with("{\"node\":\"node00000\""), "{first}");
    let left = Instant::now();
    let bound = Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if left.elapsed() > bound {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("the batch still ran {bound:?} after its reader left");
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.is_empty(), "{stderr}");
    assert!(status.unwrap().code().is_some(), "ended by a signal");
}

/// `--all` lists the keys of every file-backed level, eyaml's included (it listed none of an
/// `eyaml_lookup_key` level's: a repo keeping its secrets there printed nothing); a level whose
/// keys only its function knows is named once in a warning, never silently dropped.
#[test]
fn all_lists_eyaml_levels_and_names_levels_it_cannot_list() {
    let dir = crate::scratch_tree::tree(
        "batch",
        "all-eyaml",
        &[
            (
                "hiera.yaml",
                "version: 5\nhierarchy:\n  - name: secrets\n    lookup_key: eyaml_lookup_key\n    path: secrets.yaml\n    options:\n      pkcs7_private_key: keys/none.pem\n      pkcs7_public_key: keys/none.pub.pem\n  - name: common\n    path: common.yaml\n  - name: vault\n    lookup_key: vault_lookup\n",
            ),
            ("data/common.yaml", "a: 1\n"),
            ("data/secrets.yaml", "b: plain\n"),
            ("facts/n1.yaml", "clientcert: n1\n"),
            ("facts/n2.yaml", "clientcert: n2\n"),
        ],
    );
    let o = bin()
        .current_dir(&*dir)
        .args(["--facts-dir", "facts", "--all"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let keys: Vec<(String, String)> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["node"].as_str().unwrap().into(),
                v["key"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = ["n1", "n2"]
        .iter()
        .flat_map(|n| ["b", "a"].map(|k| (n.to_string(), k.to_string())))
        .collect();
    assert_eq!(keys, want, "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.matches("Warning: level 'vault' (lookup_key: vault_lookup) cannot list its keys")
            .count(),
        1,
        "{err}"
    );
}
