//! The object-storage tier on an in-memory object store: uploads before the manifest
//! records a file, publication, continuing on an empty directory, writer fencing, hot
//! reads without requests, failed requests losing nothing, replicas, garbage collection;
//! and the same life cycle on a real S3-compatible server (`moto_server`, ignored unless
//! it is on PATH).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use memforest_engine::remote::{self, manifest_numbers, read_manifest};
use memforest_engine::remote_binding;
use memforest_engine::{Db, Durability, Error, Options, Table, TenantId, WriteBatch};
use memforest_object::object_store::memory::InMemory;
use memforest_object::{FaultStore, Remote};

const T: Table = Table::new(1);

/// One shared object store; each "machine" gets its own `Remote` (and runtime) on it. In
/// memory behind a `FaultStore`, or an S3-compatible server by URL.
struct Store {
    faults: Arc<FaultStore>,
    s3: Option<(String, Vec<(String, String)>)>,
}

impl Store {
    fn new() -> Self {
        Self {
            faults: Arc::new(FaultStore::new(Arc::new(InMemory::new()))),
            s3: None,
        }
    }

    fn remote(&self) -> Arc<Remote> {
        Arc::new(match &self.s3 {
            Some((url, options)) => Remote::open(url, options.clone()).unwrap(),
            None => Remote::new(Arc::clone(&self.faults) as _, "tenant-db").unwrap(),
        })
    }

    fn options(&self) -> Options {
        Options {
            memtable_size: 16 << 10,
            remote: Some(self.remote()),
            ..Options::default()
        }
    }
}

fn tenant() -> TenantId {
    TenantId::new("alice").unwrap()
}

fn put_range(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        db.put(
            &tenant(),
            T,
            format!("k{i:05}").as_bytes(),
            format!("v{i}").as_bytes(),
            Durability::Buffered,
        )
        .unwrap();
    }
}

fn assert_range(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        let got = db.get(&tenant(), T, format!("k{i:05}").as_bytes()).unwrap();
        assert_eq!(
            got.as_deref(),
            Some(format!("v{i}").as_bytes()),
            "key k{i:05}"
        );
    }
}

/// Every segment every manifest object names is in the store.
fn assert_manifests_complete(remote: &Remote) {
    let uploaded: BTreeSet<String> = remote
        .list(remote::SST_DIR)
        .unwrap()
        .into_iter()
        .map(|l| l.name)
        .collect();
    for n in manifest_numbers(remote).unwrap() {
        for (_, seg) in read_manifest(remote, n).unwrap().segments {
            let name = memforest_sst::file_name(seg.id);
            assert!(
                uploaded.contains(&name),
                "manifest {n} names missing {name}"
            );
        }
    }
}

/// Opens the store from a new directory (another machine), checks it holds `range`, and
/// that every manifest names only stored objects.
fn assert_store_holds(store: &Store, range: std::ops::Range<u32>) {
    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), store);
    assert_range(&db, range);
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

fn open(dir: &Path, store: &Store) -> Db {
    Db::open(dir, store.options()).unwrap()
}

/// Writes `range` on a machine of its own (a directory dropped after), flushed and closed.
fn write_elsewhere(store: &Store, range: std::ops::Range<u32>) {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), store);
    put_range(&db, range);
    db.flush().unwrap();
    db.close().unwrap();
}

#[test]
fn a_flush_uploads_its_file_and_publishes_a_manifest_naming_it() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    let remote = store.remote();
    assert_eq!(
        manifest_numbers(&remote).unwrap(),
        vec![1],
        "the open claims 1"
    );
    put_range(&db, 0..500);
    db.flush().unwrap();
    let numbers = manifest_numbers(&remote).unwrap();
    let newest = read_manifest(&remote, *numbers.last().unwrap()).unwrap();
    assert!(!newest.segments.is_empty());
    assert!(newest.flushed_seqno >= 500);
    assert!(newest.wal.is_empty(), "the WAL stays local");
    assert_manifests_complete(&remote);
    db.close().unwrap();
}

#[test]
fn an_empty_directory_continues_from_the_object_store() {
    let store = Store::new();
    let first = tempfile::tempdir().unwrap();
    let db = open(first.path(), &store);
    put_range(&db, 0..800);
    db.compact_all().unwrap();
    put_range(&db, 800..900);
    db.flush().unwrap();
    db.close().unwrap();
    drop(first);

    let second = tempfile::tempdir().unwrap();
    let db = open(second.path(), &store);
    assert_range(&db, 0..900);
    put_range(&db, 900..1000);
    db.flush().unwrap();
    db.close().unwrap();
    let db = open(second.path(), &store);
    assert_range(&db, 0..1000);
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

#[test]
fn hot_reads_make_no_request() {
    let store = Store::new();
    write_elsewhere(&store, 0..600);
    let second = tempfile::tempdir().unwrap();
    let db = open(second.path(), &store);
    let before = store.faults.gets();
    for _ in 0..3 {
        assert_range(&db, 0..600);
    }
    assert_eq!(store.faults.gets(), before, "reads were served locally");
    db.close().unwrap();
}

#[test]
fn a_second_writer_fences_the_first() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..300);
    a.flush().unwrap();
    let b = open(b_dir.path(), &store);
    assert_range(&b, 0..300);
    put_range(&a, 300..400);
    // The flush thread meets the fence first; `flush` reports it as its error.
    let err = a.flush().unwrap_err();
    let fenced = match &err {
        Error::Background(inner) => &**inner,
        other => other,
    };
    match fenced {
        Error::Fenced { object, epoch } => {
            assert!(
                object.ends_with(&remote::manifest_name(epoch + 1)),
                "{object}"
            );
        }
        other => panic!("expected Fenced, got {other:?}"),
    }
    let refused = a.put(&tenant(), T, b"late", b"x", Durability::Buffered);
    assert!(refused.is_err(), "a fenced writer takes no more writes");
    put_range(&b, 1000..1100);
    b.flush().unwrap();
    drop(a);
    b.close().unwrap();

    let c_dir = tempfile::tempdir().unwrap();
    let c = open(c_dir.path(), &store);
    assert_range(&c, 0..300);
    assert_range(&c, 1000..1100);
    assert_eq!(
        c.get(&tenant(), T, b"k00350").unwrap(),
        None,
        "A's fenced flush"
    );
    c.close().unwrap();
    assert_manifests_complete(&store.remote());
}

