//! The output formats of `--render-as`, as `puppet lookup`'s renderers print a value.

use crate::error::Error;
use hiera_formats::render;
use hiera_value::value::{Map, Value};

/// An output format of `--render-as`: every format Puppet's `FormatHandler` registers
/// (`puppet/network/formats.rb`), looked up by its downcased name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `s`: Ruby's `to_s` (the default with `--explain`).
    S,
    /// `yaml` (the default).
    Yaml,
    /// `json`, and `rich_data_json` (the same `to_json`).
    Json,
    /// `console`: scalars as text, a hash as an aligned table of JSON values, an array one
    /// `to_s` per line, anything else as pretty JSON.
    Console,
    /// `flat`: scalars as text, hashes and arrays as `key.path=value` lines, anything else as
    /// pretty JSON.
    Flat,
    /// `binary`: Puppet has no binary renderer for lookup values (always an error).
    Binary,
    /// `msgpack`: needs a gem Puppet does not ship (always an error).
    Msgpack,
    /// `pson`: registered but without its `to_pson` (always an error).
    Pson,
    /// `dot`: only catalogs have `to_dot` (always an error).
    Dot,
    /// `rich_data_msgpack`: calls `to_msgpack` directly, a NoMethodError without the gem.
    RichDataMsgpack,
}

impl Format {
    /// Parses `--render-as` as Puppet does (`downcase`, then `FormatHandler.format`), with its
    /// message for unknown formats.
    pub fn parse(s: &str) -> Result<Format, Error> {
        match s.to_lowercase().as_str() {
            "s" => Ok(Format::S),
            "yaml" => Ok(Format::Yaml),
            "json" | "rich_data_json" => Ok(Format::Json),
            "console" => Ok(Format::Console),
            "flat" => Ok(Format::Flat),
            "binary" => Ok(Format::Binary),
            "msgpack" => Ok(Format::Msgpack),
            "pson" => Ok(Format::Pson),
            "dot" => Ok(Format::Dot),
            "rich_data_msgpack" => Ok(Format::RichDataMsgpack),
            other => Err(Error::Usage(format!(
                "Unknown rendering format '{other}': --render-as takes yaml, json, s, console or flat"
            ))),
        }
    }

    /// `puts renderer.render(value)`: the bytes a single lookup prints for `v`.
    pub fn render(self, v: &Value) -> Result<String, Error> {
        let json_err = |e: hiera_formats::render::RenderError| Error::run(e.to_string());
        // `Format#render`: `instance.send(render_method)` when the instance responds to it.
        let not_rendered = |method: &str, mime: &str| {
            Err(Error::run(format!(
                "{} does not respond to {method}; can not render instances to {mime}",
                v.ruby_class()
            )))
        };
        let mut s = match self {
            Format::S => hiera_value::text::to_s(v),
            Format::Json => render::to_json(v).map_err(json_err)?,
            Format::Yaml => render::to_yaml(v).map_err(json_err)?,
            Format::Console => console(v).map_err(json_err)?,
            Format::Flat => flat(v).map_err(json_err)?,
            Format::Binary => return not_rendered("to_binary", "application/octet-stream"),
            Format::Msgpack => return not_rendered("to_msgpack", "application/x-msgpack"),
            Format::Pson => return not_rendered("to_pson", "text/pson"),
            Format::Dot => return not_rendered("to_dot", "text/dot"),
            Format::RichDataMsgpack => {
                return Err(Error::run(format!(
                    "undefined method `to_msgpack' for {}",
                    no_method_receiver(v)
                )))
            }
        };
        if !s.ends_with('\n') {
            s.push('\n');
        }
        Ok(s)
    }
}

/// How Ruby 3.3's NoMethodError names its receiver.
fn no_method_receiver(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        other => format!("an instance of {}", other.ruby_class()),
    }
}

