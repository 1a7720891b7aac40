//! `hiera-lookup man [COMMAND]`: the manual pages (roff), one per command, as git's:
//! hiera-lookup(1) for the lookup, hiera-lookup-lint(1) and so on for the commands.

use crate::output::{self, ExitCode};
use std::path::PathBuf;

/// `hiera-lookup man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup man | man -l -
    hiera-lookup man lint | man -l -
    hiera-lookup man --dir man1

Install (the directory may not exist yet), then `man hiera-lookup`, `man hiera-lookup-lint`:
    mkdir -p ~/.local/share/man/man1
    hiera-lookup man --dir ~/.local/share/man/man1

Exit status: 0 printed, 2 error.")]
pub struct ManArgs {
    /// The command whose page to print (default: the lookup's, hiera-lookup(1))
    #[arg(value_name = "COMMAND", value_parser = super::TOPICS.to_vec())]
    pub command: Option<String>,

    /// Write every page (hiera-lookup.1, hiera-lookup-where.1, ...) into DIR instead
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// Prints a manual page of `full` (every command hiera-lookup takes), or writes them all.
pub fn exec(args: &ManArgs, full: clap::Command) -> output::Result<ExitCode> {
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut written = String::new();
        for (name, page) in pages(&full)? {
            let path = dir.join(format!("{name}.1"));
            std::fs::write(&path, page)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            written.push_str(&format!("{}\n", path.display()));
        }
        return output::stdout(&written, ExitCode::Success);
    }
    let page = match args.command.as_deref() {
        None | Some("lookup") => page(&full, None)?,
        Some(name) => page(&full, Some(name))?,
    };
    output::stdout(&page, ExitCode::Success)
}

/// Every page: the lookup's, then each command's, by file name (without `.1`).
fn pages(full: &clap::Command) -> output::Result<Vec<(String, String)>> {
    let mut out = vec![("hiera-lookup".to_string(), page(full, None)?)];
    for sub in full.get_subcommands() {
        let name = sub.get_name();
        out.push((format!("hiera-lookup-{name}"), page(full, Some(name))?));
    }
    Ok(out)
}

/// The page of the lookup (`None`) or of a command: clap_mangen's title, NAME, SYNOPSIS,
/// DESCRIPTION, OPTIONS (and the commands, on the lookup's page); then the `--help`
/// epilogue as EXAMPLES, NOTES and EXIT STATUS, examples kept line by line; SEE ALSO; VERSION.
fn page(full: &clap::Command, command: Option<&str>) -> output::Result<String> {
    let (cmd, epilogue, see_also) = match command {
        None => {
            let epilogue = full
                .get_after_long_help()
                .map(|t| t.to_string())
                .unwrap_or_default();
            let see: Vec<String> = full
                .get_subcommands()
                .map(|s| format!("hiera-lookup-{}(1)", s.get_name()))
                .collect();
            (full.clone(), epilogue, see)
        }
        Some(name) => {
            let sub = full
                .find_subcommand(name)
                .ok_or_else(|| format!("no command {name}"))?;
            let epilogue = sub
                .get_after_long_help()
                .or_else(|| sub.get_after_help())
                .map(|t| t.to_string())
                .unwrap_or_default();
            let cmd = sub
                .clone()
                .display_name(format!("hiera-lookup-{name}"))
                .bin_name(format!("hiera-lookup {name}"));
            (cmd, epilogue, vec!["hiera-lookup(1)".to_string()])
        }
    };
    let cmd = cmd
        .after_help(None::<&str>)
        .after_long_help(None::<&str>)
        // A flag left out of `-h` (hide_short_help) with one line of help has no long help,
        // and clap_mangen would print it with no description: the page has room for it.
        .mut_args(
            |a| match (a.is_hide_short_help_set(), a.get_long_help(), a.get_help()) {
                (true, None, Some(help)) => {
                    let help = help.clone();
                    a.long_help(help)
                }
                _ => a,
            },
        );
    let version = env!("CARGO_PKG_VERSION");
    let man = clap_mangen::Man::new(cmd.clone()).source(format!("hiera-lookup {version}"));
    let mut out = Vec::new();
    let err = |e: std::io::Error| output::Failure(e.to_string());
    man.render_title(&mut out).map_err(err)?;
    let mut section = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| -> output::Result<()> {
        let mut buf = Vec::new();
        f(&mut buf).map_err(err)?;
        // Each renders roff's two-line preamble again: once is enough.
        let text = String::from_utf8_lossy(&buf);
        out.extend(
            text.lines()
                .skip(2)
                .flat_map(|l| [l, "\n"])
                .collect::<String>()
                .bytes(),
        );
        Ok(())
    };
    section(&|w| man.render_name_section(w))?;
    section(&|w| man.render_synopsis_section(w))?;
    section(&|w| man.render_description_section(w))?;
    section(&|w| man.render_options_section(w))?;
    if command.is_none() {
        section(&|w| man.render_subcommands_section(w))?;
    }
    let mut text = String::from_utf8(out).map_err(|e| e.to_string())?;
    text.push_str(&epilogue_roff(&epilogue));
    text.push_str(".SH \"SEE ALSO\"\n");
    text.push_str(&escape(&see_also.join(", ")));
    text.push('\n');
    text.push_str(&format!(".SH VERSION\nv{version}\n"));
    Ok(text)
}

/// A `--help` epilogue as roff: its "Examples" paragraph as EXAMPLES, "Exit status" as
/// EXIT STATUS, the rest as NOTES; indented lines (commands) each on its own line, the prose
/// filled. The list of commands is left out (the page has its own).
fn epilogue_roff(text: &str) -> String {
    let mut examples = String::new();
    let mut notes = String::new();
    let mut exit = String::new();
    for paragraph in text.split("\n\n") {
        let paragraph = paragraph.trim_matches('\n');
        if paragraph.is_empty() || paragraph.starts_with("Commands") {
            continue;
        }
        let target = if paragraph.starts_with("Examples") {
            &mut examples
        } else if paragraph.starts_with("Exit status") {
            &mut exit
        } else {
            &mut notes
        };
        if !target.is_empty() {
            target.push_str(".PP\n");
        }
        let mut in_block = false;
        for line in paragraph.lines() {
            let code = line.starts_with("    ");
            if code && !in_block {
                target.push_str(".RS 4\n.nf\n");
            } else if !code && in_block {
                target.push_str(".fi\n.RE\n");
            }
            in_block = code;
            target.push_str(&escape(if code { line.trim_start() } else { line }));
            target.push('\n');
        }
        if in_block {
            target.push_str(".fi\n.RE\n");
        }
    }
    let mut out = String::new();
    for (title, body) in [
        ("EXAMPLES", examples),
        ("NOTES", notes),
        ("\"EXIT STATUS\"", exit),
    ] {
        if !body.is_empty() {
            out.push_str(&format!(".SH {title}\n{body}"));
        }
    }
    out
}

/// Text as a roff line: backslashes and dashes escaped, a leading `.` or `'` kept literal.
fn escape(line: &str) -> String {
    let escaped = line.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}
