//! Everything the binary prints goes through here: stdout (a closed pipe ends the program
//! quietly, a full disk or a closed stdout is an error), warnings and errors on stderr (one
//! line each, terminal escapes made visible), colour, and the exit status.

use hiera_value::limits::printable;
use std::io::Write;

/// How a command ended. Every command says what 1 means for it in its `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// 0: answered (found, no change, no finding).
    Success = 0,
    /// 1: the negative answer (not found, changes, findings).
    Negative = 1,
    /// 2: the command could not do its job.
    Error = 2,
}

impl ExitCode {
    /// The status for a lookup-style boolean: found → 0, else 1.
    pub fn negative_if(negative: bool) -> ExitCode {
        if negative {
            ExitCode::Negative
        } else {
            ExitCode::Success
        }
    }

    /// From the library's numeric statuses (0, 1, 2).
    pub fn from_status(code: i32) -> ExitCode {
        match code {
            0 => ExitCode::Success,
            1 => ExitCode::Negative,
            _ => ExitCode::Error,
        }
    }
}

/// When to colour (`--color`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    // (No doc comments: --help would list the values one per line instead of inline.)
    // Always; Puppet's `true` too.
    #[value(alias = "true")]
    Always,
    // Never; Puppet's `false` too.
    #[value(alias = "false")]
    Never,
    // On a terminal, unless NO_COLOR is set.
    Auto,
}

/// Why a command failed: the message printed after `Error: `.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<hiera_engine::Error> for Failure {
    fn from(e: hiera_engine::Error) -> Failure {
        Failure(e.to_string())
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Failure {
        Failure(s)
    }
}

/// What every command's `exec` returns.
pub type Result<T> = std::result::Result<T, Failure>;

/// Prints `text` on stdout. A reader that left (`| head`) is not an error: the program ends
/// quietly with `code`, as `puppet lookup | head` does. Any other failure is.
pub fn stdout(text: &str, code: ExitCode) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(code),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit(code),
        Err(e) => Err(write_error(&e)),
    }
}

/// The error for output that could not be written to stdout.
pub fn write_error(e: &std::io::Error) -> Failure {
    Failure(format!("Could not write to stdout: {e}"))
}

/// A warning on stderr, on one line.
pub fn warn(message: &str) {
    above_the_bar(|| {
        let _ = writeln!(std::io::stderr(), "Warning: {}", printable(message));
    });
}

/// A note on stderr (what a command left out, and how to see it), on one line.
pub fn note(message: &str) {
    above_the_bar(|| {
        let _ = writeln!(std::io::stderr(), "hiera-lookup: {}", printable(message));
    });
}

/// The progress bar on stderr now, if any: what is printed there meanwhile goes above it.
static BAR: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);

/// Runs `print` (a line on stderr) with the progress bar, if one is drawn, taken off first
/// and drawn again after.
fn above_the_bar(print: impl FnOnce()) {
    let bar = BAR.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// A fleet command's progress (batch mode, lint, diff) as a bar on stderr: the nodes done
/// of the total, the rate and the time left. Drawn only when stderr is a terminal (and the
/// fleet is not a handful of nodes), at most ten times a second, and cleared at the end,
/// so that it never mixes with what is printed or piped.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

/// Fewer nodes than this are done before a bar could tell anything.
const PROGRESS_FROM: usize = 50;

impl Progress {
    /// A bar for `expected` nodes (nothing when stderr is no terminal).
    pub fn nodes(expected: usize) -> Progress {
        use std::io::IsTerminal;
        if expected < PROGRESS_FROM || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(expected as u64),
            indicatif::ProgressDrawTarget::stderr_with_hz(10),
        );
        let style = indicatif::ProgressStyle::with_template(
            "{bar:30} {human_pos}/{human_len} nodes, {per_sec:.0}, ETA {eta}",
        )
        .map(|s| s.progress_chars("=> "));
        if let Ok(style) = style {
            bar.set_style(style);
        }
        *BAR.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        Progress { bar: Some(bar) }
    }

    /// `done` nodes of `expected` (which may change: PuppetDB's chunks, a facts file of
    /// several nodes).
    pub fn set(&self, done: usize, expected: usize) {
        if let Some(bar) = &self.bar {
            let expected = expected.max(done) as u64;
            if bar.length() != Some(expected) {
                bar.set_length(expected);
            }
            bar.set_position(done as u64);
        }
    }
}