#[test]
fn a_local_store_given_an_object_store_uploads_its_files_at_open() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let local = Options {
        remote: None,
        ..store.options()
    };
    let db = Db::open(dir.path(), local).unwrap();
    put_range(&db, 0..400);
    db.flush().unwrap();
    db.close().unwrap();
    open(dir.path(), &store).close().unwrap();
    assert_manifests_complete(&store.remote());
    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), &store);
    assert_range(&db, 0..400);
    db.close().unwrap();
}

#[test]
fn a_directory_behind_the_object_store_refuses_to_open() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..100);
    a.flush().unwrap();
    a.close().unwrap();
    let b = open(b_dir.path(), &store);
    put_range(&b, 100..200);
    b.flush().unwrap();
    b.close().unwrap();
    match Db::open(a_dir.path(), store.options()) {
        Err(Error::StaleLocal { .. }) => {}
        other => panic!("expected StaleLocal, got {other:?}"),
    }
}

/// A directory whose local manifest went ahead of its own last publication (here: written
/// to as a plain local store) publishes what it holds at its next open: the newest
/// manifest object is the one it created.
#[test]
fn a_directory_ahead_of_its_own_publication_publishes_at_open() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    put_range(&db, 0..100);
    db.flush().unwrap();
    // The flush's publication and the retry after it fail; the local manifest holds it.
    store.faults.fail_puts_under("tenant-db/manifest", 2);
    put_range(&db, 100..300);
    assert!(matches!(db.flush(), Err(Error::Remote(_))));
    db.close().unwrap();
    open(dir.path(), &store).close().unwrap();
    assert_store_holds(&store, 0..300);
}

/// A fenced writer's directory that went on allocating file ids (here: flushes tried
/// after another writer took over) is ahead of the newest manifest in ids but not in
/// content: it must not publish over the other writer's history, nor name the other
/// writer's objects.
#[test]
fn a_fenced_directory_ahead_in_file_ids_refuses_to_open_and_changes_nothing() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..100);
    a.flush().unwrap();
    let b = open(b_dir.path(), &store);
    put_range(&b, 100..200);
    b.flush().unwrap();
    b.close().unwrap();
    put_range(&a, 1000..1050);
    let fenced = format!("{:?}", a.flush());
    assert!(fenced.contains("Fenced"), "{fenced}");
    let refused = a.put(&tenant(), T, b"k09999", b"v", Durability::Buffered);
    assert!(
        matches!(refused, Err(Error::Background(_))),
        "a fenced writer accepts no more writes: {refused:?}"
    );
    drop(a);

    let remote = store.remote();
    let before = manifest_numbers(&remote).unwrap();
    match Db::open(a_dir.path(), store.options()) {
        Err(Error::StaleLocal { object }) => {
            assert!(object.ends_with(&remote::manifest_name(*before.last().unwrap())));
        }
        other => panic!("expected StaleLocal, got {other:?}"),
    }
    assert_eq!(
        manifest_numbers(&remote).unwrap(),
        before,
        "nothing published"
    );
    let c_dir = tempfile::tempdir().unwrap();
    let c = open(c_dir.path(), &store);
    assert_range(&c, 0..200);
    assert_eq!(c.get(&tenant(), T, b"k01000").unwrap(), None);
    c.close().unwrap();
    assert_manifests_complete(&remote);
}

/// A writer fenced while it still flushes uploads under ids of its own span: the writer
/// that fenced it goes on flushing and publishing, and keeps everything.
#[test]
fn a_fenced_writer_still_flushing_never_stops_the_new_writer() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let small_files = Options {
        target_file_size: 1 << 10,
        l0_compaction_trigger: 8,
        ..store.options()
    };
    let a = Db::open(a_dir.path(), small_files.clone()).unwrap();
    for round in 0..4 {
        put_range(&a, round * 25..round * 25 + 25);
        a.flush().unwrap();
    }
    let b = Db::open(b_dir.path(), small_files).unwrap();
    // A compaction into several files, each uploaded before the publication that fails.
    assert!(a.compact_all().is_err(), "fenced at its publication");
    for round in 0..4 {
        put_range(&b, 100 + round * 100..200 + round * 100);
        b.flush().unwrap();
    }
    b.close().unwrap();
    drop(a);
    assert_store_holds(&store, 0..500);
}

/// A writer that stopped between uploading a file and publishing it leaves an object no
/// manifest names. The next writer allocates ids past it and never touches it.
#[test]
fn an_object_left_by_a_stopped_writer_is_never_reused_or_replaced() {
    let store = Store::new();
    write_elsewhere(&store, 0..100);
    let remote = store.remote();
    let newest = manifest_numbers(&remote).unwrap();
    let next = read_manifest(&remote, *newest.last().unwrap())
        .unwrap()
        .next_file_id;
    let left: Vec<u64> = (next..next + 4).collect();
    for &id in &left {
        remote
            .put(
                &remote::segment_name(id),
                b"a stopped writer's upload"[..].into(),
            )
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    for round in 0..3 {
        put_range(&db, 100 + round * 100..200 + round * 100);
        db.flush().unwrap();
    }
    db.close().unwrap();
    for &id in &left {
        assert_eq!(
            &remote.get(&remote::segment_name(id)).unwrap()[..],
            b"a stopped writer's upload"
        );
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), &store);
    assert_range(&db, 0..400);
    db.close().unwrap();
    assert_manifests_complete(&remote);
}

