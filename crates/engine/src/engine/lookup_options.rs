//! lookup_options: found like any key (merged with `hash` across layers), validated, and
//! matched against a key's root by exact name or `^pattern`.

use super::{merge_error, Session, LOOKUP_OPTIONS};
use crate::error::{Error, Result};
use crate::explain::Kind;
use crate::key::LookupKey;
use crate::merge::MergeStrategy;
use hiera_value::value::{Map, Value};

/// A lookup_options `^pattern` key. An ASCII pattern compiles to a byte regex without
/// Unicode tables: the same matches on ASCII keys, for a fraction of the compile time that
/// every lookup would otherwise pay.
#[derive(Debug, Clone)]
pub enum KeyPattern {
    /// `^literal` or `^literal.*` (the usual `'^profile::users::.*'`): a key matches when one
    /// of its lines starts with the literal (Ruby's `^` is a line start). No regex to build:
    /// compiling one costs more than the rest of a lookup.
    Prefix(String),
    /// An ASCII pattern, compiled without Unicode tables.
    Ascii(regex::bytes::Regex),
    /// Any other pattern `regex` runs.
    Unicode(regex::Regex),
    /// What `regex` cannot run and Onigmo can (lookaround, atomic groups, backreferences,
    /// conditionals): a backtracking engine.
    Fancy(fancy_regex::Regex),
}

impl KeyPattern {
    /// Compiles a `^pattern` key as Ruby's `Regexp.compile` reads it (Onigmo syntax), with
    /// Ruby's message for an invalid one.
    pub fn new(pattern: &str) -> Result<KeyPattern> {
        let literal = pattern
            .strip_prefix('^')
            .map(|p| p.strip_suffix(".*").unwrap_or(p))
            .filter(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'_' | b'-'))
            });
        if let Some(literal) = literal {
            return Ok(KeyPattern::Prefix(literal.to_string()));
        }
        // Translated (and validated, with Ruby's messages) as Ruby reads it.
        let source = hiera_value::ruby::pattern_source(pattern).map_err(Error::run)?;
        if pattern.is_ascii() {
            if let Ok(b) = regex::bytes::RegexBuilder::new(&source)
                .unicode(false)
                .build()
            {
                return Ok(KeyPattern::Ascii(b));
            }
        }
        match regex::Regex::new(&source) {
            Ok(r) => Ok(KeyPattern::Unicode(r)),
            Err(e) => fancy_regex::RegexBuilder::new(&source)
                .backtrack_limit(hiera_value::limits::REGEX_BACKTRACK_LIMIT)
                .build()
                .map(KeyPattern::Fancy)
                .map_err(|_| Error::run(format!("invalid pattern: /{pattern}/ ({e})"))),
        }
    }

    /// [`new`](Self::new) once per process for each pattern: every node's session merges the
    /// same lookup_options, and compiling a regex costs more than the lookups that use it.
    /// Failures are not kept (they are rare, and each says where it came from).
    pub fn cached(pattern: &str) -> Result<std::sync::Arc<KeyPattern>> {
        use std::sync::{Arc, Mutex, OnceLock};
        type Cache = rustc_hash::FxHashMap<String, Arc<KeyPattern>>;
        /// Past this many patterns (a long-lived process whose repo keeps changing them)
        /// the cache starts again.
        const MAX_PATTERNS: usize = 4096;
        static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
        let cache = CACHE.get_or_init(Mutex::default);
        if let Some(p) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(pattern) {
            return Ok(p.clone());
        }
        // Compiled outside the lock: two threads may both compile a new pattern once.
        let compiled = Arc::new(KeyPattern::new(pattern)?);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_PATTERNS {
            cache.clear();
        }
        cache.insert(pattern.to_string(), compiled.clone());
        Ok(compiled)
    }

    /// `pattern =~ key`.
    pub fn is_match(&self, key: &str) -> bool {
        match self {
            KeyPattern::Prefix(p) => key.split('\n').any(|line| line.starts_with(p.as_str())),
            // A non-ASCII key would be matched byte-wise: fall back to exact semantics.
            KeyPattern::Ascii(b) if key.is_ascii() => b.is_match(key.as_bytes()),
            KeyPattern::Ascii(b) => regex::Regex::new(b.as_str()).is_ok_and(|r| r.is_match(key)),
            KeyPattern::Unicode(r) => r.is_match(key),
            // Past the backtracking limit Onigmo would still be searching: no match.
            KeyPattern::Fancy(r) => r.is_match(key).unwrap_or(false),
        }
    }
}

