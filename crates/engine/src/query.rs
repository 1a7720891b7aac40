//! A lookup as `puppet lookup` is asked it (fd's `Opts` → `Config`, ripgrep's `LowArgs` →
//! `HiArgs`): [`Flags`] as a command line (or a web request) gives them, validated once with
//! Puppet's wording into a [`Request`]: typed [`Format`], [`Strict`], merge strategy and
//! [`Mode`]. [`Request::answer`] then runs a single lookup (or an explanation) and applies
//! `--default`, `--type` and the format, so the command line, the web view and the editor
//! print one text for one question.

use crate::answer::{Answer, Finish};
use crate::engine::{Session, Settings};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::merge::MergeStrategy;
use crate::scope::Strict;
use hiera_value::value::Value;

/// Where Puppet says "Run 'puppet lookup --help' for more details": this program's help.
const RUN_HELP: &str = "Run 'hiera-lookup --help' for more details.";

/// The lookup flags as a command line gives them, before validation.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// The keys, in order (the first found wins).
    pub keys: Vec<String>,
    /// `--merge`.
    pub merge: Option<String>,
    /// `--knock-out-prefix`.
    pub knock_out_prefix: Option<String>,
    /// `--sort-merged-arrays`.
    pub sort_merged_arrays: bool,
    /// `--merge-hash-arrays`.
    pub merge_hash_arrays: bool,
    /// `--strict`: `off`, `warning` or `error`.
    pub strict: String,
    /// `--render-as`.
    pub render_as: Option<String>,
    /// `--explain`.
    pub explain: bool,
    /// `--explain-options`.
    pub explain_options: bool,
    /// `--compile` (refused: no Puppet compiler).
    pub compile: bool,
    /// `--default`.
    pub default: Option<String>,
    /// `--type`, as written.
    pub value_type: Option<String>,
    /// `--redact`: values decrypted from eyaml are shown as `[redacted]`.
    pub redact: bool,
    /// Many nodes (several `--facts`, `--facts-dir`) or `--all`: batch mode.
    pub batch: bool,
    /// `--all`: every key the node can see.
    pub all: bool,
}

/// What kind of run a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One node, the first of the keys that is found.
    Single,
    /// Many nodes × keys, JSON Lines.
    Batch,
    /// `--explain` (`options_only`: `--explain-options` alone).
    Explain {
        /// `--explain-options` without `--explain`.
        options_only: bool,
    },
}

/// A validated request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The keys, in order (the first found wins).
    pub keys: Vec<String>,
    /// `--merge` and its deep options (`None`: lookup_options or `first` decide).
    pub merge: Option<MergeStrategy>,
    /// `--strict`.
    pub strict: Strict,
    /// Single lookup, batch or explanation.
    pub mode: Mode,
    /// The render format (`s` by default with `--explain`, else `yaml`).
    pub format: Format,
    /// Whether the format was asked for (batch mode adds rendered values only then).
    pub format_given: bool,
    /// `--redact`.
    pub redact: bool,
    /// `--default` and `--type` (parsed by [`finish`](Self::finish)).
    default: Option<String>,
    value_type: Option<String>,
}

/// What a single lookup or an explanation prints, and its exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// What goes to stdout.
    pub text: String,
    /// The exit status: 0 answered, 1 not found.
    pub code: i32,
    /// The text is an `--explain` trace in the `s` format (which a terminal may colour).
    pub explanation: bool,
}

impl Request {
    /// Validates `flags`, in Puppet's order and with its messages.
    pub fn new(flags: &Flags) -> Result<Request> {
        let merge = parse_merge(flags)?;
        let strict = parse_strict(&flags.strict)?;
        if flags.compile {
            return Err(Error::Usage(
                "--compile needs a Puppet compiler and is not supported by hiera-lookup".into(),
            ));
        }
        let explain = flags.explain || flags.explain_options;
        let only_options = flags.explain_options && !flags.explain;
        let mut keys = flags.keys.clone();
        if keys.is_empty() && !flags.batch {
            if only_options {
                keys.push("__global__".into());
            } else {
                return Err(Error::Usage("No keys were given to lookup.".into()));
            }
        }
        let format = match &flags.render_as {
            Some(f) => Format::parse(f)?,
            None if explain => Format::S,
            None => Format::Yaml,
        };
        let mode = if flags.batch {
            Mode::Batch
        } else if explain {
            Mode::Explain {
                options_only: only_options,
            }
        } else {
            Mode::Single
        };
        Ok(Request {
            keys,
            merge,
            strict,
            mode,
            format,
            format_given: flags.render_as.is_some(),
            redact: flags.redact,
            default: flags.default.clone(),
            value_type: flags.value_type.clone(),
        })
    }

