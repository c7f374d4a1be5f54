//! The lock file: a second open fails clearly, in this process or another; a lock held by
//! a killed process does not block the next open.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use memforest_engine::{Db, Error, Options};

const CHILD_ENV: &str = "MEMFOREST_LOCK_CHILD_DIR";

#[test]
fn second_open_in_process_is_refused_until_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Locked { path }) => assert!(path.ends_with("LOCK")),
        other => panic!("expected Locked, got {other:?}"),
    }
    db.close().unwrap();
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn lock_of_killed_process_is_recovered() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let _db = Db::open(&dir, Options::default()).unwrap();
        println!("ready");
        std::thread::sleep(std::time::Duration::from_secs(60));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "lock_of_killed_process_is_recovered",
            "--nocapture",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().contains("ready")));
    assert!(matches!(
        Db::open(dir.path(), Options::default()),
        Err(Error::Locked { .. })
    ));
    child.kill().unwrap();
    child.wait().unwrap();
    Db::open(dir.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
}