/// Compiled lookup_options: exact keys and `^pattern` keys.
#[derive(Debug, Clone, Default)]
pub(super) struct CompiledOptions {
    exact: Map,
    patterns: Vec<(std::sync::Arc<KeyPattern>, Value)>,
}

impl Session {
    // ---- lookup_options --------------------------------------------------------------

    pub(super) fn lookup_lookup_options(&mut self, lk: &LookupKey) -> Result<Option<Value>> {
        let module = &lk.module_name;
        if !self.cache.lookup_options.contains_key(module) {
            let opts = self.retrieve_lookup_options(module.clone())?;
            self.cache.lookup_options.insert(module.clone(), opts);
        }
        Ok(self
            .cache
            .lookup_options
            .get(module)
            .and_then(|o| o.as_ref())
            .and_then(|o| extract_options(o, &lk.root)))
    }

    pub(super) fn retrieve_lookup_options(
        &mut self,
        module: Option<std::sync::Arc<str>>,
    ) -> Result<Option<CompiledOptions>> {
        self.inv.top_keys.push(LOOKUP_OPTIONS.into());
        let saved_module = std::mem::replace(&mut self.inv.invocation_module, module.clone());
        let r = self.with(
            || Kind::Top {
                key: LOOKUP_OPTIONS.into(),
            },
            |s| -> Result<Option<CompiledOptions>> {
                let strategy = MergeStrategy::Hash;
                if s.inv.global_only {
                    let g = s.global_lookup_options(&strategy)?;
                    return g.map(compile_patterns).transpose();
                }
                let mut opts = s.env_lookup_options(&strategy)?;
                if let Some(m) = &module {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        s.cache.lookup_options.entry(None)
                    {
                        slot.insert(opts.clone().map(compile_patterns).transpose()?);
                    }
                    let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
                    let found = s.lookup_in_module(&lo, &strategy)?;
                    let mo_o = found.as_ref().and_then(|v| s.object_for(v));
                    if let Some(module_opts) = found
                        .map(|v| validate_lookup_options(v, Some(m)))
                        .transpose()?
                        .flatten()
                    {
                        opts = match opts {
                            None => Some(module_opts),
                            Some(ge) => {
                                let variants =
                                    ["Global and Environment".to_string(), format!("Module {m}")];
                                let ge_v = Value::Hash(ge);
                                let mo_v = Value::Hash(module_opts);
                                let ge_o = s
                                    .explain
                                    .as_ref()
                                    .and_then(|x| x.env_lookup_options_obj.clone());
                                let merged = s.merge_lookup(&strategy, &variants, |s, n| {
                                    let (v, o) = if n == "Global and Environment" {
                                        (&ge_v, &ge_o)
                                    } else {
                                        (&mo_v, &mo_o)
                                    };
                                    s.with(
                                        || Kind::Scope(n.clone()),
                                        |s| {
                                            if let Some(ex) = s.ex_mut() {
                                                let o = match o {
                                                    Some(o) => o.clone(),
                                                    None => ex.heap_mut().alloc(v),
                                                };
                                                ex.found_object(LOOKUP_OPTIONS, o);
                                            }
                                            Ok(Some(v.clone()))
                                        },
                                    )
                                })?;
                                match merged {
                                    Some(Value::Hash(h)) => Some(h),
                                    _ => None,
                                }
                            }
                        };
                    }
                }
                opts.map(compile_patterns).transpose()
            },
        );
        self.inv.invocation_module = saved_module;
        self.inv.top_keys.pop();
        if let Err(e) = &r {
            self.blame_lookup_options(e);
        }
        r
    }

    pub(super) fn global_lookup_options(
        &mut self,
        strategy: &MergeStrategy,
    ) -> Result<Option<Map>> {
        if let Some(g) = &self.cache.global_lookup_options {
            return Ok(g.clone());
        }
        // Cached (as none) before it is read: a `lookup()` interpolated into the global
        // lookup_options, which looks its key's options up, finds none instead of recursing.
        self.cache.global_lookup_options = Some(None);
        let read = |s: &mut Session| -> Result<Option<Map>> {
            let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
            Ok(match s.lookup_global(&lo, strategy)? {
                Some(v) => {
                    let o = s.object_for(&v);
                    if let Some(x) = s.explain.as_mut() {
                        x.global_lookup_options_obj = o;
                    }
                    validate_lookup_options(v, None)?
                }
                None => None,
            })
        };
        match read(self) {
            Ok(g) => {
                self.cache.global_lookup_options = Some(g.clone());
                Ok(g)
            }
            Err(e) => {
                // Nothing read half-way stays: the next lookup meets the same error.
                self.cache.global_lookup_options = None;
                self.cache.env_lookup_options = None;
                self.cache.lookup_options.clear();
                Err(e)
            }
        }
    }

