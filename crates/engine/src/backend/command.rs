//! The external-command `lookup_key` backend (beyond Puppet): a hierarchy entry
//!
//! ```yaml
//! - name: vault
//!   lookup_key: command
//!   options:
//!     command: [./bin/vault-lookup, --mount, secret]   # or a single string: the program
//!     timeout: 5                                       # seconds, optional
//! ```
//!
//! runs the program once per (key, location, options, scope) with a JSON request on stdin
//! and reads a JSON answer from stdout. The protocol is in docs/backends.md:
//!
//! request  `{"protocol":1,"kind":"lookup_key","key":K,"location":L|null,"options":{...},"scope":{...}}`
//! answer   `{"found":true,"value":V}` or `{"found":false}`
//!
//! A relative program path with a `/` is taken from the hiera.yaml directory (a bare name is
//! searched in PATH), and the program runs in that directory. A non-zero exit, a timeout, or
//! an answer that is not one of the two shapes is an error naming the command and the key;
//! the program's stderr is shown only then.

use hiera_value::value::{Map, Value};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The version of the request format, sent as `protocol`.
pub(crate) const PROTOCOL: i64 = 1;

/// Timeout when neither the caller nor `options.timeout` gives one.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Answers one key from the command in `options.command`. `options` are the entry's
/// interpolated options (with Puppet's `path`/`uri` already added for a location),
/// `location` the location itself, `scope` the facts/trusted/variables hash, `config_dir`
/// the hiera.yaml directory and `timeout` the default when `options.timeout` is absent.
/// Answers are cached for the process by request text, so a batch asks once per node.
pub(crate) fn command_lookup(
    key: &str,
    options: &Map,
    location: Option<&str>,
    scope: &Value,
    config_dir: &Path,
    timeout: Duration,
) -> Result<Option<Value>, String> {
    let argv = command_argv(options)?;
    let shown = argv.join(" ");
    let fail = |why: String| format!("lookup_key command '{shown}' failed for key '{key}': {why}");
    let timeout = match options.get(&hiera_value::value::StrKey("timeout")) {
        None | Some(Value::Null) => timeout,
        Some(Value::Int(n)) if *n > 0 => Duration::from_secs(*n as u64),
        Some(Value::Float(f)) if *f > 0.0 && f.is_finite() => Duration::from_secs_f64(*f),
        Some(_) => {
            return Err(fail(
                "option 'timeout' must be a positive number of seconds".into(),
            ))
        }
    };
    let request = request_json(key, options, location, scope);

    static CACHE: OnceLock<Mutex<HashMap<String, Option<Value>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let cache_key = format!("{}\0{request}", config_dir.display());
    if let Some(hit) = lock(cache).get(&cache_key) {
        return Ok(hit.clone());
    }
    let out = run(&argv, config_dir, &request, timeout).map_err(fail)?;
    let answer = parse_answer(&out).map_err(fail)?;
    lock(cache).insert(cache_key, answer.clone());
    Ok(answer)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `options.command`: a program, or a non-empty array of program and arguments (strings;
/// numbers and booleans are written as in YAML). No shell is involved.
fn command_argv(options: &Map) -> Result<Vec<String>, String> {
    let bad = || {
        "lookup_key command: option 'command' must be a program path or a non-empty array [program, args...]"
            .to_string()
    };
    let word = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match options.get(&hiera_value::value::StrKey("command")) {
        Some(Value::String(s)) if !s.is_empty() => Ok(vec![s.clone()]),
        Some(Value::Array(a)) if !a.is_empty() => {
            let argv: Option<Vec<String>> = a.iter().map(word).collect();
            match argv {
                Some(v) if !v[0].is_empty() => Ok(v),
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

/// The request document (keys in this order; `options` and `scope` keep theirs).
fn request_json(key: &str, options: &Map, location: Option<&str>, scope: &Value) -> String {
    let mut req = serde_json::Map::default();
    req.insert("protocol".into(), PROTOCOL.into());
    req.insert("kind".into(), "lookup_key".into());
    req.insert("key".into(), key.into());
    req.insert(
        "location".into(),
        location.map_or(serde_json::Value::Null, Into::into),
    );
    req.insert(
        "options".into(),
        hiera_formats::json::to_serde(&Value::Hash(options.clone())),
    );
    req.insert("scope".into(), hiera_formats::json::to_serde(scope));
    serde_json::Value::Object(req).to_string()
}

/// Resolves the program: a relative path with a separator is relative to the hiera.yaml
/// directory; a bare name is left to PATH.
fn program_path(program: &str, config_dir: &Path) -> PathBuf {
    let p = Path::new(program);
    if p.is_absolute() || !program.contains('/') {
        p.to_path_buf()
    } else {
        config_dir.join(p)
    }
}

/// Environment variables a program inherits; everything else (tokens, eyaml keys passed in
/// the environment …) is withheld.
pub(crate) const PASSED_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Runs `argv` (a program and its arguments; a relative program path is taken from `dir`,
/// which is also its working directory) as the `command` backend runs its programs: `input`
/// on stdin, a withheld environment, its own process group killed on timeout, its output
/// bounded. Its stdout when it exits 0 within `timeout`, else why not (with its stderr).
/// Other runners of external programs (an External Node Classifier) share it.
pub fn run_program(
    argv: &[String],
    dir: &Path,
    input: &str,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    run(argv, dir, input, timeout)
}

/// Runs the program with `input` on stdin; its stdout when it exits 0 within `timeout`.
/// The program runs in a process group of its own: on timeout the whole group is killed, and
/// children it leaves behind holding its stdout do not stretch the timeout. Its stdout and
/// stderr are read up to [`MAX_COMMAND_OUTPUT`](hiera_value::limits::MAX_COMMAND_OUTPUT) each.
fn run(
    argv: &[String],
    config_dir: &Path,
    input: &str,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    use std::os::unix::process::CommandExt;
    use std::sync::mpsc;
    let (program, args) = argv.split_first().ok_or("empty command")?;
    // An absolute directory: a relative program path must not depend on how the platform
    // combines it with current_dir.
    let config_dir = std::path::absolute(config_dir).unwrap_or_else(|_| config_dir.to_path_buf());
    let config_dir = config_dir.as_path();
    let mut cmd = Command::new(program_path(program, config_dir));
    cmd.args(args)
        .current_dir(config_dir)
        .env_clear()
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in PASSED_ENV {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run it: {}", os_reason(&e)))?;
    let group = child.id() as i32;
    // The group we made (the program's pid is its id), and only it.
    let kill_group = || {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    };

    // Pipes are drained by threads so that neither side blocks on a full pipe.
    let stdin = child.stdin.take();
    let input = input.as_bytes().to_vec();
    std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            // A program that answers without reading its request closes the pipe: fine.
            let _ = s.write_all(&input);
        }
    });
    // Each reader sends its bytes, or None when the program printed more than the limit.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let limit = hiera_value::limits::MAX_COMMAND_OUTPUT;
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(limit as u64 + 1).read_to_end(&mut buf);
            }
            let _ = tx.send((buf.len() <= limit).then_some(buf));
        });
        rx
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );

    let start = Instant::now();
    let timed_out = || format!("timed out after {}", seconds(timeout));
    let too_much = |what: &str| {
        format!(
            "{what} is larger than {} MiB",
            hiera_value::limits::MAX_COMMAND_OUTPUT >> 20
        )
    };
    // Both pipes first (they end when every process holding them is done, or a limit is hit),
    // then the exit status, all within the one timeout.
    let mut pipes = [(out, None, "its answer"), (err, None, "its stderr")];
    for (rx, got, what) in pipes.iter_mut() {
        let left = timeout.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(Some(bytes)) => *got = Some(bytes),
            Ok(None) => {
                kill_group();
                let _ = child.wait();
                return Err(too_much(what));
            }
            Err(_) => {
                kill_group();
                let _ = child.wait();
                return Err(timed_out());
            }
        }
    }
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                kill_group();
                let _ = child.wait();
                return Err(timed_out());
            }
            Ok(None) => {
                std::thread::sleep(pause.min(timeout.saturating_sub(start.elapsed())));
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    let [(_, stdout, _), (_, stderr, _)] = pipes;
    let (stdout, stderr) = (stdout.unwrap_or_default(), stderr.unwrap_or_default());
    if !status.success() {
        let how = match status.code() {
            Some(c) => format!("exited with status {c}"),
            None => "was killed by a signal".to_string(),
        };
        let text = String::from_utf8_lossy(&stderr);
        let text = text.trim();
        return Err(if text.is_empty() {
            how
        } else {
            format!("{how}: {}", clip(text, 1000))
        });
    }
    Ok(stdout)
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}s", s as u64)
    } else {
        format!("{s}s")
    }
}

