//! Which format a data file is in: the one mapping from Hiera's backend names, function names
//! and file extensions to a reader. Every crate asks [`DataFormat`] instead of matching the
//! names itself.

use std::path::Path;

/// The data file formats Hiera reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataFormat {
    /// YAML (`.yaml`, `.yml`, `.eyaml`), read as Psych reads it.
    Yaml,
    /// JSON (`.json`), as the json gem reads it.
    Json,
    /// HOCON (`.conf`), as ruby-hocon reads it.
    Hocon,
}

/// The lookup_key function that reads YAML files with encrypted values.
pub const EYAML_LOOKUP_KEY: &str = "eyaml_lookup_key";

impl DataFormat {
    /// Every format, in the order Hiera's documentation lists them.
    pub const ALL: [DataFormat; 3] = [DataFormat::Yaml, DataFormat::Json, DataFormat::Hocon];

    /// The data_hash function that reads this format (`yaml_data`, `json_data`, `hocon_data`).
    pub fn data_hash_function(self) -> &'static str {
        match self {
            DataFormat::Yaml => "yaml_data",
            DataFormat::Json => "json_data",
            DataFormat::Hocon => "hocon_data",
        }
    }

    /// The format a `data_hash` function reads (`None`: not a built-in data_hash function).
    pub fn of_data_hash(function: &str) -> Option<DataFormat> {
        DataFormat::ALL
            .into_iter()
            .find(|f| f.data_hash_function() == function)
    }

    /// The format a `lookup_key` function reads its files in (`None`: no built-in one that
    /// reads data files).
    pub fn of_lookup_key(function: &str) -> Option<DataFormat> {
        (function == EYAML_LOOKUP_KEY).then_some(DataFormat::Yaml)
    }

    /// The format a backend function reads, whatever its kind (`data_hash` or `lookup_key`),
    /// or `None` for a function without data files.
    pub fn of_function(function: &str) -> Option<DataFormat> {
        DataFormat::of_data_hash(function).or_else(|| DataFormat::of_lookup_key(function))
    }

    /// The format of Hiera 3's and Hiera 4's `backend` names (`yaml`, `json`, `hocon`); `eyaml`
    /// is a lookup_key backend and not one of them.
    pub fn of_backend(backend: &str) -> Option<DataFormat> {
        match backend {
            "yaml" => Some(DataFormat::Yaml),
            "json" => Some(DataFormat::Json),
            "hocon" => Some(DataFormat::Hocon),
            _ => None,
        }
    }

    /// The extension (without the dot) Hiera 3 and 4 add to a path of this format's backend.
    pub fn extension(self) -> &'static str {
        match self {
            DataFormat::Yaml => "yaml",
            DataFormat::Json => "json",
            DataFormat::Hocon => "conf",
        }
    }

    /// The format of a data file's extension (without the dot): `yaml`, `yml` and `eyaml`
    /// are YAML, `json` JSON, `conf` HOCON.
    pub fn of_extension(extension: &str) -> Option<DataFormat> {
        match extension {
            "yaml" | "yml" | "eyaml" => Some(DataFormat::Yaml),
            "json" => Some(DataFormat::Json),
            "conf" => Some(DataFormat::Hocon),
            _ => None,
        }
    }

    /// The format of a data file, by its extension ([`of_extension`](Self::of_extension)).
    pub fn of_path(path: &Path) -> Option<DataFormat> {
        DataFormat::of_extension(path.extension()?.to_str()?)
    }

    /// `key` as a data file of this format writes a top-level key: plain when the format
    /// reads the plain text back as the same string (YAML: a plain scalar Psych resolves to
    /// itself; HOCON: no path separator either), else in double quotes, which JSON, YAML and
    /// HOCON read alike.
    pub fn written_key(self, key: &str) -> String {
        let plain = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '-' | '.'))
            && !key.ends_with(':')
            && crate::yaml::resolve_plain_scalar(key) == hiera_value::value::Value::str(key);
        match self {
            DataFormat::Yaml if plain => key.to_string(),
            DataFormat::Hocon if plain && !key.contains(['.', ':']) => key.to_string(),
            _ => {
                let mut out = String::new();
                crate::json::write::json_str(&mut out, key);
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_written_quoted_when_needed() {
        assert_eq!(DataFormat::Yaml.written_key("ntp::servers"), "ntp::servers");
        assert_eq!(DataFormat::Yaml.written_key("yes"), "\"yes\"");
        assert_eq!(DataFormat::Yaml.written_key("a b"), "\"a b\"");
        assert_eq!(DataFormat::Yaml.written_key("a:"), "\"a:\"");
        assert_eq!(DataFormat::Yaml.written_key(""), "\"\"");
        assert_eq!(DataFormat::Json.written_key("k"), "\"k\"");
        assert_eq!(DataFormat::Hocon.written_key("k"), "k");
        assert_eq!(DataFormat::Hocon.written_key("a::b"), "\"a::b\"");
        assert_eq!(DataFormat::Json.written_key("q\"\\"), "\"q\\\"\\\\\"");
    }

    #[test]
    fn names_and_extensions_map_to_one_format() {
        use DataFormat::*;
        for (function, format) in [
            ("yaml_data", Some(Yaml)),
            ("json_data", Some(Json)),
            ("hocon_data", Some(Hocon)),
            ("eyaml_lookup_key", Some(Yaml)),
            ("command", None),
            ("yaml", None),
        ] {
            assert_eq!(DataFormat::of_function(function), format, "{function}");
        }
        assert_eq!(DataFormat::of_data_hash("eyaml_lookup_key"), None);
        assert_eq!(DataFormat::of_lookup_key("yaml_data"), None);
        for f in DataFormat::ALL {
            assert_eq!(DataFormat::of_data_hash(f.data_hash_function()), Some(f));
            assert_eq!(DataFormat::of_extension(f.extension()), Some(f));
            assert_eq!(
                DataFormat::of_backend(f.data_hash_function().trim_end_matches("_data")),
                Some(f)
            );
        }
        assert_eq!(DataFormat::of_backend("eyaml"), None);
        for (path, format) in [
            ("a/common.yaml", Some(Yaml)),
            ("a/common.yml", Some(Yaml)),
            ("a/secrets.eyaml", Some(Yaml)),
            ("a/common.json", Some(Json)),
            ("a/common.conf", Some(Hocon)),
            ("a/common.YAML", None),
            ("a/common", None),
            ("a/.json", None),
            ("a.json/common", None),
        ] {
            assert_eq!(DataFormat::of_path(Path::new(path)), format, "{path}");
        }
    }
}
