//! The resident-page budget ([`Residency`]): reading more and more segment files keeps the
//! pages this process has mapped from them under the budget, measured by the kernel
//! (`Rss:` of each file's mapping in `/proc/self/smaps`), not by the budget's own count;
//! without a budget the same reads leave the files resident (so the measure can fail).
//! Point reads that would make it release pages read through a [`DescriptorTable`]
//! instead.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memforest_sst::bloom::{BloomBuilder, BloomFilter, FilterLayout};
use memforest_sst::{
    DescriptorTable, EntrySource, Kind, Lookup, ReadBudgets, Residency, SstBuilder, SstOptions,
    SstReader, FORMAT_VERSION, RESIDENCY_WINDOW,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const FILES: u64 = 12;
const KEYS: u32 = 3000;
const VALUE: usize = 1000;

/// The incompressible value of key `k` in file `id`.
fn value_of(id: u64, k: u32) -> Vec<u8> {
    let mut value = vec![0u8; VALUE];
    StdRng::seed_from_u64(id << 32 | u64::from(k)).fill(value.as_mut_slice());
    value
}

/// `FILES` files (ids 1..=FILES) of about 3 MiB of incompressible values each.
fn build(dir: &Path) -> Vec<PathBuf> {
    (1..=FILES)
        .map(|id| {
            let mut b = SstBuilder::new(dir, id, SstOptions::default()).unwrap();
            for k in 0..KEYS {
                b.add(&k.to_be_bytes(), 1, Kind::Put, &value_of(id, k))
                    .unwrap();
            }
            b.finish().unwrap().path
        })
        .collect()
}

/// Bytes of the files at `paths`.
fn total_size(paths: &[PathBuf]) -> u64 {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

/// Kernel-reported resident bytes of this process's mappings of `paths`.
fn mapped_rss(paths: &[PathBuf]) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut total = 0;
    let mut ours = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            // A mapping header: "start-end perms offset dev inode [path]".
            let path = line.split_whitespace().nth(5).map(PathBuf::from);
            ours = path.is_some_and(|p| paths.contains(&p));
        } else if ours && first == "Rss:" {
            let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            total += kb * 1024;
        }
    }
    total
}

/// `residency` with a table of `descriptors` descriptors.
fn budgets(residency: &Arc<Residency>, descriptors: usize) -> ReadBudgets {
    ReadBudgets {
        residency: Arc::clone(residency),
        descriptors: DescriptorTable::new(descriptors),
    }
}

/// Readers of `paths`, opened under `budgets`.
fn open_all(paths: &[PathBuf], budgets: Option<&ReadBudgets>) -> Vec<SstReader> {
    let storage = memforest_io::default_storage();
    paths
        .iter()
        .map(|p| SstReader::open_tracked(&*storage, p, budgets).unwrap())
        .collect()
}

/// Point-reads every key of every file in random order and scans each file, tracking the
/// largest resident figure seen after each file; returns it. Point reads go through the
/// mapping (no descriptors).
fn read_all(paths: &[PathBuf], residency: Option<&Arc<Residency>>) -> u64 {
    let budgets = residency.map(|r| budgets(r, 0));
    let readers = open_all(paths, budgets.as_ref());
    let mut rng = StdRng::seed_from_u64(9);
    let mut peak = 0;
    for reader in &readers {
        for _ in 0..KEYS {
            let k: u32 = rng.gen_range(0..KEYS);
            let Some(Lookup::Put { value, .. }) = reader.get(&k.to_be_bytes(), 5).unwrap() else {
                panic!("key {k} missing");
            };
            assert_eq!(value.len(), VALUE);
        }
        let mut it = reader.iter().unwrap();
        let mut n = 0;
        while it.next_entry().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, KEYS);
        peak = peak.max(mapped_rss(paths));
        if let Some(r) = residency {
            assert!(r.charged() <= r.budget(), "charged {}", r.charged());
        }
    }
    peak
}

#[test]
fn mapped_pages_stay_under_the_budget_as_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let paths = build(dir.path());
    let total = total_size(&paths);
    let budget = 8 << 20;
    assert!(total > 4 * budget, "files of {total} bytes");

    let unbounded = read_all(&paths, None);
    assert!(
        unbounded > total / 2,
        "without a budget {unbounded} of {total} bytes stay resident"
    );

    let residency = Residency::new(budget);
    let bounded = read_all(&paths, Some(&residency));
    // Every mapped page lies in a charged window; a read in progress may add one.
    assert!(
        bounded <= budget + RESIDENCY_WINDOW,
        "{bounded} bytes resident under a budget of {budget}"
    );
}