fn os_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// `{"found": true, "value": V}` → Some(V); `{"found": false}` → None; anything else is a
/// bad answer.
fn parse_answer(out: &[u8]) -> Result<Option<Value>, String> {
    let text = std::str::from_utf8(out).map_err(|_| "its answer is not UTF-8".to_string())?;
    let shape = r#"the answer must be {"found": true, "value": ...} or {"found": false}"#;
    let v = hiera_formats::json::parse(text).map_err(|e| {
        if text.trim().is_empty() {
            format!("it printed no answer ({shape})")
        } else {
            format!("its answer is not JSON ({e}): {}", clip(text.trim(), 200))
        }
    })?;
    let bad = || format!("{shape}, got: {}", clip(text.trim(), 200));
    let Value::Hash(h) = &v else {
        return Err(bad());
    };
    match h.get(&hiera_value::value::StrKey("found")) {
        Some(Value::Bool(true)) => h
            .get(&hiera_value::value::StrKey("value"))
            .cloned()
            .map(Some)
            .ok_or_else(bad),
        Some(Value::Bool(false)) => Ok(None),
        _ => Err(bad()),
    }
}

/// The `command` lookup_key backend, with the default timeout.
pub(crate) struct CommandBackend;

impl crate::backend::custom::LookupKeyBackend for CommandBackend {
    /// Outside the engine: an empty scope, commands run in the working directory.
    fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String> {
        let location = ["path", "uri"]
            .iter()
            .find_map(|k| options.get(&Value::str(*k)).and_then(Value::as_str));
        command_lookup(
            key,
            options,
            location,
            &Value::Hash(Map::default()),
            Path::new("."),
            DEFAULT_TIMEOUT,
        )
    }

