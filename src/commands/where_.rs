//! `hiera-lookup where KEY`: the lookup's flags, a report of where the key is defined
//! instead of its value (the library's [`hiera_engine::where_`] does the work).

use crate::commands::lookup::Args;
use crate::output::{self, ExitCode};
use hiera_engine::redact::Redactor;
use hiera_engine::where_::{self, fleet::FleetReport, render, Request};
use hiera_engine::{Error, Workspace};

const AFTER_HELP: &str = "\
EXAMPLES:
    hiera-lookup where ntp::servers --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml
    hiera-lookup where profile::base::users.alice --environmentpath fixtures/environments --facts fixtures/facts/web01.yaml --format json
    hiera-lookup where ntp::servers --environmentpath fixtures/environments --facts-dir fixtures/facts

Roles: wins (first found), contributes (merged), shadowed, knocked out (deep merge knockout),
not reached (a data file this node's hierarchy does not name).

Exit status: 0 found, 1 not found, 2 error.";

/// `hiera-lookup where`'s flags: the lookup's, and the report's.
#[derive(clap::Args, Debug)]
#[command(infer_long_args = true, args_override_self = true, after_help = AFTER_HELP)]
pub struct WhereArgs {
    #[command(flatten)]
    pub lookup: Args,

    /// Leave out definitions in data files the node does not reach.
    #[arg(long = "reachable-only", visible_alias = "reachable_only")]
    pub reachable_only: bool,

    /// Output format: text (default) or json.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,

    /// Over a fleet: run the programs `lookup_key: command` levels name.
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,
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
    let args = &w.lookup;
    let json = match w.format.as_deref() {
        None | Some("text") => false,
        Some("json") => true,
        Some(other) => {
            return Err(Error::Usage(format!(
                "--format expects text or json, got '{other}'"
            )))
        }
    };
    let refused = [
        (args.explain, "--explain"),
        (args.explain_options, "--explain-options"),
        (args.all, "--all"),
        (args.default.is_some(), "--default"),
        (args.type_.is_some(), "--type"),
        (args.render_as.is_some(), "--render-as"),
        (args.compile, "--compile"),
    ];
    if let Some((_, flag)) = refused.iter().find(|(on, _)| *on) {
        return Err(Error::Usage(format!(
            "{flag} cannot be used with where (see hiera-lookup where --help)"
        )));
    }
    let key = match args.keys.as_slice() {
        [k] => k.clone(),
        [] => return Err(Error::Usage("where needs a key".into())),
        _ => return Err(Error::Usage("where takes one key".into())),
    };
    let lookup = crate::request::Request::new(&crate::request::Flags {
        keys: vec![key.clone()],
        merge: args.merge.merge.clone(),
        knock_out_prefix: args.merge.knock_out_prefix.clone(),
        sort_merged_arrays: args.merge.sort_merged_arrays,
        merge_hash_arrays: args.merge.merge_hash_arrays,
        strict: args.strict.strict.clone(),
        redact: args.redact,
        ..Default::default()
    })?;
    let (merge, strict) = (lookup.merge.clone(), lookup.strict);
    let sources = args.sources().resolve()?;
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
        color: output::use_color(args.color.as_deref())?,
        base: Some(cwd.clone()),
    };
    if !sources.sources.many_nodes() {
        let scope = sources.single_scope(&facts, db.as_ref(), warnings)?;
        let node = args.node.node.clone();
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
    for n in nodes {
        names.push((
            n.name.clone(),
            n.source.as_ref().map(|(_, s)| s.clone()).unwrap_or_default(),
        ));
        if let Some(e) = &n.facts_error {
            fleet.nodes.push(n.name.clone());
            fleet.errors.push((n.name.clone(), e.to_string()));
            continue;
        }
        let mut session = workspace.session_unrefreshed(n.scope);
        if !w.allow_exec {
            session.set_exec(hiera_engine::Exec::Refused {
                how_to_allow: "where over a fleet runs no program a hierarchy names unless given --allow-exec",
            });
        }
        let report = reporter.report(&mut session, &request, Some(n.name.clone()));
        if let Some(r) = session.redactor() {
            secrets.merge(r);
        }
        match report {
            Ok(r) => fleet.add(&n.name, r),
            Err(e) => {
                fleet.nodes.push(n.name.clone());
                fleet.errors.push((n.name, e.to_string()));
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
