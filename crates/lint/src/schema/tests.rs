use super::*;
use crate::manifests::expand_aliases;
use crate::tests::Fixture;

fn repo() -> Fixture {
    Fixture::new(&[
        (
            "manifests/site.pp",
            "node default { lookup('classes', Array[String], 'unique', []).include }\n",
        ),
        (
            "modules/ntp/manifests/init.pp",
            "class ntp (\n  Boolean $iburst = true,\n  Array[Stdlib::Host] $servers,\n  Ntp::Mode $mode = 'client',\n) {\n  $x = lookup('ntp::extra')\n}\n",
        ),
        ("modules/ntp/types/mode.pp", "type Ntp::Mode = Enum['client', 'server']\n"),
        (
            "modules/stdlib/types/host.pp",
            "type Stdlib::Host = Variant[Stdlib::Fqdn, Pattern[/^Stdlib::Fqdn$/]]\n",
        ),
        (
            "modules/stdlib/types/fqdn.pp",
            "type Stdlib::Fqdn = Pattern[/\\A(([a-zA-Z0-9])\\.?)+\\z/]\n",
        ),
        (
            "modules/ntp/templates/ntp.conf.epp",
            "<%= lookup('ntp::template_key') %>\n",
        ),
        (
            "modules/ntp/templates/old.erb",
            "<%= scope.call_function('lookup', ['ntp::erb_key']) %>\n",
        ),
    ])
}

fn load(t: &Fixture) -> Schema {
    Schema::load(
        Some(&t.dir),
        &[
            ("ntp".to_string(), t.dir.join("modules/ntp")),
            ("stdlib".to_string(), t.dir.join("modules/stdlib")),
        ],
    )
}

#[test]
fn classes_params_and_aliases() {
    let t = repo();
    let s = load(&t);
    let (class, p) = s.param("ntp::iburst").unwrap();
    assert_eq!(class.name, "ntp");
    assert_eq!(class.reference(), "Class[Ntp]");
    assert_eq!(p.signature(), "Boolean $iburst = true");
    assert_eq!(p.ty, Ok(Type::Boolean(None)));
    assert_eq!(p.span.start.line_col(), (2, 11));
    // Aliases resolve through other modules' aliases.
    let (_, servers) = s.param("ntp::servers").unwrap();
    assert!(!servers.has_default());
    let ty = servers.ty.as_ref().unwrap();
    assert!(ty.is_instance(&Value::Array(vec![Value::str("ntp.example.com")])));
    assert!(!ty.is_instance(&Value::Array(vec![Value::str("not a host")])));
    // The regexp that names an alias is left alone.
    assert!(ty.is_instance(&Value::Array(vec![Value::str("Stdlib::Fqdn")])));
    let (_, mode) = s.param("ntp::mode").unwrap();
    assert!(mode.ty.as_ref().unwrap().is_instance(&Value::str("server")));
    assert!(!mode.ty.as_ref().unwrap().is_instance(&Value::str("peer")));
    assert!(s.param("ntp::nope").is_none());
    assert!(s.param("nope::x").is_none());
    assert_eq!(s.type_alias("stdlib::host").unwrap().name, "Stdlib::Host");
    assert_eq!(s.params().count(), 3);
    assert_eq!(
        s.modules_with_code().collect::<Vec<_>>(),
        vec!["ntp", "stdlib"]
    );
    assert_eq!(
        s.class_manifest("ntp").unwrap().module.as_deref(),
        Some("ntp")
    );
}

#[test]
fn lookups_from_code_and_templates() {
    let t = repo();
    let s = load(&t);
    for k in ["classes", "ntp::extra", "ntp::template_key", "ntp::erb_key"] {
        assert!(s.is_looked_up(k), "{k}");
    }
    let calls = s.lookups_of("ntp::template_key");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].span.start.line_col(), (1, 12));
    assert!(calls[0].file.ends_with("ntp.conf.epp"));
    assert_eq!(s.lookups_of("classes")[0].span.start.line_col(), (1, 23));
}

#[test]
fn unknown_and_recursive_types_are_explained() {
    let t = Fixture::new(&[
        (
            "modules/m/manifests/init.pp",
            "class m (\n  Foo::Bar $a,\n  M::Loop $b,\n  Sensitive[String] $d,\n  # a comment, with $x = 'y'\n  Pattern[/\\A[a-z]+\\z/] $e = 'x', /* $z */\n) {}\n",
        ),
        ("modules/m/types/loop.pp", "type M::Loop = Array[M::Loop]\n"),
    ]);
    let s = Schema::load(None, &[("m".to_string(), t.dir.join("modules/m"))]);
    let c = s.class("m").unwrap();
    let err = |n: &str| c.param(n).unwrap().ty.clone().unwrap_err();
    assert!(
        err("a").contains("'Foo::Bar' is neither built in nor a type alias"),
        "{}",
        err("a")
    );
    assert!(err("b").contains("recursive alias"), "{}", err("b"));
    assert!(c.param("d").unwrap().ty.is_ok());
    // A regexp the grammar misreads, and comments, are read right.
    let e = c.param("e").unwrap();
    assert_eq!(e.type_text.as_deref(), Some("Pattern[/\\A[a-z]+\\z/]"));
    assert_eq!(e.default.as_deref(), Some("'x'"));
    assert!(e.ty.as_ref().unwrap().is_instance(&Value::str("abc")));
    assert_eq!(c.params.len(), 4);
}

