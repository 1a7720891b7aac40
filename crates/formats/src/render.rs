//! The output formats of `puppet lookup`, byte for byte: json gem 2.6 `to_json` (`--render-as
//! json`) and Psych 4.0.3 + libyaml 0.2.5 `to_yaml` (`--render-as yaml`, the default). Ruby's
//! `to_s` (`--render-as s`), `inspect` and the explainer's `dump_value` are
//! `hiera_value::text`, below every writer; the tests here check all of them.
//!
//! Every expectation in the tests below was produced by Ruby 3.1 / Puppet 7.23 on this machine.

pub mod document;

use crate::yaml::write as yaml;

use hiera_value::value::Value;

pub use crate::json::write::to_json;
pub use document::{RenderError, Tree};

/// Psych `to_yaml` (Psych 4.0.3 + libyaml 0.2.5), with its trailing newline. Fails only where
/// Psych itself raises (its scalar scanner chokes on strings like `0b_`).
pub fn to_yaml(v: &Value) -> Result<String, RenderError> {
    yaml::to_yaml(v)
}

/// Psych `to_yaml` of a [`Tree`].
pub fn tree_to_yaml(t: &Tree) -> Result<String, RenderError> {
    yaml::tree_to_yaml(t)
}

#[cfg(test)]
mod tests;
