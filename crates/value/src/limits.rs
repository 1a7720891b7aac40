//! Every limit that keeps hostile input from crashing, hanging or exhausting memory, in one
//! place (README.md, "Limits", lists them with the error each gives). None of them is reached
//! by a normal control repo; Puppet has the same kind of limit in each place (Ruby's stack,
//! Psych's alias handling, the OS), only less predictable.

/// Interpolation lookups (`%{lookup('k')}`, `%{hiera('k')}`, `%{alias('k')}`) nested inside
/// one another. Puppet answers chains of about a thousand and fails with "stack level too
/// deep" above; each link costs a few kilobytes of stack here, so the cap is lower.
pub const MAX_LOOKUP_DEPTH: usize = 200;

/// Stack every lookup runs on (the CLI's, which its main thread switches to, and each batch
/// worker thread's), whatever `ulimit -s` says. Recursion over data is bounded by the depth limits here; this is the
/// room those limits were measured against (with a debug build, whose frames are largest).
pub const LOOKUP_STACK_SIZE: usize = 16 << 20;

/// Deepest nesting of arrays and hashes in any value: as loaded (YAML, also JSON and HOCON
/// have their own, lower, limits) and as built by interpolation (`alias` of a deep value
/// inside another).
pub const MAX_VALUE_DEPTH: usize = 1500;

/// Values a YAML file's aliases may copy (`*a` of a big anchor counts its size): "billion
/// laughs" files are refused with "alias expansion too large" (Psych shares the aliased
/// objects; we copy them).
pub const MAX_ALIAS_EXPANSION: usize = 1_000_000;

/// Nesting of a JSON data or facts file: the json gem's `max_nesting`, with its error
/// "nesting of 101 is too deep".
pub const MAX_JSON_NESTING: usize = 100;

/// Nesting of HOCON objects and arrays (path keys `a.b.c` count): "Objects and arrays nest
/// too deeply".
pub const MAX_HOCON_DEPTH: usize = 512;

/// Nested HOCON `include`s: "include nesting too deep".
pub const MAX_HOCON_INCLUDE_DEPTH: usize = 32;

/// Values HOCON substitutions may build (`${x} ${x}` doubling): "Substitutions make the
/// document too large".
pub const MAX_HOCON_VALUES: usize = 10_000_000;

/// Directory entries a hierarchy `glob` (`**` included) may visit.
pub const MAX_GLOB_STEPS: usize = 1_000_000;

/// Files and directories `diff` lists of one side: a git revision's tree (its submodules'
/// included) or a directory walked on disk. A 300 KB repository can hold 10^8 paths (one tree
/// referenced from many); past this, the diff stops with "… has more than N files and
/// directories" instead of exhausting memory.
pub const MAX_TREE_ENTRIES: usize = 1_000_000;

/// Bytes of all the paths of one side's listing together: 20,000 nested directories make
/// paths of every length up to 20,000 names (800 MB of text) in only 20,000 entries.
pub const MAX_TREE_PATH_BYTES: usize = 64 << 20;

/// Git submodules nested inside one another that `diff` reads.
pub const MAX_SUBMODULE_DEPTH: usize = 8;

/// Largest file read: data files, facts files, eyaml keys, hiera.yaml. Only regular files (and
/// /dev/null, read as empty) are read: a FIFO or another device is refused without a blocking
/// open or read.
pub const MAX_FILE_SIZE: u64 = 256 << 20;

/// Largest string that interpolation may build.
pub const MAX_INTERPOLATED_STRING: usize = 64 << 20;

/// Nested lookups made while answering one key (memoised lookups count once).
pub const MAX_LOOKUPS_PER_KEY: usize = 100_000;

/// Patterns a hierarchy `glob` may expand to through `{a,b}` alternatives.
pub const MAX_GLOB_PATTERNS: usize = 1024;

/// Hashes, arrays and strings an `--explain` trace may hold. The trace keeps its own copies of
/// every value found and replays each merge on them as Ruby does (a deep merge clones the
/// lower-priority hash), so explaining a merge of two 300,000-entry hashes would take over two
/// gigabytes: past this, `--explain` stops with an error (the lookup without it still works).
/// Hashes of up to about 150,000 entries (a hash, a string and an array in each) explain.
pub const MAX_EXPLAIN_VALUES: usize = 500_000;

