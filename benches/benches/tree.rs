//! MemTree benchmarks, each beside a peer measured in the same run (the machine is shared and
//! noisy, so read the ratios):
//!
//! - `tree_insert/append/{N}`: one time-ordered fact appended to a tree of N facts built by
//!   time-ordered appends (k = 16, in-memory `MemNodeStore`, every page encoded, checksummed
//!   and decoded on the way);
//! - `tree_insert/late/{N}`: one fact at a random earlier time into a tree of the same N facts
//!   built in random order (the general descent, on nodes about 70% full);
//! - `tree_insert/btreemap/{N}`: the peer, `BTreeMap::insert` of the same key and text into a
//!   map of N entries.
//!
//! Each timed insert is undone (deleted) outside the timing, so the tree stays at N facts.
//! N = 10^3, 10^4, 10^5, 10^6, and 10^7 when `MEMFOREST_BENCH_BIG=1` (about 2 GiB of memory and
//! a few minutes of setup). Before criterion, a fixed-work summary (interleaved rounds across
//! sizes) prints ns per insert at each N and the growth ratio against N = 10^4, beside the BTreeMap peer's own growth, which is the
//! machine's cache-miss growth; after criterion, the table of summary calls per inserted
//! fact, eager versus batched refresh ([`memforest_tree::cost::refresh_cost`]), for k = 4, 8, 16, 32 and batch
//! sizes 1, 16, 256.
//!
//! Run: `cargo bench -p memforest-benches --bench tree` (add `MEMFOREST_BENCH_BIG=1` for 10^7).
#![allow(
    clippy::unwrap_used,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "benchmark setup: a failure aborts the run; counts are small"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use memforest_tree::cost::refresh_cost;
