//! What [`interpolation`](crate::interpolation) needs from a session: scope variables
//! under `strict`, nested lookups (bounded and memoised), and with `--explain` the Ruby
//! objects that interpolation makes.

use super::{Outcome, Session};
use crate::error::{Error, Result};
use crate::explain::{Explainer, Kind};
use crate::interpolation::{self, check_depth, interpolate_owned, interpolate_string, Context};
use crate::key::Segment;
use crate::merge::objects::{Heap, Rv};
use crate::scope::Strict;
use crate::store::{Peek, ScopeRead};
use hiera_value::value::Value;

impl Context for Session {
    /// `%{lookup('k')}`, `%{hiera('k')}`, `%{alias('k')}`: a full lookup with default ''.
    fn lookup(&mut self, key: &str) -> Result<Value> {
        if self.interp.lookup_depth >= hiera_value::limits::MAX_LOOKUP_DEPTH {
            let first = self.inv.name_stack.first().map_or(key, String::as_str);
            return Err(Error::run(format!(
                "stack level too deep: interpolation lookups nest more than {} deep, starting at key '{first}'",
                hiera_value::limits::MAX_LOOKUP_DEPTH
            )));
        }
        self.interp.nested_lookups += 1;
        if self.interp.nested_lookups > hiera_value::limits::MAX_LOOKUPS_PER_KEY {
            let first = self.inv.name_stack.first().map_or(key, String::as_str);
            return Err(Error::run(format!(
                "interpolation of key '{first}' makes more than {} lookups",
                hiera_value::limits::MAX_LOOKUPS_PER_KEY
            )));
        }
        let keys = [key.to_string()];
        // Answers depend on the key and on these flags only (the scope is fixed); recursion
        // errors depend on the lookups in progress, so only answers are kept.
        let memo_key = (
            key.to_string(),
            self.inv.global_only,
            self.inv.v3_scope,
            self.interp.in_location,
        );
        let memoise = self.explain.is_none() && self.interp.local_var.is_none();
        if memoise {
            if let Some(v) = self.interp.memo.get(&memo_key) {
                return Ok(v.clone());
            }
        }
        // A nested lookup that may leave the global layer leaves Hiera 3's scope too.
        let saved = self.inv.v3_scope;
        if !self.inv.global_only {
            self.inv.v3_scope = false;
        }
        self.interp.lookup_depth += 1;
        let r = Session::lookup(self, &keys, None);
        self.interp.lookup_depth -= 1;
        self.inv.v3_scope = saved;
        let v = match r? {
            Outcome::Found(v) => v,
            Outcome::NotFound => Value::str(""),
        };
        if memoise {
            self.interp.memo.insert(memo_key, v.clone());
        }
        Ok(v)
    }

    fn variable(&mut self, root: &str) -> Result<Option<Value>> {
        let local = match &self.interp.local_var {
            Some((k, v)) if k == root => Some(v.clone()),
            _ => None,
        };
        let found = local.or_else(|| {
            self.note_read(root, &[]);
            self.scope.get(root).cloned()
        });
        // A built-in variable (Scope::BUILT_IN_VARS): `Scope#exist?` is true for it, and
        // unset it reads as nil, so it is found with that value (only unqualified).
        let found = match found {
            None if root == "caller_module_name" => Some(Value::Null),
            other => other,
        };
        // Hiera 3's scope (`Hiera::Scope`): the calling_* variables exist (empty for
        // `puppet lookup`), and empty strings read as nil.
        let found = match found {
            _ if self.inv.v3_scope
                && matches!(
                    root,
                    "calling_module" | "calling_class" | "calling_class_path"
                ) =>
            {
                Some(Value::Null)
            }
            Some(Value::String(e)) if self.inv.v3_scope && e.is_empty() => Some(Value::Null),
            other => other,
        };
        match found {
            Some(v) => {
                if let Some(o) = self.scope_object(root, &v) {
                    if let Some(ex) = self.ex_mut() {
                        ex.found_object(root, o);
                    }
                }
                Ok(Some(v))
            }
            None => {
                self.variable_not_found(root)?;
                Ok(None)
            }
        }
    }

    fn scope_dig(
        &mut self,
        root: &str,
        key: &str,
        segments: &[Segment],
    ) -> Option<Result<Option<Value>>> {
        if self.explain.is_some() {
            return None;
        }
        Some(self.scope_dig_in_place(root, key, segments))
    }

