//! Kill loop: a child process appends to a WAL and prints each acknowledged seqno; the
//! parent kills it (SIGKILL) at a random moment, reopens the log in the default recovery
//! mode, and checks that it opens, that every acknowledged batch is there, and that seqnos
//! are dense. Repeated on the same directory, so each round also recovers the previous
//! round's torn tail (RocksDB issue 1351: a kill loop must always reopen).
#![allow(clippy::unwrap_used, reason = "test code")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use memforest_wal::{Durability, RecoveryMode, Wal, WalOptions, WriteBatch};
use rand::Rng;

const DIR_ENV: &str = "MEMFOREST_WAL_CRASH_DIR";

fn batch(seqno_hint: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    // Mixed sizes, some spanning blocks, so kills land inside fragmented records too.
    let len = [10usize, 300, 5000, 40_000][(seqno_hint % 4) as usize];
    b.push(
        1,
        seqno_hint.to_le_bytes(),
        vec![(seqno_hint % 251) as u8; len],
    );
    b
}

fn options() -> WalOptions {
    WalOptions {
        segment_size: 256 * 1024,
        recovery_mode: RecoveryMode::TolerateCorruptedTail,
        ..WalOptions::default()
    }
}

/// The child: appends (for at most 10 s) printing `ack <seqno>` after each acknowledged append.
#[test]
#[ignore = "child process of kill_loop_always_reopens"]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(DIR_ENV) else {
        return;
    };
    let (wal, _) = Wal::open(&dir, options()).unwrap();
    let mut out = std::io::stdout().lock();
    // Bounded, in case the parent dies without killing us.
    let start = Instant::now();
    for i in (0u64..).take_while(|_| start.elapsed() < Duration::from_secs(10)) {
        let durability = if i % 2 == 0 {
            Durability::Buffered
        } else {
            Durability::SyncData
        };
        let seqno = wal
            .append(&batch(wal.last_seqno() + 1), durability)
            .unwrap();
        writeln!(out, "ack {seqno}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_loop_always_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand::thread_rng();
    let mut acked = Vec::new();
    for round in 0..6 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash_child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let kill_after = Duration::from_millis(rng.gen_range(20..200));
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .filter_map(|l| l.strip_prefix("ack ").and_then(|s| s.parse::<u64>().ok()))
                .collect::<Vec<u64>>()
        });
        let start = Instant::now();
        while start.elapsed() < kill_after {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        acked.extend(reader.join().unwrap());

        let (wal, rec) = Wal::open(dir.path(), options())
            .unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        let mut next = 1;
        for b in &rec.batches {
            assert_eq!(b.first_seqno, next, "round {round}: seqnos not dense");
            assert_eq!(
                b.batch,
                batch(b.first_seqno),
                "round {round}: wrong contents"
            );
            next += b.batch.seqno_span();
        }
        let recovered: std::collections::HashSet<u64> =
            rec.batches.iter().map(|b| b.first_seqno).collect();
        for s in &acked {
            assert!(
                recovered.contains(s),
                "round {round}: acknowledged seqno {s} lost"
            );
        }
        assert_eq!(wal.last_seqno(), next - 1);
    }
    assert!(!acked.is_empty(), "the child never acknowledged a write");
}
