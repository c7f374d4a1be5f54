//! Crash test: a child process (this test binary re-executed) writes numbered `SyncData`
//! batches and prints each acknowledged number; the parent SIGKILLs it at a random moment,
//! reopens, and checks that every acknowledged batch is present, every batch is whole, and
//! there are no holes. The child uses a small memtable so kills land in flushes and
//! compactions too.
//!
//! `MEMFOREST_CRASH_ITERS` sets the number of kill/reopen rounds (default 5).

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::io::{BufRead, BufReader};
use std::ops::Bound;
use std::process::{Command, Stdio};
use std::time::Duration;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};
use rand::Rng;

const CHILD_ENV: &str = "MEMFOREST_CRASH_CHILD_DIR";

fn options() -> Options {
    Options {
        memtable_size: 32 << 10,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 128 << 10,
        target_file_size: 32 << 10,
        ..Options::default()
    }
}

fn tenant() -> TenantId {
    TenantId::new("crash").unwrap()
}

fn number_key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// The numbers present in `table`, in order.
fn present(db: &Db, table: Table) -> Vec<u64> {
    db.scan(&tenant(), table, Bound::Unbounded, Bound::Unbounded, None)
        .unwrap()
        .map(|r| {
            let (k, v) = r.unwrap();
            let n = u64::from_be_bytes(k[..].try_into().unwrap());
            assert_eq!(&v[..], format!("value-{n}").as_bytes());
            n
        })
        .collect()
}

fn child(dir: &str) {
    let db = Db::open(dir, options()).unwrap();
    let mut next = present(&db, Table::new(3)).len() as u64;
    loop {
        let mut b = WriteBatch::new();
        let value = format!("value-{next}");
        // Three ops in two tables: the batch must appear whole or not at all.
        b.put(
            &tenant(),
            Table::new(3),
            &number_key(next),
            value.as_bytes(),
        );
        b.put(
            &tenant(),
            Table::new(2),
            &number_key(next),
            value.as_bytes(),
        );
        b.put(&tenant(), Table::new(1), b"last", &number_key(next));
        db.write(&b, Durability::SyncData).unwrap();
        println!("{next}");
        next += 1;
    }
}

#[test]
fn sigkill_never_loses_acknowledged_batches() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let iters: usize = std::env::var("MEMFOREST_CRASH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::thread_rng();
    let mut max_acked: Option<u64> = None;
    for round in 0..iters {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sigkill_never_loses_acknowledged_batches",
                "--nocapture",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut acked = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(n) = line.trim().parse::<u64>() {
                    acked.push(n);
                }
            }
            acked
        });
        std::thread::sleep(Duration::from_millis(rng.gen_range(200..1200)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        let acked = reader.join().unwrap();
        if let Some(&last) = acked.last() {
            max_acked = Some(max_acked.map_or(last, |m| m.max(last)));
        }
        let db = Db::open(dir.path(), options()).unwrap();
        let facts = present(&db, Table::new(3));
        let turns = present(&db, Table::new(2));
        assert_eq!(facts, turns, "round {round}: a batch appeared in part");
        let expected: Vec<u64> = (0..facts.len() as u64).collect();
        assert_eq!(facts, expected, "round {round}: holes in the sequence");
        if let Some(m) = max_acked {
            assert!(
                facts.len() as u64 > m,
                "round {round}: acknowledged batch {m} lost ({} present)",
                facts.len()
            );
        }
        let last = db.get(&tenant(), Table::new(1), b"last").unwrap();
        let want = facts.last().map(|n| number_key(*n).to_vec());
        assert_eq!(last.map(|v| v.to_vec()), want, "round {round}");
        db.close().unwrap();
    }
    assert!(max_acked.is_some(), "the child never acknowledged a batch");
}
