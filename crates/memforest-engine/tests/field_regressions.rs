//! Field regressions: bugs other engines shipped, one scenario per test, named by the
//! behaviour it checks; each doc comment cites the upstream issue or pull request.
//! `docs/reliability.md` maps every case to its test, including those living elsewhere.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::cast_possible_truncation,
    reason = "test code; counts are small"
)]

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};
use std::thread;
use std::time::Duration;

use memforest_engine::{Db, Durability, Options, Table, TenantId};
use memforest_sst::DescriptorTable;

fn tenant(name: &str) -> TenantId {
    TenantId::new(name).unwrap()
}

fn small() -> Options {
    Options {
        memtable_size: 16 << 10,
        l0_compaction_trigger: 2,
        l0_stop_writes_trigger: 8,
        max_bytes_for_level_base: 64 << 10,
        target_file_size: 8 << 10,
        ..Options::default()
    }
}

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

fn value(i: u64, round: u64) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

fn count(db: &Db, t: &TenantId) -> usize {
    let rows: Result<Vec<_>, _> = db.scan_tenant(t, None).unwrap().collect();
    rows.unwrap().len()
}

/// fjall 241: `clear()` wrote no log record, so cleared data came back after a
/// reopen. A dropped tenant must stay dropped whether its data was in the memtable or
/// already flushed, after a clean close and after a crash (drop without close).
#[test]
fn dropped_tenant_stays_dropped_after_reopen_and_crash() {
    let _spawns = no_child_spawning();
    for crash in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (gone, kept) = (tenant("gone"), tenant("kept"));
        let db = Db::open(dir.path(), small()).unwrap();
        for i in 0..300 {
            for t in [&gone, &kept] {
                db.put(
                    t,
                    Table::new(3),
                    &key(i),
                    &value(i, 0),
                    Durability::Buffered,
                )
                .unwrap();
            }
            if i == 150 {
                db.flush().unwrap(); // half flushed to segment files, half in the memtable
            }
        }
        db.drop_tenant(&gone, Durability::SyncData).unwrap();
        assert_eq!(count(&db, &gone), 0);
        if crash {
            drop(db);
        } else {
            db.close().unwrap();
        }
        let db = Db::open(dir.path(), small()).unwrap();
        assert_eq!(
            count(&db, &gone),
            0,
            "crash={crash}: dropped data came back"
        );
        assert_eq!(count(&db, &kept), 300, "crash={crash}");
        db.flush().unwrap();
        db.compact_all().unwrap();
        drop(db);
        let db = Db::open(dir.path(), small()).unwrap();
        assert_eq!(count(&db, &gone), 0, "crash={crash}: after compaction");
        assert_eq!(count(&db, &kept), 300);
    }
}

/// pebble PR 320 / bichon PR 317: an ingest-only workload (no explicit flush or
/// compaction) must get compactions scheduled by the flushes themselves, so writers never
/// stall forever. The writer runs on its own thread; a generous deadline turns a hang into
/// a failure instead of a stuck CI job (this is a liveness check, not a speed target).
#[test]
fn ingest_only_workload_schedules_compaction_and_never_stalls_forever() {
    let _spawns = no_child_spawning();
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small()).unwrap());
    let (done, wait) = mpsc::channel();
    let writer = {
        let db = Arc::clone(&db);
        thread::spawn(move || {
            let t = tenant("ingest");
            for i in 0..20_000u64 {
                let k = key(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                db.put(&t, Table::new(2), &k, &value(i, 1), Durability::Buffered)
                    .unwrap();
            }
            done.send(()).unwrap();
        })
    };
    wait.recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("writes stalled: {:?}", db.stats()));
    writer.join().unwrap();
    let stats = db.stats();
    assert!(stats.flush_count > 10, "{stats:?}");
    assert!(
        stats.compaction_count > 0,
        "no compaction was scheduled: {stats:?}"
    );
    assert!(
        stats.levels[0].files <= small().l0_stop_writes_trigger,
        "{stats:?}"
    );
    assert_eq!(count(&db, &tenant("ingest")), 20_000);
}

