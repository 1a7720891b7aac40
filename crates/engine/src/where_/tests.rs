use super::*;

fn v(yaml: &str) -> Value {
    hiera_formats::yaml::load(yaml).unwrap()
}

#[test]
fn deepest_part_of_a_dotted_key() {
    let lk = LookupKey::parse("a.b.1.c").unwrap();
    let root = v("{b: [x, {c: 3}]}");
    assert_eq!(deepest(&root, &lk.segments), (3, Value::Int(3)));
    assert_eq!(key_path(&lk, 3), "a.b.1.c");
    let root = v("{b: [x]}");
    assert_eq!(deepest(&root, &lk.segments), (1, v("[x]")));
    assert_eq!(key_path(&lk, 1), "a.b");
    // A string segment does not index an array; a negative index finds nothing.
    let lk = LookupKey::parse("a.-1").unwrap();
    assert_eq!(deepest(&v("[1]"), &lk.segments).0, 0);
}

#[test]
fn what_a_knockout_removed() {
    let result = v("{a: 1, c: 3}");
    assert_eq!(
        missing_parts(&v("{a: 0, b: 2}"), &result),
        (vec!["\"b\"".to_string()], 2)
    );
    assert_eq!(
        missing_parts(&v("[x, y]"), &v("[y]")),
        (vec!["\"x\"".to_string()], 2)
    );
    // Hashes inside arrays may have been merged (merge_hash_arrays): not counted.
    assert_eq!(missing_parts(&v("[{a: 1}]"), &v("[]")), (vec![], 0));
    // A collection whose place now holds a scalar is gone whole.
    assert_eq!(missing_parts(&v("{a: 1}"), &Value::str("")).1, 1);
    assert_eq!(missing_parts(&Value::Int(1), &Value::Int(2)), (vec![], 0));
}

#[test]
fn knocked_out_roles() {
    let def = |role: Role, value: &str| Definition {
        role,
        layer: LayerName::Environment,
        level: None,
        default_hierarchy: false,
        order: None,
        file: String::new(),
        pos: None,
        anchor: None,
        path: "k".into(),
        complete: true,
        value: v(value),
        note: None,
        written: None,
    };
    let deep = MergeStrategy::from_value(&v("{strategy: deep, knockout_prefix: '--'}")).unwrap();
    let lk = LookupKey::parse("k").unwrap();
    let mut defs = vec![
        def(Role::Contributes, "['--x', z]"),
        def(Role::Contributes, "[x]"),
        def(Role::Contributes, "[y, x]"),
    ];
    explain_roles(&mut defs, &deep, &lk, &Answer::Found(v("[y, z]")));
    assert_eq!(
        defs[0].role,
        Role::Contributes,
        "the highest is never knocked out"
    );
    assert_eq!(defs[1].role, Role::KnockedOut);
    assert_eq!(defs[2].role, Role::Contributes);
    assert_eq!(defs[2].note.as_deref(), Some("knocked out: \"x\""));
    // Without a knockout prefix nothing is knocked out.
    let mut defs = vec![def(Role::Contributes, "[a]"), def(Role::Contributes, "[b]")];
    let plain = MergeStrategy::from_value(&v("deep")).unwrap();
    explain_roles(&mut defs, &plain, &lk, &Answer::Found(v("[a]")));
    assert_eq!(defs[1].role, Role::Contributes);
}

#[test]
fn the_option_entry_that_applies() {
    let entry = |name: &str, value: &str, applies: bool| OptionEntry {
        layer: LayerName::Environment,
        file: String::new(),
        pos: None,
        name: name.into(),
        value: v(value),
        applies,
        reached: true,
    };
    // An exact name wins over a pattern with the same options; a name set again at lower
    // priority (applies = false on input) never applies.
    let mut entries = vec![
        entry("^k", "{merge: deep}", true),
        entry("k", "{merge: deep}", true),
        entry("k", "{merge: unique}", false),
    ];
    mark_applying(&mut entries, Some(&v("{merge: deep}")));
    let applies: Vec<bool> = entries.iter().map(|e| e.applies).collect();
    assert_eq!(applies, [false, true, false]);
    mark_applying(&mut entries, None);
    assert!(entries.iter().all(|e| !e.applies));
}
