//! Helpers of the tests that drive the built `memforest` binary.
#![allow(
    dead_code,
    reason = "each test binary includes this module and uses its own part of it"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A file of `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A `file://` object-store location in the folder `objects` of `tmp` (created): its URL.
pub fn object_store_url(tmp: &Path) -> String {
    let objects = tmp.join("objects");
    std::fs::create_dir_all(&objects).unwrap();
    format!("file://{}", objects.display())
}

/// Runs `memforest args`.
pub fn memforest(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memforest"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs a command that must succeed; returns its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = memforest(args);
    assert!(
        out.status.success(),
        "memforest {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail without panicking; returns its stdout and stderr.
pub fn fails(args: &[&str]) -> String {
    let out = memforest(args);
    assert!(!out.status.success(), "memforest {args:?} succeeded");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    text
}
