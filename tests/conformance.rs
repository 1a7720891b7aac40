//! Conformance tests: run `hiera-lookup` over every query recorded from real Puppet under
//! tests/conformance/<suite>/<case>/ and compare stdout, exit status and error text.
//!
//! One test per suite (core, layers, explain, types, backends). Queries using `--explain`/`--explain-options` belong to the `explain`
//! test wherever they live (as do all queries of directories named `explain*`); the others to the
//! suite of their directory. Every mismatch is collected and reported at the end.
//!
//! `CONFORMANCE_FILTER=substring` keeps only queries whose "<dir>/<case>/<id>" contains it.
//! `CONFORMANCE_TIMEOUT=seconds` (default 30) bounds each run of the binary.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hiera-lookup");

struct Query {
    dir: String,
    case_name: String,
    case_dir: PathBuf,
    id: String,
    args: Vec<String>,
}

impl Query {
    fn label(&self) -> String {
        format!("{}/{}/{}", self.dir, self.case_name, self.id)
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("conformance")
}

/// Splits a query's argument text: whitespace separates words, single quotes group (and join
/// with adjacent text). Same rules as record.sh.
fn split_args(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut in_quote, mut have) = (false, false);
    for c in s.chars() {
        if in_quote {
            if c == '\'' {
                in_quote = false;
            } else {
                cur.push(c);
            }
        } else if c == '\'' {
            in_quote = true;
            have = true;
        } else if c.is_whitespace() {
            if have {
                out.push(std::mem::take(&mut cur));
                have = false;
            }
        } else {
            cur.push(c);
            have = true;
        }
    }
    if in_quote {
        return Err("unbalanced single quote".to_string());
    }
    if have {
        out.push(cur);
    }
    Ok(out)
}

fn is_explain(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--explain" || a == "--explain-options")
}

fn sorted_dirs(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Reads every query of every case under the suite directories; bad query lines are returned as
/// problems instead of being silently skipped.
fn load_all(problems: &mut Vec<String>) -> Vec<Query> {
    let mut queries = Vec::new();
    for suite_dir in sorted_dirs(&root()) {
        let dir = suite_dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        for case_dir in sorted_dirs(&suite_dir) {
            let qfile = case_dir.join("queries");
            let Ok(text) = fs::read_to_string(&qfile) else {
                continue;
            };
            let case_name = case_dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let case_dir = case_dir.canonicalize().unwrap_or(case_dir);
            for line in text.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let (id, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
                match split_args(rest) {
                    Ok(args) => queries.push(Query {
                        dir: dir.clone(),
                        case_name: case_name.clone(),
                        case_dir: case_dir.clone(),
                        id: id.to_string(),
                        args,
                    }),
                    Err(e) => problems.push(format!("{dir}/{case_name}/{id}: bad query line: {e}")),
                }
            }
        }
    }
    queries
}

struct Outcome {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    timed_out: bool,
}

fn run(q: &Query, timeout: Duration) -> Result<Outcome, String> {
    let mut child = Command::new(BIN)
        .args(&q.args)
        // Never the machine's own puppet.conf (it could move the environmentpath).
        .env("HIERA_LOOKUP_PUPPET_CONF", "/dev/null")
        .current_dir(&q.case_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {BIN}: {e}"))?;
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_end(&mut b);
        }
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_end(&mut b);
        }
        b
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st.code(),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                timed_out = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("wait failed: {e}")),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Ok(Outcome {
        status,
        stdout,
        stderr,
        timed_out,
    })
}

