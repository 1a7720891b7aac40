//! Where a failed lookup's error came from: the data file (and line) that a user must open.
//!
//! Puppet's words for a broken value or data file often do not say where it is ("Unknown
//! interpolation method 'x'", "Unable to parse invalid value for Float(): ..."). The session
//! notes the file whose reading or value raised the first error of a lookup; the top-level
//! lookup appends it, as Puppet's own issues do: ` (file: PATH, line: N)`.
//!
//! Only the returned error gains the suffix, and not under `--explain`, whose text (which ends
//! with the error) keeps Puppet's words byte for byte. A note is applied only to the error it was taken for
//! (its message is part of the final one), so an error that was caught and dropped on the way
//! (a layer that tolerates it) cannot lend its file to another.

use super::Session;
use crate::error::Error;
use hiera_formats::DataFormat;

/// The origin of an error, as noted where it was raised.
#[derive(Debug, Clone)]
pub(super) struct Blame {
    /// The error's message when it was noted.
    message: String,
    /// The data file.
    file: String,
    /// The key whose value raised it (`None`: the file itself failed to load).
    key: Option<String>,
    /// How the file is read (`None`: not a data file the position readers know).
    format: Option<DataFormat>,
}

impl Session {
    /// Notes that reading `file` (for `key`) raised `e`, unless an inner lookup already noted
    /// where this error came from.
    pub(super) fn blame(
        &mut self,
        e: &Error,
        file: &str,
        key: Option<&str>,
        format: Option<DataFormat>,
    ) {
        if self.blame.is_some() || file.is_empty() {
            return;
        }
        self.blame = Some(Blame {
            message: e.to_string(),
            file: file.to_string(),
            key: key.map(str::to_string),
            format,
        });
    }

    /// The file `lookup_options` values came from, blamed for an error in them when only one
    /// file gave any: the entries of several are merged, and which one holds the bad entry is
    /// not known here (no file is named rather than the wrong one).
    pub(super) fn blame_lookup_options(&mut self, e: &Error) {
        if let [(file, format)] = self.inv.options_files.as_slice() {
            let (file, format) = (file.clone(), *format);
            self.blame(e, &file, Some(super::LOOKUP_OPTIONS), format);
        }
    }

    /// The error a top-level lookup returns: `e`, with the noted file and line appended when
    /// its message does not say where already. The note stays until the next top-level
    /// lookup: `where` reports an error met after its lookup with it.
    pub(crate) fn located(&self, e: Error) -> Error {
        let Some(b) = &self.blame else {
            return e;
        };
        // Under `--explain` the error ends Puppet's text on stdout, byte for byte.
        if self.explain.is_some() {
            return e;
        }
        let message = e.to_string();
        if !message.contains(&b.message) || message.contains("(file: ") || message.contains(&b.file)
        {
            return e;
        }
        let line = self.line_of(b);
        let suffix = match line {
            Some(line) => format!(" (file: {}, line: {line})", b.file),
            None => format!(" (file: {})", b.file),
        };
        e.with_suffix(&suffix)
    }

    /// The 1-based line of the blamed key (or of the file's parse error), read again: this
    /// runs only on the way out of a failed lookup.
    fn line_of(&self, b: &Blame) -> Option<usize> {
        let fs = self.cache.files.fs();
        let path = std::path::Path::new(&b.file);
        let format = b.format?;
        let bytes = fs.read(path).ok()?;
        if format == DataFormat::Yaml {
            if let Err(e) = hiera_formats::yaml::load_document(&bytes) {
                return Some(e.position().0);
            }
        }
        let key = b.key.as_deref()?;
        let tree = hiera_formats::position::positions_of(format, &bytes).ok()??;
        let entry = tree.entry(&hiera_value::value::Value::str(key))?;
        Some(entry.key_pos.line)
    }
}
