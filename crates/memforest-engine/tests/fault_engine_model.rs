//! Runs the `engine_model` fuzz check (`fuzz/checks/engine_model.rs`: engine operations
//! with fault-injection countdowns on a `FaultStorage`, against a model) over its seed
//! corpus, so CI exercises it on every run. `regenerate_seed_corpus` (ignored) rewrites
//! the seeds: `cargo test -p memforest-engine --test fault_engine_model -- --ignored`.
#![allow(clippy::unwrap_used, reason = "test code")]

#[path = "../../../fuzz/checks/engine_model.rs"]
mod engine_model;

use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/engine_model")
}

#[test]
fn engine_model_seeds() {
    let mut n = 0;
    let mut total = engine_model::Summary::default();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let s = engine_model::check(&std::fs::read(entry.unwrap().path()).unwrap());
        total.faults_injected += s.faults_injected;
        total.recoveries += s.recoveries;
        total.crashes += s.crashes;
        n += 1;
    }
    assert!(n >= 8, "only {n} seeds");
    // The seeds reach the fault paths, not only the happy path.
    assert!(
        total.faults_injected >= 8 && total.recoveries >= 8,
        "{total:?}"
    );
    assert!(total.crashes >= 10, "{total:?}");
    eprintln!("{n} seeds: {total:?}");
}

/// Op codes of `fuzz/checks/engine_model.rs` (first byte of each two-byte op).
const PUT: u8 = 0;
const PUT_SYNC: u8 = 5;
const DELETE: u8 = 7;
const DROP_TENANT: u8 = 9;
const FLUSH: u8 = 10;
const COMPACT: u8 = 11;
const REOPEN: u8 = 12;
const CRASH: u8 = 13;
const ARM: u8 = 14;

/// A fault argument: `kind` 0..5 (write, sync, rename, dir sync, open), the `nth` next
/// operation (1..=8), sticky or once, ENOSPC or EIO.
fn fault(kind: u8, nth: u8, sticky: bool, eio: bool) -> u8 {
    kind + ((nth - 1) << 3) + if sticky { 0x40 } else { 0 } + if eio { 0x80 } else { 0 }
}

/// Seeds that each reach one part of the check: plain writes and reopen, crash after
/// buffered and after synced writes, flush + compaction + crash, tenant drop + crash, and
/// faults on each operation kind during writes, flushes and compactions.
#[test]
#[ignore = "rewrites fuzz/corpus/engine_model; run when the check's encoding changes"]
fn regenerate_seed_corpus() {
    let puts = |n: u8, op: u8| (0..n).flat_map(move |k| [op, k]).collect::<Vec<u8>>();
    let mut seeds: Vec<(String, Vec<u8>)> = vec![
        (
            "puts_reopen".into(),
            [puts(10, PUT), vec![REOPEN, 0]].concat(),
        ),
        (
            "crash_drop_all_buffered".into(),
            [puts(6, PUT_SYNC), puts(6, PUT), vec![CRASH, 0]].concat(),
        ),
        (
            "crash_prefix_buffered".into(),
            [puts(3, PUT_SYNC), puts(12, PUT), vec![CRASH, 1]].concat(),
        ),
        (
            "flush_compact_crash".into(),
            [
                puts(8, PUT),
                vec![FLUSH, 0],
                puts(8, PUT),
                vec![FLUSH, 0, COMPACT, 0],
                puts(4, PUT),
                vec![CRASH, 1, REOPEN, 0],
            ]
            .concat(),
        ),
        (
            "drop_tenant_crash".into(),
            [
                puts(8, PUT),
                vec![FLUSH, 0, DROP_TENANT, 0, DELETE, 3],
                puts(2, PUT),
                vec![CRASH, 0],
            ]
            .concat(),
        ),
    ];
    let names = ["write", "sync", "rename", "syncdir", "open"];
    for (kind, name) in (0u8..).zip(names) {
        for (sticky, eio) in [(false, true), (true, false)] {
            let arm = fault(kind, 1, sticky, eio);
            let body = [
                puts(4, PUT_SYNC),
                vec![ARM, arm],
                puts(3, PUT),
                vec![FLUSH, 0],
                puts(3, PUT_SYNC),
                vec![FLUSH, 0, COMPACT, 0],
                puts(2, PUT),
                vec![CRASH, 1, REOPEN, 0],
            ]
            .concat();
            let label = if sticky { "enospc_sticky" } else { "eio_once" };
            seeds.push((format!("fault_{name}_{label}"), body));
        }
    }
    let dir = corpus();
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in seeds {
        eprintln!("{name}: {:?}", engine_model::check(&bytes));
        std::fs::write(dir.join(&name), bytes).unwrap();
    }
}
