//! Fuzz target `tree_page_decode`: see `fuzz/checks/tree_page_decode.rs`.
#![no_main]

#[path = "../checks/tree_page_decode.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
