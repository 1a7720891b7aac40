//! `where` over many nodes: for each definition, the nodes it wins (or contributes) for, and
//! the definitions no node reaches.

use super::{Answer, Definition, OptionEntry, Report, Role};

/// One definition across the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetDefinition {
    /// As the first node that reaches it sees it (its role: that node's).
    pub definition: Definition,
    /// Nodes, by role.
    /// Nodes the definition wins for.
    pub wins: Vec<String>,
    /// Nodes whose merge it contributes to.
    pub contributes: Vec<String>,
    /// Nodes for which a higher-priority definition decides.
    pub shadowed: Vec<String>,
    /// Nodes whose deep merge knocks it out.
    pub knocked_out: Vec<String>,
    /// How many nodes reach the definition's file.
    pub reached_by: usize,
    /// Its earliest place in a node's lookup order: the nodes share the hierarchy, so this
    /// puts the definitions in hierarchy order.
    pub first_order: Option<usize>,
}

/// `where` for a key over a set of nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetReport {
    /// The key asked for.
    pub key: String,
    /// Every node, in the order they were reported.
    pub nodes: Vec<String>,
    /// Every definition any node reaches or sees, first seen first.
    pub definitions: Vec<FleetDefinition>,
    /// The lookup_options entries that apply to the key.
    pub option_entries: Vec<OptionEntry>,
    /// Nodes that find nothing.
    pub not_found: Vec<String>,
    /// Nodes whose lookup fails, with the error.
    pub errors: Vec<(String, String)>,
    /// Files that could not be read, once each.
    pub warnings: Vec<String>,
}

impl FleetReport {
    /// An empty report for `key`.
    pub fn new(key: &str) -> FleetReport {
        FleetReport {
            key: key.to_string(),
            nodes: Vec::new(),
            definitions: Vec::new(),
            option_entries: Vec::new(),
            not_found: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Adds one node's report.
    pub fn add(&mut self, node: &str, report: Report) {
        self.nodes.push(node.to_string());
        match &report.answer {
            Answer::NotFound => self.not_found.push(node.to_string()),
            Answer::Error(e) => self.errors.push((node.to_string(), e.clone())),
            Answer::Found(_) => {}
        }
        for d in report.definitions {
            let i = match self
                .definitions
                .iter()
                .position(|f| f.definition.file == d.file && f.definition.path == d.path)
            {
                Some(i) => i,
                None => {
                    self.definitions.push(FleetDefinition {
                        definition: d.clone(),
                        wins: Vec::new(),
                        contributes: Vec::new(),
                        shadowed: Vec::new(),
                        knocked_out: Vec::new(),
                        reached_by: 0,
                        first_order: None,
                    });
                    self.definitions.len() - 1
                }
            };
            let f = &mut self.definitions[i];
            if let Some(o) = d.order {
                f.first_order = Some(f.first_order.map_or(o, |x| x.min(o)));
            }
            // Shown as a node that reaches it sees it.
            if f.reached_by == 0 && d.role != Role::NotReached {
                f.definition = d.clone();
            }
            let list = match d.role {
                Role::Wins => &mut f.wins,
                Role::Contributes => &mut f.contributes,
                Role::Shadowed => &mut f.shadowed,
                Role::KnockedOut => &mut f.knocked_out,
                Role::NotReached => continue,
            };
            list.push(node.to_string());
            f.reached_by += 1;
        }
        for o in report.option_entries {
            if !self
                .option_entries
                .iter()
                .any(|x| x.file == o.file && x.name == o.name)
            {
                self.option_entries.push(o);
            }
        }
        for w in report.warnings {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }

    /// Calls the node reported as `from` `to` everywhere (a name two nodes share, told apart
    /// by the source of its facts once the second is seen).
    pub fn rename(&mut self, from: &str, to: &str) {
        let rename = |list: &mut Vec<String>| {
            for n in list.iter_mut().filter(|n| *n == from) {
                *n = to.to_string();
            }
        };
        rename(&mut self.nodes);
        rename(&mut self.not_found);
        for d in &mut self.definitions {
            rename(&mut d.wins);
            rename(&mut d.contributes);
            rename(&mut d.shadowed);
            rename(&mut d.knocked_out);
        }
        for (n, _) in self.errors.iter_mut().filter(|(n, _)| n == from) {
            *n = to.to_string();
        }
    }

    /// Reached definitions first, in hierarchy order (the lookup order of the nodes that
    /// reach them), then those no node reaches.
    pub fn finish(&mut self) {
        self.definitions
            .sort_by_key(|f| (f.reached_by == 0, f.first_order.unwrap_or(usize::MAX)));
    }
}