#[test]
fn updating_one_file() {
    let t = repo();
    let mut s = load(&t);
    let init = t.dir.join("modules/ntp/manifests/init.pp");
    // An edit renames a parameter: only that file is parsed again.
    s.update_file(
        &init,
        Some("class ntp (\n  Integer $iburst_count = 1,\n  Ntp::Mode $mode,\n) {}\n"),
    );
    assert!(s.param("ntp::iburst").is_none());
    assert_eq!(
        s.param("ntp::iburst_count").unwrap().1.ty,
        Ok(Type::Integer(hiera_types::Range {
            from: None,
            to: None,
            float: false
        }))
    );
    assert!(!s.is_looked_up("ntp::extra"));
    assert!(s.param("ntp::mode").unwrap().1.ty.is_ok());
    // An alias changes: every parameter using it follows.
    let mode = t.dir.join("modules/ntp/types/mode.pp");
    s.update_file(&mode, Some("type Ntp::Mode = Enum['peer']\n"));
    let ty = s.param("ntp::mode").unwrap().1.ty.clone().unwrap();
    assert!(ty.is_instance(&Value::str("peer")));
    s.update_file(&mode, None);
    assert!(s.param("ntp::mode").unwrap().1.ty.is_err());
    // A new file in a module is that module's.
    let new = t.dir.join("modules/ntp/manifests/server.pp");
    s.update_file(&new, Some("class ntp::server(String $x) {}\n"));
    assert_eq!(s.file(&new).unwrap().module.as_deref(), Some("ntp"));
    assert!(s.param("ntp::server::x").is_some());
    s.update_file(&init, None);
    assert!(s.class("ntp").is_none());
    assert!(s.class("ntp::server").is_some());
}

#[test]
fn data_side() {
    let text = "---\nlookup_options:\n  ntp::servers:\n    merge: unique\n  '^profile::':\n    convert_to: Sensitive\na: \"%{lookup('b.c')} and %{hiera('d')}\"\nb:\n  c: 1\ne:\n  - \"%{alias('a')}\"\n";
    let r = data_references(DataFormat::Yaml, text).unwrap();
    let keys: Vec<_> = r
        .keys
        .iter()
        .map(|k| (k.key.as_str(), k.pos.line))
        .collect();
    assert_eq!(
        keys,
        vec![("lookup_options", 2), ("a", 7), ("b", 8), ("e", 10)]
    );
    let refs: Vec<_> = r
        .references
        .iter()
        .map(|x| {
            (
                x.root.as_str(),
                x.function,
                x.in_key.as_str(),
                x.span.start.line_col(),
            )
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            ("b", RefFunction::Lookup, "a", (7, 5)),
            ("d", RefFunction::Hiera, "a", (7, 26)),
            ("a", RefFunction::Alias, "e", (11, 6)),
        ]
    );
    assert_eq!(
        &text[r.references[0].span.start.offset..r.references[0].span.end.offset],
        "%{lookup('b.c')}"
    );
    assert_eq!(r.lookup_options.len(), 2);
    assert_eq!(r.lookup_options[0].merge, Some(Value::str("unique")));
    assert_eq!(r.lookup_options[0].pos.line_col(), (3, 3));
    assert!(r.lookup_options[1].pattern);
    let used: Vec<&str> = r.used_keys().collect();
    assert_eq!(used, vec!["b", "d", "a", "ntp::servers"]);
    assert!(data_references(DataFormat::Yaml, "a: [").is_err());
    assert_eq!(
        data_references(DataFormat::Json, "{\"k\": \"%{alias('x')}\"}")
            .unwrap()
            .references[0]
            .root,
        "x"
    );
}

#[test]
fn positions() {
    let text = "é: x\n  ab";
    let p = Position::of_offset(text, text.find("ab").unwrap());
    assert_eq!((p.line, p.column), (2, 3));
    // `é` is two bytes, one character.
    let p = Position::of_offset(text, 2);
    assert_eq!((p.line, p.column, p.offset), (1, 2, 2));
    // Inside a character: its start.
    let p = Position::of_offset(text, 1);
    assert_eq!((p.line, p.column, p.offset), (1, 1, 0));
    let idx = LineIndex::new(text);
    assert_eq!(Position::at(&idx, 1, 2).offset, 2);
    assert_eq!(Position::at(&idx, 9, 9).offset, text.len());
    // The index's positions are the text's, at every offset (inside characters, past the end).
    let text = "é: x\n\n  ab 😀\nlast";
    let idx = LineIndex::new(text);
    for offset in 0..text.len() + 3 {
        assert_eq!(
            Position::in_lines(&idx, offset),
            Position::of_offset(text, offset),
            "{offset}"
        );
    }
}

#[test]
fn signatures_are_one_line() {
    let m = parse_manifest(
        Path::new("s.pp"),
        "class s (\n  Hash[String,\n       Integer] $h = {\n    'a' => 1,\n  },\n  *$rest,\n) {}\n",
    );
    let h = m.classes[0].param("h").unwrap();
    assert_eq!(h.signature(), "Hash[String, Integer] $h = { 'a' => 1, }");
    assert!(h.ty.is_ok());
    let rest = m.classes[0].param("rest").unwrap();
    assert_eq!(rest.type_text, None);
}

#[test]
fn only_capitalized_words_are_aliases() {
    let aliases: HashMap<String, String> = [("mode".to_string(), "Enum['a', 'b']".to_string())]
        .into_iter()
        .collect();
    // A Struct's key and an Enum's value named like the alias stay words.
    assert_eq!(
        expand_aliases("Struct[{mode => Mode, other => Enum[mode]}]", &aliases).unwrap(),
        "Struct[{mode => Enum['a', 'b'], other => Enum[mode]}]"
    );
    // Strings and regexps are copied as they are.
    assert_eq!(
        expand_aliases("Variant[Pattern[/Mode/], Enum['Mode'], ::Mode]", &aliases).unwrap(),
        "Variant[Pattern[/Mode/], Enum['Mode'], Enum['a', 'b']]"
    );
}
