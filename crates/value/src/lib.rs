//! The bottom of hiera-lookup: the value model Puppet's lookups produce ([`value::Value`]),
//! Ruby's text rules for it ([`text`]: `to_s`, `inspect`, `Float#to_s`, the explainer's dumps;
//! [`ruby`]: Ruby's number parsing, regexps and base64), and the bounds every reader of an
//! untrusted file keeps ([`limits`]).
//!
//! Nothing here knows a file format, a type or a lookup: every other crate builds on this one.
#![warn(missing_docs)]

pub mod escape;
pub mod limits;
pub mod ruby;
pub mod text;
pub mod value;

pub use value::{Map, RubyObject, TaggedScalar, Value};
