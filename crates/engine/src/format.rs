//! The output formats of `--render-as`, as `puppet lookup`'s renderers print a value.

use crate::error::Error;
use hiera_formats::render;
use hiera_value::value::Value;

/// An output format of `--render-as`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `s`: Ruby's `to_s` (the default with `--explain`).
    S,
    /// `yaml` (the default).
    Yaml,
    /// `json` (and its alias `pson`).
    Json,
    /// `binary`: Puppet has no binary renderer for lookup values (always an error).
    Binary,
    /// `msgpack`: needs a gem Puppet does not ship (always an error).
    Msgpack,
}

impl Format {
    /// Parses `--render-as` as Puppet does (case-insensitive), with its message for unknown
    /// formats.
    pub fn parse(s: &str) -> Result<Format, Error> {
        match s.to_ascii_lowercase().as_str() {
            "s" => Ok(Format::S),
            "yaml" => Ok(Format::Yaml),
            "json" | "pson" => Ok(Format::Json),
            "binary" => Ok(Format::Binary),
            "msgpack" => Ok(Format::Msgpack),
            other => Err(Error::Usage(format!(
                "Unknown rendering format '{other}': --render-as takes yaml, json or s"
            ))),
        }
    }

    /// `puts renderer.render(value)`: the bytes a single lookup prints for `v`.
    pub fn render(self, v: &Value) -> Result<String, Error> {
        let mut s = match self {
            Format::S => hiera_value::text::to_s(v),
            Format::Json => render::to_json(v).map_err(|e| Error::run(e.to_string()))?,
            Format::Yaml => render::to_yaml(v).map_err(|e| Error::run(e.to_string()))?,
            Format::Binary => {
                return Err(Error::run(format!(
                "{} does not respond to to_binary; can not render instances to application/octet-stream",
                v.ruby_class()
            )))
            }
            Format::Msgpack => {
                return Err(Error::run(format!(
                "{} does not respond to to_msgpack; can not render instances to application/x-msgpack",
                v.ruby_class()
            )))
            }
        };
        if !s.ends_with('\n') {
            s.push('\n');
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(Format::parse("JSON").unwrap(), Format::Json);
        assert_eq!(Format::parse("pson").unwrap(), Format::Json);
        assert!(Format::parse("xml").is_err());
        assert_eq!(Format::Json.render(&Value::Int(1)).unwrap(), "1\n");
        assert!(Format::Binary.render(&Value::Int(1)).is_err());
    }
}
