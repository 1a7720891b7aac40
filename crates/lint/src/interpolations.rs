//! Rule group 4: interpolations in data (values and hash keys) and in hierarchy locations.
//! Unknown functions, `lookup()`/`alias()`/`hiera()` of keys defined nowhere, keys whose
//! interpolations loop, `alias()` with other text in its string, legacy facts Puppet 8 no
//! longer sets and, with a fleet, facts and variables no node has.

use super::fleet::{FleetFacts, Read};
use super::repo::Repo;
use super::{Region, Sink};
use hiera_engine::interpolation::{parse_expr, tokenize, Method, Token};
use hiera_value::value::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

/// One `%{…}` found somewhere.
struct Site<'a> {
    path: &'a Path,
    /// The data key whose value holds it (`None` in hiera.yaml).
    key: Option<&'a str>,
    whole: String,
    expr: String,
    /// The whole string it is in, and whether the string is exactly this token.
    alone: bool,
    text: &'a str,
    key_line: usize,
}

impl Site<'_> {
    /// Where the `%{…}` is written (the first such text from its key's line on), else its
    /// key's line.
    fn pos(&self) -> Region {
        match super::written::find_text(self.text, &self.whole, self.key_line) {
            Some((line, column)) if !self.whole.contains('\n') => {
                Region::on_line(super::Pos { line, column }, self.whole.chars().count())
            }
            Some(at) => at.into(),
            None => Region::at(self.key_line, 1),
        }
    }
}

fn sites<'a>(
    repo: &'a Repo,
    hiera_texts: &'a [(std::path::PathBuf, String, Vec<String>)],
) -> Vec<Site<'a>> {
    let mut out = Vec::new();
    for f in &repo.files {
        for (k, v) in &f.data {
            let Some(key) = k.as_str() else { continue };
            let key_line = f.key_pos(key).0;
            let mut strings = Vec::new();
            crate::schema::strings_with_interpolations(v, &mut strings, 0);
            for s in strings {
                let toks = tokenize(s);
                let n = toks.len();
                for t in toks {
                    if let Token::Expr { whole, expr } = t {
                        out.push(Site {
                            path: &f.path,
                            key: Some(key),
                            whole: whole.to_string(),
                            expr: expr.to_string(),
                            alone: n == 1,
                            text: &f.text,
                            key_line,
                        });
                    }
                }
            }
        }
    }
    for (path, text, templates) in hiera_texts {
        for t in templates {
            for tok in tokenize(t) {
                if let Token::Expr { whole, expr } = tok {
                    out.push(Site {
                        path,
                        key: None,
                        whole: whole.to_string(),
                        expr: expr.to_string(),
                        alone: false,
                        text,
                        key_line: 1,
                    });
                }
            }
        }
    }
    out
}

/// The hiera.yaml files and their location templates (datadirs included).
fn hiera_templates(repo: &Repo) -> Vec<(std::path::PathBuf, String, Vec<String>)> {
    let mut out = Vec::new();
    for layer in &repo.layers {
        let Some(p) = &layer.hiera_yaml else { continue };
        let text = repo.read_text(p).unwrap_or_default();
        let mut ts = Vec::new();
        for level in &layer.levels {
            ts.extend(level.templates.iter().cloned());
        }
        out.push((p.clone(), text, ts));
    }
    out
}

