//! Abbreviated long flags, completed the way Puppet's option parser (Ruby's OptionParser)
//! completes them, before clap sees the command line (clap's own inference refuses a prefix
//! of two flags, so `--env` and `--merg` would fail there).
//!
//! OptionParser (`OptionParser::Completion.candidate` and `#complete`, Ruby 3.3):
//! * `_` is `-` in a flag's name (`--render_a` is `--render-a`), and case does not matter;
//! * every word of the abbreviation may be shortened: `--exp-o` is `--explain-options`
//!   (the pattern `Regexp.quote(key).gsub(/\w+\b/, '\&\w*')`, anchored at the start);
//! * of the flags that match, the shortest wins when every other is a longer spelling of it
//!   (or an alias of the same flag): `--exp` is `--explain`, not `--explain-options`;
//!   `--merg` is `--merge`, `--env` is `--environment`;
//! * otherwise the abbreviation is ambiguous, an error naming the candidates.
//!
//! An abbreviation that completes to one of `puppet lookup`'s own flags completes to it even
//! when a flag of hiera-lookup's own would win by those rules: `--fac` is `--facts` (as in
//! Puppet, which has no `--fact`), so a command line written for Puppet means the same here.

use std::ffi::OsString;

/// Flags that weaken a safeguard are never completed from an abbreviation: `where k --all`
/// (the lookup's --all, which `where` does not take) must not turn into `--allow-exec`.
const SPELLED_OUT: &[&str] = &["allow-exec", "show-secrets"];

/// `puppet lookup`'s flags and the Puppet settings hiera-lookup takes (as clap knows them):
/// an abbreviation of one of them means it, as in Puppet.
const PUPPETS: &[&str] = &[
    "node",
    "facts",
    "type",
    "merge",
    "knock-out-prefix",
    "sort-merged-arrays",
    "merge-hash-arrays",
    "explain",
    "explain-options",
    "default",
    "render-as",
    "compile",
    "debug",
    "verbose",
    "help",
    "version",
    "environment",
    "environmentpath",
    "codedir",
    "confdir",
    "vardir",
    "hiera_config",
    "config",
    "modulepath",
    "basemodulepath",
    "logdir",
    "rundir",
    "strict",
];

/// A long flag of a command: its names (the long and every alias, `_` made `-`), the name
/// clap knows it by, and whether it takes the next word as its value.
struct Flag {
    /// The long and its aliases as clap knows them.
    spellings: Vec<String>,
    names: Vec<String>,
    long: String,
    takes_value: bool,
}

fn flags_of(cmd: &clap::Command) -> Vec<Flag> {
    let mut out: Vec<Flag> = cmd
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            if SPELLED_OUT.contains(&long) {
                return None;
            }
            let spellings: Vec<String> = std::iter::once(long)
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
                .collect();
            let mut names: Vec<String> = spellings.iter().map(|n| n.replace('_', "-")).collect();
            names.sort();
            names.dedup();
            let takes_value = a.get_action().takes_values() && !a.is_require_equals_set();
            Some(Flag {
                spellings,
                names,
                long: long.to_string(),
                takes_value,
            })
        })
        .collect();
    // clap adds these when it builds the command.
    let switch = |n: &str| Flag {
        spellings: vec![n.to_string()],
        names: vec![n.to_string()],
        long: n.to_string(),
        takes_value: false,
    };
    if !cmd.is_disable_help_flag_set() && !out.iter().any(|f| f.long == "help") {
        out.push(switch("help"));
    }
    if cmd.get_version().is_some() && !out.iter().any(|f| f.long == "version") {
        out.push(switch("version"));
    }
    out
}

/// Whether `name` matches the abbreviation `key` as OptionParser's pattern does: each run of
/// word characters of `key` may be followed by more word characters in `name`; the rest of
/// `name` after the match is free.
fn matches(key: &[u8], name: &[u8]) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // Tokens: a literal byte, or "more word characters" after a word.
    let mut pat: Vec<Option<u8>> = Vec::new();
    for (i, &c) in key.iter().enumerate() {
        pat.push(Some(c));
        if word(c) && key.get(i + 1).is_none_or(|&n| !word(n)) {
            pat.push(None);
        }
    }
    fn go(pat: &[Option<u8>], s: &[u8], word: &dyn Fn(u8) -> bool) -> bool {
        match pat.split_first() {
            None => true,
            Some((Some(c), rest)) => s.first() == Some(c) && go(rest, &s[1..], word),
            Some((None, rest)) => {
                let run = s.iter().take_while(|&&c| word(c)).count();
                (0..=run).rev().any(|n| go(rest, &s[n..], word))
            }
        }
    }
    go(&pat, name, &word)
}

/// What an abbreviation completes to.
enum Completion<'a> {
    /// No flag matches: clap reports it.
    None,
    One(&'a Flag),
    /// The candidates, by the names the user would type.
    Ambiguous(Vec<String>),
}

fn complete<'a>(flags: &'a [Flag], key: &str) -> Completion<'a> {
    // Puppet's own flags first: what a Puppet command line abbreviates means the same here.
    let puppets = |f: &Flag| PUPPETS.contains(&f.long.as_str());
    if let found @ (Completion::One(_) | Completion::Ambiguous(_)) =
        complete_among(flags, key, &puppets)
    {
        return found;
    }
    complete_among(flags, key, &|_| true)
}

