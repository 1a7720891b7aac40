use super::*;
use hiera_value::value::Value;

fn s(x: &str) -> Value {
    Value::str(x)
}

fn at(format: DataFormat, text: &str, path: &[Value]) -> Option<(usize, usize)> {
    let tree = positions_of(format, text.as_bytes()).unwrap().unwrap();
    tree.locate(path).map(|l| (l.pos.line, l.pos.column))
}

fn yaml(text: &str, path: &[Value]) -> Option<(usize, usize)> {
    at(DataFormat::Yaml, text, path)
}

#[test]
fn yaml_block_style() {
    let t = "---\n# comment\nntp::servers:\n  - a\n  - b\nusers:\n  alice:\n    uid: 1\n";
    assert_eq!(yaml(t, &[s("ntp::servers")]), Some((3, 1)));
    assert_eq!(yaml(t, &[s("ntp::servers"), Value::Int(1)]), Some((5, 5)));
    assert_eq!(yaml(t, &[s("users"), s("alice"), s("uid")]), Some((8, 5)));
    assert_eq!(yaml(t, &[s("users"), s("bob")]), None);
    assert_eq!(yaml(t, &[s("ntp::servers"), Value::Int(2)]), None);
    // Digging into a scalar finds nothing.
    assert_eq!(yaml(t, &[s("users"), s("alice"), s("uid"), s("x")]), None);
}

#[test]
fn yaml_flow_style() {
    let t = "a: {b: 1, 'c': [x, {d: 2}]}\n";
    assert_eq!(yaml(t, &[s("a"), s("b")]), Some((1, 5)));
    assert_eq!(yaml(t, &[s("a"), s("c")]), Some((1, 11)));
    assert_eq!(
        yaml(t, &[s("a"), s("c"), Value::Int(1), s("d")]),
        Some((1, 21))
    );
}

#[test]
fn yaml_quoted_and_dotted_keys() {
    let t = "\"profile::x.y\": 1\n'a.b':\n  \"c\\td\": 2\n";
    // A dotted key written quoted is one key, at its opening quote.
    assert_eq!(yaml(t, &[s("profile::x.y")]), Some((1, 1)));
    assert_eq!(yaml(t, &[s("a.b"), s("c\td")]), Some((3, 3)));
}

#[test]
fn yaml_keys_resolve_as_psych_does() {
    let t = "1: one\n'1': quoted\ntrue: yes\n:sym: 3\n";
    assert_eq!(yaml(t, &[Value::Int(1)]), Some((1, 1)));
    assert_eq!(yaml(t, &[s("1")]), Some((2, 1)));
    assert_eq!(yaml(t, &[Value::Bool(true)]), Some((3, 1)));
    // A symbol key is its name.
    assert_eq!(yaml(t, &[s("sym")]), Some((4, 1)));
}

#[test]
fn yaml_duplicate_key_points_at_the_last_definition() {
    let t = "a: 1\nb: 2\na: 3\n";
    assert_eq!(yaml(t, &[s("a")]), Some((3, 1)));
    let tree = positions_of(DataFormat::Yaml, t.as_bytes())
        .unwrap()
        .unwrap();
    let PosKind::Map(entries) = &tree.kind else {
        panic!("a map")
    };
    // The hash keeps the first place of `a`, as the loaded value does.
    assert_eq!(entries[0].key, s("a"));
}

#[test]
fn yaml_aliases_report_the_alias_site() {
    let t = "base: &b\n  x: 1\n  y: [p, q]\nother: *b\n";
    let tree = positions_of(DataFormat::Yaml, t.as_bytes())
        .unwrap()
        .unwrap();
    let l = tree.locate(&[s("other"), s("x")]).unwrap();
    assert_eq!((l.pos.line, l.pos.column), (4, 8));
    assert_eq!(l.anchor, Some(Pos { line: 2, column: 3 }));
    let l = tree.locate(&[s("other"), s("y"), Value::Int(1)]).unwrap();
    assert_eq!((l.pos.line, l.pos.column), (4, 8));
    assert_eq!(
        l.anchor,
        Some(Pos {
            line: 3,
            column: 10
        })
    );
    // The anchored definition itself has no alias.
    let l = tree.locate(&[s("base"), s("x")]).unwrap();
    assert_eq!(l.anchor, None);
    assert_eq!(yaml(t, &[s("other")]), Some((4, 1)));
}

#[test]
fn yaml_merge_keys() {
    let t = "d: &d {a: 1, b: 2}\ne: &e {b: 3, c: 4}\nx:\n  <<: *d\n  a: 9\ny:\n  <<: [*d, *e]\nz:\n  <<: {k: 1}\n";
    let tree = positions_of(DataFormat::Yaml, t.as_bytes())
        .unwrap()
        .unwrap();
    // `a` is written again after the merge: that definition wins.
    assert_eq!(tree.locate(&[s("x"), s("a")]).unwrap().anchor, None);
    assert_eq!(yaml(t, &[s("x"), s("a")]), Some((5, 3)));
    let b = tree.locate(&[s("x"), s("b")]).unwrap();
    assert_eq!((b.pos.line, b.pos.column), (4, 7));
    assert_eq!(
        b.anchor,
        Some(Pos {
            line: 1,
            column: 14
        })
    );
    // In a list of merged hashes the earlier one wins.
    let b = tree.locate(&[s("y"), s("b")]).unwrap();
    assert_eq!((b.pos.line, b.pos.column), (7, 8));
    let c = tree.locate(&[s("y"), s("c")]).unwrap();
    assert_eq!((c.pos.line, c.pos.column), (7, 12));
    // An inline hash merged in: its keys are written right there.
    assert_eq!(yaml(t, &[s("z"), s("k")]), Some((9, 8)));
    assert!(tree.entry(&s("<<")).is_none());
}