/// Absent keys that a filter over the files' keys (built as the files' own are) rejects.
fn rejected_keys(count: usize) -> Vec<[u8; 4]> {
    let mut builder = BloomBuilder::default();
    (0..KEYS).for_each(|k| builder.add_key(&k.to_be_bytes()));
    let layout = FilterLayout::for_format_version(FORMAT_VERSION).unwrap();
    let payload = builder.finish(SstOptions::default().bloom_bits_per_key, layout);
    let filter = BloomFilter::new(payload.into(), layout).unwrap();
    (KEYS..)
        .map(u32::to_be_bytes)
        .filter(|k| !filter.may_contain(k))
        .take(count)
        .collect()
}

/// The bloom filter is held apart from the mapping: once the budget has released a file,
/// point reads of keys its filter rejects map none of its pages back in and charge nothing
/// (a filter read from the mapping was charged again and faulted back in after each
/// release).
#[test]
fn filter_misses_on_a_released_file_touch_none_of_its_pages() {
    let dir = tempfile::tempdir().unwrap();
    let paths = build(dir.path());
    // Under two windows the opens release the files opened first (the least recently
    // read), and two filter reads from the mapping would charge past what the opens left.
    let residency = Residency::new(2 * RESIDENCY_WINDOW);
    let readers = open_all(&paths, Some(&budgets(&residency, 0)));
    let first = &paths[..1];
    assert_eq!(mapped_rss(first), 0, "the first file was released");
    let charged = residency.charged();

    for key in rejected_keys(5000) {
        assert!(readers[0].get(&key, 5).unwrap().is_none());
    }
    assert_eq!(mapped_rss(first), 0, "rejected reads mapped pages back in");
    assert_eq!(residency.charged(), charged);
}

/// Point-reads as many keys as the files hold, in a random order, and checks each value
/// (the files hold the same keys at the same offsets, so a read from the wrong file would
/// still pass its block's CRC).
fn get_all(readers: &[SstReader]) {
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..readers.len() * usize::try_from(KEYS).unwrap() {
        let (f, k) = (rng.gen_range(0..readers.len()), rng.gen_range(0..KEYS));
        let Some(Lookup::Put { value, .. }) = readers[f].get(&k.to_be_bytes(), 5).unwrap() else {
            panic!("key {k} of file {f} missing");
        };
        assert_eq!(value, value_of(f as u64 + 1, k), "key {k} of file {f}");
    }
}

/// While the budget has room, point reads go through the mapping (zero-copy: the files'
/// pages become resident), even with descriptors to spare.
#[test]
fn point_reads_use_the_mapping_while_the_budget_has_room() {
    let dir = tempfile::tempdir().unwrap();
    let paths = build(dir.path());
    let total = total_size(&paths);
    let residency = Residency::new(u64::MAX);
    let readers = open_all(&paths, Some(&budgets(&residency, 4)));
    get_all(&readers);
    assert!(
        mapped_rss(&paths) > total / 2,
        "point reads mapped no pages"
    );
    assert_eq!(residency.releases(), 0);
}

/// Past the budget, point reads of pages not yet charged read with `pread` through the
/// descriptor table and release nothing; the same reads without descriptors make the
/// budget release files (so the measure can fail). Either way the mapped pages stay
/// under the budget.
#[test]
fn point_reads_past_the_budget_release_nothing_through_descriptors() {
    let dir = tempfile::tempdir().unwrap();
    let paths = build(dir.path());
    let budget = 16 * RESIDENCY_WINDOW;
    let mut released_by_reads = Vec::new();
    for descriptors in [4, 0] {
        let residency = Residency::new(budget);
        let readers = open_all(&paths, Some(&budgets(&residency, descriptors)));
        let after_open = residency.releases();
        get_all(&readers);
        released_by_reads.push(residency.releases() - after_open);
        assert!(mapped_rss(&paths) <= budget + RESIDENCY_WINDOW);
    }
    assert_eq!(
        released_by_reads[0], 0,
        "reads through descriptors released files"
    );
    assert!(
        released_by_reads[1] > 0,
        "the budget had room for every read"
    );
}
