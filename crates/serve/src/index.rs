//! The overview's index of the whole fleet: what every node reaches and sees (computed by
//! `views`, kept by `State` while its inputs are unchanged).

use hiera_engine::redact::Redactor;
use std::collections::BTreeMap;

/// What every node reaches and sees, for the overview: computed once per state of its inputs
/// (the nodes, the data files, the hiera.yaml files; `State::fleet_index` keeps it).
#[derive(Debug, Default)]
pub struct FleetIndex {
    /// Each data file the nodes reach (that exists), with the nodes that reach it (their
    /// places in the fleet).
    pub(crate) reach: BTreeMap<String, Vec<u32>>,
    /// Each key the nodes see, with how many nodes see it.
    pub(crate) keys: BTreeMap<String, usize>,
    /// What the nodes' lookups decrypted.
    pub(crate) secrets: Redactor,
}