    fn dig(&mut self, key: &str, segments: &[Segment], value: Value) -> Result<Option<Value>> {
        self.sub_lookup(key, segments, value)
    }

    fn guarded<T>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.check(name, f)
    }

    fn explained<T>(&mut self, kind: impl FnOnce() -> Kind, f: impl FnOnce(&mut Self) -> T) -> T {
        self.with(kind, f)
    }

    fn aliased(&mut self, v: &Value) {
        if let Some(x) = self.explain.as_mut() {
            x.alias_object = Some(x.ex.object_for(v));
        }
    }

    fn with_local<T>(&mut self, name: &str, value: Value, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.interp.local_var.replace((name.to_string(), value));
        let r = f(self);
        self.interp.local_var = saved;
        r
    }
}

impl Peek {
    fn of(found: &Result<Option<Option<&Value>>>) -> Peek {
        match found {
            Ok(None) => Peek::Undefined,
            Ok(Some(None)) => Peek::Missing,
            Ok(Some(Some(v))) => Peek::Found((*v).clone()),
            Err(e) => Peek::Error(e.to_string()),
        }
    }
}

impl Session {
    /// [`Context::scope_dig`]: [`variable`](Context::variable) and
    /// [`dig`](Context::dig) without the copies. While a hierarchy level is resolved for
    /// the memo of resolved levels, each read of the node's scope is recorded with what it
    /// found.
    fn scope_dig_in_place(
        &mut self,
        root: &str,
        key: &str,
        segments: &[Segment],
    ) -> Result<Option<Value>> {
        let local = matches!(&self.interp.local_var, Some((k, _)) if k == root);
        let found = self
            .peek_variable(root, key, segments)
            .map(|v| v.map(|v| v.cloned()));
        if !local {
            if let Some(reads) = &mut self.interp.reads {
                let peek = match &found {
                    Ok(None) => Peek::Undefined,
                    Ok(Some(None)) => Peek::Missing,
                    Ok(Some(Some(v))) => Peek::Found(v.clone()),
                    Err(e) => Peek::Error(e.to_string()),
                };
                reads.push((
                    ScopeRead {
                        root: root.to_string(),
                        key: key.to_string(),
                        segments: segments.to_vec(),
                    },
                    peek,
                ));
            }
        }
        match found {
            Ok(Some(v)) => Ok(v),
            Ok(None) => {
                self.variable_not_found(root)?;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// What `%{root.segments…}` finds, without a side effect: `Ok(None)` when the variable
    /// is not defined (the caller applies `strict`), `Ok(Some(None))` when it is but the
    /// segments name nothing in it. Hiera 3's scope rules apply: the calling_* variables are
    /// nil, as are empty strings (nil is not dug into).
    fn peek_variable(
        &self,
        root: &str,
        key: &str,
        segments: &[Segment],
    ) -> Result<Option<Option<&Value>>> {
        static NULL: Value = Value::Null;
        if self.inv.v3_scope
            && matches!(
                root,
                "calling_module" | "calling_class" | "calling_class_path"
            )
        {
            return Ok(Some(Some(&NULL)));
        }
        let found = match &self.interp.local_var {
            Some((k, v)) if k == root => Some(v),
            _ => {
                self.note_read(root, segments);
                self.scope.get(root)
            }
        };
        // A built-in variable (Scope::BUILT_IN_VARS): unset, it is found with the value nil.
        let Some(value) = found.or((root == "caller_module_name").then_some(&NULL)) else {
            return Ok(None);
        };
        match value {
            Value::Null => Ok(Some(Some(&NULL))),
            Value::String(e) if self.inv.v3_scope && e.is_empty() => Ok(Some(Some(&NULL))),
            v => super::dig_ref(v, segments, key).map(Some),
        }
    }

    /// What a recorded read of the scope finds for this session's node now.
    pub(super) fn peek_read(&self, read: &ScopeRead) -> Peek {
        Peek::of(&self.peek_variable(&read.root, &read.key, &read.segments))
    }

    /// Interpolates a value against this session's scope, methods (`lookup` …) allowed or not.
    pub fn interpolate(&mut self, value: &Value, allow_methods: bool) -> Result<Value> {
        interpolation::interpolate(self, value, allow_methods)
    }

    /// Interpolation of a found value; with `--explain`, also the objects Ruby makes of it
    /// (in `obj`).
    pub(super) fn interpolate_found(
        &mut self,
        value: Value,
        obj: &mut Option<Rv>,
    ) -> Result<Value> {
        if self.explain.is_none() {
            return interpolate_owned(self, value, true);
        }
        let o = self.interpolate_object(&value)?;
        let v = match self.ex_ref() {
            Some(ex) => ex.heap().value(&o),
            None => value,
        };
        check_depth(&v)?;
        *obj = Some(o);
        Ok(v)
    }

    /// Explain only: [`interpolate`](Self::interpolate) building Ruby's objects: new hashes
    /// and arrays throughout, and for `%{alias('k')}` the very object the lookup of `k` made.
    pub(super) fn interpolate_object(&mut self, value: &Value) -> Result<Rv> {
        let o = match value {
            Value::String(s) if s.contains("%{") => {
                // Only this string's own alias counts (a key's alias may have left one).
                if let Some(x) = self.explain.as_mut() {
                    x.alias_object = None;
                }
                let v = interpolate_string(self, s, true)?;
                match self.explain.as_mut().and_then(|x| x.alias_object.take()) {
                    Some(o) => o,
                    None => self.alloc_object(&v),
                }
            }
            Value::Array(a) => {
                let mut items = Vec::with_capacity(a.len());
                for e in a {
                    items.push(self.interpolate_object(e)?);
                }
                self.heap_mut().map_or(Rv::nil(), |h| h.new_array(items))
            }
            Value::Hash(h) => {
                let mut entries = Vec::with_capacity(h.len());
                for (k, e) in h {
                    let k = self.interpolate(k, true)?;
                    entries.push((k, self.interpolate_object(e)?));
                }
                self.heap_mut().map_or(Rv::nil(), |h| h.new_hash(entries))
            }
            other => self.alloc_object(other),
        };
        Ok(o)
    }

    /// Explain only: the explainer's objects.
    pub(super) fn heap_mut(&mut self) -> Option<&mut Heap> {
        self.ex_mut().map(Explainer::heap_mut)
    }

    pub(super) fn alloc_object(&mut self, v: &Value) -> Rv {
        self.heap_mut().map_or(Rv::nil(), |h| h.alloc(v))
    }

    /// Explain only: the object a scope variable holds. Variables keep their objects, and a
    /// top-scope variable set from a fact holds that fact's object (`$os` is `$facts['os']`).
    pub(super) fn scope_object(&mut self, name: &str, v: &Value) -> Option<Rv> {
        let x = self.explain.as_mut()?;
        if let Some(o) = x.scope_objects.get(name) {
            if x.ex.heap().value(o) == *v {
                return Some(o.clone());
            }
        }
        self.note_read("facts", &[]);
        let from_fact = match self.scope.get("facts") {
            Some(facts @ Value::Hash(_)) if name != "facts" && facts.get(name) == Some(v) => {
                Some(facts.clone())
            }
            _ => None,
        };
        let o = match from_fact {
            Some(facts) => {
                let fo = self.scope_object("facts", &facts)?;
                let ex = self.ex_mut()?;
                match ex.heap().child(&fo, &Value::str(name)) {
                    Some(c) => c,
                    None => ex.heap_mut().alloc(v),
                }
            }
            None => self.ex_mut()?.heap_mut().alloc(v),
        };
        self.explain
            .as_mut()?
            .scope_objects
            .insert(name.to_string(), o.clone());
        Some(o)
    }

    /// `Scope#variable_not_found` under the `strict` setting.
    pub(super) fn variable_not_found(&mut self, name: &str) -> Result<()> {
        if matches!(name, "module_name" | "caller_module_name")
            || name.bytes().all(|b| b.is_ascii_digit())
        {
            return Ok(());
        }
        match self.settings.strict {
            Strict::Off => Ok(()),
            Strict::Warning => {
                self.warnings.push(format!(
                    "Undefined variable '{name}'; \n   (file & line not available)"
                ));
                Ok(())
            }
            Strict::Error if self.interp.in_location => {
                self.warnings.push(format!(
                    "Interpolation failed with '{name}', but compilation continuing; "
                ));
                Ok(())
            }
            Strict::Error => Err(Error::UndefinedVariable(name.to_string())),
        }
    }
}
