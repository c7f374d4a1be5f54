//! `memforest bench`: every workload at a tiny size through the built binary; the `--json`
//! output parses, has the documented keys, and its numbers agree with each other (every
//! storage peer holds the same records; batched refresh never calls more than eager).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::process::Command;

use serde_json::Value;

fn bench(args: &[&str]) -> Value {
    bench_logged(args).0
}

/// The JSON report and the progress lines (stderr).
fn bench_logged(args: &[&str]) -> (Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memforest"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memforest bench {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    (v, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn keys(v: &Value, want: &[&str]) {
    for k in want {
        assert!(v.get(k).is_some(), "missing key {k:?} in {v}");
    }
}

fn rows<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key].as_array().unwrap()
}

#[test]
fn storage_peers_hold_the_same_records() {
    let r = bench(&[
        "storage",
        "--num",
        "300",
        "--sync-num",
        "20",
        "--writers",
        "1,4",
    ]);
    keys(
        &r,
        &[
            "num",
            "batch",
            "reps",
            "key_bytes",
            "value_bytes",
            "rows",
            "ratios",
        ],
    );
    let rows = rows(&r, "rows");
    // 4 engines x (fillseq, fillrandom, overwrite, 3 reads, 2 fillsync).
    assert_eq!(rows.len(), 32);
    for row in rows {
        keys(
            row,
            &[
                "workload",
                "engine",
                "class",
                "class_note",
                "writers",
                "ops",
                "seconds",
                "micros_per_op",
                "ops_per_sec",
                "mb_per_sec",
                "p50_us",
                "p99_us",
                "p999_us",
                "found",
                "write_amp",
                "space_amp",
            ],
        );
        let writes = row["found"].is_null();
        assert_eq!(writes, !row["write_amp"].is_null(), "{row}");
        assert!(row["p50_us"].as_f64() <= row["p999_us"].as_f64());
    }
    for w in ["readrandom", "readseq", "seekrandom"] {
        let found: Vec<u64> = rows
            .iter()
            .filter(|r| r["workload"] == w)
            .map(|r| r["found"].as_u64().unwrap())
            .collect();
        assert_eq!(found.len(), 4, "{w}");
        assert!(
            found[0] > 0 && found.iter().all(|&f| f == found[0]),
            "{w}: {found:?}"
        );
    }
    // 6 workloads with one writer + fillsync with 4, against 3 peers.
    assert_eq!(rows_len(&r, "ratios"), 7 * 3 + 3);
    let redb = rows
        .iter()
        .find(|r| r["engine"] == "redb" && r["class"] == "buffered")
        .unwrap();
    assert!(redb["class_note"].as_str().unwrap().starts_with("weaker"));
}

fn rows_len(v: &Value, key: &str) -> usize {
    rows(v, key).len()
}

#[test]
fn llm_batched_refresh_calls_at_most_eager() {
    let r = bench(&[
        "llm",
        "--facts",
        "200",
        "--tenants",
        "2",
        "--per-session",
        "25",
        "--k",
        "4,16",
        "--batch",
        "8,64",
        "--latency-ms",
        "1",
        "--pool",
        "4",
    ]);
    keys(
        &r,
        &[
            "facts",
            "tenants",
            "per_session",
            "latency_ms",
            "pool",
            "rows",
        ],
    );
    assert_eq!(rows_len(&r, "rows"), 4);
    for row in rows(&r, "rows") {
        keys(
            row,
            &[
                "k",
                "batch",
                "batched",
                "eager",
                "global",
                "summaries",
                "batched_over_eager",
                "calls_saved",
                "wall_over_bound",
                "parallel_speedup",
                "batched_calls_per_summary",
            ],
        );
        let b = row["batched"]["calls"].as_u64().unwrap();
        let e = row["eager"]["calls"].as_u64().unwrap();
        assert!(b > 0 && b <= e, "{row}");
        assert_eq!(row["global"]["calls"], 8, "one rewrite per session");
        assert!(
            row["batched"]["wall_seconds"].as_f64().unwrap()
                >= row["batched"]["bound_seconds"].as_f64().unwrap()
        );
        assert!(row["eager"]["wall_seconds"].is_null());
    }
}

