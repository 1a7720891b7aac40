//! `to_yaml` as Psych 4.0.3 does it: `Psych::Visitors::YAMLTree` decides each node's event
//! (style hints, tags, implicit flags) and libyaml 0.2.5's emitter, driven with the very same
//! events and settings as Psych's (unicode on, indent 2, width 80), does quoting upgrades,
//! escaping and folding.
//!
//! libyaml 0.2.5 (C) treats characters above U+FFFF as non-printable (double quotes, `\U0001F600`);
//! the Rust translation treats them as printable. So each such character is handed to the
//! emitter as a stand-in with the same byte length (4) and escaped width (10 columns), U+FFFF
//! plus a C0 control (`\uFFFF\x01`), and the stand-ins are replaced by `\UXXXXXXXX` afterwards.
//!
//! Anchors: Psych anchors an object seen twice. Plain values have no identity, and `puppet lookup`
//! never shows anchors for aliased data (checked: interpolation copies every hash and array), so
//! only a [`Tree`] (the explanation, which shares objects) has anchors and aliases.

pub(crate) mod scan;

use crate::render::document::{RenderError, Tree};
use hiera_value::text::float_to_s;
use hiera_value::value::Value;
use scan::would_be_non_string;
use std::mem::MaybeUninit;
use std::ptr;
#[allow(clippy::unsafe_removed_from_name)] // short alias for the many libyaml calls
use unsafe_libyaml_norway as y;

const NULL_TAG: &[u8] = b"tag:yaml.org,2002:null\0";
const STR_TAG: &[u8] = b"tag:yaml.org,2002:str\0";
const SENSITIVE_TAG: &[u8] = b"!ruby/object:Puppet::Pops::Types::PSensitiveType::Sensitive\0";
const REGEXP_TAG: &[u8] = b"!ruby/regexp\0";
const BINARY_TAG: &[u8] = b"!binary\0";

/// One scalar event, with Psych's arguments `(value, anchor=nil, tag, plain, quoted, style)`.
struct Scalar<'a> {
    value: &'a str,
    tag: Option<&'static [u8]>,
    plain: bool,
    quoted: bool,
    style: y::yaml_scalar_style_t,
}

impl<'a> Scalar<'a> {
    /// `visit_Integer`/`visit_Float`/booleans: plain, unquoted, style ANY.
    fn bare(value: &'a str) -> Self {
        Scalar {
            value,
            tag: None,
            plain: true,
            quoted: false,
            style: y::YAML_ANY_SCALAR_STYLE,
        }
    }
}

pub(crate) fn to_yaml(v: &Value) -> Result<String, RenderError> {
    emit(Root::Value(v))
}

pub(crate) fn tree_to_yaml(t: &Tree) -> Result<String, RenderError> {
    emit(Root::Tree(t))
}

fn emit(root: Root<'_>) -> Result<String, RenderError> {
    let mut em = Emitter::new(root);
    em.emit_stream()?;
    let astral = std::mem::take(&mut em.astral);
    let marker = em.marker;
    let bytes = em.finish()?;
    let text = String::from_utf8(bytes).map_err(|e| RenderError::Yaml(e.to_string()))?;
    Ok(match marker {
        Some(m) if !astral.is_empty() => unmark(&text, m, &astral),
        _ => text,
    })
}

/// Escaped form of the stand-in `U+FFFF, m` as the emitter writes it.
fn marker_text(m: char) -> String {
    format!("\\uFFFF\\x{:02X}", m as u32)
}

/// Put `\UXXXXXXXX` back in place of each stand-in, in order.
fn unmark(text: &str, m: char, astral: &[u32]) -> String {
    let pat = marker_text(m);
    let mut out = String::with_capacity(text.len() + astral.len() * 4);
    let mut rest = text;
    for cp in astral {
        let Some(i) = rest.find(&pat) else { break };
        out.push_str(&rest[..i]);
        out.push_str(&format!("\\U{cp:08X}"));
        rest = &rest[i + pat.len()..];
    }
    out.push_str(rest);
    out
}

