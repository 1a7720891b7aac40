//! hiera-lookup: a thin command line over the `hiera_lookup` library.

mod cli;
mod run;

use clap::Parser;
use std::io::Write;

// Lookups allocate and free many small values; mimalloc does that much faster than glibc.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Broken pipes end the program quietly, like `puppet lookup | head`.
    let args = match cli::Args::try_parse_from(cli::normalize(std::env::args_os())) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let out = run::run(&args);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    for w in &out.warnings {
        let _ = writeln!(stderr, "Warning: {w}");
    }
    if let Err(e) = stdout
        .write_all(out.stdout.as_bytes())
        .and_then(|_| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(out.code);
        }
    }
    if let Some(err) = &out.error {
        let _ = writeln!(stderr, "Error: {err}");
    }
    std::process::exit(out.code);
}
