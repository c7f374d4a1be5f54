//! The db_bench workloads and the loop that times one of them against a [`Store`].

use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::store::{key, value, Record, Store, KEY_LEN, VALUE_LEN};
use crate::bench::measure::{nanos, Percentiles};

/// A db_bench workload (RocksDB `tools/db_bench` names and meanings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Puts of keys `0..n` in order into an empty store.
    Fillseq,
    /// Puts of `n` uniformly random keys of `0..n` into an empty store.
    Fillrandom,
    /// Puts of `n` random keys into the store `fillrandom` filled.
    Overwrite,
    /// Random-key puts into an empty store, each batch `fdatasync`ed, split over the
    /// writer threads.
    Fillsync,
    /// Gets of `n` random keys of `0..n`.
    Readrandom,
    /// A full scan in key order.
    Readseq,
    /// `n` seeks to a random key, reading the entry found.
    Seekrandom,
}

impl Workload {
    /// True for the workloads that write.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Fillseq | Self::Fillrandom | Self::Overwrite | Self::Fillsync
        )
    }
}

/// What one timed run measured.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// Operations: records written, keys read or seeks (entries for `readseq`).
    pub ops: u64,
    /// Key + value bytes written or read.
    pub bytes: u64,
    /// Gets or seeks that found an entry.
    pub found: u64,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// Per-call latency percentiles (per batch for writes; empty for `readseq`).
    pub latency: Percentiles,
}

/// Runs `w` over `n` operations, `batch` records per write call, `writers` threads for
/// writes; keys are drawn from `0..space` with `seed`, so every engine sees the same
/// sequence ([`mark_written`] replays the keys).
///
/// # Errors
/// The first error of the store.
pub fn run(
    store: &dyn Store,
    w: Workload,
    n: u64,
    space: u64,
    batch: usize,
    writers: usize,
    seed: u64,
) -> anyhow::Result<Timing> {
    let start = Instant::now();
    if w == Workload::Readseq {
        let (ops, bytes) = store.scan_all()?;
        return Ok(Timing {
            ops,
            bytes,
            found: ops,
            elapsed: start.elapsed(),
            latency: Percentiles::default(),
        });
    }
    let writers = if w.writes() { writers.max(1) } else { 1 };
    let share = n.div_ceil(writers as u64);
    let parts: Vec<anyhow::Result<(u64, u64, Vec<u64>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers as u64)
            .map(|t| {
                let ops = share.min(n.saturating_sub(t * share));
                s.spawn(move || worker(store, w, t * share, ops, space, batch, seed ^ t))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("benchmark thread panicked")))
            })
            .collect()
    });
    let elapsed = start.elapsed();
    let mut lat = Vec::new();
    let (mut bytes, mut found) = (0, 0);
    for p in parts {
        let (b, f, l) = p?;
        bytes += b;
        found += f;
        lat.extend(l);
    }
    Ok(Timing {
        ops: n,
        bytes,
        found,
        elapsed,
        latency: Percentiles::of(&mut lat),
    })
}

/// One thread's share: operations `first..first + ops`. Returns (bytes, found, latencies).
fn worker(
    store: &dyn Store,
    w: Workload,
    first: u64,
    ops: u64,
    space: u64,
    batch: usize,
    seed: u64,
) -> anyhow::Result<(u64, u64, Vec<u64>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lat = Vec::with_capacity(usize::try_from(ops).unwrap_or(0));
    let (mut bytes, mut found) = (0u64, 0u64);
    let record = (KEY_LEN + VALUE_LEN) as u64;
    let next_key = |rng: &mut StdRng, i: u64| match w {
        Workload::Fillseq => key(i),
        _ => key(rng.gen_range(0..space.max(1))),
    };
    if w.writes() {
        let mut buf: Vec<Record> = Vec::with_capacity(batch);
        let mut i = first;
        while i < first + ops {
            buf.clear();
            while buf.len() < batch.max(1) && i < first + ops {
                let k = next_key(&mut rng, i);
                buf.push((k, value(&mut rng)));
                i += 1;
            }
            let t = Instant::now();
            store.write(&buf)?;
            lat.push(nanos(t.elapsed()));
            bytes += record * buf.len() as u64;
        }
    } else {
        for i in first..first + ops {
            let k = next_key(&mut rng, i);
            let t = Instant::now();
            let hit = match w {
                Workload::Seekrandom => store.seek(&k)?,
                _ => store.get(&k)?.then_some(record),
            };
            lat.push(nanos(t.elapsed()));
            if let Some(b) = hit {
                found += 1;
                bytes += b;
            }
        }
    }
    Ok((bytes, found, lat))
}

