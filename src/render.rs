//! TEMPORARY STUB (replaced by the Ruby-compatible renderers).
use crate::value::Value;
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);
pub fn to_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        o => inspect(o),
    }
}
pub fn inspect(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        o => format!("{o:?}"),
    }
}
pub fn to_json(v: &Value) -> Result<String, RenderError> {
    Ok(inspect(v))
}
pub fn to_yaml(v: &Value) -> String {
    format!("--- {}\n", inspect(v))
}