fn replace_bytes(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

fn with_case_placeholder(bytes: &[u8], case_dir: &Path) -> String {
    let canon = case_dir.to_string_lossy();
    let b = replace_bytes(bytes, canon.as_bytes(), b"<CASE>");
    String::from_utf8_lossy(&b).into_owned()
}

/// Shortens a line for the report, keeping it readable (escapes control characters).
fn show(s: &str) -> String {
    const MAX: usize = 160;
    // escape_debug also escapes ' which only adds noise to Puppet's quoted messages.
    let mut out: String = s.escape_debug().to_string().replace("\\'", "'");
    if out.chars().count() > MAX {
        out = out.chars().take(MAX).collect::<String>() + "…";
    }
    format!("\"{out}\"")
}

/// Byte length of the longest common prefix of `a` and `b`, on a char boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, ca), cb)| ca != cb)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

/// Shows `expected` and `got` from a little before the point where they diverge, so that long
/// lines (JSON, error messages) point at the difference instead of being cut before it.
fn show_pair(expected: &str, got: &str) -> String {
    let n = common_prefix(expected, got);
    let mut from = n.saturating_sub(40);
    while !expected.is_char_boundary(from) {
        from -= 1;
    }
    if from == 0 {
        return format!("expected {} got {}", show(expected), show(got));
    }
    let tail = |s: &str| format!("…{}", &show(&s[from..])[1..]);
    format!(
        "(from char {from}) expected \"{} got \"{}",
        tail(expected),
        tail(got)
    )
}

fn first_diff(expected: &str, got: &str) -> String {
    let e: Vec<&str> = expected.split_inclusive('\n').collect();
    let g: Vec<&str> = got.split_inclusive('\n').collect();
    for i in 0..e.len().max(g.len()) {
        match (e.get(i), g.get(i)) {
            (Some(el), Some(gl)) if el != gl => {
                return format!("stdout line {}: {}", i + 1, show_pair(el, gl));
            }
            (Some(el), None) => {
                return format!("stdout line {}: expected {} got <no line>", i + 1, show(el))
            }
            (None, Some(gl)) => {
                return format!("stdout line {}: expected <no line> got {}", i + 1, show(gl))
            }
            _ => {}
        }
    }
    "stdout differs".to_string()
}

/// Explains why the expected error text is not in stderr: aligned on the stderr position that
/// matches the longest prefix of it when there is one.
fn err_diff(expected: &str, stderr: &str) -> String {
    let probe_len = common_prefix(expected, &expected[..expected.len().min(24)]);
    let probe = &expected[..probe_len];
    let best = stderr
        .match_indices(probe)
        .map(|(i, _)| (common_prefix(expected, &stderr[i..]), i))
        .max();
    match best {
        Some((_, i)) if !probe.is_empty() => {
            let got_line = stderr[i..].lines().next().unwrap_or("");
            format!(
                "stderr error text differs: {}",
                show_pair(expected, got_line)
            )
        }
        _ => {
            let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            format!("stderr lacks {} (got {})", show(expected), show(first))
        }
    }
}

/// Checks one query; returns the list of problems (empty = pass).
fn check(q: &Query, timeout: Duration) -> Vec<String> {
    let exp_dir = q.case_dir.join("expected");
    let read = |ext: &str| fs::read_to_string(exp_dir.join(format!("{}.{ext}", q.id)));
    let (Ok(exp_out), Ok(exp_status)) = (read("out"), read("status")) else {
        return vec!["not recorded (run tests/conformance/record.sh)".to_string()];
    };
    let exp_status = exp_status.trim();
    let exp_err = if exp_status == "2" {
        read("err")
            .ok()
            .map(|s| s.strip_suffix('\n').unwrap_or(&s).to_string())
    } else {
        None
    };
    let got = match run(q, timeout) {
        Ok(o) => o,
        Err(e) => return vec![e],
    };
    let mut problems = Vec::new();
    let stdout = with_case_placeholder(&got.stdout, &q.case_dir);
    let stderr = with_case_placeholder(&got.stderr, &q.case_dir);
    let first_err_line = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let got_status = match (got.timed_out, got.status) {
        (true, _) => format!("timeout after {}s", timeout.as_secs()),
        (false, Some(c)) => c.to_string(),
        (false, None) => "killed by a signal".to_string(),
    };
    if got_status != exp_status {
        let mut p = format!("status: expected {exp_status} got {got_status}");
        if !first_err_line.is_empty() {
            p.push_str(&format!(" (stderr: {})", show(first_err_line)));
        }
        problems.push(p);
    }
    if stdout != exp_out {
        problems.push(first_diff(&exp_out, &stdout));
    }
    if let Some(e) = exp_err {
        if !stderr.contains(&e) {
            problems.push(err_diff(&e, &stderr));
        }
    }
    problems
}

/// `known-differences.txt`: queries where hiera-lookup knowingly differs from the recording
/// (one `<dir>/<case>/<id>  reason` per line). They must still differ: one that starts to
/// match is reported, so that the list only ever shrinks.
fn known_differences() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("known-differences.txt")).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn run_suite(suite: &str) {
    let root = root();
    let known = known_differences();
    let mut problems = Vec::new();
    let all = load_all(&mut problems);
    let filter = std::env::var("CONFORMANCE_FILTER").unwrap_or_default();
    let timeout = Duration::from_secs(
        std::env::var("CONFORMANCE_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    );
    let in_suite = |q: &Query| {
        if suite == "explain" {
            is_explain(&q.args) || q.dir.starts_with("explain")
        } else {
            q.dir == suite && !is_explain(&q.args)
        }
    };
    let dir_exists = if suite == "explain" {
        sorted_dirs(&root).iter().any(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("explain"))
        }) || all.iter().any(|q| is_explain(&q.args))
    } else {
        root.join(suite).is_dir()
    };
    if !dir_exists {
        eprintln!("conformance {suite}: no tests/conformance/{suite} directory, nothing to check");
        return;
    }
    let selected: Vec<Query> = all.into_iter().filter(|q| in_suite(q)).collect();
    // Problems in query files of this suite count as failures.
    problems.retain(|p| {
        let dir = p.split('/').next().unwrap_or("");
        suite == "explain" || dir == suite
    });
    if selected.is_empty() {
        panic!("conformance {suite}: the suite directory exists but holds no queries");
    }
    let selected: Vec<Query> = selected
        .into_iter()
        .filter(|q| q.label().contains(&filter))
        .collect();
    let total = selected.len();

    // Run queries on a few threads; each query is an independent process.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<String>)>> = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(q) = selected.get(i) else { break };
                let mut p = check(q, timeout);
                if known.contains(&q.label()) {
                    p = if p.is_empty() {
                        vec!["matches Puppet now: remove it from known-differences.txt".to_string()]
                    } else {
                        Vec::new()
                    };
                }
                if !p.is_empty() {
                    if let Ok(mut r) = results.lock() {
                        r.push((i, p));
                    }
                }
            });
        }
    });
    let mut failures = results.into_inner().unwrap_or_default();
    failures.sort_by_key(|(i, _)| *i);

    let known_here = selected
        .iter()
        .filter(|q| known.contains(&q.label()))
        .count();
    if failures.is_empty() && problems.is_empty() {
        eprintln!(
            "conformance {suite}: {} of {total} queries match Puppet, {known_here} known differences (known-differences.txt)",
            total - known_here
        );
        return;
    }
    let mut report = String::new();
    for p in &problems {
        report.push_str(&format!("{p}\n"));
    }
    for (i, ps) in &failures {
        let q = &selected[*i];
        report.push_str(&format!("{}  [{}]\n", q.label(), q.args.join(" ")));
        for p in ps {
            report.push_str(&format!("    {p}\n"));
        }
    }
    // Per-case tally makes it easy to see which areas are furthest off.
    let mut per_case: Vec<(String, usize, usize)> = Vec::new();
    for (i, q) in selected.iter().enumerate() {
        let name = format!("{}/{}", q.dir, q.case_name);
        let failed = failures.iter().any(|(j, _)| *j == i) as usize;
        match per_case.last_mut() {
            Some(last) if last.0 == name => {
                last.1 += 1;
                last.2 += failed;
            }
            _ => per_case.push((name, 1, failed)),
        }
    }
    report.push_str("\nper case (failed/total):\n");
    for (name, n, f) in per_case.iter().filter(|c| c.2 > 0) {
        report.push_str(&format!("    {name}: {f}/{n}\n"));
    }
    panic!(
        "conformance {suite}: {} of {total} queries differ from Puppet{}\n{report}",
        failures.len(),
        if problems.is_empty() {
            String::new()
        } else {
            format!(", {} bad query lines", problems.len())
        }
    );
}

