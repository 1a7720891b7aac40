//! hiera-lookup: resolve Hiera keys exactly as `puppet lookup` does.
//!
//! ```
//! use hiera_lookup::merge::MergeStrategy;
//! use hiera_lookup::{render, yaml};
//!
//! // A deep merge as Puppet does it: lower-priority keys first, arrays lower-first.
//! let node = yaml::load("{users: {bob: {shell: /bin/zsh}}, pkgs: [vim]}").unwrap();
//! let common = yaml::load("{users: {alice: {uid: 1}, bob: {uid: 2}}, pkgs: [curl]}").unwrap();
//! let deep = MergeStrategy::from_value(&"deep".into()).unwrap();
//! let merged = deep.merge(node, common).unwrap();
//! assert_eq!(
//!     render::to_json(&merged).unwrap(),
//!     r#"{"users":{"alice":{"uid":1},"bob":{"uid":2,"shell":"/bin/zsh"}},"pkgs":["curl","vim"]}"#
//! );
//! ```
//!
//! Data flows one way: a typed [`request`] + [`scope`] + layers ([`environment`]) →
//! [`engine`] (hiera.yaml by [`config`]) → [`backend`] → [`merge`] → [`answer`] →
//! [`render`] / [`explain`].

pub mod answer;
pub mod backend;
pub mod batch;
pub mod config;
pub mod diff;
pub mod engine;
pub mod environment;
pub mod error;
pub mod explain;
pub mod facts;
pub mod fs;
/// The fuzz targets' bodies (fuzz/, tests/fuzz_smoke.rs): not part of the API.
#[doc(hidden)]
pub mod fuzzing;
mod hostinfo;
pub mod interpolation;
pub mod json;
pub mod json_index;
pub mod key;
pub mod limits;
pub mod lint;
pub mod location;
pub mod merge;
pub mod position;
pub mod redact;
pub mod render;
pub mod request;
pub mod ruby;
pub mod scope;
pub mod types;
pub mod value;
pub mod where_;
pub mod yaml;
pub mod yaml_index;

pub use engine::{Layers, Outcome, Session, Settings};
pub use error::{Error, Result};
pub use value::{Map, RubyObject, Value};
