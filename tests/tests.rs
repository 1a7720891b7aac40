//! The integration tests, in one binary (ripgrep's layout): a change to one crate relinks one
//! test binary instead of twelve. One module per area; `cargo test --test integration diff::`
//! runs one area. The conformance replay (tests/conformance.rs) stays a binary of its own.

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
mod puppetdb;
mod robustness;
mod shared_flags;
mod where_cmd;