/// The keys data interpolations look up (their root keys), for the class rules.
pub(crate) fn check(repo: &Repo, sink: &mut Sink) -> HashSet<String> {
    let hiera = hiera_templates(repo);
    let mut refs = HashSet::new();
    // key -> keys its values look up, with one site for the message.
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for site in sites(repo, &hiera) {
        let (method, arg, _) = parse_expr(&site.expr);
        match method {
            Method::Unknown(name) => sink.add(
                site.path,
                site.pos(),
                "interpolation-unknown-function",
                format!(
                    "'{}' calls '{name}', which Hiera does not have (it has lookup, hiera, alias, literal and scope): Puppet fails the lookup",
                    site.whole
                ),
            ),
            Method::Lookup | Method::Hiera | Method::Alias => {
                let root = root_key(arg);
                refs.insert(root.clone());
                if site.key.is_some() && !repo.defined.contains(&root) && !repo.defined_unknown {
                    sink.add(
                        site.path,
                        site.pos(),
                        "interpolation-undefined-key",
                        format!(
                            "'{}' looks up '{root}', which no data file of the repo defines: Puppet fails the lookup",
                            site.whole
                        ),
                    );
                }
                if method == Method::Alias && !site.alone && site.key.is_some() {
                    sink.add(
                        site.path,
                        site.pos(),
                        "alias-not-alone",
                        format!(
                            "'{}' is not the whole string: 'alias' interpolation is only permitted if the expression is equal to the entire string; use lookup() to embed a value in text",
                            site.whole
                        ),
                    );
                }
                if let Some(k) = site.key {
                    graph.entry(k.to_string()).or_default().insert(root);
                }
            }
            Method::Scope => {
                if let Some((legacy, modern)) = legacy_read(arg) {
                    sink.add(
                        site.path,
                        site.pos(),
                        "legacy-fact",
                        format!(
                            "'{}' reads the legacy fact '{legacy}', which Puppet 8 no longer sets (include_legacy_facts is false): use '%{{facts.{modern}}}'",
                            site.whole
                        ),
                    );
                }
            }
            Method::Literal => {}
        }
    }
    recursion(repo, &graph, sink);
    refs
}

/// `a.b.c` → `a`; a quoted first segment keeps its dots.
fn root_key(arg: &str) -> String {
    match hiera_engine::key::split_key(arg) {
        Ok(segs) if !segs.is_empty() => segs[0].to_string(),
        _ => arg.to_string(),
    }
}

/// Every cycle of interpolation lookups, reported once at its smallest key.
fn recursion(repo: &Repo, graph: &BTreeMap<String, BTreeSet<String>>, sink: &mut Sink) {
    let mut reported: HashSet<String> = HashSet::new();
    for start in graph.keys() {
        // Depth-first search for a path back to `start` through keys greater than it, so that
        // each cycle is found from its smallest key only.
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen: HashSet<String> = HashSet::new();
        while let Some((k, path)) = stack.pop() {
            let Some(next) = graph.get(&k) else { continue };
            for n in next {
                if n == start {
                    let cycle = path.join("' → '");
                    if reported.insert(start.clone()) {
                        if let Some(f) = repo
                            .files
                            .iter()
                            .find(|f| f.data.contains_key(&Value::str(start.as_str())))
                        {
                            sink.add(
                                &f.path,
                                f.key_region(start),
                                "interpolation-recursion",
                                format!(
                                    "'{cycle}' → '{start}': these interpolations look each other up, and Puppet fails with 'Recursive lookup detected'"
                                ),
                            );
                        }
                    }
                } else if n > start && seen.insert(n.clone()) {
                    let mut p = path.clone();
                    p.push(n.clone());
                    stack.push((n.clone(), p));
                }
            }
        }
    }
}

/// With a fleet: `%{facts.x}` of a fact no node has, and top-scope variables no node has
/// (Puppet 8's strict mode fails the lookup on them).
pub(crate) fn check_facts(repo: &Repo, fleet: &FleetFacts, sink: &mut Sink) {
    check_facts_with(repo, fleet.nodes, &|read| fleet.any_has(read), sink);
}

/// What [`check_facts`] asks the fleet about, to learn while the nodes are read.
pub(crate) fn facts_asked(repo: &Repo) -> Vec<Read> {
    let asked = std::cell::RefCell::new(Vec::<Read>::new());
    let mut scratch = Sink::new(&repo.root);
    // Everything is "had" here, so nothing is reported: only the questions are kept.
    check_facts_with(
        repo,
        1,
        &|read| {
            let mut asked = asked.borrow_mut();
            if !asked.contains(read) {
                asked.push(read.clone());
            }
            true
        },
        &mut scratch,
    );
    asked.into_inner()
}