/// Two writers opening one location at once, each writing and flushing: whichever keeps
/// its epoch has every write it acknowledged published; the other fails with an error
/// (fenced, or its upload conflicts) and nothing of the winner's is replaced.
#[test]
fn two_writers_starting_at_once_lose_nothing_the_winner_acknowledged() {
    for _ in 0..12 {
        let store = Store::new();
        let barrier = std::sync::Barrier::new(2);
        let outcomes: Vec<(u32, bool)> = std::thread::scope(|scope| {
            let runs: Vec<_> = [0u32, 10_000]
                .into_iter()
                .map(|base| {
                    let (store, barrier) = (&store, &barrier);
                    scope.spawn(move || {
                        let dir = tempfile::tempdir().unwrap();
                        barrier.wait();
                        let Ok(db) = Db::open(dir.path(), store.options()) else {
                            return (base, false);
                        };
                        let mut ok = true;
                        for round in 0..4 {
                            let range = base + round * 100..base + round * 100 + 100;
                            ok &= range.clone().all(|i| {
                                db.put(
                                    &tenant(),
                                    T,
                                    format!("k{i:05}").as_bytes(),
                                    format!("v{i}").as_bytes(),
                                    Durability::Buffered,
                                )
                                .is_ok()
                            });
                            ok &= db.flush().is_ok();
                        }
                        ok &= db.close().is_ok();
                        (base, ok)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let winners: Vec<u32> = outcomes.iter().filter(|o| o.1).map(|o| o.0).collect();
        assert!(winners.len() <= 1, "both writers succeeded: {outcomes:?}");
        let dir = tempfile::tempdir().unwrap();
        let Ok(db) = Db::open(dir.path(), store.options()) else {
            panic!("the location does not open after {outcomes:?}");
        };
        for base in winners {
            assert_range(&db, base..base + 400);
        }
        db.close().unwrap();
        assert_manifests_complete(&store.remote());
    }
}

#[test]
fn a_failed_upload_records_nothing_and_a_reopen_flushes_again() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    // One memtable holds every write: the only put after the injection is the upload.
    let whole = Options {
        memtable_size: 64 << 20,
        ..store.options()
    };
    let db = Db::open(dir.path(), whole).unwrap();
    put_range(&db, 0..400);
    let published = manifest_numbers(&store.remote()).unwrap();
    store.faults.fail_puts(1);
    assert!(matches!(db.flush(), Err(Error::Background(_))));
    assert_eq!(
        manifest_numbers(&store.remote()).unwrap(),
        published,
        "nothing was published"
    );
    assert_manifests_complete(&store.remote());
    drop(db);

    let db = open(dir.path(), &store);
    assert_range(&db, 0..400);
    db.flush().unwrap();
    db.close().unwrap();
    assert_store_holds(&store, 0..400);
}

#[test]
fn failed_downloads_and_listings_fail_the_open_and_a_retry_succeeds() {
    let store = Store::new();
    write_elsewhere(&store, 0..300);
    let second = tempfile::tempdir().unwrap();
    store.faults.fail_lists(1);
    assert!(matches!(
        Db::open(second.path(), store.options()),
        Err(Error::Remote(_))
    ));
    store.faults.fail_gets(1);
    assert!(Db::open(second.path(), store.options()).is_err());
    let db = open(second.path(), &store);
    assert_range(&db, 0..300);
    db.close().unwrap();
}

#[test]
fn a_replica_serves_the_published_state_and_follows_newer_manifests() {
    let store = Store::new();
    let (w_dir, r_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = open(w_dir.path(), &store);
    put_range(&writer, 0..300);
    writer.flush().unwrap();
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert!(replica.is_read_only());
    let gets = store.faults.gets();
    assert_range(&replica, 0..300);
    assert_eq!(store.faults.gets(), gets, "a replica reads its cache");
    assert!(!replica.refresh().unwrap(), "nothing newer yet");

    put_range(&writer, 300..600);
    let mut delete = WriteBatch::new();
    delete.delete(&tenant(), T, b"k00007");
    writer.write(&delete, Durability::Buffered).unwrap();
    assert_eq!(
        replica.get(&tenant(), T, b"k00400").unwrap(),
        None,
        "unflushed writes are the writer's alone"
    );
    writer.compact_all().unwrap();
    assert!(replica.refresh().unwrap());
    assert_range(&replica, 300..600);
    assert_eq!(replica.get(&tenant(), T, b"k00007").unwrap(), None);
    let cached: Vec<String> = std::fs::read_dir(r_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    let live = replica
        .stats()
        .levels
        .iter()
        .map(|l| l.files)
        .sum::<usize>();
    assert_eq!(
        cached.len(),
        live,
        "dropped files left the cache: {cached:?}"
    );
    assert!(replica
        .put(&tenant(), T, b"x", b"y", Durability::Buffered)
        .is_err());
    writer.close().unwrap();
    drop(replica);

    // A replica reopened on its cache directory serves the newest state.
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert_range(&replica, 300..600);
}

/// `Db::close` of a writer flushes and publishes: a replica sees what it wrote without any
/// flush call, and so does a new machine.
#[test]
fn a_writer_closed_without_a_flush_publishes_its_writes() {
    let store = Store::new();
    let (w_dir, r_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = open(w_dir.path(), &store);
    put_range(&writer, 0..50);
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert_eq!(
        replica.get(&tenant(), T, b"k00000").unwrap(),
        None,
        "the writes are in the writer's memtable only"
    );
    writer.close().unwrap();
    assert!(replica.refresh().unwrap());
    assert_range(&replica, 0..50);
    drop(replica);
    assert_store_holds(&store, 0..50);
}

/// A close whose upload fails returns the error and loses nothing: the writes stay in the
/// WAL, and the next open of the directory publishes them.
#[test]
fn a_close_that_cannot_publish_keeps_the_writes_in_the_wal() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    put_range(&db, 0..50);
    let published = manifest_numbers(&store.remote()).unwrap();
    store.faults.fail_puts(1);
    assert!(db.close().is_err());
    assert_eq!(manifest_numbers(&store.remote()).unwrap(), published);

    open(dir.path(), &store).close().unwrap();
    let r_dir = tempfile::tempdir().unwrap();
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert_range(&replica, 0..50);
}

/// `Options::remote_flush_interval` publishes a writer's writes without any flush or
/// close, and publishes nothing while there is nothing new.
#[test]
fn the_flush_interval_publishes_without_a_flush_call() {
    let store = Store::new();
    let (w_dir, r_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let every = std::time::Duration::from_millis(50);
    let options = Options {
        remote_flush_interval: Some(every),
        ..store.options()
    };
    let writer = Db::open(w_dir.path(), options).unwrap();
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    put_range(&writer, 0..50);
    // Polled, not timed: the deadline only ends a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while replica.get(&tenant(), T, b"k00049").unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the writes were never published"
        );
        std::thread::sleep(every);
        replica.refresh().unwrap();
    }
    assert_range(&replica, 0..50);
    assert!(writer.stats().levels.iter().any(|l| l.files > 0));

    // Nothing new: no flush, no publication.
    let numbers = manifest_numbers(&store.remote()).unwrap();
    std::thread::sleep(every * 6);
    assert_eq!(manifest_numbers(&store.remote()).unwrap(), numbers);
    writer.close().unwrap();
}

#[test]
fn a_replica_refuses_a_writers_directory() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    put_range(&db, 0..10);
    db.close().unwrap();
    let before = listing(dir.path());
    match Db::open_replica(dir.path(), store.options()) {
        Err(Error::InvalidArgument(reason)) => assert!(reason.contains("WAL"), "{reason}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(before, listing(dir.path()), "nothing changed");
    let db = open(dir.path(), &store);
    assert_range(&db, 0..10);
    db.close().unwrap();
}

#[test]
fn a_replica_of_an_empty_location_is_refused() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    match Db::open_replica(dir.path(), store.options()) {
        Err(Error::NoRemoteManifest { location }) => assert!(location.contains("tenant-db")),
        other => panic!("expected NoRemoteManifest, got {other:?}"),
    }
}

/// Deletes every object of the location, as an operator emptying the prefix would.
fn empty_location(store: &Store) {
    let remote = store.remote();
    for dir in [remote::SST_DIR, remote::MANIFEST_DIR] {
        for listed in remote.list(dir).unwrap() {
            remote.delete(&format!("{dir}/{}", listed.name)).unwrap();
        }
    }
    remote.delete(remote_binding::STORE_ID_OBJECT).unwrap();
}

/// The newest manifest object's number.
fn newest_number(store: &Store) -> u64 {
    *manifest_numbers(&store.remote()).unwrap().last().unwrap()
}

fn assert_foreign<T: std::fmt::Debug>(opened: Result<T, Error>, dir: &Path) {
    match opened {
        Err(Error::ForeignDirectory { dir: named, .. }) => assert_eq!(named, dir),
        other => panic!("expected ForeignDirectory, got {other:?}"),
    }
}

/// A writer's directory kept after its location was emptied and written again from
/// elsewhere, up to the very manifest number the directory last created: its record
/// names the old store, so it neither opens nor publishes over the new one.
#[test]
fn a_directory_of_an_emptied_and_rewritten_location_refuses_to_open() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..100);
    a.flush().unwrap();
    a.close().unwrap();
    let a_epoch = newest_number(&store);

    empty_location(&store);
    let b = open(b_dir.path(), &store);
    let mut round = 0;
    while newest_number(&store) < a_epoch {
        put_range(&b, 1000 + round * 10..1010 + round * 10);
        b.flush().unwrap();
        round += 1;
    }
    assert_eq!(newest_number(&store), a_epoch, "the numbers match");
    b.close().unwrap();

    let before = manifest_numbers(&store.remote()).unwrap();
    assert_foreign(Db::open(a_dir.path(), store.options()), a_dir.path());
    assert_eq!(manifest_numbers(&store.remote()).unwrap(), before);
    let c_dir = tempfile::tempdir().unwrap();
    let c = open(c_dir.path(), &store);
    assert_range(&c, 1000..1000 + round * 10);
    assert_eq!(c.get(&tenant(), T, b"k00000").unwrap(), None);
    c.close().unwrap();
    assert_manifests_complete(&store.remote());
}

/// The directory's file names, sorted, but the lock file.
fn listing(dir: &Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "LOCK")
        .collect();
    names.sort();
    names
}

/// A writer still running while its location is emptied, and written again by another
/// writer, uploads and publishes nothing more: its next flush finds the store id changed
/// and fences it, and the new store stays whole.
#[test]
fn a_running_writer_stops_when_its_location_is_emptied() {
    let store = Store::new();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..100);
    a.flush().unwrap();
    empty_location(&store);
    put_range(&a, 100..150);
    let flushed = format!("{:?}", a.flush());
    assert!(
        flushed.contains("Fenced") && flushed.contains("store-id"),
        "{flushed}"
    );
    assert!(
        manifest_numbers(&store.remote()).unwrap().is_empty(),
        "nothing published"
    );

    let b = open(b_dir.path(), &store);
    put_range(&b, 1000..1100);
    b.flush().unwrap();
    b.close().unwrap();
    drop(a);
    assert_store_holds(&store, 1000..1100);
    // Its repair is refused before anything in its directory changes.
    let before = listing(a_dir.path());
    assert_foreign(Db::repair(a_dir.path(), store.options()), a_dir.path());
    assert_eq!(listing(a_dir.path()), before);
}

/// A replica refuses, before it writes anything, a local store's directory and a
/// directory holding someone's files.
#[test]
fn a_replica_refuses_a_directory_that_is_not_its_own_and_changes_nothing() {
    let store = Store::new();
    write_elsewhere(&store, 0..10);
    let local = tempfile::tempdir().unwrap();
    Db::open(local.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
    let users = tempfile::tempdir().unwrap();
    std::fs::write(users.path().join(memforest_sst::file_name(1)), b"mine").unwrap();
    std::fs::write(users.path().join("notes.txt"), b"mine").unwrap();
    for dir in [local.path(), users.path()] {
        let before = listing(dir);
        match Db::open_replica(dir, store.options()) {
            Err(Error::InvalidArgument(_)) => {}
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        assert_eq!(listing(dir), before, "{}", dir.display());
    }
    Db::open(local.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
}

/// A writer's directory opened on another location that holds a store is refused, as a
/// writer and as a replica.
#[test]
fn a_directory_opened_on_another_location_is_refused() {
    let (first, second) = (Store::new(), Store::new());
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open(a_dir.path(), &first);
    put_range(&a, 0..100);
    a.close().unwrap();
    let b = open(b_dir.path(), &second);
    put_range(&b, 100..200);
    b.flush().unwrap();
    b.close().unwrap();
    let before = manifest_numbers(&second.remote()).unwrap();
    assert_foreign(Db::open(a_dir.path(), second.options()), a_dir.path());
    assert_eq!(manifest_numbers(&second.remote()).unwrap(), before);

    let r_dir = tempfile::tempdir().unwrap();
    Db::open_replica(r_dir.path(), first.options()).unwrap();
    assert_foreign(
        Db::open_replica(r_dir.path(), second.options()),
        r_dir.path(),
    );
}

/// A location emptied with nothing written since: its writer's directory publishes its
/// state again, as a new store (nothing there to lose).
#[test]
fn a_directory_of_an_emptied_location_publishes_its_state_again() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    put_range(&db, 0..300);
    db.flush().unwrap();
    db.close().unwrap();
    empty_location(&store);
    open(dir.path(), &store).close().unwrap();
    assert_store_holds(&store, 0..300);
}

/// A replica of a location emptied and written again keeps serving what it served (its
/// refresh fails naming the directory), and its directory is refused afterwards: its
/// cached files, trusted by id, are the old store's.
#[test]
fn a_replica_of_an_emptied_and_rewritten_location_stops_following() {
    let store = Store::new();
    let (a_dir, b_dir, r_dir) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let a = open(a_dir.path(), &store);
    put_range(&a, 0..100);
    a.flush().unwrap();
    a.close().unwrap();
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert_range(&replica, 0..100);

    empty_location(&store);
    let b = open(b_dir.path(), &store);
    for round in 0..4 {
        put_range(&b, 1000 + round * 10..1010 + round * 10);
        b.flush().unwrap();
    }
    b.close().unwrap();
    match replica.refresh() {
        Err(Error::ForeignDirectory { dir, .. }) => assert_eq!(dir, r_dir.path()),
        other => panic!("expected ForeignDirectory, got {other:?}"),
    }
    assert_range(&replica, 0..100);
    drop(replica);
    assert_foreign(
        Db::open_replica(r_dir.path(), store.options()),
        r_dir.path(),
    );
    let fresh = tempfile::tempdir().unwrap();
    let replica = Db::open_replica(fresh.path(), store.options()).unwrap();
    assert_range(&replica, 1000..1040);
    assert_eq!(replica.get(&tenant(), T, b"k00000").unwrap(), None);
}

/// The directory of a store on an object store may hold only part of it: a local
/// read-write open and a repair without the location are refused and change nothing;
/// with the location, the repair fetches what it lacks and the store stays whole.
#[test]
fn a_directory_of_a_remote_store_needs_its_location_to_open_or_repair() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 0)).unwrap();
    put_range(&db, 0..300);
    db.flush().unwrap();
    db.close().unwrap();
    let local = Options {
        remote: None,
        ..store.options()
    };
    let before = listing(dir.path());
    let needs = |r: Result<(), Error>| match r {
        Err(Error::NeedsLocation { dir: named }) => assert_eq!(named, dir.path()),
        other => panic!("expected NeedsLocation, got {other:?}"),
    };
    needs(Db::open(dir.path(), local.clone()).map(drop));
    needs(Db::repair(dir.path(), local).map(drop));
    assert_eq!(listing(dir.path()), before, "nothing changed");

    Db::repair(dir.path(), cached(&store, 0)).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), &store);
    assert_range(&db, 0..300);
    db.close().unwrap();
}