    pub(super) fn env_lookup_options(&mut self, strategy: &MergeStrategy) -> Result<Option<Map>> {
        if let Some(e) = &self.cache.env_lookup_options {
            return Ok(e.clone());
        }
        let global = self.global_lookup_options(strategy)?;
        let lo = LookupKey::parse(LOOKUP_OPTIONS)?;
        let (env_only, env_o) = match self.lookup_in_environment(&lo, strategy)? {
            Some(v) => {
                let o = self.object_for(&v);
                (validate_lookup_options(v, None)?, o)
            }
            None => (None, None),
        };
        let global_o = self
            .explain
            .as_ref()
            .and_then(|x| x.global_lookup_options_obj.clone());
        let (merged, merged_o) = match (global, env_only) {
            (None, e) => (e, env_o),
            (g, None) => (g, global_o),
            (Some(g), Some(e)) => {
                let m = match strategy
                    .merge(Value::Hash(g), Value::Hash(e))
                    .map_err(merge_error)?
                {
                    Value::Hash(h) => Some(h),
                    _ => None,
                };
                let o = match (self.ex_mut(), global_o, env_o) {
                    (Some(ex), Some(go), Some(eo)) => ex.heap_mut().merge(strategy, go, eo).ok(),
                    _ => None,
                };
                (m, o)
            }
        };
        if let Some(x) = self.explain.as_mut() {
            x.env_lookup_options_obj = merged_o;
        }
        self.cache.env_lookup_options = Some(merged.clone());
        Ok(merged)
    }
}

/// `validate_lookup_options`: nil means no options; anything else must be a hash.
pub(super) fn validate_lookup_options(v: Value, module: Option<&str>) -> Result<Option<Map>> {
    if v.is_null() {
        return Ok(None);
    }
    let Value::Hash(h) = v else {
        return Err(Error::lookup("value of lookup_options must be a hash"));
    };
    if let Some(m) = module {
        let pfx = format!("{m}::");
        for k in h.keys() {
            let k = k.as_str().unwrap_or("");
            if let Some(rest) = k.strip_prefix('^') {
                if !rest.starts_with(&pfx) {
                    return Err(Error::lookup(format!(
                        "all lookup_options patterns must match a key starting with module name '{m}'"
                    )));
                }
            } else if !k.starts_with(&pfx) {
                return Err(Error::lookup(format!(
                    "all lookup_options keys must start with module name '{m}'"
                )));
            }
        }
    }
    Ok(Some(h))
}

pub(super) fn compile_patterns(options: Map) -> Result<CompiledOptions> {
    let mut c = CompiledOptions::default();
    for (k, v) in options {
        match &k {
            Value::String(s) if s.starts_with('^') => {
                let re = KeyPattern::cached(s)?;
                c.patterns.push((re, v));
            }
            _ => {
                c.exact.insert(k, v);
            }
        }
    }
    Ok(c)
}

pub(super) fn extract_options(o: &CompiledOptions, root: &str) -> Option<Value> {
    if let Some(v) = o.exact.get(&hiera_value::value::StrKey(root)) {
        if !v.is_null() {
            return Some(v.clone());
        }
    }
    o.patterns
        .iter()
        .find(|(re, _)| re.is_match(root))
        .map(|(_, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::KeyPattern;

    #[test]
    fn literal_prefix_patterns_match_as_the_regex_does() {
        for pattern in ["^profile::users::.*", "^profile", "^a-b_c::", "^x.*"] {
            let fast = KeyPattern::new(pattern).unwrap();
            assert!(matches!(fast, KeyPattern::Prefix(_)), "{pattern}");
            let source = hiera_value::ruby::pattern_source(pattern).unwrap();
            let re = regex::Regex::new(&source).unwrap();
            for key in [
                "profile::users::alice",
                "profile::users::",
                "profile::user",
                "xprofile::users::a",
                "a\nprofile::users::b",
                "a-b_c::d",
                "x",
                "",
                "é\nx",
                "profile\n",
            ] {
                assert_eq!(fast.is_match(key), re.is_match(key), "{pattern} on {key:?}");
            }
        }
        for pattern in ["^a.+", "^a$", "^(a|b)", "^a.*b", "^", "^a\\.b"] {
            assert!(!matches!(
                KeyPattern::new(pattern).unwrap(),
                KeyPattern::Prefix(_)
            ));
        }
    }
}
