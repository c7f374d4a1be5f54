//! Fuzz target `wal_torn_write`: see `fuzz/checks/wal_torn_write.rs`.
#![no_main]

#[path = "../checks/wal_torn_write.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