    fn lookup_key_call(
        &self,
        key: &str,
        call: &crate::backend::custom::Call,
        host: &mut dyn crate::backend::custom::Host,
    ) -> crate::Result<Option<crate::backend::custom::Found>> {
        let scope = host.scope().to_value();
        let dir = Path::new(call.config_file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        command_lookup(
            key,
            &call.options(),
            call.location.map(|l| l.location.as_str()),
            &scope,
            &dir,
            DEFAULT_TIMEOUT,
        )
        .map(|v| v.map(crate::backend::custom::Found::Raw))
        .map_err(crate::Error::lookup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(
            parse_answer(br#"{"found": true, "value": [1, "a"]}"#),
            Ok(Some(Value::Array(vec![Value::Int(1), Value::str("a")])))
        );
        assert_eq!(
            parse_answer(br#"{"found": true, "value": null}"#),
            Ok(Some(Value::Null))
        );
        assert_eq!(parse_answer(br#" {"found": false} "#), Ok(None));
        assert!(parse_answer(br#"{"found": true}"#)
            .unwrap_err()
            .starts_with("the answer must be"));
        assert!(parse_answer(br#"{"found": "yes"}"#).is_err());
        assert!(parse_answer(b"[]").is_err());
        assert!(parse_answer(b"")
            .unwrap_err()
            .starts_with("it printed no answer"));
        assert!(parse_answer(b"nope")
            .unwrap_err()
            .starts_with("its answer is not JSON"));
        assert_eq!(
            parse_answer(b"\xff").unwrap_err(),
            "its answer is not UTF-8"
        );
    }

    #[test]
    fn argv_and_request() {
        let mut o = Map::default();
        assert!(command_argv(&o).is_err());
        o.insert(Value::str("command"), Value::str("./x"));
        assert_eq!(command_argv(&o).unwrap(), ["./x"]);
        o.insert(
            Value::str("command"),
            Value::Array(vec![Value::str("./x"), Value::Int(3), Value::Bool(true)]),
        );
        assert_eq!(command_argv(&o).unwrap(), ["./x", "3", "true"]);
        o.insert(Value::str("command"), Value::Array(vec![]));
        assert!(command_argv(&o).is_err());
        let mut scope = Map::default();
        scope.insert(Value::Int(1), Value::Float(f64::NAN));
        let mut o = Map::default();
        o.insert(Value::str("path"), Value::str("/d/x.yaml"));
        assert_eq!(
            request_json("k", &o, Some("/d/x.yaml"), &Value::Hash(scope)),
            r#"{"protocol":1,"kind":"lookup_key","key":"k","location":"/d/x.yaml","options":{"path":"/d/x.yaml"},"scope":{"1":null}}"#
        );
        assert_eq!(
            program_path("./bin/x", Path::new("/c")),
            Path::new("/c/./bin/x")
        );
        assert_eq!(
            program_path("bin/x", Path::new("/c")),
            Path::new("/c/bin/x")
        );
        assert_eq!(program_path("jq", Path::new("/c")), Path::new("jq"));
        assert_eq!(
            program_path("/usr/bin/jq", Path::new("/c")),
            Path::new("/usr/bin/jq")
        );
    }
}