/// Whether the `console`/`flat` renderers print `v` as is (`is_a?(String) || is_a?(Numeric)`).
fn text_or_numeric(v: &Value) -> Option<String> {
    match v {
        Value::String(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {
            Some(hiera_value::text::to_s(v))
        }
        // A binary String is a String.
        Value::Object(o) if o.binary_bytes().is_some() => Some(o.to_s.clone()),
        _ => None,
    }
}

/// The `console` format's `render`.
fn console(v: &Value) -> Result<String, hiera_formats::render::RenderError> {
    use hiera_value::text::to_s;
    if let Some(s) = text_or_numeric(v) {
        return Ok(s);
    }
    match v {
        // A hash with String or Numeric keys: a table sorted by the keys' text, each key padded
        // to the longest (in characters) plus two, then the value's compact JSON.
        Value::Hash(h) if h.keys().all(|k| text_or_numeric(k).is_some()) => {
            let column = h.keys().map(|k| to_s(k).chars().count()).max().unwrap_or(0) + 2;
            let mut rows: Vec<(String, &Value)> = h.iter().map(|(k, v)| (to_s(k), v)).collect();
            rows.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            let mut out = String::new();
            for (k, v) in rows {
                let pad = column - k.chars().count();
                out.push_str(&k);
                out.extend(std::iter::repeat_n(' ', pad));
                // `json.render(value).chomp.gsub(/\n */)`: compact JSON has no newlines.
                out.push_str(&render::to_json(v)?);
                out.push('\n');
            }
            Ok(out)
        }
        Value::Array(a) => Ok(a.iter().map(|e| to_s(e) + "\n").collect()),
        other => hiera_formats::json::write::to_json_pretty(other),
    }
}

/// The `flat` format's `render`: `flatten_hash`/`flatten_array`, then `key=value` lines (Ruby
/// `to_s` of both).
fn flat(v: &Value) -> Result<String, hiera_formats::render::RenderError> {
    if let Some(s) = text_or_numeric(v) {
        return Ok(s);
    }
    let data = match v {
        Value::Hash(h) => flatten_hash(h),
        Value::Array(a) => {
            let mut out = Map::default();
            for (i, e) in a.iter().enumerate() {
                match e {
                    Value::Hash(h) => {
                        for (k, v) in flatten_hash(h) {
                            out.insert(dotted(&Value::Int(i as i64), &k), v);
                        }
                    }
                    other => {
                        out.insert(Value::String(i.to_string()), other.clone());
                    }
                }
            }
            out
        }
        other => return hiera_formats::json::write::to_json_pretty(other),
    };
    use hiera_value::text::to_s;
    let mut out = String::new();
    for (k, v) in &data {
        out.push_str(&to_s(k));
        out.push('=');
        out.push_str(&to_s(v));
        out.push('\n');
    }
    Ok(out)
}

/// `"#{a}.#{b}"`.
fn dotted(a: &Value, b: &Value) -> Value {
    use hiera_value::text::to_s;
    Value::String(format!("{}.{}", to_s(a), to_s(b)))
}

/// The `flat` format's `flatten_hash`: a Ruby Hash, so a later key equal to an earlier one
/// replaces its value in place.
fn flatten_hash(h: &Map) -> Map {
    let mut out = Map::default();
    for (k, v) in h {
        match v {
            Value::Hash(inner) => {
                for (ik, iv) in flatten_hash(inner) {
                    out.insert(dotted(k, &ik), iv);
                }
            }
            Value::Array(a) => {
                for (i, e) in a.iter().enumerate() {
                    let at = dotted(k, &Value::Int(i as i64));
                    match e {
                        Value::Hash(inner) => {
                            for (ik, iv) in flatten_hash(inner) {
                                out.insert(dotted(&at, &ik), iv);
                            }
                        }
                        other => {
                            out.insert(at, other.clone());
                        }
                    }
                }
            }
            other => {
                out.insert(k.clone(), other.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(Format::parse("JSON").unwrap(), Format::Json);
        assert_eq!(Format::parse("pson").unwrap(), Format::Pson);
        assert_eq!(Format::parse("FLAT").unwrap(), Format::Flat);
        assert!(Format::Pson.render(&Value::Int(1)).is_err());
        let h = |e: Vec<(&str, Value)>| {
            Value::Hash(e.into_iter().map(|(k, v)| (Value::str(k), v)).collect())
        };
        let v = h(vec![
            (
                "b",
                Value::Array(vec![Value::Int(1), h(vec![("c", Value::Null)])]),
            ),
            ("a", h(vec![])),
            ("b.0", Value::Bool(true)),
        ]);
        assert_eq!(Format::Flat.render(&v).unwrap(), "b.0=true\nb.1.c=\n");
        assert_eq!(
            Format::Console.render(&v).unwrap(),
            "a    {}\nb    [1,{\"c\":null}]\nb.0  true\n"
        );
        assert_eq!(Format::Console.render(&Value::Null).unwrap(), "null\n");
        assert!(Format::parse("xml").is_err());
        assert_eq!(Format::Json.render(&Value::Int(1)).unwrap(), "1\n");
        assert!(Format::Binary.render(&Value::Int(1)).is_err());
    }
}