#[test]
fn garbage_collection_keeps_what_live_manifests_name() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), &store);
    for round in 0..4 {
        put_range(&db, round * 200..round * 200 + 300);
        db.compact_all().unwrap();
    }
    let remote = store.remote();
    let before = remote.list(remote::SST_DIR).unwrap().len();
    let manifests = manifest_numbers(&remote).unwrap();

    // Within the grace period nothing goes, however many manifests there are.
    let recent = db
        .collect_remote_garbage(&remote::GcPolicy {
            keep_manifests: 1,
            ..remote::GcPolicy::default()
        })
        .unwrap();
    assert_eq!(recent, remote::GcReport::default());

    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let policy = remote::GcPolicy {
        keep_manifests: 2,
        ..remote::GcPolicy::default()
    };
    let report = remote::collect_garbage(&remote, &policy, later).unwrap();
    assert!(!report.segments.is_empty(), "compactions left garbage");
    assert_eq!(report.manifests.len(), manifests.len() - 2);
    assert_eq!(
        remote.list(remote::SST_DIR).unwrap().len(),
        before - report.segments.len()
    );
    assert_eq!(
        manifest_numbers(&remote).unwrap(),
        manifests[manifests.len() - 2..]
    );
    assert_manifests_complete(&remote);
    put_range(&db, 2000..2100);
    db.flush().unwrap();
    db.close().unwrap();

    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), &store);
    assert_range(&db, 0..900);
    assert_range(&db, 2000..2100);
    db.close().unwrap();
}