#[test]
fn core() {
    run_suite("core");
}

#[test]
fn layers() {
    run_suite("layers");
}

#[test]
fn explain() {
    run_suite("explain");
}

// Suites recorded for later issues (data types, backends): same format, same rules.
#[test]
fn types() {
    run_suite("types");
}

#[test]
fn backends() {
    run_suite("backends");
}

#[test]
fn split_args_rules() {
    assert_eq!(split_args("a  b\tc").unwrap(), ["a", "b", "c"]);
    assert_eq!(
        split_args("--default 'a b' x'y z'w ''").unwrap(),
        ["--default", "a b", "xy zw", ""]
    );
    assert!(split_args("'open").is_err());
}

/// A recorded query as library calls: the environment, the node's facts file and the
/// lookup's settings.
struct LibraryQuery {
    env: hiera_engine::environment::EnvOptions,
    facts: Option<String>,
    keys: Vec<String>,
    merge: Option<hiera_engine::merge::MergeStrategy>,
    format: hiera_engine::format::Format,
    finish: hiera_engine::answer::Finish,
    settings: hiera_engine::Settings,
    /// `--explain` or `--explain-options`.
    explain: bool,
    /// `--type` was given.
    typed: bool,
}

/// The library calls of a recorded query; `None` for queries whose flags are command-line
/// matters (`--` and the like, usage errors).
fn library_query(q: &Query) -> Option<LibraryQuery> {
    use hiera_engine::answer::Finish;
    use hiera_engine::environment::EnvOptions;
    use hiera_engine::format::Format;
    use hiera_engine::merge::MergeStrategy;
    use hiera_engine::scope::Strict;
    use hiera_engine::Settings;
    let mut env = EnvOptions {
        cwd: q.case_dir.clone(),
        ..Default::default()
    };
    let (mut facts, mut keys, mut merge, mut format) = (None, Vec::new(), None, None);
    let (mut knockout, mut sort_arrays, mut merge_hash_arrays) = (None, false, false);
    let (mut explain, mut explain_options, mut strict) = (false, false, Strict::Error);
    let mut finish = Finish::default();
    let mut typed = false;
    let mut it = q.args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned();
        match a.as_str() {
            "--node" => {
                val()?;
            }
            "--facts" => facts = Some(val()?),
            "--hiera_config" => env.hiera_config = Some(val()?.into()),
            "--environmentpath" => env.environmentpath = Some(val()?.into()),
            "--environment" => env.environment = Some(val()?),
            "--modulepath" => env.modulepath = Some(val()?),
            "--basemodulepath" => env.basemodulepath = Some(val()?),
            "--codedir" => env.codedir = Some(val()?.into()),
            "--confdir" => env.confdir = Some(val()?.into()),
            "--merge" => merge = Some(val()?),
            "--knock-out-prefix" => knockout = Some(val()?),
            "--sort-merged-arrays" => sort_arrays = true,
            "--merge-hash-arrays" => merge_hash_arrays = true,
            "--render-as" => format = Some(Format::parse(&val()?).ok()?),
            "--default" => finish.default = Some(val()?),
            "--type" => {
                finish.set_type(&val()?).ok()?;
                typed = true;
            }
            "--explain" => explain = true,
            "--explain-options" => explain_options = true,
            "--strict" => {
                strict = match val()?.as_str() {
                    "off" => Strict::Off,
                    "warning" => Strict::Warning,
                    "error" => Strict::Error,
                    _ => return None,
                }
            }
            k if !k.starts_with('-') => keys.push(k.to_string()),
            _ => return None,
        }
    }
    let any_explain = explain || explain_options;
    let only_options = explain_options && !explain;
    if keys.is_empty() && only_options {
        keys.push("__global__".into());
    }
    if keys.is_empty() {
        return None; // a usage error of the command line
    }
    let deep_only = knockout.is_some() || sort_arrays || merge_hash_arrays;
    if deep_only && merge.as_deref() != Some("deep") {
        return None; // the command line refuses these flags without --merge deep
    }
    let merge = match merge {
        Some(m) => {
            match MergeStrategy::from_cli(&m, knockout.as_deref(), sort_arrays, merge_hash_arrays) {
                Ok(m) => Some(m),
                Err(_) => return None, // a usage error of the command line
            }
        }
        None => None,
    };
    Some(LibraryQuery {
        env,
        facts,
        keys,
        merge,
        format: format.unwrap_or(if any_explain { Format::S } else { Format::Yaml }),
        finish,
        settings: Settings {
            strict,
            explain,
            explain_options_only: only_options,
            redact: false,
            // A single lookup: Puppet's error without the private key.
            secrets: hiera_engine::Secrets::Decrypt,
        },
        explain: any_explain,
        typed,
    })
}

