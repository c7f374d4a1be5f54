//! Process and latency measurements shared by every workload: latency percentiles, bytes
//! the process wrote (`/proc/self/io`), its peak resident set (`/proc/self/status`) and the
//! bytes a directory holds on disk.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

/// Latency percentiles of one workload, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
}

impl Percentiles {
    /// Percentiles of `nanos` (one entry per operation, any order; sorted in place). All
    /// zero when `nanos` is empty.
    pub fn of(nanos: &mut [u64]) -> Self {
        nanos.sort_unstable();
        let at = |per_mille: usize| {
            let last = nanos.len().saturating_sub(1);
            nanos
                .get(last * per_mille / 1000)
                .map_or(0.0, |&n| n as f64 / 1e3)
        };
        Self {
            p50_us: at(500),
            p99_us: at(990),
            p999_us: at(999),
        }
    }
}

/// Nanoseconds of `d`, saturating at `u64::MAX`.
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn proc_field(file: &str, name: &str) -> Option<u64> {
    std::fs::read_to_string(file).ok().and_then(|s| {
        s.lines().find_map(|l| {
            l.strip_prefix(name)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
        })
    })
}

/// Bytes this process has passed to `write(2)`-family calls (`wchar` of `/proc/self/io`),
/// or 0 where the file does not exist (non-Linux).
pub fn bytes_written() -> u64 {
    proc_field("/proc/self/io", "wchar:").unwrap_or(0)
}

/// CPU seconds this process has used so far, every thread, user plus system (`utime` +
/// `stime` of `/proc/self/stat`, in the fixed 100 Hz `USER_HZ` ticks of that file), or 0
/// where the file does not exist. Unlike wall time it does not count the time other
/// processes held the CPU.
pub fn cpu_seconds() -> f64 {
    stat_cpu_seconds("/proc/self/stat")
}

/// CPU seconds the calling thread has used so far, user plus system
/// (`/proc/thread-self/stat`, as [`cpu_seconds`]), or 0 where the file does not exist.
pub fn thread_cpu_seconds() -> f64 {
    stat_cpu_seconds("/proc/thread-self/stat")
}

/// CPU seconds used so far by this process's live threads, summed per thread name with a
/// trailing `-<number>` dropped (`mf-summary-0` and `mf-summary-1` count as `mf-summary`;
/// Linux keeps the first 15 bytes of a name, so the compaction thread is
/// `memforest-compa`), as [`cpu_seconds`]. Threads that have exited are not counted. Empty
/// where `/proc/self/task` does not exist.
pub fn thread_group_cpu_seconds() -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.filter_map(Result::ok) {
        let Ok(bytes) = std::fs::read(task.path().join("stat")) else {
            continue; // the thread exited meanwhile
        };
        // A name cut at 15 bytes may end inside a character.
        let stat = String::from_utf8_lossy(&bytes);
        let name = stat
            .split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map_or("", |(name, _)| name);
        *out.entry(thread_group(name).to_owned()).or_insert(0.0) += parse_cpu_seconds(&stat);
    }
    out
}

/// `name` without a trailing `-<digits>`.
fn thread_group(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((group, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => group,
        _ => name,
    }
}

fn stat_cpu_seconds(path: &str) -> f64 {
    std::fs::read_to_string(path).map_or(0.0, |stat| parse_cpu_seconds(&stat))
}

/// `utime + stime` of a `stat` file's text, in seconds.
fn parse_cpu_seconds(stat: &str) -> f64 {
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let field = |i: usize| {
        after
            .split_whitespace()
            .nth(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field(14) + field(15)) as f64 / 100.0
}

/// Peak resident set size of this process in bytes (`VmHWM` of `/proc/self/status`), or
/// 0 where the file does not exist.
pub fn peak_rss_bytes() -> u64 {
    proc_field("/proc/self/status", "VmHWM:").map_or(0, |kib| kib * 1024)
}

/// Total size in bytes of the regular files under `dir` (recursively); unreadable entries
/// count as 0.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// A fresh scratch directory for one store: inside `dir` (created first if missing) or in
/// the system temp directory; removed when dropped.
///
/// # Errors
/// Creating `dir` or the directory inside it, naming the path.
pub fn scratch_dir(dir: Option<&Path>) -> anyhow::Result<tempfile::TempDir> {
    use anyhow::Context as _;
    match dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("create {}", d.display()))?;
            tempfile::tempdir_in(d)
                .with_context(|| format!("create a directory in {}", d.display()))
        }
        None => Ok(tempfile::tempdir()?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_ranks() {
        let mut v: Vec<u64> = (1..=1000).rev().map(|i| i * 1000).collect();
        let p = Percentiles::of(&mut v);
        assert_eq!(p.p50_us, 500.0);
        assert_eq!(p.p99_us, 990.0);
        assert_eq!(p.p999_us, 999.0);
        assert_eq!(Percentiles::of(&mut []), Percentiles::default());
    }

    #[test]
    fn dir_bytes_counts_nested_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), [0u8; 10]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), [0u8; 7]).unwrap();
        assert_eq!(dir_bytes(dir.path()), 17);
    }

    #[test]
    fn thread_groups_drop_a_numeric_suffix() {
        assert_eq!(thread_group("mf-summary-12"), "mf-summary");
        assert_eq!(thread_group("memforest-flush"), "memforest-flush");
        assert_eq!(thread_group("worker-"), "worker-");
        assert_eq!(thread_group("memforest"), "memforest");
    }

    #[test]
    fn thread_group_cpu_counts_a_live_named_thread() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (busy, burned) = std::sync::mpsc::channel::<f64>();
        let t = std::thread::Builder::new()
            .name("mf-burn-3".into())
            .spawn(move || {
                let mut x = 0u64;
                while thread_cpu_seconds() < 0.05 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
                busy.send(thread_cpu_seconds()).unwrap();
                wait.recv().unwrap();
            })
            .unwrap();
        let own = burned.recv().unwrap();
        let groups = thread_group_cpu_seconds();
        done.send(()).unwrap();
        t.join().unwrap();
        assert!(
            groups.get("mf-burn").is_some_and(|&s| s >= own),
            "{groups:?}"
        );
        assert!(!groups.contains_key("mf-burn-3"), "{groups:?}");
    }

    #[test]
    fn proc_counters_move() {
        let before = bytes_written();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), vec![1u8; 1 << 16]).unwrap();
        if cfg!(target_os = "linux") {
            assert!(bytes_written() >= before + (1 << 16));
            assert!(peak_rss_bytes() > 0);
        }
    }
}
