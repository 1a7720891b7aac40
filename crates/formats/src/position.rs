//! Where keys and values are written in data files: the line and column of every key and
//! value as the parsers see them (libyaml's marks, the json gem's offsets, ruby-hocon's
//! fields), in a tree shaped like the loaded value.
//!
//! `where` uses it to point at each definition of a key; anything that reports on data
//! (`diff` annotating a changed line, `lint`) can ask the same question:
//!
//! ```
//! use hiera_formats::position::{positions_of, DataFormat};
//! use hiera_value::value::Value;
//!
//! let text = "ntp:\n  servers: [a, b]\n";
//! let tree = positions_of(DataFormat::Yaml, text.as_bytes()).unwrap().unwrap();
//! let at = tree.locate(&[Value::str("ntp"), Value::str("servers"), Value::Int(1)]).unwrap();
//! assert_eq!((at.pos.line, at.pos.column), (2, 16));
//! ```
//!
//! [`positions_of_file`] reads a data file (format by extension) the same way.

pub mod tree;

pub use crate::format::DataFormat;
pub use tree::{Located, Path, Pos, PosEntry, PosKind, PosNode};

/// The position tree of a whole data file (`None`: an empty document), or the parser's
/// error message.
pub fn positions_of(format: DataFormat, bytes: &[u8]) -> Result<Option<PosNode>, String> {
    match format {
        DataFormat::Yaml => {
            crate::yaml::positions::load_positions(bytes).map_err(|e| e.to_string())
        }
        DataFormat::Json => {
            let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
            crate::json::positions::positions(text).map(Some)
        }
        DataFormat::Hocon => {
            let text = String::from_utf8_lossy(bytes);
            crate::hocon::positions(&text).map(Some)
        }
    }
}

/// The position tree of a data file, its format known by its extension (`.yaml`, `.yml`,
/// `.eyaml`, `.json`, `.conf`); the file is read within [`hiera_value::limits`]. Errors name the
/// file.
pub fn positions_of_file(path: &std::path::Path) -> Result<Option<PosNode>, String> {
    let format = DataFormat::of_path(path)
        .ok_or_else(|| format!("{}: not a YAML, JSON or HOCON data file", path.display()))?;
    let bytes =
        hiera_value::limits::read_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    positions_of(format, &bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