    /// The batch-mode checks (after the layers are known, as before batch mode existed).
    pub fn check_batch(&self, flags: &Flags) -> Result<()> {
        if flags.explain || flags.explain_options {
            return Err(Error::Usage(
                "--explain cannot be combined with batch mode".into(),
            ));
        }
        if flags.all && !flags.keys.is_empty() {
            return Err(Error::Usage("--all and keys cannot be combined".into()));
        }
        if !flags.all && flags.keys.is_empty() {
            return Err(Error::Usage("No keys were given to lookup.".into()));
        }
        Ok(())
    }

    /// The session settings this request needs.
    pub fn settings(&self) -> Settings {
        let (explain, explain_options_only) = match self.mode {
            Mode::Explain { options_only } => (!options_only, options_only),
            _ => (false, false),
        };
        Settings {
            strict: self.strict,
            explain,
            explain_options_only,
            redact: self.redact,
            ..Default::default()
        }
    }

    /// `--default` and `--type`. The type is parsed here, when the node is known, as Puppet
    /// parses it after reading the facts (so a facts error comes first).
    pub fn finish(&self) -> Result<Finish> {
        Ok(Finish {
            default: self.default.clone(),
            value_type: self
                .value_type
                .as_deref()
                .map(Finish::parse_type)
                .transpose()?,
        })
    }

    /// Runs the request's lookup on `session` (made with [`settings`](Self::settings)) and
    /// renders the answer or the explanation as `puppet lookup` prints it.
    pub fn answer(&self, session: &mut Session, warnings: &mut Vec<String>) -> Result<Rendered> {
        let finish = self.finish()?;
        // `--default` and `--type` apply to the outcome; a type mismatch is a plain error.
        let result = session
            .lookup(&self.keys, self.merge.as_ref())
            .and_then(|o| finish.apply(o));
        // --redact changes only what is printed, from here on.
        let redactor = session.redactor().filter(|r| !r.is_empty()).cloned();
        let result = match &redactor {
            Some(r) => result
                .map(|a| a.map_value(|v| r.value(v)))
                .map_err(|e| r.error(&e)),
            None => result,
        };
        let hide = |text: String| match &redactor {
            Some(r) => r.text(&text).into_owned(),
            None => text,
        };
        warnings.extend(session.take_warnings().into_iter().map(hide));
        if let (Some(r), Some(ex)) = (&redactor, session.explainer_mut()) {
            ex.redact(r);
        }
        let format = self.format;
        if let Mode::Explain { .. } = self.mode {
            // The trace holds its own copies of what it prints: the answer and the loaded
            // data are dropped before it is printed.
            let result = result.map(|a| a.map_value(|_| Value::Null));
            session.release_data();
            let extra = match &result {
                Ok(Answer::Found(_) | Answer::Default(_)) => None,
                Ok(Answer::NotFound) => Some(Session::not_found_message(&self.keys)),
                Err(e) if e.is_lookup_error() => Some(e.to_string()),
                Err(e) => return Err(e.clone()),
            };
            // deep_merge's merge_debug lines come first on stdout, as Ruby `puts` them (on
            // an error they stay in the session for the caller, see `Session::take_merge_trace`).
            let trace = hide(session.take_merge_trace());
            let rendered = |text: String| Rendered {
                text: format!("{trace}{text}"),
                code: 0,
                explanation: false,
            };
            if format == Format::S {
                if let (Some(t), Some(ex)) = (extra, session.explainer_mut()) {
                    ex.root_text(t);
                }
                let text = session
                    .explainer()
                    .map(|ex| ex.explain())
                    .transpose()?
                    .unwrap_or_default();
                return Ok(Rendered {
                    text: format!("{trace}{}", hide(text)),
                    code: 0,
                    explanation: true,
                });
            }
            let Some(ex) = session.explainer() else {
                return Ok(rendered(format.render(&Value::Null)?));
            };
            // YAML: Psych shows the symbols and shared objects a plain value cannot hold.
            return Ok(rendered(hide(ex.render(format)?)));
        }
        let answer = result?;
        let trace = hide(session.take_merge_trace());
        Ok(Rendered {
            text: match answer.value() {
                Some(v) => format!("{trace}{}", format.render(v)?),
                None => trace,
            },
            code: answer.status(),
            explanation: false,
        })
    }
}

