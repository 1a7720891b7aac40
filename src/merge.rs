//! TEMPORARY STUB (replaced by the merge strategies).
use crate::value::Value;
#[derive(Debug, Clone, PartialEq)]
pub struct DeepOptions {
    pub knockout_prefix: Option<String>,
    pub sort_merged_arrays: bool,
    pub merge_hash_arrays: bool,
    pub merge_debug: bool,
}
#[derive(Debug, Clone, PartialEq)]
pub enum MergeStrategy {
    First,
    Unique,
    Hash,
    Deep(DeepOptions),
    ReverseDeep(DeepOptions),
    UnconstrainedDeep(DeepOptions),
}
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct MergeError {
    pub message: String,
    pub raw: bool,
}
impl MergeStrategy {
    pub fn from_value(v: &Value) -> Result<MergeStrategy, MergeError> {
        match v.as_str() {
            Some("first") => Ok(Self::First),
            Some("hash") => Ok(Self::Hash),
            Some("unique") => Ok(Self::Unique),
            _ => Err(MergeError {
                message: "Unknown merge strategy".into(),
                raw: true,
            }),
        }
    }
    pub fn name(&self) -> &'static str {
        "first"
    }
    pub fn options(&self) -> Option<Value> {
        None
    }
    pub fn is_first(&self) -> bool {
        matches!(self, Self::First)
    }
    pub fn convert_value(&self, v: Value) -> Result<Value, MergeError> {
        Ok(v)
    }
    pub fn merge_single(&self, v: Value) -> Result<Value, MergeError> {
        Ok(v)
    }
    pub fn merge(&self, h: Value, _l: Value) -> Result<Value, MergeError> {
        Ok(h)
    }
}