fn check_facts_with(repo: &Repo, nodes: usize, any_has: &dyn Fn(&Read) -> bool, sink: &mut Sink) {
    if nodes == 0 {
        return;
    }
    let hiera = hiera_templates(repo);
    for site in sites(repo, &hiera) {
        let (method, arg, _) = parse_expr(&site.expr);
        if method != Method::Scope {
            continue;
        }
        let var = arg.trim_start_matches("::");
        let segs: Vec<&str> = var.split('.').collect();
        let first = segs[0];
        if legacy_read(arg).is_some() {
            continue;
        }
        if first == "facts" && segs.len() > 1 {
            if !any_has(&Read::Fact(
                segs[1..].iter().map(|s| s.to_string()).collect(),
            )) {
                sink.add(
                    site.path,
                    site.pos(),
                    "unknown-fact",
                    format!(
                        "no node of the fleet ({}) has the fact '{}': '{}' gives ''",
                        super::nodes_text(nodes),
                        segs[1..].join("."),
                        site.whole
                    ),
                );
            }
            continue;
        }
        if BUILTIN_VARS.contains(&first) || first.starts_with("settings::") || first.contains("::")
        {
            continue;
        }
        if !any_has(&Read::Var(first.to_string())) {
            let in_location = site.key.is_none();
            let consequence = if in_location {
                "Puppet 8 warns and the level reads no file"
            } else {
                "Puppet 8 (strict mode) fails the lookup with 'Undefined variable'"
            };
            sink.add(
                site.path,
                site.pos(),
                "undefined-variable",
                format!(
                    "'{}': no node of the fleet has a variable or fact '{first}'; {consequence}",
                    site.whole
                ),
            );
        }
    }
}

/// Top-scope variables Puppet sets itself (or a catalog compilation does).
const BUILTIN_VARS: &[&str] = &[
    "facts",
    "trusted",
    "server_facts",
    "environment",
    "name",
    "title",
    "module_name",
    "calling_module",
    "calling_class",
    "calling_class_path",
    "clientcert",
    "clientversion",
    "clientnoop",
    "agent_specified_environment",
    "servername",
    "serverip",
    "serverip6",
    "serverversion",
];

/// The legacy fact a variable reads, and its modern path: `osfamily`, `::osfamily`, and the
/// commonest Puppet 8 migration slip, `facts.osfamily` (the legacy name under `$facts`).
fn legacy_read(var: &str) -> Option<(String, String)> {
    let var = var.trim_start_matches("::");
    let mut segs = var.split('.');
    let first = segs.next()?;
    let name = if first == "facts" {
        segs.next()?
    } else {
        first
    };
    legacy_fact(name).map(|modern| (name.to_string(), modern))
}

