//! TEMPORARY: Puppet type inference for messages (replaced by the type system module).
use crate::value::Value;
pub fn infer_set(v: &Value) -> String {
    crate::config::type_label(v).to_string()
}
