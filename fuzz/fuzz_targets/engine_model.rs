//! Fuzz target `engine_model`: see `fuzz/checks/engine_model.rs`.
#![no_main]

#[path = "../checks/engine_model.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check::check(data);
});