#[test]
fn ingest_and_query_report_their_sizes() {
    let (r, log) = bench_logged(&[
        "ingest",
        "--sizes",
        "400",
        "--tenants",
        "4",
        "--warmup",
        "100",
        "--resident-mib",
        "64",
        "--summarizer",
        "extractive",
        "--embedder",
        "none",
    ]);
    assert!(log.contains("warm-up: 100 facts"), "{log}");
    keys(
        &r,
        &[
            "tenants",
            "per_session",
            "late",
            "summarizer",
            "embedder",
            "resident_mib",
            "sizes",
        ],
    );
    assert_eq!(r["resident_mib"], 64);
    // The report names the models the children ran with (passed on as flags).
    assert_eq!(r["summarizer"], "extractive");
    assert_eq!(r["embedder"], "none");
    assert_eq!(rows(&r, "sizes").len(), 1, "the warm-up's row is discarded");
    let s = &rows(&r, "sizes")[0];
    keys(
        s,
        &[
            "facts",
            "sessions",
            "seconds",
            "facts_per_sec",
            "close_seconds",
            "peak_rss_bytes",
            "disk_bytes",
            "disk_bytes_per_fact",
            "fact_bytes",
            "decades",
            "cost_ratio_vs_1e4",
            "settle_seconds",
            "settled_ratio_vs_1e4",
        ],
    );
    assert_eq!(s["facts"], 400);
    assert_eq!(s["sessions"], 20);
    assert!(s["disk_bytes"].as_u64().unwrap() > 400 * 100);
    let decades = rows(s, "decades");
    assert_eq!(decades.len(), 1);
    keys(
        &decades[0],
        &[
            "facts",
            "us_per_fact",
            "cpu_us_per_fact",
            "ingest_cpu_us_per_fact",
            "stall_us_per_fact",
            "settled_us_per_fact",
            "settled_cpu_us_per_fact",
            "settled_thread_cpu_us_per_fact",
        ],
    );
    let d = &decades[0];
    let f = |k: &str| d[k].as_f64().unwrap();
    assert!(f("stall_us_per_fact") >= 0.0);
    // The settled span is the ingest span and then the wait for its background work.
    assert!(f("settled_us_per_fact") >= f("us_per_fact"), "{d}");
    assert!(f("settled_cpu_us_per_fact") >= f("cpu_us_per_fact"), "{d}");
    // The child's main thread ingests (and is named after the binary).
    let ingesting = &d["settled_thread_cpu_us_per_fact"]["memforest"];
    assert!(ingesting.as_f64().is_some_and(|us| us >= 0.0), "{d}");
    // The settling thread has exited by then; its CPU is recorded all the same.
    assert!(
        d["settled_thread_cpu_us_per_fact"]["bench-settle"].is_number(),
        "{d}"
    );
    // 400 facts fit in one memtable: only settling flushes them before the bytes are read.
    assert!(s["written"]["flush"].as_f64().unwrap() > 0.0, "{s}");

    let q = bench(&[
        "query",
        "--sizes",
        "150",
        "--queries",
        "20",
        "--warmup",
        "unseen",
    ]);
    keys(&q, &["queries", "warmup", "rows"]);
    assert_eq!(q["warmup"], "unseen");
    let row = &rows(&q, "rows")[0];
    keys(
        row,
        &[
            "facts",
            "build_seconds",
            "memforest",
            "flat_bm25",
            "p50_ratio",
            "p99_ratio",
        ],
    );
    assert_eq!(row["facts"], 150);
    assert!(row["memforest"]["p50_us"].as_f64().unwrap() > 0.0);
}

/// A residency budget of 0 MiB would release every file on every read: refused before any
/// store is made, by both workloads that take it.
#[test]
fn a_zero_residency_budget_is_refused() {
    for workload in ["ingest", "query"] {
        let out = Command::new(env!("CARGO_BIN_EXE_memforest"))
            .args(["bench", workload, "--resident-mib", "0"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{workload}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--resident-mib"), "{workload}: {err}");
    }
}