/// Bytes of an `--explain` trace's text. A value nested 1,495 deep reached through a fact
/// path (`%{facts.a.a.a…}`) is dumped once for each segment, each time indented deeper: the
/// text grows with the cube of the depth (several gigabytes), where Puppet stops with "stack
/// level too deep". Past this, `--explain` stops with that error.
pub const MAX_EXPLAIN_BYTES: usize = 128 << 20;

/// Bytes kept of a `command` backend program's stdout and stderr; more is an error.
pub const MAX_COMMAND_OUTPUT: usize = 16 << 20;

/// Largest compiled program of a `Pattern[...]` regexp (the `regex` crate's size limit); a
/// bigger one is the error "Pattern /…/ exceeds the regex engine's size limit".
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Backtracking steps of one `Pattern[...]` match that needs the backtracking engine
/// (backreferences, lookaround, atomic groups): fancy-regex's default. Exceeding it is the
/// error "Pattern /…/ exceeded the regex engine's backtracking limit", not a mismatch.
pub const REGEX_BACKTRACK_LIMIT: usize = 1_000_000;

/// Longest error or warning message printed (in characters); longer ones end in '…'. Long
/// enough for Puppet's longest messages (an eyaml error quotes its whole `ENC[...]` token,
/// 1,200 characters for a 2048-bit key).
pub const MAX_MESSAGE_CHARS: usize = 4096;

/// Reads a whole file, refusing what is not a regular file (a FIFO or a device would block or
/// never end) and files over [`MAX_FILE_SIZE`]. The file is opened without blocking, so a FIFO
/// with no writer is refused at once rather than waited on.
pub fn read_file(path: impl AsRef<std::path::Path>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if meta.is_dir() {
        // What reading it would say (and Ruby says).
        return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
    }
    if !meta.is_file() {
        // /dev/null reads as empty, as Puppet reads it; any other device or FIFO may block or
        // never end.
        if is_null_device(&meta) {
            return Ok(Vec::new());
        }
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_FILE_SIZE {
        return Err(too_big());
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read stops at the limit all the same.
    f.take(MAX_FILE_SIZE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE_SIZE {
        return Err(too_big());
    }
    Ok(buf)
}

/// [`read_file`] as UTF-8 text (invalid UTF-8 is `InvalidData`, as `fs::read_to_string`).
pub fn read_text(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn is_null_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    meta.file_type().is_char_device()
        && std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == meta.rdev())
}

fn too_big() -> std::io::Error {
    std::io::Error::other(format!(
        "larger than {} MiB (the file size limit)",
        MAX_FILE_SIZE >> 20
    ))
}

/// A message as it may reach a terminal: control characters (C0, DEL, C1), line and
/// paragraph separators and bidirectional overrides in the data it quotes are shown escaped
/// (`\e`, `\n`, `\x7F`, `\u202E` …; a tab is left as it is, as Puppet prints it), so that a data file cannot send escape sequences to the
/// user's terminal or split one error over several lines; and at most `MAX_MESSAGE_CHARS`
/// characters of it are kept, the rest replaced by '…'.
pub fn printable(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE_CHARS * 4) + 4);
    let mut chars = 0usize;
    for c in message.chars() {
        if chars >= MAX_MESSAGE_CHARS {
            out.push('…');
            break;
        }
        let before = out.len();
        match c {
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if ((c as u32) < 0x20 && c != '\t') || c == '\x7f' => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c if (0x80..=0x9f).contains(&(c as u32))
                || matches!(c as u32, 0x2028 | 0x2029 | 0x202A..=0x202E | 0x2066..=0x2069) =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
        chars += out[before..].chars().count();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_escapes_controls_and_caps_length() {
        assert_eq!(printable("a\x1b[31mb\nc\td\u{7f}"), "a\\e[31mb\\nc\td\\x7F");
        assert_eq!(printable("x\u{85}y\u{202E}z"), "x\\u0085y\\u202Ez");
        assert_eq!(printable("café ü → ok"), "café ü → ok");
        let long = "é".repeat(5000);
        let p = printable(&long);
        assert_eq!(p.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(p.ends_with('…'));
        assert_eq!(
            printable(&"e".repeat(MAX_MESSAGE_CHARS)),
            "e".repeat(MAX_MESSAGE_CHARS)
        );
        // An escape is never cut in half by the cap.
        let p = printable(&"\x1b".repeat(MAX_MESSAGE_CHARS));
        assert!(p.ends_with("\\e…"));
    }
}