impl LibraryQuery {
    /// The layers and the node's scope, as the command builds them (`Ok(None)`: the command's
    /// own message, not the library's).
    fn node(
        &self,
        q: &Query,
    ) -> Result<Option<(hiera_engine::Layers, hiera_engine::scope::Scope)>, hiera_engine::Error>
    {
        use hiera_engine::scope::Scope;
        use hiera_facts::load_facts_file;
        let layers = self.env.layers()?;
        let Some(facts) = &self.facts else {
            return Ok(None);
        };
        let facts = load_facts_file(&q.case_dir.join(facts), facts)?;
        if facts.is_empty() {
            return Ok(None);
        }
        Scope::check_facts(&facts)?;
        let mut scope = Scope::from_facts(facts, &self.env.environment_name());
        for (name, value) in self.env.settings_vars() {
            scope.set(&name, value);
        }
        Ok(Some((layers, scope)))
    }
}

/// The tests that answer through the library set the process's working directory per case
/// (relative eyaml key paths and HOCON includes are read from it, as by Puppet): one at a time.
static CWD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Answers one recorded query through the library API alone (no binary): the documented
/// embedding path, explain included. `None` only for queries whose flags are command-line
/// matters (`--` and the like). Returns (stdout, status, error message).
fn library_answer(q: &Query) -> Option<(String, i32, Option<String>)> {
    use hiera_engine::answer::Answer;
    use hiera_engine::Session;
    let lq = library_query(q)?;
    // Like Puppet, the engine reads relative eyaml key paths and HOCON `file()` includes from
    // the working directory.
    std::env::set_current_dir(&q.case_dir).ok()?;
    // What Puppet prints on stdout before failing (start-up notices), then the message.
    let error = |e: hiera_engine::Error| Some((e.stdout(), 2, Some(e.to_string())));
    let (layers, scope) = match lq.node(q) {
        Ok(node) => node?,
        Err(e) => return error(e),
    };
    let (keys, format) = (&lq.keys, lq.format);
    let mut session = Session::new(scope, layers, lq.settings.clone());
    let answer = session
        .lookup(keys, lq.merge.as_ref())
        .and_then(|o| lq.finish.apply(o));
    // deep_merge's merge_debug trace precedes the answer on stdout.
    let trace = session.take_merge_trace();
    if lq.explain {
        let extra = match &answer {
            Ok(Answer::Found(_) | Answer::Default(_)) => None,
            Ok(Answer::NotFound) => Some(Session::not_found_message(keys)),
            Err(e) if e.is_lookup_error() => Some(e.to_string()),
            Err(e) => return error(e.clone()),
        };
        if let (Some(t), Some(ex)) = (extra, session.explainer_mut()) {
            ex.root_text(t);
        }
        let ex = session.explainer()?;
        let text = ex.render(format).ok()?;
        return Some((trace + &text, 0, None));
    }
    match answer {
        Ok(a) => match a.value() {
            Some(v) => match format.render(v) {
                Ok(text) => Some((trace + &text, 0, None)),
                Err(e) => error(e),
            },
            None => Some((trace, a.status(), None)),
        },
        Err(e) => Some((trace + &e.stdout(), 2, Some(e.to_string()))),
    }
}

