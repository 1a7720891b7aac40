//! hiera-lookup: a thin command line over the `hiera_lookup` library.

mod cli;
mod diff_cmd;
mod lint_cmd;
mod request;
mod run;
mod where_cmd;

use cli::{Command, Invocation};
use hiera_value::limits::printable;
use std::io::Write;

// With the `mimalloc` feature (Cargo.toml says when it pays), mimalloc allocates.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tune_malloc();
    let args = match cli::parse(std::env::args_os().collect()) {
        Ok(Invocation::Lookup(args)) => args,
        Ok(Invocation::Command(command)) => std::process::exit(run_command(command)),
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    emit(on_lookup_stack(move || run::run(&args)))
}

/// glibc's malloc for a process that builds and drops many values and then exits: the heap
/// grows 64 MB at a time instead of 128 KB (a big deep merge made 800 `brk` calls; 9% of its
/// time), big blocks come from the heap rather than a `mmap` each, and nothing is handed back
/// to the system before the end. Address space only: no page is touched before it is used, so
/// a small lookup's memory is unchanged.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(feature = "mimalloc")))]
    // SAFETY: mallopt only sets glibc's malloc parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

/// Runs a lookup (or `where`) on a stack whose size is known, whatever `ulimit -s` says: the
/// depth limits of hiera_value::limits were measured against it. The main thread switches
/// onto a fresh stack of that size (a thread would cost more than the rest of the start).
fn on_lookup_stack(f: impl FnOnce() -> run::Output) -> run::Output {
    if stdout_was_closed() {
        eprintln!("Error: Could not write to stdout: Bad file descriptor (os error 9)");
        std::process::exit(2);
    }
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::grow(hiera_value::limits::LOOKUP_STACK_SIZE, f)
    }));
    match out {
        Ok(o) => o,
        Err(_) => {
            eprintln!("Error: the lookup panicked");
            std::process::exit(2);
        }
    }
}

/// Prints what a lookup (or `where`) printed, its warnings and error, and exits with its
/// status. Broken pipes end the program quietly, like `puppet lookup | head`.
fn emit(out: run::Output) -> ! {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    for w in &out.warnings {
        let _ = writeln!(stderr, "Warning: {}", printable(w));
    }
    if let Err(e) = stdout
        .write_all(out.stdout.as_bytes())
        .and_then(|_| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(out.code);
        }
        // A full disk or a closed stdout: the answer was not delivered.
        let _ = writeln!(
            stderr,
            "Error: {}",
            printable(&output_error(&e).to_string())
        );
        std::process::exit(2);
    }
    if let Some(err) = &out.error {
        let _ = writeln!(stderr, "Error: {}", printable(&err.to_string()));
    }
    std::process::exit(out.code);
}

/// Runs a command other than a lookup; the exit status.
fn run_command(command: Command) -> i32 {
    let printed = match command {
        Command::Where(args) => emit(on_lookup_stack(move || where_cmd::run(&args))),
        Command::Lint(args) => return lint_cmd::main(&args),
        Command::Diff(args) => {
            // Rendering and dropping the report recurse over the data too.
            let (stdout, stderr, code) =
                stacker::grow(hiera_value::limits::LOOKUP_STACK_SIZE, || {
                    diff_cmd::run(&args)
                });
            return match write_stdout(&stdout) {
                Ok(()) => {
                    if let Some(e) = stderr {
                        eprintln!("{e}");
                    }
                    code
                }
                Err(code) => code,
            };
        }
        Command::Completions(args) => cli::completions(&args.shell),
        Command::Man(_) => cli::man(),
    };
    match printed {
        Ok(text) => write_stdout(&text).err().unwrap_or(0),
        Err(e) => {
            eprintln!("Error: {}", printable(&e));
            2
        }
    }
}

/// Writes a command's output; `Err(2)` when it could not be delivered (a closed pipe is
/// not an error: the reader has seen enough).
fn write_stdout(text: &str) -> Result<(), i32> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            eprintln!("Error: {}", output_error(&e));
            Err(2)
        }
    }
}

/// The error for an answer that could not be written to stdout.
fn output_error(e: &std::io::Error) -> hiera_engine::Error {
    hiera_engine::Error::run(format!("Could not write to stdout: {e}"))
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
fn stdout_was_closed() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Elsewhere: a stdout that is /dev/null opened read-write is taken for one the runtime
/// opened (a shell's `>/dev/null` opens it write-only).
#[cfg(not(target_os = "linux"))]
fn stdout_was_closed() -> bool {
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
