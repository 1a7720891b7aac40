//! hiera-lookup: resolve Hiera keys exactly as `puppet lookup` does.

pub mod merge;
pub mod render;
pub mod value;
pub mod yaml;

pub use value::{Map, Value};
