//! Errors, typed by how Puppet delivers them.
//!
//! Puppet has three channels and they change what `--explain` prints: a `LookupError` is
//! appended to the explanation, anything else aborts the run. hiera-lookup exits 2 for all
//! of them (Puppet exits 1, often silently); the kind only steers the explain output.

use thiserror::Error;

/// Why a lookup (or reading its inputs) failed, classified as Puppet raises it: the class
/// decides how Puppet words and wraps the message. `Display` is the message.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// Puppet's `Puppet::DataBinding::LookupError`. `issue` is true when it carries an issue
    /// code (hiera.yaml and interpolation issues), which stops the global layer from
    /// prefixing it with "Lookup of key 'k' failed: ".
    #[error("{message}")]
    Lookup {
        /// Puppet's message.
        message: String,
        /// Whether the message carries an issue code.
        issue: bool,
    },
    /// A plain `Puppet::Error`: a data provider turns it into a LookupError on the way out.
    #[error("{0}")]
    Puppet(String),
    /// Any other error (`ArgumentError`, type assertion, parse errors of hiera.yaml): Puppet
    /// prints `Error: Could not run: <message>`.
    #[error("{0}")]
    Run(String),
    /// A variable the scope does not define, under `strict = error`: a plain Ruby error
    /// (`Undefined variable 'name'; `) that a hiera.yaml being interpolated turns into an
    /// issue naming its file and line.
    #[error("Undefined variable '{0}'; ")]
    UndefinedVariable(String),
    /// A command-line usage error.
    #[error("{0}")]
    Usage(String),
    /// A file setting naming a directory (the path): Puppet's start-up fails when it manages
    /// the file, after two notices on stdout ([`Error::stdout`]).
    #[error("Could not set 'file' on ensure: Is a directory @ rb_sysopen - {0}")]
    SettingsFile(String),
}

impl Error {
    pub(crate) fn lookup(message: impl Into<String>) -> Error {
        Error::Lookup {
            message: message.into(),
            issue: false,
        }
    }
    pub(crate) fn issue(message: impl Into<String>) -> Error {
        Error::Lookup {
            message: message.into(),
            issue: true,
        }
    }
    /// A plain error (Puppet's `Error: Could not run: <message>`).
    pub fn run(message: impl Into<String>) -> Error {
        Error::Run(message.into())
    }
    /// True for errors that `--explain` appends to the explanation instead of aborting.
    pub fn is_lookup_error(&self) -> bool {
        matches!(self, Error::Lookup { .. })
    }
    /// The same error, its message followed by `suffix` (where it came from).
    pub(crate) fn with_suffix(self, suffix: &str) -> Error {
        match self {
            Error::Lookup { message, issue } => Error::Lookup {
                message: message + suffix,
                issue,
            },
            Error::Puppet(m) => Error::Puppet(m + suffix),
            Error::Run(m) => Error::Run(m + suffix),
            Error::Usage(m) => Error::Usage(m + suffix),
            // Puppet's words end with "; ", where its own "(file & line …)" would go.
            Error::UndefinedVariable(_) => Error::Run(format!("{self}{}", suffix.trim_start())),
            other => other,
        }
    }
    /// The same error with its message rewritten by `f` (errors without a message of their
    /// own stay as they are).
    pub(crate) fn map_message(self, f: impl FnOnce(&str) -> String) -> Error {
        match self {
            Error::Lookup { message, issue } => Error::Lookup {
                message: f(&message),
                issue,
            },
            Error::Puppet(m) => Error::Puppet(f(&m)),
            Error::Run(m) => Error::Run(f(&m)),
            Error::Usage(m) => Error::Usage(f(&m)),
            other => other,
        }
    }
    /// The message, as `Display` gives it.
    pub fn message(&self) -> String {
        self.to_string()
    }
    /// What Puppet prints on stdout before failing this way (empty for most errors).
    pub fn stdout(&self) -> String {
        match self {
            Error::SettingsFile(path) => {
                let notice = format!(
                    "Notice: /File[{path}]: Not removing directory; use 'force' to override\n"
                );
                notice.repeat(2)
            }
            _ => String::new(),
        }
    }
}

/// A file the user named that could not be read: what happened in plain words and what to do,
/// then Ruby's errno text as Puppet prints it (`No such file or directory @ rb_sysopen - PATH`,
/// the part of the message the conformance suite records). `what` names the file ("The facts
/// file"), `fix` says what to do. Our own refusals (too large, not a regular file, not UTF-8)
/// are plain words already and carry no Ruby part.
pub fn unreadable(what: &str, display: &str, e: &std::io::Error, fix: &str) -> Error {
    let plain = match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist",
        std::io::ErrorKind::PermissionDenied => {
            return Error::run(format!(
                "{what} {display} cannot be read (permission denied): {fix}, or give this user read access"
            ))
        }
        std::io::ErrorKind::IsADirectory => {
            return Error::run(format!(
                "{what} {display} is a directory, not a file: {fix}"
            ))
        }
        _ => {
            // Rust appends " (os error N)" to the system's text.
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            return Error::run(format!("{what} {display} cannot be read: {text}; {fix}"));
        }
    };
    Error::run(format!(
        "{what} {display} {plain}: {fix} ({} @ rb_sysopen - {display})",
        io_reason(e)
    ))
}

/// Ruby's wording of an I/O failure (`No such file or directory` …), as messages quote it.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A merge failure with Puppet's message (`hiera_engine::merge`'s strategies raise it).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{message}")]
pub struct MergeError {
    /// Puppet's message.
    pub message: String,
    /// true when Puppet raises it as a plain error (`Error: Could not run: ...`), false for a
    /// LookupError (a `Puppet::Error` raised inside the lookup, e.g. a type mismatch).
    pub raw: bool,
}

impl MergeError {
    pub(crate) fn raw(message: impl Into<String>) -> MergeError {
        MergeError {
            message: message.into(),
            raw: true,
        }
    }
    pub(crate) fn lookup(message: impl Into<String>) -> MergeError {
        MergeError {
            message: message.into(),
            raw: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ruby's `@ rb_sysopen` stays only where a recording has it (a missing file); a file
    /// that cannot be read says so and what to do.
    #[test]
    fn unreadable_files_in_plain_words() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let m = unreadable("The facts file", "x.json", &denied, "check --facts").to_string();
        assert_eq!(
            m,
            "The facts file x.json cannot be read (permission denied): check --facts, or give this user read access"
        );
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let m = unreadable("The facts file", "x.json", &missing, "check --facts").to_string();
        assert!(
            m.contains("No such file or directory @ rb_sysopen - x.json"),
            "{m}"
        );
    }
}
