//! Links the `hiera-lookup` binary as a position-dependent executable on Linux with glibc.
//!
//! A position-independent executable (rustc's default) is relocated by the dynamic loader at
//! every start: about 15,000 relative relocations here, written into 80 pages that each take
//! a copy-on-write fault. That was 0.28 ms of a 3.3 ms cold lookup (benches/run.sh), for a
//! command whose whole job is one short run. Without PIE the addresses are fixed at link time
//! and the loader writes nothing. The shared libraries keep their randomized addresses; only
//! the executable's own image loses address randomization, as Go's executables do by default.
//! Only the binaries are linked so (`rustc-link-arg-bins`): the library, tests and benches are
//! untouched. Static musl builds (.ci/build-static.sh) need no loader at all and are left alone.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