/// fjall 287, lsm-tree PR 320: a clear between compaction planning and commit fired
/// an assert and poisoned the store. Writers, flushes, compactions and tenant drops race
/// here; every call must succeed, and the end state must be exact.
#[test]
fn drop_tenant_racing_flush_and_compaction_never_poisons_the_store() {
    let _spawns = no_child_spawning();
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let victims: Vec<TenantId> = (0..3).map(|i| tenant(&format!("victim{i}"))).collect();
    let survivor = tenant("survivor");
    let mut threads = Vec::new();
    {
        let (db, victims, survivor) = (Arc::clone(&db), victims.clone(), survivor.clone());
        threads.push(thread::spawn(move || {
            for i in 0..4_000u64 {
                for t in victims.iter().chain([&survivor]) {
                    db.put(
                        t,
                        Table::new(3),
                        &key(i % 700),
                        &value(i, 2),
                        Durability::Buffered,
                    )
                    .unwrap();
                }
            }
        }));
    }
    {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        threads.push(thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                db.compact_all().unwrap();
            }
        }));
    }
    {
        let (db, stop, victims) = (Arc::clone(&db), Arc::clone(&stop), victims.clone());
        threads.push(thread::spawn(move || {
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                db.drop_tenant(&victims[n % victims.len()], Durability::Buffered)
                    .unwrap();
                if n.is_multiple_of(4) {
                    db.flush().unwrap();
                }
                n += 1;
            }
        }));
    }
    let writer = threads.remove(0);
    writer.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    for v in &victims {
        db.drop_tenant(v, Durability::SyncData).unwrap();
    }
    db.flush().unwrap();
    db.compact_all().unwrap();
    let check = |db: &Db| {
        for v in &victims {
            assert_eq!(count(db, v), 0, "{v:?}");
        }
        assert_eq!(count(db, &survivor), 700);
        for i in 4_000 - 700..4_000u64 {
            let got = db.get(&survivor, Table::new(3), &key(i % 700)).unwrap();
            assert_eq!(got.as_deref(), Some(&value(i, 2)[..]));
        }
    };
    check(&db);
    drop(db);
    check(&Db::open(dir.path(), small()).unwrap());
}

/// mini-lsm 62: leveled compaction panicked after manifest replay because levels
/// came back unsorted. After recovery every level >= 1 must be sorted and disjoint; seen
/// from outside, every key of a multi-file level is found by point lookup (a binary search
/// over unsorted files misses) and a full scan is sorted, complete and duplicate-free;
/// seen from inside, `Db::verify` finds every level sorted and disjoint.
#[test]
fn levels_are_sorted_and_disjoint_after_recovery() {
    let _spawns = no_child_spawning();
    let dir = tempfile::tempdir().unwrap();
    let t = tenant("levels");
    let n = 6_000u64;
    let scrambled = |i: u64| (i * 7919) % n; // a permutation of 0..n (7919 is prime)
    {
        let db = Db::open(dir.path(), small()).unwrap();
        for round in 0..2 {
            for i in 0..n {
                let k = scrambled(i);
                db.put(
                    &t,
                    Table::new(3),
                    &key(k),
                    &value(k, round),
                    Durability::Buffered,
                )
                .unwrap();
            }
            db.flush().unwrap();
            db.compact_all().unwrap();
        }
        let stats = db.stats();
        assert!(
            stats.levels.iter().skip(1).any(|l| l.files >= 4),
            "the test needs a level with several files: {stats:?}"
        );
        db.close().unwrap();
    }
    for extra in 0..2u64 {
        let db = Db::open(dir.path(), small()).unwrap();
        // White box: `verify` checks each level >= 1 is sorted and disjoint, matches the
        // manifest, and every file's checksums, size, entry count and key range.
        let report = db.verify().unwrap();
        assert!(
            report.level_files.iter().skip(1).any(|&f| f >= 4),
            "{report:?}"
        );
        assert_eq!(report.segment_files, report.level_files.iter().sum::<u64>());
        for k in 0..n {
            let got = db.get(&t, Table::new(3), &key(k)).unwrap();
            assert_eq!(got.as_deref(), Some(&value(k, 1)[..]), "key {k}");
        }
        let keys: Vec<Vec<u8>> = db
            .scan_tenant(&t, None)
            .unwrap()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        assert_eq!(keys.len() as u64, n + extra);
        assert!(
            keys.windows(2).all(|w| w[0] < w[1]),
            "scan unsorted after recovery"
        );
        // Compacting after replay must not trip over the recovered levels either.
        db.put(
            &t,
            Table::new(3),
            &key(n + extra),
            b"new",
            Durability::Buffered,
        )
        .unwrap();
        db.flush().unwrap();
        db.compact_all().unwrap();
        db.close().unwrap();
    }
}