/// `--strict`: `off`, `warning` or `error`, with Puppet's message.
pub fn parse_strict(strict: &str) -> Result<Strict> {
    Ok(match strict {
        "off" => Strict::Off,
        "warning" => Strict::Warning,
        "error" => Strict::Error,
        other => {
            return Err(Error::Usage(format!(
                "Invalid value '{other}' for parameter strict: expected off, warning or error"
            )))
        }
    })
}

/// `--merge` and the deep-only options, with Puppet's messages.
fn parse_merge(flags: &Flags) -> Result<Option<MergeStrategy>> {
    let deep_only =
        flags.sort_merged_arrays || flags.merge_hash_arrays || flags.knock_out_prefix.is_some();
    let deep = matches!(
        flags.merge.as_deref(),
        Some("deep" | "reverse_deep" | "unconstrained_deep")
    );
    if deep_only && !deep {
        return Err(Error::Usage(format!(
            "The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep': add --merge deep, or leave them out. {RUN_HELP}"
        )));
    }
    let Some(m) = flags.merge.as_deref() else {
        return Ok(None);
    };
    if !matches!(
        m,
        "first" | "unique" | "hash" | "deep" | "reverse_deep" | "unconstrained_deep"
    ) {
        return Err(Error::Usage(format!(
            "The --merge option only accepts 'first', 'hash', 'unique', or 'deep' (and hiera-lookup's 'reverse_deep' and 'unconstrained_deep'), not '{m}'. {RUN_HELP}"
        )));
    }
    MergeStrategy::from_cli(
        m,
        flags.knock_out_prefix.as_deref(),
        flags.sort_merged_arrays,
        flags.merge_hash_arrays,
    )
    .map(Some)
    .map_err(|e| Error::Usage(e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(keys: &[&str]) -> Flags {
        Flags {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            strict: "error".into(),
            ..Flags::default()
        }
    }

    #[test]
    fn typed_from_flags() {
        let r = Request::new(&flags(&["k"])).unwrap();
        assert_eq!(
            (r.mode, r.format, r.strict),
            (Mode::Single, Format::Yaml, Strict::Error)
        );
        assert!(r.merge.is_none() && !r.format_given);
        let r = Request::new(&Flags {
            explain: true,
            render_as: Some("JSON".into()),
            merge: Some("deep".into()),
            sort_merged_arrays: true,
            ..flags(&["k"])
        })
        .unwrap();
        assert_eq!(
            r.mode,
            Mode::Explain {
                options_only: false
            }
        );
        assert_eq!(r.format, Format::Json);
        assert!(r.settings().explain && !r.settings().explain_options_only);
        assert_eq!(r.merge.map(|m| m.name()), Some("deep"));
        // --explain-options alone looks up no key of its own.
        let r = Request::new(&Flags {
            explain_options: true,
            ..flags(&[])
        })
        .unwrap();
        assert_eq!(
            (r.mode, r.format),
            (Mode::Explain { options_only: true }, Format::S)
        );
        assert_eq!(r.keys, ["__global__"]);
    }

    #[test]
    fn puppets_messages() {
        let err = |f: Flags| Request::new(&f).unwrap_err().to_string();
        assert_eq!(err(flags(&[])), "No keys were given to lookup.");
        assert_eq!(
            err(Flags {
                strict: "loud".into(),
                ..flags(&["k"])
            }),
            "Invalid value 'loud' for parameter strict: expected off, warning or error"
        );
        assert!(err(Flags {
            merge: Some("first".into()),
            merge_hash_arrays: true,
            ..flags(&["k"])
        })
        .starts_with("The options --knock-out-prefix, --sort-merged-arrays, and --merge-hash-arrays are only available with '--merge deep'"));
        assert!(err(Flags {
            merge: Some("all".into()),
            ..flags(&["k"])
        })
        .starts_with("The --merge option only accepts"));
        assert_eq!(
            err(Flags {
                render_as: Some("xml".into()),
                ..flags(&["k"])
            }),
            "Unknown rendering format 'xml': --render-as takes yaml, json, s, console or flat"
        );
        let batch = Flags {
            batch: true,
            explain: true,
            ..flags(&["k"])
        };
        let r = Request::new(&batch).unwrap();
        assert_eq!(r.mode, Mode::Batch);
        assert_eq!(
            r.check_batch(&batch).unwrap_err().to_string(),
            "--explain cannot be combined with batch mode"
        );
    }
}