/// [`complete`] among the flags `among` accepts.
fn complete_among<'a>(
    flags: &'a [Flag],
    key: &str,
    among: &dyn Fn(&Flag) -> bool,
) -> Completion<'a> {
    let key = key.replace('_', "-").to_ascii_lowercase();
    // (name, flag index), shortest first (a stable sort: declaration order among equals).
    let mut candidates: Vec<(&str, usize)> = flags
        .iter()
        .enumerate()
        .filter(|(_, f)| among(f))
        .flat_map(|(i, f)| f.names.iter().map(move |n| (n.as_str(), i)))
        .filter(|(n, _)| matches(key.as_bytes(), n.to_ascii_lowercase().as_bytes()))
        .collect();
    candidates.sort_by_key(|(n, _)| n.len());
    let Some(&(mut canon, mut flag)) = candidates.first() else {
        return Completion::None;
    };
    for &(name, i) in &candidates[1..] {
        if i == flag {
            continue;
        }
        if canon.starts_with(name) {
            (canon, flag) = (name, i);
        } else if !name.starts_with(canon) {
            let mut names: Vec<String> = candidates
                .iter()
                .map(|&(_, i)| format!("--{}", flags[i].long))
                .collect();
            names.sort();
            names.dedup();
            return Completion::Ambiguous(names);
        }
    }
    Completion::One(&flags[flag])
}

/// `args` (a command's words after its name) with every abbreviated long flag written out in
/// full; an ambiguous abbreviation is an error naming the candidates.
pub fn expand(cmd: &clap::Command, args: &[OsString]) -> Result<Vec<OsString>, String> {
    let flags = flags_of(cmd);
    let spelled = |name: &str| flags.iter().find(|f| f.spellings.iter().any(|n| n == name));
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(text) = arg.to_str() else {
            out.push(arg.clone());
            continue;
        };
        if text == "--" {
            out.extend(args[i - 1..].iter().cloned());
            break;
        }
        let Some(body) = text.strip_prefix("--").filter(|b| !b.is_empty()) else {
            out.push(arg.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let flag = match spelled(name) {
            Some(f) => {
                out.push(arg.clone());
                f
            }
            None => match complete(&flags, name) {
                Completion::None => {
                    out.push(arg.clone());
                    continue;
                }
                Completion::Ambiguous(names) => {
                    // Puppet's words, then the candidates.
                    return Err(format!(
                        "Could not parse application options: ambiguous option: --{name} (it abbreviates {})",
                        join_or(&names)
                    ));
                }
                Completion::One(f) => {
                    let mut full = OsString::from(format!("--{}", f.long));
                    if let Some(v) = value {
                        full.push("=");
                        full.push(v);
                    }
                    out.push(full);
                    f
                }
            },
        };
        // The next word is this flag's value, whatever it looks like.
        if flag.takes_value && value.is_none() && i < args.len() {
            out.push(args[i].clone());
            i += 1;
        }
    }
    Ok(out)
}

/// `a, b or c`.
fn join_or(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optionparser_patterns() {
        assert!(matches(b"exp", b"explain-options"));
        assert!(matches(b"exp-o", b"explain-options"));
        assert!(matches(b"e-o", b"explain-options"));
        assert!(!matches(b"e-o", b"explain"));
        assert!(matches(b"m-h-a", b"merge-hash-arrays"));
        assert!(!matches(b"merge-x", b"merge-hash-arrays"));
        assert!(matches(b"environment-", b"environment-x"));
        assert!(!matches(b"environmentp", b"environment"));
    }

    /// A Puppet flag's abbreviation means it, although a flag of hiera-lookup's own would
    /// win by OptionParser's rule (`--fact` is the shortest of fact, facts, facts-dir).
    #[test]
    fn puppets_flags_first() {
        let cmd = clap::Command::new("t")
            .arg(clap::Arg::new("fact").long("fact"))
            .arg(clap::Arg::new("facts").long("facts"))
            .arg(clap::Arg::new("dir").long("facts-dir"))
            .arg(clap::Arg::new("var").long("var"))
            .arg(clap::Arg::new("vars").long("variables"));
        let v = |xs: &[&str]| xs.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            expand(&cmd, &v(&["--fac", "f.yaml"])).unwrap(),
            v(&["--facts", "f.yaml"])
        );
        assert_eq!(
            expand(&cmd, &v(&["--facts-d", "d"])).unwrap(),
            v(&["--facts-dir", "d"])
        );
        // No Puppet flag matches: OptionParser's rule over ours.
        assert_eq!(
            expand(&cmd, &v(&["--va", "x=1"])).unwrap(),
            v(&["--var", "x=1"])
        );
    }

    #[test]
    fn safeguards_are_spelled_out() {
        let cmd = clap::Command::new("t")
            .arg(
                clap::Arg::new("allow")
                    .long("allow-exec")
                    .action(clap::ArgAction::SetTrue),
            )
            .arg(clap::Arg::new("fmt").long("format"));
        let v = |xs: &[&str]| xs.iter().map(OsString::from).collect::<Vec<_>>();
        // Not completed: clap sees what was typed (and refuses `--all`).
        assert_eq!(expand(&cmd, &v(&["--all"])).unwrap(), v(&["--all"]));
        assert_eq!(
            expand(&cmd, &v(&["--allow-exec"])).unwrap(),
            v(&["--allow-exec"])
        );
        assert_eq!(
            expand(&cmd, &v(&["--form", "x"])).unwrap(),
            v(&["--format", "x"])
        );
    }
}