/// What is being dumped.
#[derive(Clone, Copy)]
enum Root<'v> {
    Value(&'v Value),
    Tree(&'v Tree),
}

/// A C0 control that never follows U+FFFF in any string of `root`, so the stand-in is
/// unambiguous.
fn pick_marker(root: Root<'_>) -> Option<char> {
    fn used(v: &Value, seen: &mut Vec<char>) {
        match v {
            Value::String(s) => {
                let mut it = s.chars().peekable();
                while let Some(c) = it.next() {
                    if c == '\u{FFFF}' {
                        if let Some(&n) = it.peek() {
                            seen.push(n);
                        }
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|e| used(e, seen)),
            Value::Hash(h) => h.iter().for_each(|(k, e)| {
                used(k, seen);
                used(e, seen);
            }),
            Value::Sensitive(e) => used(e, seen),
            _ => {}
        }
    }
    fn used_tree(t: &Tree, seen: &mut Vec<char>) {
        match t {
            Tree::Leaf(v) => used(v, seen),
            Tree::Seq { items, .. } => items.iter().for_each(|e| used_tree(e, seen)),
            Tree::Map { entries, .. } => entries.iter().for_each(|(k, e)| {
                used_tree(k, seen);
                used_tree(e, seen);
            }),
            Tree::Symbol(_) | Tree::Alias(_) => {}
        }
    }
    let mut seen = Vec::new();
    match root {
        Root::Value(v) => used(v, &mut seen),
        Root::Tree(t) => used_tree(t, &mut seen),
    }
    // Controls libyaml escapes as `\xNN` (four columns), like `\UXXXXXXXX` needs with U+FFFF.
    ('\u{1}'..='\u{6}')
        .chain('\u{e}'..='\u{1a}')
        .find(|c| !seen.contains(c))
}

/// Owns a libyaml emitter writing into a Vec.
struct Emitter<'v> {
    root: Root<'v>,
    raw: Box<MaybeUninit<y::yaml_emitter_t>>,
    #[allow(clippy::box_collection)] // libyaml keeps a pointer to the Vec: it must not move
    out: Box<Vec<u8>>,
    /// Second char of the stand-in for characters above U+FFFF, chosen on first need.
    marker: Option<char>,
    /// Code points replaced by stand-ins, in emission order.
    astral: Vec<u32>,
}

unsafe fn write_handler(data: *mut std::ffi::c_void, buf: *mut u8, size: u64) -> i32 {
    let out = &mut *(data as *mut Vec<u8>);
    out.extend_from_slice(std::slice::from_raw_parts(buf, size as usize));
    1
}

impl<'v> Emitter<'v> {
    fn new(root: Root<'v>) -> Self {
        let mut raw = Box::new(MaybeUninit::<y::yaml_emitter_t>::uninit());
        let mut out = Box::new(Vec::with_capacity(256));
        // SAFETY: the emitter is initialised before use and deleted in Drop; the output Vec
        // outlives it (both owned by self, Vec boxed so its address is stable).
        unsafe {
            let e = raw.as_mut_ptr();
            // Cannot fail short of allocation failure, which libyaml aborts on.
            let _ = y::yaml_emitter_initialize(e);
            // Psych's Emitter#allocate: unicode on, indentation 2; width stays libyaml's 80.
            y::yaml_emitter_set_unicode(e, true);
            y::yaml_emitter_set_indent(e, 2);
            let data: *mut Vec<u8> = &mut *out;
            y::yaml_emitter_set_output(e, write_handler, data as *mut std::ffi::c_void);
        }
        Emitter {
            root,
            raw,
            out,
            marker: None,
            astral: Vec::new(),
        }
    }

    fn ptr(&mut self) -> *mut y::yaml_emitter_t {
        self.raw.as_mut_ptr()
    }

    /// Emit an initialised event; libyaml takes ownership of it.
    fn emit(
        &mut self,
        mut ev: MaybeUninit<y::yaml_event_t>,
        init_ok: bool,
    ) -> Result<(), RenderError> {
        if !init_ok {
            return Err(RenderError::Yaml("libyaml could not build an event".into()));
        }
        // SAFETY: ev was initialised by a yaml_*_event_initialize call that succeeded.
        let ok = unsafe { y::yaml_emitter_emit(self.ptr(), ev.as_mut_ptr()).ok };
        if ok {
            Ok(())
        } else {
            Err(RenderError::Yaml(self.problem()))
        }
    }

    fn problem(&mut self) -> String {
        // SAFETY: problem is null or a static C string set by libyaml.
        unsafe {
            let p = self.raw.assume_init_ref().problem;
            if p.is_null() {
                return "libyaml emitter error".to_string();
            }
            std::ffi::CStr::from_ptr(p.cast())
                .to_string_lossy()
                .into_owned()
        }
    }

    /// `Psych.dump`: stream start, explicit document start, the value, implicit end.
    fn emit_stream(&mut self) -> Result<(), RenderError> {
        let mut ev = MaybeUninit::uninit();
        // SAFETY (all event initialisers below): ev points to writable event storage; string
        // arguments are NUL-terminated or come with their length, and libyaml copies them.
        let ok = unsafe {
            y::yaml_stream_start_event_initialize(ev.as_mut_ptr(), y::YAML_UTF8_ENCODING).ok
        };
        self.emit(ev, ok)?;
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe {
            y::yaml_document_start_event_initialize(
                ev.as_mut_ptr(),
                ptr::null_mut(),
                ptr::null_mut(),
                ptr::null_mut(),
                false,
            )
            .ok
        };
        self.emit(ev, ok)?;
        match self.root {
            Root::Value(v) => self.node(v)?,
            Root::Tree(t) => self.tree(t)?,
        }
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe { y::yaml_document_end_event_initialize(ev.as_mut_ptr(), true).ok };
        self.emit(ev, ok)?;
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe { y::yaml_stream_end_event_initialize(ev.as_mut_ptr()).ok };
        self.emit(ev, ok)
    }

    fn finish(mut self) -> Result<Vec<u8>, RenderError> {
        // SAFETY: the emitter is initialised.
        let ok = unsafe { y::yaml_emitter_flush(self.ptr()).ok };
        if !ok {
            return Err(RenderError::Yaml(self.problem()));
        }
        Ok(std::mem::take(&mut *self.out))
    }

    fn tree(&mut self, t: &Tree) -> Result<(), RenderError> {
        match t {
            // visit_Symbol: `":name"`, plain, style ANY.
            Tree::Symbol(name) => self.scalar(&Scalar::bare(&format!(":{name}"))),
            Tree::Leaf(v) => self.node(v),
            Tree::Seq { anchor, items } => {
                self.start_sequence(*anchor)?;
                for e in items {
                    self.tree(e)?;
                }
                self.end(false)
            }
            Tree::Map { anchor, entries } => {
                self.start_mapping_anchored(None, *anchor)?;
                for (k, e) in entries {
                    self.tree(k)?;
                    self.tree(e)?;
                }
                self.end(true)
            }
            Tree::Alias(n) => {
                let name = format!("{n}\0");
                let mut ev = MaybeUninit::uninit();
                let ok =
                    unsafe { y::yaml_alias_event_initialize(ev.as_mut_ptr(), name.as_ptr()).ok };
                self.emit(ev, ok)
            }
        }
    }

    fn node(&mut self, v: &Value) -> Result<(), RenderError> {
        match v {
            Value::Null => self.scalar(&Scalar {
                tag: Some(NULL_TAG),
                ..Scalar::bare("")
            }),
            Value::Bool(b) => self.scalar(&Scalar::bare(if *b { "true" } else { "false" })),
            Value::Int(i) => self.scalar(&Scalar::bare(&i.to_string())),
            Value::BigInt(d) => self.scalar(&Scalar::bare(d)),
            Value::Float(f) => {
                let text = if f.is_nan() {
                    ".nan".to_string()
                } else if f.is_infinite() {
                    if *f > 0.0 { ".inf" } else { "-.inf" }.to_string()
                } else {
                    float_to_s(*f)
                };
                self.scalar(&Scalar::bare(&text))
            }
            Value::String(s) => self.scalar(&string_scalar(s)?),
            Value::Array(a) => {
                self.start_sequence(None)?;
                for e in a {
                    self.node(e)?;
                }
                self.end(false)
            }
            Value::Hash(h) => {
                self.start_mapping(None)?;
                for (k, e) in h {
                    self.node(k)?;
                    self.node(e)?;
                }
                self.end(true)
            }
            // visit_Object: a tagged mapping of the instance variables (`@value`).
            Value::Sensitive(inner) => {
                self.start_mapping(Some(SENSITIVE_TAG))?;
                self.scalar(&Scalar::bare("value"))?;
                self.node(inner)?;
                self.end(true)
            }
            // visit_Regexp: `o.inspect` tagged `!ruby/regexp`, style ANY; visit_Symbol:
            // `:name` plain; a binary String: its base64 tagged `!binary`, literal.
            Value::Object(o) if o.scalar.is_some() => {
                let Some(sc) = &o.scalar else { unreachable!() };
                let tag = match sc.tag {
                    None => None,
                    Some("!ruby/regexp") => Some(REGEXP_TAG),
                    Some("!binary") => Some(BINARY_TAG),
                    Some(other) => {
                        return Err(RenderError::Yaml(format!("no YAML tag for {other}")))
                    }
                };
                self.scalar(&Scalar {
                    value: &sc.text,
                    tag,
                    plain: tag.is_none(),
                    quoted: false,
                    style: if sc.literal {
                        y::YAML_LITERAL_SCALAR_STYLE
                    } else {
                        y::YAML_ANY_SCALAR_STYLE
                    },
                })
            }
            Value::Object(o) => {
                let tag = format!("!ruby/object:{}\0", o.class);
                self.start_mapping(Some(tag.as_bytes()))?;
                for (k, v) in &o.fields {
                    self.scalar(&Scalar::bare(k))?;
                    self.node(v)?;
                }
                self.end(true)
            }
        }
    }

    fn scalar(&mut self, s: &Scalar) -> Result<(), RenderError> {
        let swapped;
        let value = if s.value.chars().any(|c| c > '\u{FFFF}') {
            if self.marker.is_none() {
                self.marker = pick_marker(self.root);
            }
            let Some(m) = self.marker else {
                return Err(RenderError::Yaml(
                    "no stand-in for characters above U+FFFF".into(),
                ));
            };
            let mut t = String::with_capacity(s.value.len());
            for c in s.value.chars() {
                if c > '\u{FFFF}' {
                    self.astral.push(c as u32);
                    t.push('\u{FFFF}');
                    t.push(m);
                } else {
                    t.push(c);
                }
            }
            swapped = t;
            swapped.as_str()
        } else {
            s.value
        };
        let len = i32::try_from(value.len())
            .map_err(|_| RenderError::Yaml("string too long for libyaml".into()))?;
        let tag = s.tag.map_or(ptr::null(), <[u8]>::as_ptr);
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe {
            y::yaml_scalar_event_initialize(
                ev.as_mut_ptr(),
                ptr::null(),
                tag,
                value.as_ptr(),
                len,
                s.plain,
                s.quoted,
                s.style,
            )
            .ok
        };
        self.emit(ev, ok)
    }

    fn start_sequence(&mut self, anchor: Option<u32>) -> Result<(), RenderError> {
        let name = anchor.map(|n| format!("{n}\0"));
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe {
            y::yaml_sequence_start_event_initialize(
                ev.as_mut_ptr(),
                name.as_ref().map_or(ptr::null(), |a| a.as_ptr()),
                ptr::null(),
                true,
                y::YAML_BLOCK_SEQUENCE_STYLE,
            )
            .ok
        };
        self.emit(ev, ok)
    }

    /// Plain hashes are implicit untagged mappings; tagged ones (objects) are not implicit.
    // libyaml copies the tag, so it need only live through the call.
    fn start_mapping(&mut self, tag: Option<&[u8]>) -> Result<(), RenderError> {
        self.start_mapping_anchored(tag, None)
    }

    fn start_mapping_anchored(
        &mut self,
        tag: Option<&[u8]>,
        anchor: Option<u32>,
    ) -> Result<(), RenderError> {
        let name = anchor.map(|n| format!("{n}\0"));
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe {
            y::yaml_mapping_start_event_initialize(
                ev.as_mut_ptr(),
                name.as_ref().map_or(ptr::null(), |a| a.as_ptr()),
                tag.map_or(ptr::null(), <[u8]>::as_ptr),
                tag.is_none(),
                y::YAML_BLOCK_MAPPING_STYLE,
            )
            .ok
        };
        self.emit(ev, ok)
    }

    fn end(&mut self, mapping: bool) -> Result<(), RenderError> {
        let mut ev = MaybeUninit::uninit();
        let ok = unsafe {
            if mapping {
                y::yaml_mapping_end_event_initialize(ev.as_mut_ptr()).ok
            } else {
                y::yaml_sequence_end_event_initialize(ev.as_mut_ptr()).ok
            }
        };
        self.emit(ev, ok)
    }
}

impl Drop for Emitter<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in new(), deleted exactly once here.
        unsafe { y::yaml_emitter_delete(self.raw.as_mut_ptr()) }
    }
}