const CHILD_ENV: &str = "MEMFOREST_FIELD_CHILD";

/// Held for reading by every test that opens a store in this process, for writing while
/// a child process is spawned. A child holds copies of the parent's descriptors from fork
/// to exec, the `LOCK` file's among them, so a store dropped meanwhile cannot be reopened
/// (`Error::Locked`) until the child execs: that made `dropped_tenant_stays_dropped_after_reopen_and_crash` fail under load.
static SPAWNING: RwLock<()> = RwLock::new(());

fn no_child_spawning() -> RwLockReadGuard<'static, ()> {
    SPAWNING.read().unwrap_or_else(PoisonError::into_inner)
}

/// Runs test `name` of this binary in a child shell whose open-file limit is `nofile`,
/// and asserts it passed.
fn run_under_nofile_limit(name: &str, nofile: u32) {
    let exe = std::env::current_exe().unwrap();
    let spawning = SPAWNING.write().unwrap_or_else(PoisonError::into_inner);
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {nofile} && exec \"$0\" --exact {name} --nocapture --test-threads=1"
        ))
        .arg(exe)
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `spawn` returns once the child has exec'd (its inherited descriptors are closed).
    drop(spawning);
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "child failed:\n{text}"
    );
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// fjall 247: many databases in one test process hit "too many open files". 64
/// engines, each with flushed segment files, must work side by side within 256 descriptors
/// (the macOS default limit), using a bounded number of descriptors each, plus the
/// descriptors their point lookups share (`DescriptorTable::shared`, an eighth of the
/// limit however many engines are open).
#[test]
fn sixty_four_engines_fit_in_256_file_descriptors() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return run_under_nofile_limit("sixty_four_engines_fit_in_256_file_descriptors", 256);
    }
    let before = open_fds();
    let dirs: Vec<_> = (0..64).map(|_| tempfile::tempdir().unwrap()).collect();
    let t = tenant("t");
    let dbs: Vec<Db> = dirs
        .iter()
        .map(|d| Db::open(d.path(), small()).unwrap())
        .collect();
    for (n, db) in dbs.iter().enumerate() {
        for i in 0..200u64 {
            db.put(
                &t,
                Table::new(3),
                &key(i),
                &value(i, n as u64),
                Durability::Buffered,
            )
            .unwrap();
        }
        db.flush().unwrap();
    }
    for (n, db) in dbs.iter().enumerate() {
        for i in 0..200u64 {
            let got = db.get(&t, Table::new(3), &key(i)).unwrap();
            assert_eq!(got.as_deref(), Some(&value(i, n as u64)[..]));
        }
    }
    let table = DescriptorTable::shared();
    assert_eq!(table.capacity(), 256 / 8);
    let per_engine = open_fds().saturating_sub(before + table.open()) as f64 / 64.0;
    eprintln!(
        "descriptors per open engine: {per_engine:.2}, shared by their lookups: {}",
        table.open()
    );
    // Three each at rest (LOCK, WAL segment, manifest), plus at most a few
    // in all that a background compaction or directory sync holds for a moment.
    assert!(per_engine <= 3.1, "{per_engine} descriptors per engine");
    for db in dbs {
        db.close().unwrap();
    }
}

/// lsm-tree 201: when the descriptor table is full, opening or using a database
/// must return an error, never panic; engines already open keep working, and once
/// descriptors are freed opening works again.
#[test]
fn descriptor_exhaustion_is_an_error_not_a_panic() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return run_under_nofile_limit("descriptor_exhaustion_is_an_error_not_a_panic", 64);
    }
    let t = tenant("t");
    let mut open = Vec::new();
    let failure = loop {
        let dir = tempfile::tempdir().unwrap();
        match Db::open(dir.path(), small()) {
            Ok(db) => {
                db.put(&t, Table::new(3), b"k", b"v", Durability::SyncData)
                    .unwrap();
                open.push((dir, db));
            }
            Err(e) => break e,
        }
        assert!(open.len() < 64, "64 descriptors should not hold 64 engines");
    };
    eprintln!("after {} engines: {failure}", open.len());
    assert!(!open.is_empty());
    for (_, db) in &open {
        assert_eq!(
            db.get(&t, Table::new(3), b"k").unwrap().as_deref(),
            Some(&b"v"[..])
        );
    }
    let half = open.len() / 2;
    for (_, db) in open.drain(..half) {
        db.close().unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    db.put(&t, Table::new(3), b"k", b"v", Durability::SyncData)
        .unwrap();
}