/// The distinct keys a write workload leaves live, replayed from the same seeds as
/// [`run`] (so space amplification has an exact denominator): marks them in `live`.
pub fn mark_written(live: &mut [bool], w: Workload, n: u64, space: u64, writers: usize, seed: u64) {
    let writers = writers.max(1) as u64;
    let share = n.div_ceil(writers);
    for t in 0..writers {
        let ops = share.min(n.saturating_sub(t * share));
        let mut rng = StdRng::seed_from_u64(seed ^ t);
        for i in t * share..t * share + ops {
            let k = match w {
                Workload::Fillseq => i,
                _ => rng.gen_range(0..space.max(1)),
            };
            if let Some(slot) = usize::try_from(k).ok().and_then(|k| live.get_mut(k)) {
                *slot = true;
            }
            let _ = value(&mut rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use super::*;

    /// A store that remembers what it was given.
    #[derive(Default)]
    struct Map(Mutex<BTreeMap<Vec<u8>, Vec<u8>>>);

    impl Store for Map {
        fn write(&self, batch: &[Record]) -> anyhow::Result<()> {
            let mut m = self.0.lock().unwrap();
            for (k, v) in batch {
                m.insert(k.to_vec(), v.to_vec());
            }
            Ok(())
        }
        fn get(&self, key: &[u8]) -> anyhow::Result<bool> {
            Ok(self.0.lock().unwrap().contains_key(key))
        }
        fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>> {
            let m = self.0.lock().unwrap();
            Ok(m.range(key.to_vec()..)
                .next()
                .map(|(k, v)| (k.len() + v.len()) as u64))
        }
        fn scan_all(&self) -> anyhow::Result<(u64, u64)> {
            let m = self.0.lock().unwrap();
            Ok((
                m.len() as u64,
                m.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum(),
            ))
        }
        fn settle(&self) -> anyhow::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn mark_written_replays_the_keys_the_writers_wrote() {
        for (w, writers, batch) in [
            (Workload::Fillseq, 1, 1),
            (Workload::Fillrandom, 1, 7),
            (Workload::Fillsync, 3, 2),
        ] {
            let store = Map::default();
            let t = run(&store, w, 500, 500, batch, writers, 9).unwrap();
            assert_eq!(t.ops, 500);
            assert_eq!(t.bytes, 500 * (KEY_LEN + VALUE_LEN) as u64);
            let mut live = vec![false; 500];
            mark_written(&mut live, w, 500, 500, writers, 9);
            let marked: Vec<Vec<u8>> = (0u64..)
                .zip(&live)
                .filter(|(_, &on)| on)
                .map(|(i, _)| key(i).to_vec())
                .collect();
            let stored: Vec<Vec<u8>> = store.0.lock().unwrap().keys().cloned().collect();
            assert_eq!(marked, stored, "{w:?}");
        }
    }

    #[test]
    fn reads_count_what_they_find() {
        let store = Map::default();
        run(&store, Workload::Fillrandom, 400, 400, 1, 1, 2).unwrap();
        let present = store.0.lock().unwrap().len() as u64;
        let scan = run(&store, Workload::Readseq, 400, 400, 1, 1, 0).unwrap();
        assert_eq!((scan.ops, scan.found), (present, present));
        let reads = run(&store, Workload::Readrandom, 400, 400, 1, 1, 4).unwrap();
        assert!(reads.found > 0 && reads.found < 400, "{}", reads.found);
        assert_eq!(reads.bytes, reads.found * (KEY_LEN + VALUE_LEN) as u64);
    }
}
