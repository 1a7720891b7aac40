#![no_main]
// A random control repo and change from the bytes, `diff` checked against single lookups on
// both sides. The body is a library function, so that `cargo test --test integration
// fuzz_smoke::diff` runs it on stable.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    hiera_diff::fuzzing::run(data);
});