/// `Db::verify` catches what open does not read: a flipped byte in a data block of a
/// segment file (open verifies only footer, index and filter) is reported naming the file
/// and an offset; bytes appended to a file are caught too (by open: the footer moved).
#[test]
fn verify_names_a_damaged_data_block_and_a_resized_segment_file() {
    let _spawns = no_child_spawning();
    for damage in ["flip", "append"] {
        let dir = tempfile::tempdir().unwrap();
        let t = tenant("v");
        let db = Db::open(dir.path(), small()).unwrap();
        for i in 0..2_000 {
            db.put(
                &t,
                Table::new(3),
                &key(i),
                &value(i, 0),
                Durability::Buffered,
            )
            .unwrap();
        }
        db.compact_all().unwrap();
        db.verify().unwrap();
        db.close().unwrap();
        let sst = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "sst"))
            .unwrap();
        let mut bytes = std::fs::read(&sst).unwrap();
        match damage {
            "flip" => bytes[100] ^= 0x10,
            _ => bytes.extend_from_slice(b"junk"),
        }
        std::fs::write(&sst, &bytes).unwrap();
        let err = match Db::open(dir.path(), small()) {
            Ok(db) => db.verify().unwrap_err(),
            Err(e) => e,
        };
        let text = err.to_string();
        assert!(
            text.contains(sst.file_name().unwrap().to_str().unwrap()),
            "{damage}: {text}"
        );
        assert!(text.contains("offset"), "{damage}: {text}");
    }
}

