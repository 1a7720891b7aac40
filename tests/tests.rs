//! The integration tests, in one binary (ripgrep's layout): a change to one crate relinks one
//! test binary instead of twelve. One module per area; `cargo test --test integration diff::`
//! runs one area. The conformance replay (tests/conformance.rs) stays a binary of its own.

#[path = "common/eyaml.rs"]
mod eyaml;
#[path = "common/scratch.rs"]
mod scratch_tree;
#[path = "common/where_check.rs"]
mod where_check;

mod action;
mod backends;
mod batch;
mod cli;
mod completion;
mod diff;
mod facts;
mod fuzz_smoke;
mod help;
mod hostile;
mod lint;
mod lsp;
mod node_context;
mod puppetdb;
mod robustness;
mod secrets;
mod serve;
mod serve_hostile;
mod shared_flags;
mod tree;
mod where_cmd;
