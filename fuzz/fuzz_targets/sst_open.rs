//! Fuzz target `sst_open`: see `fuzz/checks/sst_open.rs`.
#![no_main]

#[path = "../checks/sst_open.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
