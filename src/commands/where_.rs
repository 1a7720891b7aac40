//! `hiera-lookup where KEY`: the lookup's flags, a report of where the key is defined
//! instead of its value (the library's [`hiera_engine::where_`] does the work).

use crate::flags::groups::ThreadsArgs;
use crate::flags::groups::{self, ColorArgs, FactsArgs, LayoutArgs, MergeArgs, NodeArgs};
use crate::flags::groups::{RedactArgs, StrictArgs, TrustArgs, When};
use crate::output::{self, ExitCode};
use hiera_engine::fleet::Streamed;
use hiera_engine::redact::Redactor;
use hiera_engine::where_::{self, render, Request};
use hiera_engine::{Error, Exec, Workspace};

const AFTER_HELP: &str = "`hiera-lookup where --help` adds examples and the roles.";

const AFTER_LONG_HELP: &str = "\
Examples (in a control repo: hiera.yaml and data/ in the current directory, or -C DIR):
    hiera-lookup where ntp::servers --facts facts/web01.yaml
    hiera-lookup where profile::base::users.alice --facts facts/web01.yaml --format json
    hiera-lookup where ntp::servers --facts-dir facts

Roles: wins (first found), contributes (merged), shadowed, knocked out (deep merge
knockout), not reached (a data file this node's hierarchy does not name).

Exit status: 0 found, 1 not found, 2 error.";

/// `hiera-lookup where`'s flags: the lookup's layout, node and merge flags, and the
/// report's own.
#[derive(clap::Args, Debug)]
#[command(
    args_override_self = true,
    after_help = AFTER_HELP,
    after_long_help = AFTER_LONG_HELP
)]
pub struct WhereArgs {
    /// The key; a dotted key digs into the value
    #[arg(value_name = "KEY")]
    pub key: String,

    #[command(flatten)]
    pub layout: LayoutArgs,

    #[command(flatten)]
    pub facts: FactsArgs,

    #[command(flatten)]
    pub node: NodeArgs,

    #[command(flatten)]
    pub merge: MergeArgs,

    #[command(flatten)]
    pub strict: StrictArgs,

    /// Leave out definitions in data files the node does not reach
    #[arg(
        long = "reachable-only",
        alias = "reachable_only",
        help_heading = "Output"
    )]
    pub reachable_only: bool,

    /// Output format
    #[arg(
        long,
        value_name = "FORMAT",
        default_value = "text",
        value_parser = ["text", "json"],
        help_heading = "Output"
    )]
    pub format: String,

    #[command(flatten)]
    pub redact: RedactArgs,

    #[command(flatten)]
    pub color: ColorArgs,

    #[command(flatten)]
    pub trust: TrustArgs,

    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// Runs `where` and prints its report.
pub fn exec(w: &WhereArgs) -> output::Result<ExitCode> {
    let mut warnings = Vec::new();
    // --redact: what the lookups decrypted, hidden in everything printed.
    let mut secrets = Redactor::default();
    let result = run_inner(w, &mut warnings, &mut secrets);
    let hide = |s: &str| secrets.text(s).into_owned();
    for w in &warnings {
        output::warn(&hide(w));
    }
    match result {
        Ok((stdout, code)) => output::stdout(&hide(&stdout), ExitCode::from_status(code)),
        Err(e) => Err(hide(&e.to_string()).into()),
    }
}

fn run_inner(
    w: &WhereArgs,
    warnings: &mut Vec<String>,
    secrets: &mut Redactor,
) -> Result<(String, i32), Error> {
    let json = w.format == "json";
    let key = w.key.clone();
    let lookup = hiera_engine::query::Request::new(&hiera_engine::query::Flags {
        keys: vec![key.clone()],
        merge: w.merge.merge.clone(),
        knock_out_prefix: w.merge.knock_out_prefix.clone(),
        sort_merged_arrays: w.merge.sort_merged_arrays,
        merge_hash_arrays: w.merge.merge_hash_arrays,
        strict: w.strict.strict.clone(),
        redact: w.redact.redact,
        ..Default::default()
    })?;
    let (merge, strict) = (lookup.merge.clone(), lookup.strict);
    let mut context = groups::sources(&w.layout, &w.facts, &w.node).resolve()?;
    context.check_control_repo()?;
    for w in context.layout_warnings() {
        output::warn(&w);
    }
    let cwd = context.cwd.clone();
    let workspace = Workspace::open(context.env.clone(), lookup.settings())?;
    let request = Request {
        key,
        merge,
        reachable_only: w.reachable_only,
    };
    let style = render::Style {
        color: w.color.enabled(When::Auto),
        width: output::terminal_width(),
        base: Some(cwd.clone()),
    };
    if !context.sources.many_nodes() {
        let node = context.single(warnings)?;
        // The classifier put the node in another environment: its layers.
        let workspace = if node.moved {
            Workspace::open(context.env.clone(), lookup.settings())?
        } else {
            workspace
        };
        let name = w.node.node.clone();
        let mut session = workspace.session_unrefreshed(node.scope);
        let report =
            where_::Reporter::new(workspace.files(), strict).report(&mut session, &request, name);
        if let Some(r) = session.redactor() {
            secrets.merge(r);
        }
        let report = report?;
        warnings.extend(session.take_warnings());
        let code = match report.answer {
            where_::Answer::Found(_) => 0,
            where_::Answer::NotFound => 1,
            where_::Answer::Error(_) => 2,
        };
        let out = if json {
            render::json(&report).map_err(|e| Error::run(e.to_string()))? + "\n"
        } else {
            render::text(&report, &style)
        };
        return Ok((out, code));
    }
    context.check_enc_trust(
        &context.env.cwd.clone(),
        w.trust.allow_exec,
        "where over a fleet",
    )?;
    context.answer_other_environments(lookup.settings());
    let exec = match w.trust.allow_exec {
        true => Exec::Allowed,
        false => Exec::Refused {
            how_to_allow:
                "where over a fleet runs no program a hierarchy names unless given --allow-exec",
        },
    };
    // Each facts file (or chunk of PuppetDB's) read as a worker reaches it: the fleet is
    // never all in memory.
    let across = hiera_engine::fleet::key_across(
        &Streamed {
            workspace: &workspace,
            exec,
        },
        context.fleet()?.into_units(),
        output::threads(w.threads.threads),
        (&workspace.files(), strict),
        &request,
    );
    secrets.merge(&across.secrets);
    warnings.extend(across.warnings);
    warnings.extend(hiera_engine::batch::duplicate_warnings(
        across.named.iter().map(|(n, s)| (n.as_str(), s.as_str())),
    ));
    let fleet = across.report;
    let code = if !fleet.errors.is_empty() {
        2
    } else if !fleet.not_found.is_empty() {
        1
    } else {
        0
    };
    let out = if json {
        render::fleet_json(&fleet).map_err(|e| Error::run(e.to_string()))? + "\n"
    } else {
        render::fleet_text(&fleet, &style)
    };
    Ok((out, code))
}