impl Drop for Progress {
    /// The bar is cleared: what follows on stderr starts on a clean line.
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            *BAR.lock().unwrap_or_else(|e| e.into_inner()) = None;
            bar.finish_and_clear();
        }
    }
}

/// Prints a failure on stderr, on one line (Puppet's multi-line messages are joined).
pub fn error(failure: &Failure) {
    let one_line = failure.0.lines().collect::<Vec<_>>().join(" ");
    let _ = writeln!(std::io::stderr(), "Error: {}", printable(&one_line));
}

/// The failure that ends a fleet command some of whose nodes could not be read (each named
/// on its own line before): `done` says what was done with the others.
pub fn unreadable_nodes(count: usize, done: &str) -> Failure {
    Failure(format!(
        "{count} node{} could not be read (above): the others were {done}; fix or remove their facts files",
        if count == 1 { "" } else { "s" }
    ))
}

/// Ends the process with `code`.
pub fn exit(code: ExitCode) -> ! {
    std::process::exit(code as i32)
}

/// Ends the process the way a command's result says: its status, or its error and 2.
pub fn finish(result: Result<ExitCode>) -> ! {
    match result {
        Ok(code) => exit(code),
        Err(failure) => {
            error(&failure);
            exit(ExitCode::Error)
        }
    }
}

/// The worker threads a fleet command uses: `--threads`, else one per CPU.
pub fn threads(flag: Option<usize>) -> usize {
    flag.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// Whether to colour stdout: always, never, or auto (a terminal, unless NO_COLOR is set).
pub fn use_color(when: When) -> bool {
    use std::io::IsTerminal;
    match when {
        When::Always => true,
        When::Never => false,
        When::Auto => std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal(),
    }
}

/// The width of the terminal stdout is (`COLUMNS` when set), `None` when stdout is no
/// terminal: a pipe or a file gets whole lines.
pub fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(c);
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ only fills the winsize struct it is given.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0 && ws.ws_col > 0 {
            return Some(ws.ws_col as usize);
        }
    }
    Some(80)
}

/// Runs `f` (a lookup, `where`, lint, diff) on a stack whose size is known, whatever
/// `ulimit -s` says: the depth limits of hiera_value::limits were measured against it. The
/// main thread switches onto a fresh stack of that size (a thread would cost more than the
/// rest of a lookup's start). A panic is one error line and exit 2.
pub fn on_lookup_stack<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    if stdout_was_closed() {
        return Err(Failure(
            "Could not write to stdout: Bad file descriptor (os error 9)".into(),
        ));
    }
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::grow(hiera_value::limits::LOOKUP_STACK_SIZE, f)
    }));
    out.unwrap_or_else(|_| Err(Failure("the lookup panicked".into())))
}

/// Whether fd 1 was closed when the process started. Rust's runtime opens /dev/null on a
/// closed stdout before `main`, so that writes "succeed" and the answer is lost; a function
/// in `.init_array` runs before that and sees the descriptor as it was given.
#[cfg(target_os = "linux")]
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static CHECK_STDOUT: extern "C" fn() = {
    extern "C" fn check_stdout() {
        // SAFETY: fcntl(F_GETFD) on fd 1 only reads its descriptor flags.
        let closed = unsafe { libc::fcntl(1, libc::F_GETFD) } == -1;
        STDOUT_CLOSED.store(closed, std::sync::atomic::Ordering::Relaxed);
    }
    check_stdout
};

