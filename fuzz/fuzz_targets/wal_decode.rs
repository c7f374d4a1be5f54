//! Fuzz target `wal_decode`: see `fuzz/checks/wal_decode.rs`.
#![no_main]

#[path = "../checks/wal_decode.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
