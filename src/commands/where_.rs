//! `hiera-lookup where KEY`: the lookup's flags, a report of where the key is defined
//! instead of its value (the library's [`hiera_engine::where_`] does the work).

use crate::flags::groups::{self, ColorArgs, FactsArgs, LayoutArgs, MergeArgs, NodeArgs};
use crate::flags::groups::{RedactArgs, StrictArgs, TrustArgs, When};
use crate::output::{self, ExitCode};
use hiera_engine::redact::Redactor;
use hiera_engine::where_::{self, fleet::FleetReport, render, Request};
use hiera_engine::{Error, Workspace};
use std::collections::HashMap;

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
    let lookup = crate::request::Request::new(&crate::request::Flags {
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
    let mut sources = groups::sources(&w.layout, &w.facts, &w.node).resolve()?;
    sources.check_control_repo()?;
    let cwd = sources.cwd.clone();
    let workspace = Workspace::open(sources.env.clone(), lookup.settings())?;
    let facts = sources.facts_request()?;
    let db = sources.puppetdb()?;
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
    if !sources.sources.many_nodes() {
        let (scope, moved) = sources.single_node(&facts, db.as_ref(), warnings)?;
        // The classifier put the node in another environment: its layers.
        let workspace = if moved {
            Workspace::open(sources.env.clone(), lookup.settings())?
        } else {
            workspace
        };
        let node = w.node.node.clone();
        let mut session = workspace.session_unrefreshed(scope);
        let report =
            where_::Reporter::new(workspace.files(), strict).report(&mut session, &request, node);
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
    sources.check_enc_trust(
        &sources.env.cwd.clone(),
        w.trust.allow_exec,
        "where over a fleet",
    )?;
    sources.answer_other_environments(lookup.settings());
    let mut fleet = FleetReport::new(&request.key);
    let mut reporter = where_::Reporter::new(workspace.files(), strict);
    // Each facts file (or chunk of PuppetDB's) read as its nodes are reached: the fleet is
    // never all in memory.
    let mut names: Vec<(String, String)> = Vec::new();
    let units = sources.node_source(&facts, db.as_ref())?.into_units();
    let nodes = units.flat_map(|unit| {
        let read = unit();
        warnings.extend(read.warnings);
        read.nodes
    });
    // Nodes of one name (two facts files of one certname) are told apart by their source:
    // the first is renamed when the second is seen.
    let mut seen: HashMap<String, (Option<String>, usize, bool)> = HashMap::new();
    for (i, n) in nodes.enumerate() {
        let source = n.source.as_ref().map(|(_, s)| s.clone());
        names.push((n.name.clone(), source.clone().unwrap_or_default()));
        let labelled = |src: &Option<String>, i: usize| {
            hiera_engine::batch::shared_name_label(&n.name, src.as_deref(), i)
        };
        let label = match seen.get_mut(&n.name) {
            None => {
                seen.insert(n.name.clone(), (source.clone(), i, false));
                n.name.clone()
            }
            Some((first, first_i, renamed)) => {
                if !*renamed {
                    *renamed = true;
                    fleet.rename(&n.name, &labelled(first, *first_i));
                }
                labelled(&source, i)
            }
        };
        if let Some(e) = &n.facts_error {
            fleet.nodes.push(label.clone());
            fleet.errors.push((label, e.to_string()));
            continue;
        }
        // A node a classifier puts in another environment reads that environment's data.
        let own = n.workspace.clone();
        let mut session = own
            .as_deref()
            .unwrap_or(&workspace)
            .session_unrefreshed(n.scope);
        if !w.trust.allow_exec {
            session.set_exec(hiera_engine::Exec::Refused {
                how_to_allow: "where over a fleet runs no program a hierarchy names unless given --allow-exec",
            });
        }
        let report = reporter.report(&mut session, &request, Some(n.name.clone()));
        if let Some(r) = session.redactor() {
            secrets.merge(r);
        }
        match report {
            Ok(r) => fleet.add(&label, r),
            Err(e) => {
                fleet.nodes.push(label.clone());
                fleet.errors.push((label, e.to_string()));
            }
        }
    }
    warnings.extend(hiera_engine::batch::duplicate_warnings(
        names.iter().map(|(n, s)| (n.as_str(), s.as_str())),
    ));
    fleet.finish();
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