#[test]
fn yaml_multi_line_and_complex_keys() {
    let t =
        "? |\n  multi\n  line\n: 1\n? plain\n  continued\n: 2\nflow: {? \"two\n  lines\" : 3}\n";
    assert_eq!(yaml(t, &[s("multi\nline\n")]), Some((1, 3)));
    assert_eq!(yaml(t, &[s("plain continued")]), Some((5, 3)));
    assert_eq!(yaml(t, &[s("flow"), s("two lines")]), Some((8, 10)));
}

#[test]
fn yaml_columns_count_characters_and_the_bom() {
    let t = "\u{feff}é: {ü: 1}\n";
    // libyaml skips the BOM but counts it, as Psych's marks do.
    assert_eq!(yaml(t, &[s("é")]), Some((1, 2)));
    assert_eq!(yaml(t, &[s("é"), s("ü")]), Some((1, 6)));
}

#[test]
fn yaml_errors_and_empty_documents() {
    assert_eq!(
        positions_of(DataFormat::Yaml, b"").unwrap(),
        None,
        "an empty file has no positions"
    );
    let e = positions_of(DataFormat::Yaml, b"a: [1\n").unwrap_err();
    assert!(e.contains("flow sequence at line 1 column 4"), "{e}");
    let e = positions_of(DataFormat::Yaml, b"a: *nope\n").unwrap_err();
    assert!(e.contains("unknown anchor"), "{e}");
    // Only the first document counts, as for the loader.
    assert_eq!(yaml("a: 1\n---\nb: 2\n", &[s("b")]), None);
}

/// Where keys and scalars end: just after their text (a quoted one's closing quote), so
/// that a finding or an edit covers the whole key and nothing of its value.
#[test]
fn keys_and_scalars_end_where_their_text_ends() {
    let p = |line, column| Pos { line, column };
    let ends = |format, text: &str| {
        let tree = positions_of(format, text.as_bytes()).unwrap().unwrap();
        let PosKind::Map(entries) = &tree.kind else {
            panic!("not a map")
        };
        entries
            .iter()
            .map(|e| (e.key_pos, e.key_end, e.value.end))
            .collect::<Vec<_>>()
    };
    let y = ends(
        DataFormat::Yaml,
        "ntp::serverz: 1:30\n'é::x y' : \"a:b\"  # c\nk:\n  - 1\n",
    );
    assert_eq!(y[0], (p(1, 1), Some(p(1, 13)), Some(p(1, 19))));
    assert_eq!(y[1], (p(2, 1), Some(p(2, 9)), Some(p(2, 17))));
    assert_eq!((y[2].1, y[2].2), (Some(p(3, 2)), None));
    let j = ends(DataFormat::Json, "{\"a\": \"x:y\",\n \"b\" : [1]}");
    assert_eq!(j[0], (p(1, 2), Some(p(1, 5)), Some(p(1, 12))));
    assert_eq!((j[1].0, j[1].1, j[1].2), (p(2, 2), Some(p(2, 5)), None));
    let h = ends(DataFormat::Hocon, "a = 1\n");
    assert_eq!((h[0].1, h[0].2), (None, None));
}

#[test]
fn json_positions() {
    let t = "{\n  // a comment\n  \"a\": {\"b\": [1, {\"c\": true}]},\n  \"d\\u0041\": null,\n  \"a\": {\"x\": 2}\n}\n";
    let j = |p: &[Value]| at(DataFormat::Json, t, p);
    // The duplicate `a` wins.
    assert_eq!(j(&[s("a")]), Some((5, 3)));
    assert_eq!(j(&[s("a"), s("x")]), Some((5, 9)));
    assert_eq!(j(&[s("a"), s("b")]), None);
    assert_eq!(j(&[s("dA")]), Some((4, 3)));
    let t2 = "[1, {\"k\": \"é\", \"l\": 2}]";
    assert_eq!(
        at(DataFormat::Json, t2, &[Value::Int(1), s("l")]),
        Some((1, 16))
    );
    let e = positions_of(DataFormat::Json, b"{\"a\": }").unwrap_err();
    assert!(e.starts_with("unexpected token"), "{e}");
}

#[test]
fn hocon_positions() {
    let t = "a.b.c = 1\nd {\n  e: 2\n  \"f.g\" = 3\n}\nd.e = 4\nlist = [1, 2]\n";
    let h = |p: &[Value]| at(DataFormat::Hocon, t, p);
    assert_eq!(h(&[s("a")]), Some((1, 1)));
    assert_eq!(h(&[s("a"), s("b")]), Some((1, 3)));
    assert_eq!(h(&[s("a"), s("b"), s("c")]), Some((1, 5)));
    // The later field defining d.e wins.
    assert_eq!(h(&[s("d"), s("e")]), Some((6, 3)));
    assert_eq!(h(&[s("d"), s("f.g")]), Some((4, 3)));
    assert_eq!(h(&[s("list")]), Some((7, 1)));
    let e = positions_of(DataFormat::Hocon, b"a = {").unwrap_err();
    assert!(e.contains("String: 1"), "{e}");
}

#[test]
fn positions_of_a_data_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/environments/production/data");
    let tree = positions_of_file(&dir.join("common.yaml"))
        .unwrap()
        .unwrap();
    let at = tree.locate(&[s("profile::web::port")]).unwrap();
    assert_eq!((at.pos.line, at.pos.column), (21, 1));
    let e = positions_of_file(&dir.join("nope.yaml")).unwrap_err();
    assert!(e.contains("nope.yaml"), "{e}");
    let e = positions_of_file(&dir.join("common.txt")).unwrap_err();
    assert!(e.contains("not a YAML, JSON or HOCON data file"), "{e}");
}