/// `YAMLTree#visit_String` for a plain `::String` without instance variables.
fn string_scalar(s: &str) -> Result<Scalar<'_>, RenderError> {
    let mut sc = Scalar {
        value: s,
        tag: None,
        plain: true,
        quoted: true,
        style: y::YAML_PLAIN_SCALAR_STYLE,
    };
    if has_inner_newline(s) {
        sc.style = y::YAML_LITERAL_SCALAR_STYLE;
    } else if s == "<<" {
        // The merge key must not be read back as one.
        sc = Scalar {
            value: s,
            tag: Some(STR_TAG),
            plain: false,
            quoted: false,
            style: y::YAML_SINGLE_QUOTED_SCALAR_STYLE,
        };
    } else if s == "y" || s == "n" || line_starts_non_word_without_quote(s) {
        sc.style = y::YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    } else if would_be_non_string(s).map_err(RenderError::Yaml)? || starts_with_bad_octal(s) {
        sc.style = y::YAML_SINGLE_QUOTED_SCALAR_STYLE;
    }
    Ok(sc)
}

/// Ruby `o =~ /\n(?!\Z)/`: a newline that is neither the last character nor followed only by
/// a final newline.
fn has_inner_newline(s: &str) -> bool {
    let body = s
        .strip_suffix("\n\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s);
    body.contains('\n')
}

/// Ruby `o =~ /^[^[:word:]][^"]*$/` (`^`/`$` are line anchors; `[^"]` crosses newlines).
/// Only reached for strings whose newlines are trailing, so lines are few.
fn line_starts_non_word_without_quote(s: &str) -> bool {
    let mut start = 0;
    loop {
        let rest = &s[start..];
        if let Some(c) = rest.chars().next() {
            // `[^"]*$` succeeds iff the text before the first `"` contains a line end,
            // i.e. a newline, or there is no `"` at all (end of string).
            if !is_word(c) {
                let after = &rest[c.len_utf8()..];
                match after.find('"') {
                    None => return true,
                    Some(q) => {
                        if after[..q].contains('\n') {
                            return true;
                        }
                    }
                }
            }
        }
        match s[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return false,
        }
    }
}

/// Onigmo `[[:word:]]`: Alphabetic, marks, decimal digits, connector punctuation.
fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    use std::sync::OnceLock;
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"^[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}]").expect("static regex")
    });
    let mut buf = [0u8; 4];
    re.is_match(c.encode_utf8(&mut buf))
}

/// Ruby `/\A0[0-7]*[89]/`: would look like a broken octal number.
fn starts_with_bad_octal(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('0') else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| ('0'..='7').contains(&c));
    rest.starts_with(['8', '9'])
}
