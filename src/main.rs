//! hiera-lookup: a thin command line over the library crates. `flags` parses the command
//! line, `request` turns the flags into the library's terms, `commands` holds one file per
//! command, and `output` is the only place that prints or exits.

mod commands;
mod flags;
mod output;

use flags::{Command, Invocation};

// With the `mimalloc` feature (Cargo.toml says when it pays), mimalloc allocates.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tune_malloc();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let invocation = match flags::parse(argv.clone()) {
        Ok(i) => i,
        // A usage error is one line that names the help to read.
        Err(flags::Early::Clap(e)) if e.use_stderr() => {
            output::finish(Err(flags::usage_error(&e, &argv)))
        }
        Err(e) => flags::exit_early(e),
    };
    // Every command runs on the lookup stack: lint and diff look up too, and the depth
    // limits were measured against that stack.
    output::finish(output::on_lookup_stack(move || match invocation {
        Invocation::Lookup(args) => commands::lookup::exec(&args),
        Invocation::Command(Command::Where(args)) => commands::where_::exec(&args),
        Invocation::Command(Command::Diff(args)) => commands::diff::exec(&args),
        Invocation::Command(Command::Lint(args)) => commands::lint::exec(&args),
        Invocation::Command(Command::Serve(args)) => commands::serve::exec(&args),
        Invocation::Command(Command::Lsp(args)) => commands::lsp::exec(&args),
        Invocation::Command(Command::Eyaml(args)) => commands::eyaml::exec(&args),
        Invocation::Command(Command::Completions(args)) => {
            commands::completions::exec(&args, flags::full_command())
        }
        Invocation::Command(Command::Man(args)) => {
            commands::man::exec(&args, flags::full_command())
        }
        // `help [COMMAND]` is parsed as `[COMMAND] --help`.
        Invocation::Command(Command::Help(_)) => unreachable!("help is answered by the parser"),
    }))
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
