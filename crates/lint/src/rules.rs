//! Every rule: its id, default severity, group and one-line summary. The paragraph that
//! explains each one is in docs/lint.md (a test checks that every id has one).

use super::Severity;
use Severity::*;

/// A lint rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The rule's id, as findings and `disable=` name it.
    pub id: &'static str,
    /// How serious its findings are.
    pub severity: Severity,
    /// The rule group (1 to 7).
    pub group: u8,
    /// One line saying what it checks.
    pub summary: &'static str,
}

const fn rule(id: &'static str, severity: Severity, group: u8, summary: &'static str) -> Rule {
    Rule {
        id,
        severity,
        group,
        summary,
    }
}

/// Every rule, in the order `lint --list-rules` prints them.
pub const RULES: &[Rule] = &[
    // 1. data files
    rule("data-syntax", Error, 1, "a data file does not parse"),
    rule(
        "data-not-a-hash",
        Error,
        1,
        "a data file holds something other than a hash",
    ),
    rule(
        "data-ruby-object",
        Error,
        1,
        "a data file holds a Ruby object Puppet rejects",
    ),
    rule("data-unreadable", Error, 1, "a data file cannot be read"),
    rule(
        "eyaml-malformed",
        Error,
        1,
        "an ENC[...] value is not well-formed",
    ),
    rule(
        "eyaml-decrypt",
        Error,
        1,
        "an ENC[...] value does not decrypt with the configured keys",
    ),
    rule(
        "eyaml-wrong-recipient",
        Error,
        1,
        "an ENC[...] value was encrypted for another key pair than the level's public key",
    ),
    // 2. hiera.yaml
    rule(
        "hiera-config-invalid",
        Error,
        2,
        "a hiera.yaml is not valid for its version",
    ),
    rule(
        "hiera-config-deprecated",
        Warning,
        2,
        "a hiera.yaml is version 3 or 4",
    ),
    rule(
        "hiera3-backend",
        Warning,
        2,
        "a hierarchy level uses hiera3_backend",
    ),
    rule(
        "level-no-files",
        Info,
        2,
        "a hierarchy level matches no file in the repo",
    ),
    rule(
        "openvox9-compat",
        Warning,
        2,
        "a setting or terminus the environment relies on that OpenVox 9 no longer reads",
    ),
    // 3. classes and parameters
    rule(
        "unknown-class-parameter",
        Error,
        3,
        "a CLASS::PARAM key whose class has no such parameter",
    ),
    rule(
        "unknown-class",
        Warning,
        3,
        "a key in a module's namespace whose class does not exist",
    ),
    rule(
        "manifest-not-utf8",
        Error,
        3,
        "a manifest is not UTF-8, which Puppet refuses to parse",
    ),
    rule(
        "module-key-outside-namespace",
        Error,
        3,
        "a module's data key outside the module's namespace",
    ),
    rule(
        "parameter-type-mismatch",
        Error,
        3,
        "a CLASS::PARAM value the parameter's declared type does not take",
    ),
    rule(
        "unused-key",
        Warning,
        3,
        "a data key no class parameter, lookup(), interpolation or lookup_options uses",
    ),
    // 4. interpolations
    rule(
        "interpolation-unknown-function",
        Error,
        4,
        "an interpolation calls a function Hiera does not have",
    ),
    rule(
        "interpolation-undefined-key",
        Error,
        4,
        "lookup()/alias()/hiera() of a key defined nowhere",
    ),
    rule(
        "interpolation-recursion",
        Error,
        4,
        "keys whose interpolations look each other up in a loop",
    ),
    rule(
        "alias-not-alone",
        Error,
        4,
        "alias() with other text in the same string",
    ),
    rule(
        "legacy-fact",
        Error,
        4,
        "a legacy fact Puppet 8 no longer sets",
    ),
    rule(
        "unknown-fact",
        Warning,
        4,
        "%{facts.x} of a fact no node of the fleet has",
    ),
    rule(
        "undefined-variable",
        Error,
        4,
        "a scope variable no node has, which Puppet 8 strict mode rejects",
    ),
    // 5. lookup_options
    rule(
        "lookup-options-undefined-key",
        Warning,
        5,
        "lookup_options for a key defined nowhere",
    ),
    rule(
        "lookup-options-pattern-unused",
        Warning,
        5,
        "a lookup_options pattern that matches no key",
    ),
    rule(
        "lookup-options-invalid-pattern",
        Error,
        5,
        "a lookup_options pattern that is not a valid regexp",
    ),
    rule(
        "lookup-options-merge",
        Error,
        5,
        "an unknown or invalid merge in lookup_options",
    ),
    rule(
        "lookup-options-convert-to",
        Error,
        5,
        "a convert_to type that does not parse",
    ),
    rule(
        "lookup-options-unknown-option",
        Warning,
        5,
        "an option Puppet ignores in lookup_options",
    ),
    rule(
        "lookup-options-not-a-hash",
        Error,
        5,
        "lookup_options or one of its entries is not a hash",
    ),
    // 6. fleet
    rule(
        "unreached-file",
        Warning,
        6,
        "a data file no node of the fleet reaches",
    ),
    rule(
        "redundant-value",
        Warning,
        6,
        "a value the next level gives anyway, for every node",
    ),
    rule(
        "shadowed-key",
        Warning,
        6,
        "a value a higher level overrides, for every node",
    ),
    rule(
        "lookup-fails",
        Error,
        6,
        "a lookup that fails for some node",
    ),
    // 7. hygiene
    rule(
        "leading-colons",
        Warning,
        7,
        "a data key with a leading `::`",
    ),
    rule(
        "duplicate-key",
        Error,
        7,
        "a key given twice in one mapping (Psych keeps the last)",
    ),
    rule(
        "yaml11-value",
        Warning,
        7,
        "a plain scalar YAML 1.1 reads as something else than it looks",
    ),
    rule("tab", Warning, 7, "a tab character"),
    rule(
        "bom",
        Error,
        7,
        "a byte-order mark (Puppet then reads only the first key of a YAML file)",
    ),
];

/// The rule named `id`.
pub(crate) fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// The default severity of `id` (rules are constants; an unknown id is a bug caught by tests).
pub(crate) fn severity(id: &str) -> Severity {
    find(id).map(|r| r.severity).unwrap_or(Error)
}
