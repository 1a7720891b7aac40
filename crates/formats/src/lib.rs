//! The data formats Hiera reads and `puppet lookup` writes, each byte for byte as Puppet's Ruby
//! libraries do it: YAML ([`yaml`]: Psych 4 on libyaml 0.2.5, reading and writing), JSON
//! ([`json`]: the json gem's parser, errors and generator), HOCON ([`hocon`]: ruby-hocon 1.3),
//! the `--render-as` outputs ([`render`]), where each key of a data file was written
//! ([`position`]), and the one line index of a text ([`lines`]: byte offsets, lines and
//! columns in characters or an editor's units).
//!
//! Which format a data file is in is one [`DataFormat`], chosen from the backend function's
//! name or the file's extension; every caller asks it instead of matching names itself.
#![warn(missing_docs)]

pub mod format;
pub mod hocon;
pub mod json;
pub mod lines;
pub mod position;
pub mod render;
pub mod yaml;

pub use format::DataFormat;