#[test]
fn automatic_garbage_collection_deletes_what_no_live_manifest_names() {
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        remote_gc: Some(memforest_engine::remote_gc::RemoteGc {
            every: std::time::Duration::from_millis(100),
            policy: remote::GcPolicy {
                keep_manifests: 1,
                grace: std::time::Duration::from_secs(1),
            },
        }),
        ..store.options()
    };
    let db = Db::open(dir.path(), options).unwrap();
    for round in 0..4 {
        put_range(&db, round * 200..round * 200 + 300);
        db.compact_all().unwrap();
    }
    let remote = store.remote();
    let live = |remote: &Remote| -> BTreeSet<String> {
        let n = *manifest_numbers(remote).unwrap().last().unwrap();
        read_manifest(remote, n)
            .unwrap()
            .segments
            .iter()
            .map(|(_, s)| memforest_sst::file_name(s.id))
            .collect()
    };
    let stored = |remote: &Remote| -> BTreeSet<String> {
        remote
            .list(remote::SST_DIR)
            .unwrap()
            .into_iter()
            .map(|l| l.name)
            .collect()
    };
    assert!(
        stored(&remote).len() > live(&remote).len(),
        "compactions left garbage"
    );
    // Polled, not timed: the collector runs every 100 ms once the grace has passed; the
    // deadline only ends a hang.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while stored(&remote) != live(&remote) || manifest_numbers(&remote).unwrap().len() > 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "garbage never collected"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_manifests_complete(&remote);
    let stats = db.remote_gc_stats().unwrap();
    assert!(stats.deleted > 0 && stats.runs > 0, "{stats:?}");
    db.close().unwrap();

    let elsewhere = tempfile::tempdir().unwrap();
    let db = open(elsewhere.path(), &store);
    assert_range(&db, 0..900);
    assert_eq!(db.remote_gc_stats(), None, "off unless asked for");
    db.close().unwrap();
}

/// `moto_server` (PyPI `moto[server]`) on a free 127.0.0.1 port, killed on drop.
struct Moto {
    child: std::process::Child,
    endpoint: String,
}

