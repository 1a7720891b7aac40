//! `hiera-lookup completions SHELL`: a shell completion script covering the lookup's flags
//! and every command.

use crate::output::{self, ExitCode};

/// `hiera-lookup completions SHELL`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
    hiera-lookup completions bash
    hiera-lookup completions zsh

Install (bash; the directory may not exist yet):
    mkdir -p ~/.local/share/bash-completion/completions
    hiera-lookup completions bash > ~/.local/share/bash-completion/completions/hiera-lookup
zsh: a file _hiera-lookup in a directory of $fpath; fish:
~/.config/fish/completions/hiera-lookup.fish.

Exit status: 0 printed, 2 error.")]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `command_line` (every command hiera-lookup takes).
pub fn exec(args: &CompletionsArgs, command_line: clap::Command) -> output::Result<ExitCode> {
    output::stdout(&script(args.shell, &command_line)?, ExitCode::Success)
}

/// The completion script for `shell`: every visible flag of the lookup and of each command,
/// with the values of the flags that take a fixed set.
///
/// clap_complete 4.6 needs three repairs here (tests/completion.rs runs each shell):
/// * bash names a command's case arm from its bin name with `-` made `__subcmd__`
///   (`hiera__subcmd__lookup__subcmd__lint`) while the dispatcher sets
///   `hiera__lookup__subcmd__lint`: no command's flags would ever complete;
/// * zsh gives the lookup's KEY the first word, so that a command's name is never taken as
///   one: the KEY (which nothing can complete) is left out of zsh's script; and a
///   positional taking many words (`diff BASE [HEAD] [KEY]...`) is written `*::`, after
///   which zsh completes no flag: it is written `*:`;
/// * fish decides whether a command was typed by parsing the words before the cursor, which
///   fails while a flag still waits for its value (`--merge <TAB>`), and it completes no
///   positional's values (`completions <TAB>`): both are added.
fn script(shell: clap_complete::Shell, full: &clap::Command) -> output::Result<String> {
    use clap_complete::Shell;
    let mut cmd = visible_only(full, shell != Shell::Zsh);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hiera-lookup", &mut out);
    let mut text = String::from_utf8(out).map_err(|e| e.to_string())?;
    match shell {
        Shell::Bash => {
            text = text.replace("hiera__subcmd__lookup__subcmd__", "hiera__lookup__subcmd__");
        }
        Shell::Zsh => {
            text = text.replace("\n'*::", "\n'*:");
        }
        Shell::Fish => {
            let parse = "    argparse -s (__fish_hiera_lookup_global_optspecs) -- $cmd 2>/dev/null\n    or return\n";
            let retry = "    argparse -s (__fish_hiera_lookup_global_optspecs) -- $cmd 2>/dev/null\n    or begin\n        # A flag waiting for its value: decide without it.\n        set -e cmd[-1]\n        argparse -s (__fish_hiera_lookup_global_optspecs) -- $cmd 2>/dev/null\n    end\n    or return\n";
            text = text.replace(parse, retry);
            for sub in cmd.get_subcommands() {
                for arg in sub.get_positionals().filter(|a| !a.is_hide_set()) {
                    let values: Vec<String> = arg
                        .get_possible_values()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_string())
                        .collect();
                    if !values.is_empty() {
                        text.push_str(&format!(
                            "complete -c hiera-lookup -n \"__fish_hiera_lookup_using_subcommand {}\" -f -a \"{}\"\n",
                            sub.get_name(),
                            values.join(" ")
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(text)
}

/// `cmd` without its hidden flags (Puppet's ignored --verbose, --logdir, --rundir; old
/// spellings): clap_complete offers every flag, hidden or not. Without `positionals`, the
/// top command's positional arguments are left out too.
fn visible_only(cmd: &clap::Command, positionals: bool) -> clap::Command {
    // clap takes static names (without its `string` feature); these few live until the
    // script is printed and the process ends.
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let mut out = clap::Command::new(leak(cmd.get_name()))
        .disable_help_subcommand(true)
        .args(
            cmd.get_arguments()
                .filter(|a| !a.is_hide_set() && (positionals || !a.is_positional()))
                .cloned(),
        );
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(leak(version));
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out = out.subcommand(visible_only(sub, true));
    }
    out
}