/// The real filesystem, except that a rename made by the background thread named
/// `blocked` waits while the gate is closed: it holds that thread's flush or compaction
/// at its last step, so writers stall for a known reason for as long as the test wants.
#[derive(Debug)]
struct Gated {
    inner: memforest_io::StdStorage,
    blocked: &'static str,
    closed: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gated {
    fn new(blocked: &'static str) -> Arc<Self> {
        Arc::new(Self {
            inner: memforest_io::StdStorage,
            blocked,
            closed: std::sync::Mutex::new(true),
            opened: std::sync::Condvar::new(),
        })
    }

    fn open(&self) {
        *self.closed.lock().unwrap() = false;
        self.opened.notify_all();
    }
}

/// Opens the gate when dropped, so a failed assertion cannot leave the engine's drop
/// waiting for a held background thread. Declare it after the `Db`.
struct OpenOnDrop(Arc<Gated>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl memforest_io::Storage for Gated {
    fn create_new(
        &self,
        p: &std::path::Path,
    ) -> std::io::Result<Box<dyn memforest_io::WritableFile>> {
        self.inner.create_new(p)
    }
    fn create(&self, p: &std::path::Path) -> std::io::Result<Box<dyn memforest_io::WritableFile>> {
        self.inner.create(p)
    }
    fn open_append(
        &self,
        p: &std::path::Path,
    ) -> std::io::Result<Box<dyn memforest_io::WritableFile>> {
        self.inner.open_append(p)
    }
    fn read(&self, p: &std::path::Path) -> std::io::Result<Vec<u8>> {
        self.inner.read(p)
    }
    fn read_at(&self, p: &std::path::Path, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_at(p, offset, buf)
    }
    fn open_immutable(&self, p: &std::path::Path) -> std::io::Result<memforest_io::ImmutableFile> {
        self.inner.open_immutable(p)
    }
    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
        if thread::current().name() == Some(self.blocked) {
            let mut closed = self.closed.lock().unwrap();
            while *closed {
                closed = self.opened.wait(closed).unwrap();
            }
        }
        self.inner.rename(from, to)
    }
    fn remove_file(&self, p: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove_file(p)
    }
    fn list_dir(&self, p: &std::path::Path) -> std::io::Result<Vec<String>> {
        self.inner.list_dir(p)
    }
    fn create_dir_all(&self, p: &std::path::Path) -> std::io::Result<()> {
        self.inner.create_dir_all(p)
    }
    fn sync_dir(&self, p: &std::path::Path) -> std::io::Result<()> {
        self.inner.sync_dir(p)
    }
    fn exists(&self, p: &std::path::Path) -> bool {
        self.inner.exists(p)
    }
    fn file_len(&self, p: &std::path::Path) -> std::io::Result<u64> {
        self.inner.file_len(p)
    }
}

/// CPU time (user + system, in clock ticks) the thread `tid` of this process has used.
fn thread_cpu_ticks(tid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Starts a writer of 1 KiB values into `db` until `n` are written, waiting for a flush
/// after every `flush_every` (so sealed memtables never pile up); returns its thread, its
/// kernel thread id, and its progress counter.
fn stalled_writer(
    db: &Arc<Db>,
    n: u64,
    flush_every: Option<u64>,
) -> (
    thread::JoinHandle<()>,
    String,
    Arc<std::sync::atomic::AtomicU64>,
) {
    let progress = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let (tid_tx, tid_rx) = mpsc::channel();
    let writer = {
        let (db, progress) = (Arc::clone(db), Arc::clone(&progress));
        thread::spawn(move || {
            let me = std::fs::read_link("/proc/thread-self").unwrap();
            tid_tx
                .send(me.file_name().unwrap().to_string_lossy().into_owned())
                .unwrap();
            let t = tenant("stall");
            for i in 0..n {
                db.put(
                    &t,
                    Table::new(2),
                    &key(i),
                    &[7u8; 1024],
                    Durability::Buffered,
                )
                .unwrap();
                progress.store(i + 1, Ordering::Release);
                if flush_every.is_some_and(|f| (i + 1) % f == 0) {
                    db.flush().unwrap();
                }
            }
        })
    };
    (writer, tid_rx.recv().unwrap(), progress)
}

/// Waits until the stall condition `stalling` holds and `progress` has not moved over
/// three polls 300 ms apart (the writer is stalled, not merely descheduled on a loaded
/// machine), and returns the progress; fails if the writer finishes instead.
fn wait_until_stalled(
    progress: &std::sync::atomic::AtomicU64,
    n: u64,
    stalling: impl Fn() -> bool,
) -> u64 {
    let (mut last, mut still) = (u64::MAX, 0);
    loop {
        thread::sleep(Duration::from_millis(300));
        let now = progress.load(Ordering::Acquire);
        assert!(now < n, "the writer finished: it never stalled");
        still = if now == last && stalling() {
            still + 1
        } else {
            0
        };
        if still == 3 {
            return now;
        }
        last = now;
    }
}

/// bichon PR 6 (with L0 at ~70 tables, inserts busy-waited) and rocksdb 3717 (writes
/// stopped with the reason invisible), first reason. The flush thread is held, so
/// sealed memtables pile up and a writer stalls on `StallReason::Memtables`: while stalled
/// it uses (almost) no CPU (it waits on a condition variable: at most 2 clock ticks, 20 ms,
/// over 1 s, where a spinning writer would use ~100), it resumes once the flush finishes,
/// and the stall is counted under its reason (and only that one) with its duration.
#[test]
fn memtable_stall_waits_without_cpu_and_is_reported_by_reason() {
    let _spawns = no_child_spawning();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::new("memforest-flush");
    let options = Options {
        memtable_size: 8 << 10,
        max_immutable_memtables: 1,
        storage: Arc::clone(&gate) as Arc<dyn memforest_io::Storage>,
        ..Options::default()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let _open = OpenOnDrop(Arc::clone(&gate));
    let n = 200;
    let (writer, tid, progress) = stalled_writer(&db, n, None);
    let at = wait_until_stalled(&progress, n, || db.stats().immutable_memtables >= 1);
    let before = thread_cpu_ticks(&tid);
    thread::sleep(Duration::from_secs(1));
    let used = thread_cpu_ticks(&tid) - before;
    assert_eq!(progress.load(Ordering::Acquire), at, "still stalled");
    assert!(
        used <= 2,
        "a stalled writer used {used} ticks of CPU in 1 s"
    );
    gate.open();
    writer.join().unwrap();
    let s = db.stats();
    assert!(s.stall_memtable_count >= 1, "{s:?}");
    assert!(s.stall_memtable_micros >= 1_000_000, "{s:?}");
    assert_eq!(s.stall_l0_count, 0, "{s:?}");
}

/// rocksdb 3717, second reason ("stopping writes because we have 36 level-0 files"
/// with idle compactions). Compaction is held at its last step, the writer flushes after
/// every memtable (so sealed memtables never pile up), level 0 reaches the stop trigger
/// and the writer stalls on `StallReason::L0Files`; once the compaction commits the writer
/// resumes, and the stall is counted under that reason. (A stall episode is counted under
/// the reason that started it.)
#[test]
fn level0_stall_resumes_after_compaction_and_is_reported_by_reason() {
    let _spawns = no_child_spawning();
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::new("memforest-compact");
    let options = Options {
        memtable_size: 8 << 10,
        max_immutable_memtables: 16,
        l0_compaction_trigger: 2,
        l0_stop_writes_trigger: 3,
        storage: Arc::clone(&gate) as Arc<dyn memforest_io::Storage>,
        ..Options::default()
    };
    let db = Arc::new(Db::open(dir.path(), options).unwrap());
    let _open = OpenOnDrop(Arc::clone(&gate));
    let n = 200;
    let (writer, _, progress) = stalled_writer(&db, n, Some(8));
    wait_until_stalled(&progress, n, || db.stats().levels[0].files >= 3);
    let s = db.stats();
    assert!(s.levels[0].files >= 3, "level 0 at the stop trigger: {s:?}");
    assert_eq!(s.compaction_count, 0, "{s:?}");
    gate.open();
    writer.join().unwrap();
    let s = db.stats();
    assert!(s.stall_l0_count >= 1, "{s:?}");
    assert!(s.compaction_count >= 1, "{s:?}");
    assert_eq!(s.stall_memtable_count, 0, "{s:?}");
    assert_eq!(count(&db, &tenant("stall")), n as usize);
}

/// raft-engine 114 and 99 (corruption in the middle of the log prevents boot and users
/// need salvage). A flipped byte inside batch 15 of 30: the default open refuses naming
/// the WAL segment and the damaged batch's offset (what `memforest wal check` reports, see
/// `memforest-cli/tests/cli.rs::verify_names_a_damaged_wal_record`); opening in
/// `SkipAnyCorrupted` (salvage) boots with every intact batch, the ones after the damage
/// included, and only the damaged one lost.
#[test]
fn mid_log_corruption_is_named_and_salvage_boots_with_every_intact_batch() {
    let _spawns = no_child_spawning();
    use memforest_engine::{Error, RecoveryMode};
    use memforest_wal::recovery::{plan, SegmentImage};
    use memforest_wal::WalError;

    let dir = tempfile::tempdir().unwrap();
    let t = tenant("salvage");
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 1..=30 {
        db.put(
            &t,
            Table::new(3),
            &key(i),
            &value(i, 0),
            Durability::SyncData,
        )
        .unwrap();
    }
    db.close().unwrap();
    let wal_dir = dir.path().join(memforest_engine::WAL_DIR);
    let segment = std::fs::read_dir(&wal_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max()
        .unwrap();
    let id =
        memforest_wal::segment::parse_file_name(segment.file_name().unwrap().to_str().unwrap())
            .unwrap();
    let mut bytes = std::fs::read(&segment).unwrap();
    let images = [SegmentImage { id, bytes: &bytes }];
    let p = plan(
        &images,
        RecoveryMode::AbsoluteConsistency,
        &|_| None,
        &|_, _| false,
    )
    .unwrap();
    let victim = p.batches.iter().find(|b| b.first_seqno == 15).unwrap();
    let at = victim.offset;
    bytes[at as usize + memforest_wal::format::HEADER_SIZE + 4] ^= 0x20;
    std::fs::write(&segment, &bytes).unwrap();
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Wal(WalError::Corruption {
            segment: s, offset, ..
        })) => {
            assert_eq!(s, id);
            assert_eq!(offset, at);
        }
        other => panic!("the default mode must refuse mid-log damage: {other:?}"),
    }
    let salvage = Options {
        recovery_mode: RecoveryMode::SkipAnyCorrupted,
        ..Options::default()
    };
    let db = Db::open(dir.path(), salvage).unwrap();
    for i in 1..=30 {
        let got = db.get(&t, Table::new(3), &key(i)).unwrap();
        if i == 15 {
            assert_eq!(got, None, "the damaged batch is dropped");
        } else {
            assert_eq!(got.as_deref(), Some(&value(i, 0)[..]), "batch {i}");
        }
    }
}
