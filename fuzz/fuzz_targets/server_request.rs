//! Fuzz target `server_request`: see `fuzz/checks/server_request.rs`.
#![no_main]

#[path = "../checks/server_request.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
