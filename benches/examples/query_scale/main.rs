//! Query latency at scale, for profiling: opens (loading it once; see `workload.rs`) the
//! `query` bench's store of N facts, then times `Memory::query` (lexical, k = 10, beam 10) and a
//! flat in-memory BM25 over every fact on the same queries, interleaved, after one untimed
//! warm-up pass, and prints p50/p99 of each and their ratios.
//!
//! `cargo run --release -p memforest-benches --example query_scale -- N [QUERIES] [ROUNDS]
//! [unseen]`
//!
//! `ROUNDS` (default 1) repeats the timed queries, for a profiler (`perf record
//! --call-graph dwarf`, `valgrind --tool=callgrind`): the load is paid once per N. By
//! default the warm-up pass runs the timed queries themselves, so the read path's caches
//! hold what they touch (as far as their budgets allow); `unseen` warms up on as many
//! other queries of the same workload instead, so the timed queries find in the caches
//! only what they share with others (tree tops, hot cells, frequent terms' postings).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "example binary: a failure aborts the run"
)]

mod workload;

use std::time::{Duration, Instant};

use memforest::recall::Query;

fn arg(i: usize, default: usize) -> usize {
    std::env::args()
        .nth(i)
        .map_or(default, |a| a.parse().expect("a number"))
}

fn percentile(lat: &mut [Duration], p: usize) -> f64 {
    lat.sort();
    lat[(lat.len() * p / 100).min(lat.len() - 1)].as_secs_f64() * 1e6
}

fn main() {
    let n = arg(1, 100_000);
    let count = arg(2, 2_000);
    let unseen = std::env::args().nth(4).is_some_and(|a| a == "unseen");
    let s = workload::store(n, if unseen { 2 * count } else { count });
    let (timed, warm) = s.workload.queries.split_at(count);
    let rounds = arg(3, 1);
    let forest = |q: &str| s.db.query(&s.tenant, &Query::new(q)).unwrap().facts.len();
    let flat = |q: &str| s.flat.search(q, 10).len();
    for q in if unseen { warm } else { timed } {
        forest(q);
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut returned = 0;
    for _ in 0..rounds {
        for q in timed {
            let t = Instant::now();
            returned += forest(q);
            a.push(t.elapsed());
            let t = Instant::now();
            returned += std::hint::black_box(flat(q));
            b.push(t.elapsed());
        }
    }
    println!("{n} facts, {} queries, {returned} facts returned", a.len());
    let (a50, a99) = (percentile(&mut a, 50), percentile(&mut a, 99));
    let (b50, b99) = (percentile(&mut b, 50), percentile(&mut b, 99));
    println!(" forest: p50 {a50:>9.1} us  p99 {a99:>9.1} us");
    println!("   flat: p50 {b50:>9.1} us  p99 {b99:>9.1} us");
    println!("forest/flat: p50 x{:.2}, p99 x{:.2}", a50 / b50, a99 / b99);
}
