//! Fuzz target `sst_block_roundtrip`: see `fuzz/checks/sst_block_roundtrip.rs`.
#![no_main]

#[path = "../checks/sst_block_roundtrip.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
