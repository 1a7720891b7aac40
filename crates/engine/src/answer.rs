//! What `puppet lookup` does with a lookup's outcome before printing it: `--default` when
//! nothing was found, the `--type` assertion on the found value (or the default), and the
//! rendering in the `--render-as` format. Single lookups and batch mode both go through
//! [`Finish::apply`], so a flag cannot mean one thing in one mode and another in the other.

use crate::engine::Outcome;
use crate::error::Error;

use hiera_types::Type;
use hiera_value::value::Value;

/// The steps after the lookup: default, type assertion.
#[derive(Debug, Clone, Default)]
pub struct Finish {
    /// `--default VALUE` (a string, as Puppet's command line gives it).
    pub default: Option<String>,
    /// `--type TYPE`, parsed (see [`set_type`](Self::set_type)).
    pub value_type: Option<Type>,
}

/// The final answer to one lookup.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A value was found (and passed `--type`).
    Found(Value),
    /// Nothing was found and `--default` answered (it passed `--type`).
    Default(Value),
    /// Nothing was found and there is no default.
    NotFound,
}

impl Answer {
    /// The value to print, if any.
    pub fn value(&self) -> Option<&Value> {
        match self {
            Answer::Found(v) | Answer::Default(v) => Some(v),
            Answer::NotFound => None,
        }
    }

    /// The same answer with its value passed through `f` (`--redact`).
    pub fn map_value(self, f: impl FnOnce(&Value) -> Value) -> Answer {
        match self {
            Answer::Found(v) => Answer::Found(f(&v)),
            Answer::Default(v) => Answer::Default(f(&v)),
            Answer::NotFound => Answer::NotFound,
        }
    }

    /// The exit status of a single lookup with this answer: 0 answered, 1 not found.
    pub fn status(&self) -> i32 {
        match self {
            Answer::NotFound => 1,
            _ => 0,
        }
    }
}

impl Finish {
    /// Parses `--type` (Puppet's message for a bad type expression).
    pub fn parse_type(text: &str) -> Result<Type, Error> {
        hiera_types::parse_cli(text).map_err(|e| {
            Error::run(format!(
                "--type '{text}': {} (--type takes a Puppet data type, such as 'String', 'Array[String]' or 'Optional[Integer[0]]')",
                e.message()
            ))
        })
    }

    /// `--type TEXT`: the found value (or the default) must be an instance of this Puppet
    /// type; an invalid type expression is Puppet's error.
    pub fn set_type(&mut self, text: &str) -> Result<(), Error> {
        self.value_type = Some(Self::parse_type(text)?);
        Ok(())
    }

    /// Applies `--default` and `--type` to a lookup's outcome, as `puppet lookup` does: the
    /// found value, else the default, must be an instance of the type.
    pub fn apply(&self, outcome: Outcome) -> Result<Answer, Error> {
        match outcome {
            Outcome::Found(v) => {
                self.check("Found value", &v)?;
                Ok(Answer::Found(v))
            }
            Outcome::NotFound => match &self.default {
                Some(d) => {
                    let v = Value::str(d.as_str());
                    self.check("Default value", &v)?;
                    Ok(Answer::Default(v))
                }
                None => Ok(Answer::NotFound),
            },
        }
    }

    /// The `--type` check alone (a raw error naming the subject, as Puppet words it).
    pub(crate) fn check(&self, subject: &str, v: &Value) -> Result<(), Error> {
        let Some(t) = &self.value_type else {
            return Ok(());
        };
        hiera_types::take_regex_limit_error();
        let ok = t.is_instance(v);
        if let Some(e) = hiera_types::take_regex_limit_error() {
            return Err(Error::run(e));
        }
        // An opaque secret's type is its plaintext's: a mismatch of the stand-in says nothing.
        if ok || crate::backend::eyaml::contains_opaque(v) {
            Ok(())
        } else {
            Err(Error::run(hiera_types::describe_mismatch(subject, t, v)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_type() {
        let f = Finish {
            default: Some("x".into()),
            value_type: Some(Finish::parse_type("String[2]").unwrap()),
        };
        assert!(f.apply(Outcome::NotFound).is_err());
        assert_eq!(
            f.apply(Outcome::Found(Value::str("ab"))).unwrap(),
            Answer::Found(Value::str("ab"))
        );
        let f = Finish {
            default: Some("xy".into()),
            value_type: None,
        };
        assert_eq!(
            f.apply(Outcome::NotFound).unwrap(),
            Answer::Default(Value::str("xy"))
        );
        assert_eq!(
            Finish::default().apply(Outcome::NotFound).unwrap().status(),
            1
        );
    }
}
