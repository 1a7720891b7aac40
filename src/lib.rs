//! hiera-lookup: resolve Hiera keys exactly as `puppet lookup` does.
//!
//! Data flows one way: [`config`] + [`scope`] → [`engine`] → [`backend`] → [`merge`] →
//! [`render`] / [`explain`].

pub mod backend;
pub mod batch;
pub mod cache;
pub mod config;
pub mod engine;
pub mod environment;
pub mod error;
pub mod explain;
pub mod interpolation;
pub mod key;
pub mod location;
pub mod merge;
pub mod render;
pub mod scope;
pub mod types;
pub mod value;
pub mod yaml;

pub use engine::{Layers, Outcome, Session, Settings};
pub use error::{Error, Result};
pub use value::{Map, Value};