impl Moto {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("moto_server")
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("moto_server on PATH (pip install 'moto[server]')");
        let addr = format!("127.0.0.1:{port}");
        // Killed and waited for by `Drop`, also when it never listens.
        let moto = Self {
            child,
            endpoint: format!("http://{addr}"),
        };
        for _ in 0..600 {
            if std::net::TcpStream::connect(&addr).is_ok() {
                return moto;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("moto_server did not listen on {addr}");
    }

    /// Creates `bucket` (object stores do not create buckets).
    fn create_bucket(&self, bucket: &str) {
        use std::io::{Read, Write};
        let host = self.endpoint.trim_start_matches("http://");
        let mut conn = std::net::TcpStream::connect(host).unwrap();
        write!(
            conn,
            "PUT /{bucket} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        conn.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    }

    fn store(&self, bucket: &str) -> Store {
        let options = [
            ("aws_endpoint", self.endpoint.as_str()),
            ("aws_allow_http", "true"),
            ("aws_region", "us-east-1"),
            ("aws_access_key_id", "test"),
            ("aws_secret_access_key", "test"),
        ];
        Store {
            s3: Some((
                format!("s3://{bucket}/tenant-db"),
                options
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            )),
            ..Store::new()
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs moto_server on PATH and --features memforest-object/s3; .ci/run runs it so"]
fn on_s3_a_new_machine_continues_a_second_writer_fences_and_a_replica_follows() {
    let moto = Moto::start();
    moto.create_bucket("memforest-test");
    let store = moto.store("memforest-test");
    write_elsewhere(&store, 0..300);

    let (b_dir, r_dir, c_dir) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let b = open(b_dir.path(), &store);
    assert_range(&b, 0..300);
    let replica = Db::open_replica(r_dir.path(), store.options()).unwrap();
    assert_range(&replica, 0..300);
    put_range(&b, 300..600);
    b.flush().unwrap();
    assert!(replica.refresh().unwrap());
    assert_range(&replica, 0..600);

    let c = open(c_dir.path(), &store);
    assert_range(&c, 0..600);
    put_range(&b, 600..700);
    let err = b.flush().unwrap_err();
    let fenced = match &err {
        Error::Background(inner) => &**inner,
        other => other,
    };
    assert!(matches!(fenced, Error::Fenced { .. }), "{err:?}");
    put_range(&c, 700..800);
    c.flush().unwrap();
    assert!(replica.refresh().unwrap());
    assert_range(&replica, 700..800);
    assert_eq!(replica.get(&tenant(), T, b"k00650").unwrap(), None);
    assert_manifests_complete(&store.remote());
}

/// A random run of writes, flushes with injected upload, publication, download and listing
/// failures, process crashes (reopen the same directory) and machine losses (reopen an
/// empty one): a crash loses no acknowledged write, a machine loss none that a successful
/// `flush` published.
#[test]
fn random_faults_lose_no_acknowledged_or_published_write() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(35);
    let store = Store::new();
    let mut dir = tempfile::tempdir().unwrap();
    let mut db = Some(open(dir.path(), &store));
    // Keys are never rewritten: `written` is every acknowledged key, `published` those a
    // successful flush published.
    let (mut written, mut published) = (0..0u32, 0..0u32);
    let (mut failed_flushes, mut machines_lost) = (0, 0);
    let reopen = |path: &Path| {
        // A failure injected and not yet consumed may fail the open: open again.
        let mut result = Db::open(path, store.options());
        for _ in 0..3 {
            if result.is_ok() {
                break;
            }
            result = Db::open(path, store.options());
        }
        result.unwrap()
    };
    for step in 0..60 {
        let live = db.as_ref().unwrap();
        match rng.gen_range(0..6) {
            0..=2 => {
                let n = rng.gen_range(1..200);
                put_range(live, written.end..written.end + n);
                written.end += n;
            }
            3 => {
                // Something to upload, then maybe a failure for it.
                let n = rng.gen_range(1..50);
                put_range(live, written.end..written.end + n);
                written.end += n;
                match rng.gen_range(0..3) {
                    0 | 1 => store.faults.fail_puts(rng.gen_range(1..3)),
                    _ => store.faults.fail_lists(1),
                }
                if live.flush().is_ok() {
                    published = written.clone();
                } else {
                    failed_flushes += 1;
                    drop(db.take());
                    store.faults.fail_puts(0);
                    store.faults.fail_lists(0);
                    db = Some(reopen(dir.path()));
                }
            }
            4 => {
                drop(db.take());
                if rng.gen_bool(0.5) {
                    store.faults.fail_gets(1);
                }
                db = Some(reopen(dir.path()));
            }
            _ => {
                machines_lost += 1;
                drop(db.take());
                dir = tempfile::tempdir().unwrap();
                store.faults.fail_gets(rng.gen_range(0..2));
                let fresh = reopen(dir.path());
                assert_range(&fresh, published.clone());
                // What the lost machine had not published may or may not have survived.
                // Rewrites give a key its one value, so writing on from here is safe.
                written = published.clone();
                db = Some(fresh);
                continue;
            }
        }
        let live = db.as_ref().unwrap();
        assert_range(live, written.clone());
        assert!(published.end <= written.end, "step {step}");
    }
    db.take().unwrap().close().unwrap();
    assert_manifests_complete(&store.remote());
    eprintln!("failed flushes {failed_flushes}, machines lost {machines_lost}");
    assert!(
        failed_flushes > 0 && machines_lost > 0,
        "the run met faults"
    );
}

/// `store`'s options with a local cache of at most `bound` bytes of segment files, and
/// small segment files (so the live set is many files).
fn cached(store: &Store, bound: u64) -> Options {
    Options {
        target_file_size: 4 << 10,
        remote_cache_bytes: Some(bound),
        ..store.options()
    }
}

/// Writes `range` on a machine of its own in files of about 4 KiB, compacted and closed;
/// returns the live files' total and largest sizes.
fn write_small_files(store: &Store, range: std::ops::Range<u32>) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        target_file_size: 4 << 10,
        ..store.options()
    };
    let db = Db::open(dir.path(), options).unwrap();
    put_range(&db, range);
    db.compact_all().unwrap();
    db.close().unwrap();
    live_sizes(&store.remote())
}

/// The newest manifest object's live files: total and largest size.
fn live_sizes(remote: &Remote) -> (u64, u64) {
    let (_, state) = remote::newest(remote).unwrap().unwrap();
    let sizes = state.segments.iter().map(|(_, s)| s.file_size);
    (sizes.clone().sum(), sizes.max().unwrap())
}

/// Bytes of the segment files in `dir`.
fn local_segment_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// A cache of a quarter of the live set: every key reads, the directory stays within the
/// bound plus the one file the last read fetched (counted after it was pinned), a hot
/// repeated read makes no request, an evicted file is fetched again, and `verify` fetches
/// what it checks instead of reporting missing copies.
#[test]
fn a_bounded_cache_serves_every_key_within_its_bound() {
    let store = Store::new();
    let (live, largest) = write_small_files(&store, 0..3000);
    let bound = live / 4;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, bound)).unwrap();
    assert_eq!(
        local_segment_bytes(dir.path()),
        0,
        "nothing fetched at open"
    );

    let before = store.faults.gets();
    assert_range(&db, 0..3000);
    let first_pass = store.faults.gets() - before;
    assert!(first_pass > 0, "cold reads fetch");
    assert!(
        local_segment_bytes(dir.path()) <= bound + largest,
        "{} bytes cached, bound {bound}",
        local_segment_bytes(dir.path())
    );

    let hot = store.faults.gets();
    for _ in 0..5 {
        assert_range(&db, 2950..3000);
    }
    assert_eq!(store.faults.gets(), hot, "the hot keys' files stay local");

    let evicted = store.faults.gets();
    assert_range(&db, 0..10);
    assert!(
        store.faults.gets() > evicted,
        "the least recently read file was evicted and is fetched again"
    );

    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.segment_bytes, live);
    assert!(local_segment_bytes(dir.path()) <= bound + largest);
    db.close().unwrap();