/// Whether the process was started with stdout closed (`>&-`). A /dev/null opened by the
/// caller, read-write as Python's `subprocess.DEVNULL` opens it, is an open stdout.
#[cfg(target_os = "linux")]
pub fn stdout_was_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Elsewhere: a stdout that is /dev/null opened read-write is taken for one the runtime
/// opened (a shell's `>/dev/null` opens it write-only).
#[cfg(not(target_os = "linux"))]
pub fn stdout_was_closed() -> bool {
    // SAFETY: fcntl and fstat on fd 1 only read its status into a local.
    unsafe {
        let flags = libc::fcntl(1, libc::F_GETFL);
        if flags < 0 || flags & libc::O_ACCMODE != libc::O_RDWR {
            return false;
        }
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) != 0 {
            return false;
        }
        let mut null: libc::stat = std::mem::zeroed();
        let path = c"/dev/null";
        libc::stat(path.as_ptr(), &mut null) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && st.st_rdev == null.st_rdev
    }
}

/// Highlights an explanation: what was found in green (the merged result in bold), the
/// files it came from in cyan, misses dimmed, errors and the final miss in red.
pub fn colorize_explanation(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len() + lines.len() * 12);
    // A multi-line value keeps its line's colour down to its closing bracket.
    let mut open: Option<(&str, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some((code, at)) = open {
            if indent == at && (t.starts_with('}') || t.starts_with(']')) {
                open = None;
            }
            out.push_str(&format!("\x1b[{code}m{line}\x1b[0m\n"));
            continue;
        }
        let style = if t.starts_with("Found key:") {
            Some("32")
        } else if t.starts_with("Merged result:") {
            Some("1;32")
        } else if t.starts_with("Path \"") || t.starts_with("URI \"") {
            // The location a value was found in: its "Found key" follows further down.
            let found = lines[i + 1..]
                .iter()
                .take_while(|l| l.len() - l.trim_start().len() > indent)
                .any(|l| l.trim_start().starts_with("Found key:"));
            found.then_some("36")
        } else if t.starts_with("No such key:") || t == "Path not found" {
            Some("2")
        } else if !line.starts_with(' ')
            && !t.starts_with("Searching for")
            && !t.starts_with("Merge strategy")
            && !t.starts_with("Using merge options")
        {
            Some("31")
        } else {
            None
        };
        match style {
            Some(code) => {
                if t.ends_with('{') || t.ends_with('[') {
                    open = Some((code, indent));
                }
                out.push_str(&format!("\x1b[{code}m{line}\x1b[0m\n"))
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Highlights lint's text findings (`file:line:col: severity rule: message`): the place in
/// bold, the severity in its colour (error red, warning yellow, info cyan), the rule dimmed.
pub fn colorize_lint(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        let styled = ["error", "warning", "info"].iter().find_map(|sev| {
            let marker = format!(": {sev} ");
            let at = line.find(&marker)?;
            let (place, rest) = (&line[..at], &line[at + marker.len()..]);
            let (rule, message) = rest.split_once(": ")?;
            let color = match *sev {
                "error" => "1;31",
                "warning" => "33",
                _ => "36",
            };
            Some(format!(
                "\x1b[1m{place}\x1b[0m: \x1b[{color}m{sev}\x1b[0m \x1b[2m{rule}\x1b[0m: {message}"
            ))
        });
        out.push_str(styled.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Highlights diff's text report: each changed key in bold, additions green, removals red,
/// changes (`path: old → new`) yellow, errors red.
pub fn colorize_diff(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let color = if i == 0 || line.is_empty() {
            None
        } else if t.starts_with("error") {
            Some("31")
        } else if indent == 0 {
            Some("1")
        } else if indent >= 4 && t.starts_with("+ ") {
            Some("32")
        } else if indent >= 4 && t.starts_with("- ") {
            Some("31")
        } else if indent >= 4 && t.contains(" → ") {
            Some("33")
        } else {
            None
        };
        match color {
            Some(c) => out.push_str(&format!("\x1b[{c}m{line}\x1b[0m")),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}