/// The modern fact path of a legacy fact Puppet 8 no longer sets.
pub(crate) fn legacy_fact(name: &str) -> Option<String> {
    let fixed = match name {
        "architecture" => "os.architecture",
        "hardwareisa" => "processors.isa",
        "hardwaremodel" => "os.hardware",
        "osfamily" => "os.family",
        "operatingsystem" => "os.name",
        "operatingsystemrelease" => "os.release.full",
        "operatingsystemmajrelease" => "os.release.major",
        "lsbdistcodename" => "os.distro.codename",
        "lsbdistid" => "os.distro.id",
        "lsbdistrelease" => "os.distro.release.full",
        "lsbmajdistrelease" => "os.distro.release.major",
        "lsbminordistrelease" => "os.distro.release.minor",
        "lsbdistdescription" => "os.distro.description",
        "lsbrelease" => "os.distro.specification",
        "ipaddress" => "networking.ip",
        "ipaddress6" => "networking.ip6",
        "macaddress" => "networking.mac",
        "netmask" => "networking.netmask",
        "netmask6" => "networking.netmask6",
        "network" => "networking.network",
        "network6" => "networking.network6",
        "mtu" => "networking.mtu",
        "memorysize" => "memory.system.total",
        "memorysize_mb" => "memory.system.total_bytes",
        "memoryfree" => "memory.system.available",
        "memoryfree_mb" => "memory.system.available_bytes",
        "swapsize" => "memory.swap.total",
        "swapsize_mb" => "memory.swap.total_bytes",
        "swapfree" => "memory.swap.available",
        "swapfree_mb" => "memory.swap.available_bytes",
        "processorcount" => "processors.count",
        "physicalprocessorcount" => "processors.physicalcount",
        "uptime" => "system_uptime.uptime",
        "uptime_days" => "system_uptime.days",
        "uptime_hours" => "system_uptime.hours",
        "uptime_seconds" => "system_uptime.seconds",
        "selinux" => "os.selinux.enabled",
        "selinux_enforced" => "os.selinux.enforced",
        "selinux_policyversion" => "os.selinux.policy_version",
        "selinux_current_mode" => "os.selinux.current_mode",
        "selinux_config_mode" => "os.selinux.config_mode",
        "selinux_config_policy" => "os.selinux.config_policy",
        "rubysitedir" => "ruby.sitedir",
        "rubyversion" => "ruby.version",
        "rubyplatform" => "ruby.platform",
        "manufacturer" => "dmi.manufacturer",
        "productname" => "dmi.product.name",
        "serialnumber" => "dmi.product.serial_number",
        "uuid" => "dmi.product.uuid",
        "boardmanufacturer" => "dmi.board.manufacturer",
        "boardproductname" => "dmi.board.product",
        "boardserialnumber" => "dmi.board.serial_number",
        "bios_vendor" => "dmi.bios.vendor",
        "bios_version" => "dmi.bios.version",
        "bios_release_date" => "dmi.bios.release_date",
        "chassistype" => "dmi.chassis.type",
        "chassisassettag" => "dmi.chassis.asset_tag",
        "macosx_productname" => "os.macosx.product",
        "macosx_productversion" => "os.macosx.version.full",
        "macosx_buildversion" => "os.macosx.build",
        "system32" => "os.windows.system32",
        "zonename" => "solaris_zones.current",
        "xendomains" => "xen.domains",
        "sshrsakey" => "ssh.rsa.key",
        "sshdsakey" => "ssh.dsa.key",
        "sshecdsakey" => "ssh.ecdsa.key",
        "sshed25519key" => "ssh.ed25519.key",
        "dhcp_servers" => "networking.dhcp",
        "interfaces" => "networking.interfaces",
        "blockdevices" => "disks",
        "gid" => "identity.group",
        "id" => "identity.user",
        _ => {
            // Per-interface and per-device facts.
            for (prefix, modern) in [
                ("ipaddress6_", "ip6"),
                ("ipaddress_", "ip"),
                ("macaddress_", "mac"),
                ("netmask6_", "netmask6"),
                ("netmask_", "netmask"),
                ("network6_", "network6"),
                ("network_", "network"),
                ("mtu_", "mtu"),
            ] {
                if let Some(iface) = name.strip_prefix(prefix) {
                    return Some(format!("networking.interfaces.{iface}.{modern}"));
                }
            }
            if let Some(n) = name.strip_prefix("processor") {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    return Some(format!("processors.models.{n}"));
                }
            }
            if let Some(rest) = name.strip_prefix("blockdevice_") {
                if let Some((dev, what)) = rest.rsplit_once('_') {
                    return Some(format!("disks.{dev}.{what}"));
                }
            }
            return None;
        }
    };
    Some(fixed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy() {
        assert_eq!(legacy_fact("osfamily").as_deref(), Some("os.family"));
        assert_eq!(
            legacy_read("facts.osfamily"),
            Some(("osfamily".into(), "os.family".into()))
        );
        assert_eq!(
            legacy_read("::operatingsystem"),
            Some(("operatingsystem".into(), "os.name".into()))
        );
        assert_eq!(legacy_read("facts.os.family"), None);
        assert_eq!(
            legacy_fact("ipaddress_eth0").as_deref(),
            Some("networking.interfaces.eth0.ip")
        );
        assert_eq!(
            legacy_fact("processor0").as_deref(),
            Some("processors.models.0")
        );
        assert_eq!(legacy_fact("fqdn"), None);
        assert_eq!(legacy_fact("os"), None);
        assert_eq!(legacy_fact("processors"), None);
    }

    #[test]
    fn roots() {
        assert_eq!(root_key("a::b.c.0"), "a::b");
        assert_eq!(root_key("plain"), "plain");
    }
}