use memforest_tree::{
    Branching, LeafKey, MemNodeStore, MemTree, Payload, TimeRange, TreeConfig, TreeId, TreeKind,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Fact `id` at second `t`.
fn fact(t: u64, id: u64) -> LeafKey {
    let us = (t * 1_000_000) as i64;
    LeafKey {
        time: TimeRange { start: us, end: us },
        payload: Payload::fact(id),
    }
}

fn text(id: u64) -> String {
    format!("fact {id}")
}

/// Two trees and a map holding the same facts `0..n`, fact `i` at second `i * 2` (odd seconds
/// stay free for late inserts): `appended` was built by time-ordered appends (the write path's
/// common case, every node full), `shuffled` by inserting the same facts in random order (the
/// shape a tree of late facts has, nodes about 70% full). Both share one store.
struct Fixture {
    n: u64,
    store: MemNodeStore,
    appended: MemTree,
    shuffled: MemTree,
    map: BTreeMap<LeafKey, String>,
    rng: StdRng,
}

impl Fixture {
    fn new(n: u64) -> Self {
        let mut store = MemNodeStore::new();
        let config = TreeConfig {
            entity: Branching::new(16).unwrap(),
            ..TreeConfig::default()
        };
        let mut create = |id| {
            MemTree::create(&mut store, TreeId(id), TreeKind::Entity, "user", &config).unwrap()
        };
        let (mut appended, mut shuffled) = (create(1), create(2));
        let mut map = BTreeMap::new();
        for i in 0..n {
            appended
                .insert(&mut store, fact(i * 2, i), &text(i))
                .unwrap();
            map.insert(fact(i * 2, i), text(i));
        }
        let mut rng = StdRng::seed_from_u64(n);
        let mut order: Vec<u64> = (0..n).collect();
        order.shuffle(&mut rng);
        for i in order {
            shuffled
                .insert(&mut store, fact(i * 2, i), &text(i))
                .unwrap();
        }
        Self {
            n,
            store,
            appended,
            shuffled,
            map,
            rng,
        }
    }

    /// The `j`-th key of a timed run: appended after everything, or at a random odd second.
    fn key(&mut self, late: bool, j: u64) -> LeafKey {
        let id = self.n + j;
        if late {
            fact(self.rng.gen_range(0..self.n) * 2 + 1, id)
        } else {
            fact((self.n + j) * 2, id)
        }
    }

    /// Times `count` inserts (appends into `appended`, or late facts into `shuffled`), then
    /// deletes them untimed.
    fn time_tree(&mut self, late: bool, count: u64) -> Duration {
        let keys: Vec<LeafKey> = (0..count).map(|j| self.key(late, j)).collect();
        let texts: Vec<String> = keys.iter().map(|k| text(k.payload.id)).collect();
        let tree = if late {
            &mut self.shuffled
        } else {
            &mut self.appended
        };
        let start = Instant::now();
        for (key, text) in keys.iter().zip(&texts) {
            tree.insert(&mut self.store, *key, text).unwrap();
        }
        let elapsed = start.elapsed();
        for key in &keys {
            tree.delete(&mut self.store, key).unwrap();
        }
        elapsed
    }

    /// The peer: times `count` `BTreeMap` inserts of the same keys and texts.
    fn time_map(&mut self, count: u64) -> Duration {
        let keys: Vec<LeafKey> = (0..count).map(|j| self.key(true, j)).collect();
        let texts: Vec<String> = keys.iter().map(|k| text(k.payload.id)).collect();
        let start = Instant::now();
        for (key, text) in keys.iter().zip(texts) {
            black_box(self.map.insert(*key, text));
        }
        let elapsed = start.elapsed();
        for key in &keys {
            self.map.remove(key);
        }
        elapsed
    }
}

/// Criterion groups for one fixture.
fn bench_fixture(c: &mut Criterion, f: &mut Fixture) {
    let n = f.n;
    let mut group = c.benchmark_group("tree_insert");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.bench_function(BenchmarkId::new("append", n), |b| {
        b.iter_custom(|iters| f.time_tree(false, iters));
    });
    group.bench_function(BenchmarkId::new("btreemap", n), |b| {
        b.iter_custom(|iters| f.time_map(iters));
    });
    group.bench_function(BenchmarkId::new("late", n), |b| {
        b.iter_custom(|iters| f.time_tree(true, iters));
    });
    group.finish();
}

/// Median of the per-insert times (ns) of `rounds` interleaved runs.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Fixed-work summary: `ROUNDS` rounds, each timing `ROUND_INSERTS` inserts per fixture and
/// kind, interleaved across sizes so that load drifting on the shared machine hits every size
/// alike; prints the medians and the ratios.
fn print_insert_summary(fixtures: &mut [Fixture]) {
    const ROUNDS: usize = 9;
    const ROUND_INSERTS: u64 = 4_000;
    let per = |d: Duration| d.as_nanos() as f64 / ROUND_INSERTS as f64;
    let mut samples = vec![(Vec::new(), Vec::new(), Vec::new()); fixtures.len()];
    for _ in 0..ROUNDS {
        for (f, s) in fixtures.iter_mut().zip(&mut samples) {
            s.0.push(per(f.time_tree(false, ROUND_INSERTS)));
            s.1.push(per(f.time_map(ROUND_INSERTS)));
            s.2.push(per(f.time_tree(true, ROUND_INSERTS)));
        }
    }
    let rows: Vec<(u64, f64, f64, f64)> = fixtures
        .iter()
        .zip(samples)
        .map(|(f, (a, m, l))| (f.n, median(a), median(m), median(l)))
        .collect();
    let Some(&(_, base_append, base_map, base_late)) = rows.iter().find(|r| r.0 == 10_000) else {
        return;
    };
    println!(
        "\nInsert cost per fact, k = 16: median of {ROUNDS} interleaved rounds of \
         {ROUND_INSERTS} inserts (same run):"
    );
    println!(
        "| N | append ns | BTreeMap ns | late ns | append / append@1e4 | \
         BTreeMap / BTreeMap@1e4 | late / late@1e4 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for &(n, append, map, late) in &rows {
        println!(
            "| {n} | {append:.0} | {map:.0} | {late:.0} | {:.2} | {:.2} | {:.2} |",
            append / base_append,
            map / base_map,
            late / base_late
        );
    }
}

fn print_refresh_table() {
    let (base, facts) = (10_000, 4_096);
    println!(
        "\nSummary calls per inserted fact ({facts} time-ordered facts appended to a \
         refreshed {base}-fact tree):"
    );
    println!("| k | eager | batch 1 | batch 16 | batch 256 |");
    println!("| --- | --- | --- | --- | --- |");
    for k in [4u16, 8, 16, 32] {
        let costs: Vec<_> = [1usize, 16, 256]
            .iter()
            .map(|&b| refresh_cost(k, b, base, facts).unwrap())
            .collect();
        let cells: Vec<String> = costs
            .iter()
            .map(|c| format!("{:.3}", c.batched_per_fact()))
            .collect();
        println!(
            "| {k} | {:.3} | {} |",
            costs[0].eager_per_fact(),
            cells.join(" | ")
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut sizes = vec![1_000u64, 10_000, 100_000, 1_000_000];
    if std::env::var_os("MEMFOREST_BENCH_BIG").is_some() {
        sizes.push(10_000_000);
    }
    let mut fixtures: Vec<Fixture> = sizes.into_iter().map(Fixture::new).collect();
    for f in &fixtures {
        let appended = f.appended.verify(&f.store).unwrap();
        let shuffled = f.shuffled.verify(&f.store).unwrap();
        println!(
            "N = {}: time-ordered appends: height {}, fill {:.3}; random order: height {}, fill {:.3}",
            f.n,
            appended.height,
            appended.fill(16),
            shuffled.height,
            shuffled.fill(16)
        );
    }
    print_insert_summary(&mut fixtures);
    for f in &mut fixtures {
        bench_fixture(&mut c, f);
    }
    c.final_summary();
    print_refresh_table();
}