    // A reopen finds the copies it kept and fetches the others on demand.
    let db = Db::open(dir.path(), cached(&store, bound)).unwrap();
    assert_range(&db, 0..3000);
    db.close().unwrap();
}

/// A writer under a cache bound: its flushed and compacted files count towards it,
/// compaction reads inputs whose copies were evicted, and nothing is lost.
#[test]
fn a_writer_with_a_bounded_cache_compacts_evicted_inputs() {
    const BOUND: u64 = 8 << 10;
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, BOUND)).unwrap();
    put_range(&db, 0..3000);
    db.compact_all().unwrap();
    let (live, largest) = live_sizes(&store.remote());
    assert!(live > 4 * BOUND, "{live} bytes live");
    let cached = local_segment_bytes(dir.path());
    assert!(cached <= BOUND + largest, "{cached} bytes cached");

    let mut overwrite = WriteBatch::new();
    for i in (0..3000u32).step_by(7) {
        overwrite.put(&tenant(), T, format!("k{i:05}").as_bytes(), b"new");
    }
    db.write(&overwrite, Durability::Buffered).unwrap();
    let before = store.faults.gets();
    db.compact_all().unwrap();
    assert!(
        store.faults.gets() > before,
        "compaction fetched evicted inputs"
    );
    for i in 0..3000u32 {
        let want = if i % 7 == 0 {
            b"new".to_vec()
        } else {
            format!("v{i}").into_bytes()
        };
        let got = db.get(&tenant(), T, format!("k{i:05}").as_bytes()).unwrap();
        assert_eq!(got.as_deref(), Some(&want[..]), "k{i:05}");
    }
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

/// A failed download fails that read only: the file stays named and stored, and the next
/// read of it succeeds.
#[test]
fn a_failed_fetch_fails_the_read_and_a_retry_succeeds() {
    let store = Store::new();
    write_small_files(&store, 0..1000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 8 << 10)).unwrap();
    store.faults.fail_gets(1);
    let err = db.get(&tenant(), T, b"k00500").unwrap_err();
    assert!(err.to_string().contains("fetch"), "{err}");
    assert_range(&db, 0..1000);
    store.faults.fail_gets(1);
    let failed = match db.scan_prefix(&tenant(), T, b"k", None) {
        Err(_) => true,
        Ok(mut scan) => scan.any(|e| e.is_err()),
    };
    assert!(failed, "a scan reaching the evicted first file fails");
    let scan = db.scan_prefix(&tenant(), T, b"k", None).unwrap();
    assert_eq!(scan.map(Result::unwrap).count(), 1000);
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

/// A replica under a cache bound serves every key within it and follows newer manifests
/// without fetching their files until they are read.
#[test]
fn a_replica_with_a_bounded_cache_serves_and_follows() {
    let store = Store::new();
    let (live, largest) = write_small_files(&store, 0..2000);
    let bound = live / 4;
    let dir = tempfile::tempdir().unwrap();
    let replica = Db::open_replica(dir.path(), cached(&store, bound)).unwrap();
    assert_range(&replica, 0..2000);
    assert!(local_segment_bytes(dir.path()) <= bound + largest);

    write_small_files(&store, 2000..2500);
    let before = store.faults.gets();
    assert!(replica.refresh().unwrap());
    assert_eq!(
        store.faults.gets(),
        before + 2,
        "a refresh reads the store id and the manifest object only"
    );
    assert_range(&replica, 0..2500);
    assert!(local_segment_bytes(dir.path()) <= bound + largest);
}

/// Copies that reads held while the store was open are trimmed to the bound when it
/// closes: a replica with a bound of 0 leaves no segment file behind.
#[test]
fn a_closed_store_leaves_its_cache_within_the_bound() {
    let store = Store::new();
    write_small_files(&store, 0..1000);
    let dir = tempfile::tempdir().unwrap();
    let replica = Db::open_replica(dir.path(), cached(&store, 0)).unwrap();
    assert_range(&replica, 0..1000);
    drop(replica);
    assert_eq!(local_segment_bytes(dir.path()), 0);
}

/// Repair of a store whose cache evicted files adopts them from the object store instead
/// of rebuilding a manifest without them.
#[test]
fn repair_fetches_the_files_a_bounded_cache_evicted() {
    const BOUND: u64 = 8 << 10;
    let store = Store::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, BOUND)).unwrap();
    put_range(&db, 0..2000);
    db.compact_all().unwrap();
    db.close().unwrap();
    let (live, _) = live_sizes(&store.remote());
    assert!(
        local_segment_bytes(dir.path()) < live,
        "some copies were evicted"
    );

    let report = Db::repair(dir.path(), cached(&store, BOUND)).unwrap();
    assert!(report.unreadable.is_empty(), "{report:?}");
    let db = Db::open(dir.path(), cached(&store, BOUND)).unwrap();
    assert_range(&db, 0..2000);
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

