//! hiera-lookup: a thin command line over the `hiera_lookup` library.

mod cli;
mod diff_cmd;
mod lint_cmd;
mod run;
mod where_cmd;

use clap::Parser;
use hiera_lookup::limits::printable;
use std::io::Write;

// Lookups allocate and free many small values; mimalloc does that much faster than glibc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Commands other than a lookup, recognised only as the first argument.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv.get(1).and_then(|a| a.to_str()) == Some("diff") {
        let (stdout, stderr, code) = diff_cmd::run(&argv[2..]);
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(stdout.as_bytes()).and_then(|_| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("Error: {}", output_error(&e));
                std::process::exit(2);
            }
        }
        if let Some(e) = stderr {
            eprintln!("{e}");
        }
        std::process::exit(code);
    }
    if argv.get(1).and_then(|a| a.to_str()) == Some("lint") {
        std::process::exit(lint_cmd::main(&argv[2..]));
    }
    let command = match argv.get(1).and_then(|a| a.to_str()) {
        Some("completions") => Some(cli::completions(&argv[2..])),
        Some("man") if argv.len() == 2 => Some(cli::man()),
        _ => None,
    };
    if let Some(result) = command {
        match result {
            Ok(text) => {
                let mut stdout = std::io::stdout().lock();
                let ok = stdout
                    .write_all(text.as_bytes())
                    .and_then(|_| stdout.flush());
                std::process::exit(if ok.is_ok() { 0 } else { 2 });
            }
            Err(e) => {
                eprintln!("Error: {}", printable(&e.to_string()));
                std::process::exit(2);
            }
        }
    }
    // `where KEY`: the lookup's flags, a report instead of the value.
    if argv.get(1).is_some_and(|a| a == "where") {
        let mut argv = argv;
        argv.remove(1);
        let args = parse_or_exit(where_cmd::parse(argv));
        emit(on_lookup_thread(move || where_cmd::run(&args)));
    }
    // Broken pipes end the program quietly, like `puppet lookup | head`.
    let args = parse_or_exit(cli::Args::try_parse_from(cli::normalize(argv)));
    emit(on_lookup_thread(move || run::run(&args)));
}

/// The parsed flags, or clap's message (and `--help`) and the exit.
fn parse_or_exit<T>(parsed: Result<T, clap::Error>) -> T {
    match parsed {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    }
}

/// Runs a command on a thread whose stack is known, whatever `ulimit -s` says: the depth
/// limits of hiera_lookup::limits were measured against it.
fn on_lookup_thread(f: impl FnOnce() -> run::Output + Send + 'static) -> run::Output {
    if stdout_was_closed() {
        eprintln!("Error: Could not write to stdout: Bad file descriptor (os error 9)");
        std::process::exit(2);
    }
    let out = std::thread::Builder::new()
        .stack_size(hiera_lookup::limits::LOOKUP_STACK_SIZE)
        .spawn(f)
        .and_then(|h| {
            h.join()
                .map_err(|_| std::io::Error::other("the lookup thread panicked"))
        });
    match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!("Error: {}", printable(&e.to_string()));
            std::process::exit(2);
        }
    }
}

/// Prints a command's output, warnings and error, and exits with its status.
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

/// The error for an answer that could not be written to stdout.
fn output_error(e: &std::io::Error) -> hiera_lookup::Error {
    hiera_lookup::Error::run(format!("Could not write to stdout: {e}"))
}

/// Rust's runtime opens /dev/null read-write on a stdout that was closed at startup, so that
/// writes "succeed"; a shell's `>/dev/null` opens it write-only. Only the former is refused.
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
