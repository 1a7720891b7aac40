//! The lookup engine of hiera-lookup: resolve Hiera keys exactly as `puppet lookup` (Puppet 8)
//! does, without Puppet or Ruby. The `hiera-lookup` binary and its other library crates (facts
//! sources, lint, diff) are clients of this one; it prints nothing and parses no flags.
//!
//! Data flows one way: the node's variables ([`Scope`], from facts) and the layers
//! ([`Layers`], from [`EnvOptions`]) make a [`Session`]; [`Session::lookup`] searches the
//! hierarchies (hiera.yaml v3/v4/v5), calls the backends (built-in, or yours:
//! [`backend::custom`]), merges ([`MergeStrategy`]) and gives an [`Outcome`]; [`Finish`]
//! applies `--default` and `--type`, and [`Format`] renders the answer as `puppet lookup`
//! prints it. `Workspace` keeps parsed files across many such questions.
//!
//! # A single lookup
//!
//! ```
//! use hiera_engine::{EnvOptions, Outcome, Scope, Session, Settings};
//! use hiera_formats::{render, yaml};
//! use hiera_value::Value;
//! # let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
//!
//! // Control-repo mode: the directory's hiera.yaml is the environment layer.
//! let env = EnvOptions { cwd: fixtures.join("environments/production"), ..Default::default() };
//! let Value::Hash(facts) = yaml::load("{networking: {domain: example.com}, role: web}")? else {
//!     unreachable!()
//! };
//! let scope = Scope::from_facts(facts, &env.environment_name());
//! let mut session = Session::new(scope, env.layers()?, Settings::default());
//! let Outcome::Found(servers) = session.lookup(&["ntp::servers".into()], None)? else {
//!     panic!("not found");
//! };
//! assert_eq!(render::to_json(&servers)?, r#"["0.pool.ntp.org","1.pool.ntp.org"]"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A batch: many nodes × keys in one process
//!
//! A [`Workspace`] opens the control repo once; data files are parsed once and shared by
//! every node; nodes run on `threads` workers and their answers arrive in node order.
//!
//! ```
//! use hiera_engine::batch::{Batch, Keys, Node};
//! use hiera_engine::{Answer, EnvOptions, Finish, Scope, Settings, Workspace};
//! use hiera_value::{Map, Value};
//! # let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
//!
//! let env = EnvOptions { cwd: fixtures.join("environments/production"), ..Default::default() };
//! let node = |file: &str, role: &str| -> hiera_engine::Result<Node> {
//!     let mut facts = Map::default();
//!     facts.insert(Value::str("role"), Value::str(role));
//!     Ok(Node {
//!         name: file.into(),
//!         source: None,
//!         scope: Scope::from_facts(facts, "production"),
//!         facts_error: None,
//!         workspace: None,
//!     })
//! };
//! let workspace = Workspace::open(env, Settings::default())?;
//! let batch = Batch {
//!     merge: None,
//!     keys: Keys::List(vec!["profile::web::port".into()]),
//!     threads: 2,
//!     finish: Finish::default(),
//!     format: None,
//! };
//! let mut ports = Vec::new();
//! batch.run(&workspace, vec![node("web01.yaml", "web")?, node("db01.json", "db")?], |_, records| {
//!     for r in records {
//!         ports.push((r.node, r.outcome.unwrap()));
//!     }
//! });
//! assert_eq!(ports, [
//!     ("web01.yaml".to_string(), Answer::Found(Value::Int(8080))),
//!     ("db01.json".to_string(), Answer::Found(Value::Int(80))),
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A custom backend
//!
//! A hierarchy entry names a function (`lookup_key: vault_lookup`); register a Rust backend
//! under that name, as Puppet's custom backend functions are, and it answers with the
//! entry's `options` (plus `path` or `uri` for a location).
//!
//! ```
//! use hiera_engine::backend::custom::{Backends, LookupKeyBackend};
//! use hiera_engine::{EnvOptions, Outcome, Scope, Session, Settings};
//! use hiera_value::{Map, Value};
//! use std::sync::Arc;
//!
//! struct Secrets;
//! impl LookupKeyBackend for Secrets {
//!     fn lookup_key(&self, key: &str, options: &Map) -> Result<Option<Value>, String> {
//!         let mount = options.get(&Value::str("mount")).and_then(Value::as_str).unwrap_or("?");
//!         Ok(key.starts_with("secret::").then(|| Value::str(format!("{mount}/{key}"))))
//!     }
//! }
//!
//! // A control repo whose hiera.yaml uses the backend.
//! let repo = std::env::temp_dir().join(format!("hiera-lookup-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&repo)?;
//! std::fs::write(repo.join("hiera.yaml"), "version: 5
//! hierarchy:
//!   - name: Vault
//!     lookup_key: vault_lookup
//!     options: { mount: kv }
//! ")?;
//! let env = EnvOptions { cwd: repo.clone(), ..Default::default() };
//! let mut backends = Backends::new();
//! backends.register_lookup_key("vault_lookup", Arc::new(Secrets));
//! let scope = Scope::from_facts(Map::default(), "production");
//! let mut session = Session::new(scope, env.layers()?, Settings::default());
//! session.set_backends(backends);
//! let found = session.lookup(&["secret::db".into()], None);
//! let missing = session.lookup(&["other".into()], None);
//! std::fs::remove_dir_all(&repo)?;
//! assert_eq!(found?, Outcome::Found(Value::str("kv/secret::db")));
//! assert_eq!(missing?, Outcome::NotFound);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Deep merges as Puppet does them are available on their own, too:
//!
//! ```
//! use hiera_engine::MergeStrategy;
//! use hiera_formats::{render, yaml};
//!
//! // Lower-priority keys first, arrays lower-first.
//! let node = yaml::load("{users: {bob: {shell: /bin/zsh}}, pkgs: [vim]}")?;
//! let common = yaml::load("{users: {alice: {uid: 1}, bob: {uid: 2}}, pkgs: [curl]}")?;
//! let deep = MergeStrategy::from_value(&"deep".into())?;
//! let merged = deep.merge(node, common)?;
//! assert_eq!(
//!     render::to_json(&merged)?,
//!     r#"{"users":{"alice":{"uid":1},"bob":{"uid":2,"shell":"/bin/zsh"}},"pkgs":["curl","vim"]}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod answer;
pub mod backend;
pub mod batch;
pub mod config;
pub mod engine;
pub mod environment;
pub mod error;
pub mod explain;
pub mod fleet;
pub mod format;
pub mod fs;
/// The fuzz targets' bodies (fuzz/, tests/fuzz_smoke.rs), behind the `fuzzing` feature: not
/// part of the API.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod hostinfo;
pub mod interpolation;
pub mod key;
pub mod location;
pub mod merge;
pub mod query;
pub mod redact;
pub mod scope;
pub mod slim;
pub mod store;
pub mod where_;
pub mod workers;
pub mod workspace;

pub use answer::{Answer, Finish};
pub use engine::{Exec, Layers, Outcome, Secrets, Session, Settings};
pub use environment::EnvOptions;
pub use error::{Error, Result};
pub use explain::Explainer;
pub use format::Format;
pub use merge::MergeStrategy;
pub use scope::{Scope, Strict};
pub use workspace::Workspace;
