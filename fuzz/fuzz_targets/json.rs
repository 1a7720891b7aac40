#![no_main]
// The body is a library function, so that `cargo test --test fuzz_smoke` runs it on stable.
libfuzzer_sys::fuzz_target!(|data: &[u8]| hiera_engine::fuzzing::run("json", data));