/// Readers racing for a file whose copy is not local wait for one fetch.
#[test]
fn racing_reads_of_an_evicted_file_fetch_it_once() {
    let store = Store::new();
    write_small_files(&store, 0..2000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 8 << 10)).unwrap();
    let before = store.faults.gets();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| assert_range(&db, 1000..1001));
        }
    });
    assert_eq!(store.faults.gets(), before + 1, "one GET for eight readers");
    db.close().unwrap();
}

/// Writes `count` keys with values of 1 KiB on a machine of its own, in files of about
/// 4 MiB, compacted and closed; returns the live files' total and largest sizes.
fn write_large_files(store: &Store, count: u32) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 8 << 20,
        target_file_size: 4 << 20,
        ..store.options()
    };
    let db = Db::open(dir.path(), options).unwrap();
    let mut batch = WriteBatch::new();
    for i in 0..count {
        batch.put(&tenant(), T, &large_key(i), &large_value(i));
        if batch.len() == 1000 {
            db.write(&batch, Durability::Buffered).unwrap();
            batch = WriteBatch::new();
        }
    }
    db.write(&batch, Durability::Buffered).unwrap();
    db.compact_all().unwrap();
    db.close().unwrap();
    live_sizes(&store.remote())
}

fn large_key(i: u32) -> Vec<u8> {
    format!("big{i:06}").into_bytes()
}

fn large_value(i: u32) -> Vec<u8> {
    format!("{i:08}").repeat(128).into_bytes()
}

fn assert_large(db: &Db, i: u32) {
    let got = db.get(&tenant(), T, &large_key(i)).unwrap();
    assert_eq!(got.as_deref(), Some(&large_value(i)[..]), "key {i}");
}

/// A cold point read of a file not in the directory fetches its metadata tail and one
/// block by range, not the file; a second key of the same file one block; a hot key no
/// request; nothing is written to the directory; blocks beyond the bound are dropped and
/// fetched again.
#[test]
fn cold_point_reads_fetch_ranges_not_files() {
    let store = Store::new();
    let (_, largest) = write_large_files(&store, 16_000);
    assert!(
        largest > 8 * memforest_sst::OPEN_TAIL_LEN,
        "{largest} bytes"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 64 << 10)).unwrap();

    let (gets, bytes) = (store.faults.gets(), store.faults.got_bytes());
    assert_large(&db, 5_000);
    let cold = store.faults.got_bytes() - bytes;
    assert_eq!(store.faults.gets() - gets, 2, "the tail, then one block");
    assert!(
        cold < memforest_sst::OPEN_TAIL_LEN + (16 << 10),
        "{cold} bytes for one cold read of a {largest}-byte file"
    );

    let (gets, bytes) = (store.faults.gets(), store.faults.got_bytes());
    assert_large(&db, 5_500);
    assert_eq!(store.faults.gets() - gets, 1, "one block of an open file");
    assert!(store.faults.got_bytes() - bytes < 16 << 10);

    let gets = store.faults.gets();
    for _ in 0..5 {
        assert_large(&db, 5_000);
        assert_large(&db, 5_500);
    }
    assert_eq!(store.faults.gets(), gets, "hot reads make no request");
    assert_eq!(local_segment_bytes(dir.path()), 0, "no copy was written");

    for i in (0..16_000).step_by(50) {
        assert_large(&db, i);
    }
    let gets = store.faults.gets();
    assert_large(&db, 5_000);
    assert_eq!(
        store.faults.gets() - gets,
        1,
        "the block was dropped to stay within the bound, and fetched again"
    );
    db.close().unwrap();
}

/// A failed ranged GET (opening a file, or reading a block of an open one) fails that
/// read only, naming the object; the next read succeeds.
#[test]
fn a_failed_range_read_fails_the_read_and_a_retry_succeeds() {
    let store = Store::new();
    write_large_files(&store, 8_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 1 << 20)).unwrap();
    for i in [100, 7_000] {
        store.faults.fail_gets(1);
        let err = db.get(&tenant(), T, &large_key(i)).unwrap_err().to_string();
        assert!(err.contains("get range") && err.contains("/sst/"), "{err}");
        assert_large(&db, i);
    }
    assert_large(&db, 200);
    store.faults.fail_gets(1);
    assert!(
        db.get(&tenant(), T, &large_key(300)).is_err(),
        "a block read failed"
    );
    assert_large(&db, 300);
    db.close().unwrap();
}

/// A writer whose inputs are not local compacts them (fetched whole) and loses nothing.
#[test]
fn compaction_reads_inputs_that_reads_only_ranged() {
    let store = Store::new();
    write_large_files(&store, 8_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 64 << 10)).unwrap();
    assert_large(&db, 10);
    let mut overwrite = WriteBatch::new();
    for i in (0..8_000u32).step_by(9) {
        overwrite.put(&tenant(), T, &large_key(i), b"new");
    }
    db.write(&overwrite, Durability::Buffered).unwrap();
    db.compact_all().unwrap();
    for i in (0..8_000u32).step_by(3) {
        let got = db.get(&tenant(), T, &large_key(i)).unwrap();
        let want = if i % 9 == 0 {
            b"new".to_vec()
        } else {
            large_value(i)
        };
        assert_eq!(got.as_deref(), Some(&want[..]), "key {i}");
    }
    db.close().unwrap();
    assert_manifests_complete(&store.remote());
}

/// A cold scan reads ahead: one GET per range of blocks, not one per block.
#[test]
fn a_cold_scan_reads_ahead() {
    let store = Store::new();
    let (live, _) = write_large_files(&store, 8_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), cached(&store, 8 << 20)).unwrap();
    let gets = store.faults.gets();
    let scan = db.scan_prefix(&tenant(), T, b"big", None).unwrap();
    assert_eq!(scan.map(Result::unwrap).count(), 8_000);
    let made = store.faults.gets() - gets;
    let blocks = live / 4096;
    assert!(
        made < blocks / 50,
        "{made} GETs to scan {live} bytes ({blocks} blocks)"
    );
    db.close().unwrap();
}