/// The library API gives the recorded answers too, not only the binary: every recorded
/// query (explain included) gives the recorded status and stdout byte for byte, and an error
/// whose message contains Puppet's.
#[test]
fn library_api_gives_the_recorded_answers() {
    let _cwd = CWD.lock().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    let queries = load_all(&mut problems);
    let known = known_differences();
    let (mut checked, mut failures) = (0, Vec::new());
    for q in &queries {
        if known.contains(&q.label()) {
            continue;
        }
        let exp = q.case_dir.join("expected");
        let (Ok(out), Ok(status)) = (
            fs::read_to_string(exp.join(format!("{}.out", q.id))),
            fs::read_to_string(exp.join(format!("{}.status", q.id))),
        ) else {
            continue;
        };
        let want_err = fs::read_to_string(exp.join(format!("{}.err", q.id))).ok();
        let Some((got, code, err)) = library_answer(q) else {
            continue;
        };
        checked += 1;
        let want: i32 = status.trim().parse().unwrap_or(-1);
        let case = q.case_dir.to_string_lossy();
        let got = got.replace(&*case, "<CASE>");
        let err = err.map(|e| e.replace(&*case, "<CASE>"));
        let err_ok = match (&want_err, &err) {
            (Some(w), Some(e)) => {
                let w = w.strip_suffix('\n').unwrap_or(w);
                e.contains(w) || e.lines().collect::<Vec<_>>().join(" ").contains(w)
            }
            _ => true,
        };
        if code != want || got != out || !err_ok {
            failures.push(format!(
                "{}: status {code} (want {want}), stdout {}, error {:?} (want {:?})",
                q.label(),
                show_pair(&out, &got),
                err,
                want_err
            ));
        }
    }
    assert!(checked > 3900, "only {checked} queries checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[path = "common/where_check.rs"]
mod where_check;

/// `where` agrees with the lookup on every recorded tree (the realworld control repo
/// included): for each recorded node and configuration, every key the node can see and every
/// key the queries ask, the definition `where` says wins holds the lookup's answer, and the
/// merge of those it says contribute is the lookup's merged answer.
#[test]
fn where_agrees_with_the_lookup_on_every_recorded_tree() {
    use hiera_engine::store::DataFiles;
    use hiera_engine::where_::Reporter;
    use hiera_engine::Session;
    use std::collections::{HashMap, HashSet};
    let _cwd = CWD.lock().unwrap_or_else(|e| e.into_inner());
    let mut problems = Vec::new();
    let queries = load_all(&mut problems);
    let mut checked = where_check::Checked::default();
    let mut failures = Vec::new();
    // Per case: its data files, read once; per node and configuration, the keys checked.
    let mut cases: HashMap<PathBuf, (DataFiles, Reporter)> = HashMap::new();
    let mut done: HashSet<(PathBuf, Vec<String>, String)> = HashSet::new();
    let mut setups: HashSet<(PathBuf, Vec<String>)> = HashSet::new();
    for q in &queries {
        let Some(lq) = library_query(q) else {
            continue;
        };
        if lq.explain || lq.finish.default.is_some() || lq.typed {
            continue;
        }
        // Relative eyaml key paths and HOCON includes are read from the working directory.
        if std::env::set_current_dir(&q.case_dir).is_err() {
            continue;
        }
        let Ok(Some((layers, scope))) = lq.node(q) else {
            continue;
        };
        let (files, reporter) = cases.entry(q.case_dir.clone()).or_insert_with(|| {
            let files = DataFiles::default();
            (files.clone(), Reporter::new(files, lq.settings.strict))
        });
        let session = || {
            Session::with_files(
                scope.clone(),
                layers.clone(),
                lq.settings.clone(),
                files.clone(),
            )
        };
        // The node and configuration: the flags without the keys and the output format.
        let mut setup = Vec::new();
        let mut args = q.args.iter();
        while let Some(a) = args.next() {
            if a == "--render-as" {
                args.next();
            } else if a.starts_with('-') || !lq.keys.contains(a) {
                setup.push(a.clone());
            }
        }
        let mut keys = lq.keys.clone();
        // Every key of the tree under its own merge (a `--merge` query checks its keys).
        if lq.merge.is_none() && setups.insert((q.case_dir.clone(), setup.clone())) {
            if let Ok(all) = session().all_keys() {
                keys.extend(all);
            }
        }
        // One session for `where` and one for the lookup, each answering every key.
        let (mut for_where, mut for_lookup) = (session(), session());
        for key in keys {
            if !done.insert((q.case_dir.clone(), setup.clone(), key.clone())) {
                continue;
            }
            let r = where_check::check(
                reporter,
                &mut for_where,
                &mut for_lookup,
                &key,
                lq.merge.as_ref(),
                &mut checked,
            );
            if let Err(e) = r {
                failures.push(format!("{}: {e}", q.label()));
            }
        }
    }
    assert!(
        checked.first > 1000 && checked.merged > 200,
        "too few answers compared: {checked:?}"
    );
    assert!(
        failures.is_empty(),
        "{} disagreements ({checked:?}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
