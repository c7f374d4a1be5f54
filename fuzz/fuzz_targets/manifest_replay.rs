//! Fuzz target `manifest_replay`: see `fuzz/checks/manifest_replay.rs`.
#![no_main]

#[path = "../checks/manifest_replay.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
