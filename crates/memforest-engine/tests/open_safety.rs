//! What an open may and may not do to a store: a read-only open writes nothing (so it works
//! on a full disk and beside a writer), and a manifest that lost records never makes an
//! open delete the segment files it no longer lists; `Db::repair` brings them back.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::Arc;

use memforest_engine::{manifest, Db, Durability, Error, Options, Table, TenantId};
use memforest_io::{Errno, Fault, FaultStorage, OpKind, Storage};

const CHANGES: [OpKind; 5] = [
    OpKind::Write,
    OpKind::Sync,
    OpKind::SetLen,
    OpKind::Rename,
    OpKind::Remove,
];

fn tenant() -> TenantId {
    TenantId::new("t").unwrap()
}

fn options(fs: &FaultStorage) -> Options {
    Options {
        memtable_size: 1 << 20,
        // Small WAL segments: flushes purge the older ones, as in a long-lived store.
        wal_segment_size: 4 << 10,
        storage: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn put(db: &Db, i: u32) {
    let v = format!("value-{i}-{}", "x".repeat(200));
    db.put(
        &tenant(),
        Table::new(3),
        &i.to_be_bytes(),
        v.as_bytes(),
        Durability::SyncData,
    )
    .unwrap();
}

/// The WAL segment files of the store in `dir`, oldest first.
fn wal_segments(fs: &FaultStorage, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let wal = dir.join(memforest_engine::WAL_DIR);
    let mut names = fs.list_dir(&wal).unwrap();
    names.sort();
    names.into_iter().map(|n| wal.join(n)).collect()
}

/// Cuts file `path` to half its length (and syncs it).
fn cut_in_half(fs: &FaultStorage, path: &std::path::Path) {
    let bytes = fs.read(path).unwrap();
    let mut f = fs.create(path).unwrap();
    std::io::Write::write_all(&mut f, &bytes[..bytes.len() / 2]).unwrap();
    f.sync_data().unwrap();
}

fn count(db: &Db) -> usize {
    db.scan_tenant(&tenant(), None).unwrap().count()
}

/// `0..n` written to a new store in `dir`, which is then closed (`clean`) or dropped as a
/// crash would leave it.
fn written(fs: &FaultStorage, dir: &std::path::Path, n: u32, clean: bool) {
    let db = Db::open(dir, options(fs)).unwrap();
    for i in 0..n {
        put(&db, i);
    }
    if clean {
        db.close().unwrap();
    }
}

/// 0..200 written in four flushed rounds, 200..240 left in the WAL.
fn filled(fs: &FaultStorage, dir: &std::path::Path) {
    let db = Db::open(dir, options(fs)).unwrap();
    for i in 0..240 {
        put(&db, i);
        if i % 50 == 49 && i < 200 {
            db.flush().unwrap();
        }
    }
    db.close().unwrap();
}

#[test]
fn a_read_only_open_writes_nothing_and_works_on_a_full_disk() {
    let fs = FaultStorage::new(1);
    let dir = tempfile::tempdir().unwrap();
    filled(&fs, dir.path());
    for kind in CHANGES {
        fs.inject(Fault {
            kind,
            nth: 1,
            errno: Errno::NoSpace,
            sticky: true,
        });
    }
    let before = fs.total(&CHANGES);
    let db = Db::open_read_only(dir.path(), options(&fs)).unwrap();
    assert!(db.is_read_only());
    assert_eq!(count(&db), 240);
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert!(matches!(
        db.put(&tenant(), Table::new(3), b"k", b"v", Durability::Buffered),
        Err(Error::ReadOnly)
    ));
    assert!(matches!(db.flush(), Err(Error::ReadOnly)));
    db.close().unwrap();
    assert_eq!(
        fs.total(&CHANGES),
        before,
        "no write, sync, cut, rename or removal"
    );
}

#[test]
fn a_read_only_open_beside_a_writer_sees_what_was_written_before_it() {
    let fs = FaultStorage::new(2);
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), options(&fs)).unwrap();
    for i in 0..120 {
        put(&writer, i);
        if i == 59 {
            writer.flush().unwrap();
        }
    }
    let reader = Db::open_read_only(dir.path(), options(&fs)).unwrap();
    for i in 120..180 {
        put(&writer, i);
    }
    writer.flush().unwrap();
    assert_eq!(count(&reader), 120, "the state as of the read-only open");
    assert!(reader.verify().unwrap().is_clean());
    reader.close().unwrap();
    let again = Db::open_read_only(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&again), 180);
    drop(again);
    writer.close().unwrap();
}

/// A writer's flush output that the manifest did not list yet when a read-only open read
/// it (simulated: a newer store's segment file dropped into an older copy) holds entries
/// newer than everything the open read: not damage to a read-only open, which leaves it
/// out; a read-write open, which no writer can race, still sets it aside.
#[test]
fn a_read_only_open_takes_a_segment_file_newer_than_its_view_for_a_writer_s() {
    let fs = FaultStorage::new(3);
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    for d in [&old, &new] {
        // The lock file is on the real file system, the store's files in `fs`.
        std::fs::create_dir(d).unwrap();
        fs.create_dir_all(d).unwrap();
    }
    written(&fs, &old, 50, true);
    copy_store(&fs, &old, &new);
    let db = Db::open(&new, options(&fs)).unwrap();
    for i in 50..100 {
        put(&db, i);
    }
    db.flush().unwrap();
    db.close().unwrap();
    let before: std::collections::BTreeSet<String> =
        fs.list_dir(&old).unwrap().into_iter().collect();
    let newer = fs
        .list_dir(&new)
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".sst") && !before.contains(n))
        .unwrap();
    put_file(&fs, &old.join(&newer), &fs.read(&new.join(&newer)).unwrap());

    let reader = Db::open_read_only(&old, options(&fs)).unwrap();
    let report = reader.open_report().clone();
    assert!(report.quarantined.is_empty(), "{report:?}");
    assert!(
        report.unlisted.iter().all(|u| u.name != newer),
        "{report:?}"
    );
    assert_eq!(count(&reader), 50);
    assert!(reader.verify().unwrap().is_clean());
    reader.close().unwrap();

    let writer = Db::open(&old, options(&fs)).unwrap();
    assert_eq!(
        writer.open_report().quarantined,
        [format!("{newer}.quarantine")]
    );
    writer.close().unwrap();
}

/// Writes `bytes` to a new file `path` (synced).
fn put_file(fs: &FaultStorage, path: &std::path::Path, bytes: &[u8]) {
    let mut f = fs.create(path).unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f.sync_data().unwrap();
}

/// Copies the files of the store in `from` (and its WAL) into `to`.
fn copy_store(fs: &FaultStorage, from: &std::path::Path, to: &std::path::Path) {
    for sub in ["", memforest_engine::WAL_DIR] {
        let (src, dst) = (from.join(sub), to.join(sub));
        fs.create_dir_all(&dst).unwrap();
        for name in fs.list_dir(&src).unwrap() {
            if let Ok(bytes) = fs.read(&src.join(&name)) {
                put_file(fs, &dst.join(&name), &bytes);
            }
        }
    }
}

/// The manifest cut back to its first record (an operator's truncation, a bad restore):
/// the segment files it no longer lists hold data whose WAL is purged, so the open sets
/// them aside instead of deleting them and reports the damage; repair adopts them again.
#[test]
fn a_manifest_that_lost_records_quarantines_instead_of_deleting_and_repair_restores() {
    let fs = FaultStorage::new(3);
    let dir = tempfile::tempdir().unwrap();
    filled(&fs, dir.path());
    let current = fs.read(&dir.path().join(manifest::CURRENT)).unwrap();
    let id = manifest::parse_current(&current).unwrap();
    let path = dir.path().join(manifest::file_name(id));
    let bytes = fs.read(&path).unwrap();
    let first = memforest_wal::LogReader::new(&bytes, id)
        .next()
        .unwrap()
        .unwrap();
    let mut f = fs.create(&path).unwrap();
    std::io::Write::write_all(&mut f, &bytes[..usize::try_from(first.end).unwrap()]).unwrap();
    f.sync_data().unwrap();
    drop(f);
    let segment_bytes = |fs: &FaultStorage| -> u64 {
        fs.list_dir(dir.path())
            .unwrap()
            .iter()
            .filter(|n| n.contains(".sst"))
            .map(|n| fs.file_len(&dir.path().join(n)).unwrap())
            .sum()
    };
    let on_disk = segment_bytes(&fs);
    assert!(on_disk > 0);
    // The first record is the new store's empty snapshot, from before WAL tracking began:
    // nothing to check the WAL against, so the open proceeds and sets the files aside.
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    let report = db.open_report().clone();
    assert!(report.is_damaged(), "{report:?}");
    assert!(!report.quarantined.is_empty());
    assert!(count(&db) < 240, "the quarantined data is not served");
    assert!(!db.verify().unwrap().is_clean());
    db.close().unwrap();
    assert_eq!(segment_bytes(&fs), on_disk, "not one segment byte deleted");
    let report = Db::repair(dir.path(), options(&fs)).unwrap();
    assert!(!report.adopted.is_empty(), "{report:?}");
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 240);
    assert!(db.verify().unwrap().is_clean());
    db.close().unwrap();
}

/// A sealed WAL segment cut below the length the manifest recorded as synced refuses the
/// open (read-write and read-only), naming the segment; salvage opens and reports it.
#[test]
fn a_wal_segment_shorter_than_its_synced_length_refuses_naming_it() {
    let fs = FaultStorage::new(4);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 80, true);
    let segments = wal_segments(&fs, dir.path());
    assert!(segments.len() > 2, "{segments:?}");
    let sealed = segments[0].clone();
    cut_in_half(&fs, &sealed);
    for read_only in [false, true] {
        let opened = if read_only {
            Db::open_read_only(dir.path(), options(&fs))
        } else {
            Db::open(dir.path(), options(&fs))
        };
        match opened {
            Err(Error::Corrupt { path, reason, .. }) => {
                assert_eq!(path, sealed);
                assert!(reason.contains("synced"), "{reason}");
            }
            other => panic!("read_only {read_only}: expected a refusal, got {other:?}"),
        }
    }
    let db = Db::open(dir.path(), salvage(&fs)).unwrap();
    assert!(db.open_report().is_damaged());
    assert!(!db.open_report().wal_missing.is_empty());
    db.close().unwrap();
}

/// Everything flushed, then the WAL's newest segment cut short (a power cut under
/// `Durability::Buffered` can leave a WAL that ends before what the synced segment files
/// hold): a read-only open serves all of it, as a read-write open does, and verifies clean.
#[test]
fn a_read_only_open_serves_flushed_writes_the_wal_lost() {
    let fs = FaultStorage::new(5);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    for i in 0..200 {
        put(&db, i);
    }
    db.flush().unwrap();
    // A crash, not a close: a clean close records the WAL's synced length.
    drop(db);
    cut_in_half(&fs, wal_segments(&fs, dir.path()).last().unwrap());
    let db = Db::open_read_only(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 200);
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "{report:?}");
    db.close().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 200);
    db.close().unwrap();
}

/// A repair of a directory that holds no store's file refuses and leaves it as it was
/// (no lock file made).
#[test]
fn a_repair_of_a_directory_that_is_no_store_changes_nothing() {
    let fs = FaultStorage::new(6);
    let dir = tempfile::tempdir().unwrap();
    fs.create_dir_all(dir.path()).unwrap();
    let mut f = fs.create(&dir.path().join("notes.txt")).unwrap();
    std::io::Write::write_all(&mut f, b"x").unwrap();
    drop(f);
    match Db::repair(dir.path(), options(&fs)) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("nothing to repair"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(fs.list_dir(dir.path()).unwrap(), ["notes.txt"]);
    // The lock file lives on the real file system.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// After a clean close every WAL byte was synced: the active segment cut short, a byte of
/// its last record flipped, or its last record zeroed to the end (the length kept), is
/// damage that refuses to open (naming the segment), not a torn tail or clean end to cut
/// off as a crash leaves one.
#[test]
fn a_cleanly_closed_wal_cut_or_flipped_refuses_to_open() {
    let fs = FaultStorage::new(6);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 30, true);
    let last = wal_segments(&fs, dir.path()).last().unwrap().clone();
    let name = last.file_name().unwrap().to_str().unwrap().to_owned();
    let id: u64 = name.trim_end_matches(".wal").parse().unwrap();
    let whole = fs.read(&last).unwrap();
    let write = |bytes: &[u8]| {
        let mut f = fs.create(&last).unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f.sync_data().unwrap();
    };
    let mut flipped = whole.clone();
    let at = flipped.len() - 10;
    flipped[at] ^= 0x55;
    let image = memforest_wal::recovery::SegmentImage { id, bytes: &whole };
    let clean = memforest_wal::RecoveryMode::AbsoluteConsistency;
    let plan = memforest_wal::recovery::plan(&[image], clean, &|_| None, &|_, _| false).unwrap();
    let mut zeroed = whole.clone();
    let last_batch = plan.batches.last().unwrap().offset;
    zeroed[usize::try_from(last_batch).unwrap()..].fill(0);
    for damaged in [&whole[..whole.len() - 100], &flipped[..], &zeroed[..]] {
        write(damaged);
        for read_only in [false, true] {
            let opened = if read_only {
                Db::open_read_only(dir.path(), options(&fs))
            } else {
                Db::open(dir.path(), options(&fs))
            };
            match opened {
                Err(Error::Corrupt { path, .. }) => assert_eq!(path, last),
                Err(Error::Wal(memforest_wal::WalError::Corruption { segment, .. })) => {
                    assert_eq!(segment, id);
                }
                other => panic!(
                    "read_only {read_only}: expected a refusal, got {:?}",
                    other.map(|db| db.open_report().clone())
                ),
            }
        }
        assert_eq!(
            fs.read(&last).unwrap(),
            damaged,
            "the refused open cut nothing"
        );
    }
    write(&whole);
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 30);
    assert!(!db.open_report().is_damaged());
    db.close().unwrap();
}

/// A crash during an append leaves a torn last record: the open cuts it off, serves every
/// whole record, and reports where it cut.
#[test]
fn a_torn_wal_tail_after_a_crash_is_cut_and_reported() {
    let fs = FaultStorage::new(7);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 30, false);
    let last = wal_segments(&fs, dir.path()).last().unwrap().clone();
    let mut bytes = fs.read(&last).unwrap();
    let end = bytes.len() as u64;
    bytes.extend_from_slice(&[0x17; 21]);
    let mut f = fs.create(&last).unwrap();
    std::io::Write::write_all(&mut f, &bytes).unwrap();
    f.sync_data().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 30);
    let report = db.open_report();
    let (segment, offset) = report.wal_torn_tail.unwrap();
    assert_eq!(offset, end, "{report:?}");
    assert_eq!(
        last.file_name().unwrap().to_str().unwrap(),
        format!("{segment:020}.wal")
    );
    assert!(!report.is_damaged());
    db.close().unwrap();
}

/// A WAL segment file after the last one that holds no valid segment header (junk, a
/// stray copy) is set aside as `.wal.quarantine`, never deleted, and reported as damage
/// by a read-only open before it, this open and later ones; an empty one (a crash as it
/// was created) is deleted.
#[test]
fn a_wal_segment_without_a_valid_header_is_set_aside_not_deleted() {
    let fs = FaultStorage::new(8);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 30, true);
    let last = wal_segments(&fs, dir.path()).last().unwrap().clone();
    let name = last.file_name().unwrap().to_str().unwrap().to_owned();
    let id: u64 = name.trim_end_matches(".wal").parse().unwrap();
    let wal = dir.path().join(memforest_engine::WAL_DIR);
    let junk = wal.join(format!("{:020}.wal", id + 1));
    let junk_bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let mut f = fs.create(&junk).unwrap();
    std::io::Write::write_all(&mut f, &junk_bytes).unwrap();
    f.sync_data().unwrap();
    let aside = format!("{:020}.wal.quarantine", id + 1);
    // A read-only open (and so `memforest verify`) renames nothing, and reports the file
    // under its present name as the one a read-write open will set aside.
    let db = Db::open_read_only(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 30);
    let present = format!("{:020}.wal", id + 1);
    assert_eq!(db.open_report().wal_quarantined, vec![present]);
    assert!(db.open_report().is_damaged());
    assert!(!db.verify().unwrap().is_clean());
    db.close().unwrap();
    assert_eq!(fs.read(&junk).unwrap(), junk_bytes);
    // Then an empty segment and one of zeros, what a crash while a segment is created can
    // leave: neither holds a record, so both are deleted, not set aside.
    for round in 0..3 {
        if round > 0 {
            let zeros = if round == 2 {
                vec![0u8; 4096]
            } else {
                Vec::new()
            };
            put_file(&fs, &junk, &zeros);
        }
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        assert_eq!(count(&db), 30);
        assert_eq!(db.open_report().wal_quarantined, vec![aside.clone()]);
        assert!(db.open_report().is_damaged());
        assert!(!db.verify().unwrap().is_clean());
        db.close().unwrap();
    }
    assert_eq!(fs.read(&wal.join(&aside)).unwrap(), junk_bytes);
    assert!(!fs.exists(&junk), "the empty or zeroed segment is deleted");
}

/// Flips one byte of file `path` at `at` (and syncs it).
fn flip(fs: &FaultStorage, path: &std::path::Path, at: usize) {
    let mut bytes = fs.read(path).unwrap();
    bytes[at] ^= 0x55;
    let mut f = fs.create(path).unwrap();
    std::io::Write::write_all(&mut f, &bytes).unwrap();
    f.sync_data().unwrap();
}

/// The live WAL segment files (`*.wal`) of the store in `dir`, oldest first.
fn live_wal_segments(fs: &FaultStorage, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    wal_segments(fs, dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect()
}

fn point_in_time(fs: &FaultStorage) -> Options {
    Options {
        recovery_mode: memforest_engine::RecoveryMode::PointInTime,
        ..options(fs)
    }
}

/// [`options`] with salvage recovery (`memforest repair --salvage`).
fn salvage(fs: &FaultStorage) -> Options {
    Options {
        recovery_mode: memforest_engine::RecoveryMode::SkipAnyCorrupted,
        ..options(fs)
    }
}

/// Segment ids are reused after a point-in-time open sets the segments past its stop
/// aside, so the same id can be set aside twice: the second copy gets a name of its own
/// and the first one's bytes stay on disk, both reported.
#[test]
fn a_wal_segment_set_aside_twice_keeps_both_copies() {
    let fs = FaultStorage::new(9);
    let dir = tempfile::tempdir().unwrap();
    let wal = dir.path().join(memforest_engine::WAL_DIR);
    written(&fs, dir.path(), 60, true);
    let first = live_wal_segments(&fs, dir.path())[0].clone();
    let name = first.file_name().unwrap().to_str().unwrap().to_owned();
    let id: u64 = name.trim_end_matches(".wal").parse().unwrap();
    let second = format!("{:020}.wal", id + 1);
    let kept = fs.read(&wal.join(&second)).unwrap();
    let len = fs.read(&first).unwrap().len();
    flip(&fs, &first, len / 2);
    let db = Db::open(dir.path(), point_in_time(&fs)).unwrap();
    let aside = format!("{second}.quarantine");
    assert!(
        db.open_report().wal_quarantined.contains(&aside),
        "{:?}",
        db.open_report()
    );
    for i in 1000..1060 {
        put(&db, i);
    }
    db.close().unwrap();
    assert!(fs.exists(&wal.join(&second)), "the id was used again");
    flip(&fs, &first, len / 4);
    let db = Db::open(dir.path(), point_in_time(&fs)).unwrap();
    let report = db.open_report().clone();
    db.close().unwrap();
    assert!(
        fs.read(&wal.join(&aside)).unwrap() == kept,
        "the first copy was overwritten: {report:?}"
    );
    let again = format!("{aside}.1");
    assert!(fs.exists(&wal.join(&again)), "{report:?}");
    let mut on_disk: Vec<String> = fs
        .list_dir(&wal)
        .unwrap()
        .into_iter()
        .filter(|n| !n.ends_with(".wal"))
        .collect();
    on_disk.sort();
    assert_eq!(report.wal_quarantined, on_disk);
    assert!(report.wal_quarantined.contains(&again));
}

/// A point-in-time open that cuts the last WAL segment below the length a clean close
/// recorded as synced records the new length: a crash after it, with a few bytes written
/// and a torn record left at the end, opens in the default mode (the torn record cut off
/// as a crash leaves one), not refused as if acknowledged writes were missing.
/// (`SkipAnyCorrupted` cuts nothing: `a_salvage_open_keeps_a_damaged_wal_segment_whole_...`.)
#[test]
fn a_salvage_open_below_the_synced_length_records_the_new_length() {
    // Damage the last batch, or the second.
    for (k, last) in [false, true].into_iter().enumerate() {
        let fs = FaultStorage::new(20 + k as u64);
        let dir = tempfile::tempdir().unwrap();
        written(&fs, dir.path(), 10, true);
        let segment = live_wal_segments(&fs, dir.path()).last().unwrap().clone();
        let name = segment.file_name().unwrap().to_str().unwrap().to_owned();
        let id: u64 = name.trim_end_matches(".wal").parse().unwrap();
        let whole = fs.read(&segment).unwrap();
        let image = memforest_wal::recovery::SegmentImage { id, bytes: &whole };
        let clean = memforest_wal::RecoveryMode::AbsoluteConsistency;
        let plan =
            memforest_wal::recovery::plan(&[image], clean, &|_| None, &|_, _| false).unwrap();
        assert!(plan.batches.len() >= 3, "{k}");
        let batch = if last {
            plan.batches.last().unwrap()
        } else {
            plan.batches.get(1).unwrap()
        };
        flip(&fs, &segment, usize::try_from(batch.offset).unwrap() + 30);
        let db = Db::open(dir.path(), point_in_time(&fs)).unwrap();
        db.put(&tenant(), Table::new(3), b"k", b"v", Durability::SyncData)
            .unwrap();
        let served = count(&db);
        // A crash, not a close, during an append: a torn record at the end.
        drop(db);
        let mut bytes = fs.read(&segment).unwrap();
        assert!(bytes.len() < whole.len(), "{k}: fewer bytes than were cut");
        let end = bytes.len() as u64;
        bytes.extend_from_slice(&[0x17; 21]);
        let mut f = fs.create(&segment).unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
        f.sync_data().unwrap();
        let db = match Db::open(dir.path(), options(&fs)) {
            Ok(db) => db,
            Err(e) => panic!("{k}: {e}"),
        };
        assert_eq!(count(&db), served, "{k}");
        assert_eq!(db.open_report().wal_torn_tail, Some((id, end)), "{k}");
        db.close().unwrap();
    }
}

/// The length of the manifest `CURRENT` names in `dir`.
fn manifest_len(fs: &FaultStorage, dir: &std::path::Path) -> u64 {
    let current = fs.read(&dir.join(manifest::CURRENT)).unwrap();
    let id = manifest::parse_current(&current).unwrap();
    fs.file_len(&dir.join(manifest::file_name(id))).unwrap()
}

/// A close after an open that wrote nothing records nothing: the manifest already holds
/// the active WAL segment's synced length, so the close needs no space (a full disk) and
/// repeated opens and closes do not grow the manifest.
#[test]
fn a_close_with_nothing_written_appends_nothing_to_the_manifest() {
    let fs = FaultStorage::new(30);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 10, true);
    let len = manifest_len(&fs, dir.path());
    for _ in 0..3 {
        Db::open(dir.path(), options(&fs)).unwrap().close().unwrap();
        assert_eq!(manifest_len(&fs, dir.path()), len, "the manifest grew");
    }
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    fs.inject(Fault::from_nth(OpKind::Write, 1, Errno::NoSpace));
    db.close().unwrap();
    fs.clear_faults();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 10);
    db.close().unwrap();
}

/// The batches WAL segment file `path` holds (one per put here).
fn batches_in(fs: &FaultStorage, path: &std::path::Path) -> usize {
    let bytes = fs.read(path).unwrap();
    let id = memforest_wal::segment::parse_file_name(path.file_name().unwrap().to_str().unwrap())
        .unwrap();
    let image = memforest_wal::recovery::SegmentImage { id, bytes: &bytes };
    let mode = memforest_wal::RecoveryMode::AbsoluteConsistency;
    let plan = memforest_wal::recovery::plan(&[image], mode, &|_| None, &|_, _| false).unwrap();
    plan.batches.len()
}

/// A tracked WAL segment between two others is deleted: every open refuses, and repair
/// accepts the loss as the refusal says: it replays the segments before and after the gap,
/// reports the gap, and the store opens (and verifies) from then on.
#[test]
fn repair_accepts_a_lost_middle_wal_segment_and_replays_the_segments_after_it() {
    let fs = FaultStorage::new(31);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 60, true);
    let segments = wal_segments(&fs, dir.path());
    assert!(segments.len() >= 3, "{segments:?}");
    let lost = batches_in(&fs, &segments[1]);
    assert!(lost > 0);
    let id =
        memforest_wal::segment::parse_file_name(segments[1].file_name().unwrap().to_str().unwrap())
            .unwrap();
    fs.remove_file(&segments[1]).unwrap();
    assert!(matches!(
        Db::open(dir.path(), options(&fs)),
        Err(Error::Corrupt { .. })
    ));
    let report = Db::repair(dir.path(), options(&fs)).unwrap();
    assert_eq!(report.wal_lost, [id], "{report:?}");
    assert_eq!(report.wal_gaps.len(), 1, "{report:?}");
    let gap = report.wal_gaps[0];
    assert_eq!((gap.first, gap.last), (id, id));
    assert_eq!(gap.last_seqno + 1 - gap.first_seqno, lost as u64);
    let key = 59u32.to_be_bytes();
    for round in 0..2u8 {
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        assert_eq!(
            count(&db),
            60 - lost,
            "the batches after the gap are replayed"
        );
        assert!(db.verify().unwrap().is_clean());
        // A new write must get a seqno above every replayed one to win over it.
        let t = Table::new(3);
        db.put(&tenant(), t, &key, &[round], Durability::SyncData)
            .unwrap();
        db.close().unwrap();
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        assert_eq!(db.get(&tenant(), t, &key).unwrap().unwrap()[..], [round]);
        db.close().unwrap();
    }
}

/// A repair whose open would refuse the WAL (damage in an earlier segment, under the
/// default recovery mode) refuses before it changes anything: `CURRENT`, the manifest and
/// every file stay as they were.
#[test]
fn a_repair_that_would_refuse_the_wal_changes_nothing() {
    let fs = FaultStorage::new(32);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 60, true);
    let segments = wal_segments(&fs, dir.path());
    let len = usize::try_from(fs.file_len(&segments[0]).unwrap()).unwrap();
    flip(&fs, &segments[0], len / 2);
    let listing = |fs: &FaultStorage| {
        let mut all: Vec<(String, Vec<u8>)> = Vec::new();
        for d in [
            dir.path().to_path_buf(),
            dir.path().join(memforest_engine::WAL_DIR),
        ] {
            for n in fs.list_dir(&d).unwrap() {
                let p = d.join(&n);
                all.push((n, fs.read(&p).unwrap_or_default()));
            }
        }
        all.sort();
        all
    };
    let before = listing(&fs);
    assert!(Db::open(dir.path(), options(&fs)).is_err());
    assert!(Db::repair(dir.path(), options(&fs)).is_err());
    assert_eq!(listing(&fs), before, "the failed repair changed the store");
}

/// The same damage under `RecoveryMode::SkipAnyCorrupted` (`memforest repair --salvage`):
/// the repair keeps every write that reads back and reports the damage with exactly the
/// writes lost, sets the damaged segment aside byte for byte (it is not deleted), and
/// leaves a store that opens in the default mode and takes new writes. With every write
/// flushed first, the damaged segment is the active one, and no write is lost.
#[test]
fn a_salvage_repair_keeps_what_reads_back_and_sets_the_damaged_wal_segment_aside() {
    for flushed in [false, true] {
        let fs = FaultStorage::new(33);
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join(memforest_engine::WAL_DIR);
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        let t = Table::new(3);
        let value = |i: u32| format!("value-{i}-{}", "x".repeat(200));
        let seqnos: Vec<u64> = (0..60u32)
            .map(|i| {
                let v = value(i);
                db.put(
                    &tenant(),
                    t,
                    &i.to_be_bytes(),
                    v.as_bytes(),
                    Durability::SyncData,
                )
                .unwrap()
            })
            .collect();
        if flushed {
            db.flush().unwrap();
        }
        db.close().unwrap();
        let damaged = live_wal_segments(&fs, dir.path())[0].clone();
        let len = usize::try_from(fs.file_len(&damaged).unwrap()).unwrap();
        flip(&fs, &damaged, len / 2);
        let bytes = fs.read(&damaged).unwrap();
        assert!(Db::open(dir.path(), options(&fs)).is_err(), "{flushed}");
        let report = Db::repair(dir.path(), salvage(&fs)).unwrap();
        assert!(!report.wal_skipped.is_empty(), "{report:?}");
        let aside = format!(
            "{}.quarantine",
            damaged.file_name().unwrap().to_str().unwrap()
        );
        assert_eq!(
            report.wal_set_aside,
            std::slice::from_ref(&aside),
            "{report:?}"
        );
        assert!(fs.read(&wal.join(&aside)).unwrap() == bytes);
        assert!(!fs.exists(&damaged));
        let lost: Vec<u64> = report
            .wal_skipped
            .iter()
            .filter_map(|d| d.lost)
            .flat_map(|(first, last)| first..=last)
            .collect();
        assert_eq!(lost.is_empty(), flushed, "{report:?}");
        for round in 0..2 {
            let db = Db::open(dir.path(), options(&fs)).unwrap();
            assert!(db.open_report().wal_skipped.is_empty());
            assert_eq!(
                db.open_report().wal_quarantined,
                std::slice::from_ref(&aside)
            );
            for (i, seqno) in (0..60u32).zip(&seqnos) {
                let got = db.get(&tenant(), t, &i.to_be_bytes()).unwrap();
                let want = (!lost.contains(seqno)).then(|| value(i).into_bytes());
                assert_eq!(
                    got.as_deref(),
                    want.as_deref(),
                    "{flushed} {round}: key {i}"
                );
            }
            let key = 1000u32.to_be_bytes();
            if round == 0 {
                db.put(&tenant(), t, &key, b"after", Durability::SyncData)
                    .unwrap();
            } else {
                assert_eq!(
                    db.get(&tenant(), t, &key).unwrap().as_deref(),
                    Some(&b"after"[..])
                );
            }
            db.close().unwrap();
        }
    }
}

/// A salvage open (no repair) that read past damage in the last WAL segment keeps that
/// segment whole, the damage in its middle or at its end or the segment cut short, and
/// appends to a new segment; damage at the end is reported as the end of the log. Once its
/// writes are flushed, a purge sets the damaged segment aside instead of deleting it, and
/// the default mode opens the store.
#[test]
fn a_salvage_open_keeps_a_damaged_wal_segment_whole_and_a_purge_sets_it_aside() {
    // (damage: flip a byte of batch 1, flip a byte of the last batch, cut the last record)
    for (k, damage) in ["middle", "end", "cut"].into_iter().enumerate() {
        let fs = FaultStorage::new(34 + k as u64);
        let dir = tempfile::tempdir().unwrap();
        let wal = dir.path().join(memforest_engine::WAL_DIR);
        written(&fs, dir.path(), 60, true);
        let last = live_wal_segments(&fs, dir.path()).pop().unwrap();
        let whole = fs.read(&last).unwrap();
        let name = last.file_name().unwrap().to_str().unwrap().to_owned();
        let id = memforest_wal::segment::parse_file_name(&name).unwrap();
        let image = memforest_wal::recovery::SegmentImage { id, bytes: &whole };
        let clean = memforest_wal::RecoveryMode::AbsoluteConsistency;
        let plan =
            memforest_wal::recovery::plan(&[image], clean, &|_| None, &|_, _| false).unwrap();
        assert!(plan.batches.len() >= 3);
        let at = |b: &memforest_wal::RecoveredBatch| usize::try_from(b.offset).unwrap() + 30;
        match damage {
            "middle" => flip(&fs, &last, at(&plan.batches[1])),
            "end" => flip(&fs, &last, at(plan.batches.last().unwrap())),
            _ => put_file(&fs, &last, &whole[..whole.len() - 10]),
        }
        let damaged = fs.read(&last).unwrap();
        let db = Db::open(dir.path(), salvage(&fs)).unwrap();
        let report = db.open_report().clone();
        assert!(report.is_damaged(), "{damage}");
        let at_end = report.wal_skipped.iter().any(|d| d.lost_after.is_some());
        assert_eq!(at_end, damage != "middle", "{damage}: {report:?}");
        let served = count(&db);
        assert!(served < 60, "{damage}");
        put(&db, 1000);
        assert!(
            fs.read(&last).unwrap() == damaged,
            "{damage}: cut or appended to"
        );
        db.purge().unwrap();
        db.close().unwrap();
        let aside = format!("{name}.quarantine");
        assert!(fs.read(&wal.join(&aside)).unwrap() == damaged, "{damage}");
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        assert_eq!(count(&db), served + 1, "{damage}");
        assert_eq!(db.open_report().wal_quarantined, [aside], "{damage}");
        db.close().unwrap();
    }
}

/// The id a WAL segment file name carries.
fn segment_id(path: &std::path::Path) -> u64 {
    memforest_wal::segment::parse_file_name(path.file_name().unwrap().to_str().unwrap()).unwrap()
}

/// A salvage open cuts a torn last append (junk after the synced length) as the default
/// mode does, and reports it as one: nothing is kept as damage, and the default mode opens
/// the store next.
#[test]
fn a_salvage_open_cuts_a_torn_tail_as_the_default_mode_does() {
    let fs = FaultStorage::new(40);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 10, true);
    let last = live_wal_segments(&fs, dir.path()).pop().unwrap();
    let mut bytes = fs.read(&last).unwrap();
    let end = bytes.len() as u64;
    bytes.extend_from_slice(&[0x17; 21]);
    put_file(&fs, &last, &bytes);
    let db = Db::open(dir.path(), salvage(&fs)).unwrap();
    assert_eq!(
        db.open_report().wal_torn_tail,
        Some((segment_id(&last), end))
    );
    assert!(!db.open_report().is_damaged(), "{:?}", db.open_report());
    db.close().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 10);
    db.close().unwrap();
}

/// A torn append after damage in the same last segment stays with the segment, which a
/// salvage keeps whole: it is reported as damage read past at the end of the log, not as
/// a torn tail that was cut.
#[test]
fn a_torn_tail_in_a_segment_kept_whole_is_reported_as_damage() {
    let fs = FaultStorage::new(43);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 60, true);
    let last = live_wal_segments(&fs, dir.path()).pop().unwrap();
    let len = usize::try_from(fs.file_len(&last).unwrap()).unwrap();
    flip(&fs, &last, len / 2);
    let mut bytes = fs.read(&last).unwrap();
    bytes.extend_from_slice(&[0x17; 21]);
    put_file(&fs, &last, &bytes);
    let db = Db::open(dir.path(), salvage(&fs)).unwrap();
    let report = db.open_report().clone();
    db.close().unwrap();
    assert_eq!(report.wal_torn_tail, None, "{report:?}");
    assert!(
        report.wal_skipped.last().unwrap().lost_after.is_some(),
        "{report:?}"
    );
    assert!(fs.read(&last).unwrap() == bytes, "the segment was cut");
}

/// A file named with the largest segment id beside a damaged last segment leaves no id for
/// the segment a salvage open starts: the open fails naming it, without a panic.
#[test]
fn a_wal_file_with_the_largest_id_fails_a_salvage_open_by_name() {
    let fs = FaultStorage::new(44);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 60, true);
    let last = live_wal_segments(&fs, dir.path()).pop().unwrap();
    let len = usize::try_from(fs.file_len(&last).unwrap()).unwrap();
    flip(&fs, &last, len / 2);
    let name = memforest_wal::segment::file_name(u64::MAX);
    put_file(
        &fs,
        &dir.path().join(memforest_engine::WAL_DIR).join(&name),
        b"junk",
    );
    let err = Db::open(dir.path(), salvage(&fs)).map(drop).unwrap_err();
    assert!(err.to_string().contains(&name), "{err}");
}

/// The segment a salvage open starts after a damaged last one never takes the id of a
/// tracked segment that went missing: the manifest keeps tracking it, so losing it later
/// is reported, not silent.
#[test]
fn a_salvage_open_s_new_wal_segment_is_tracked_even_where_a_missing_one_was() {
    let fs = FaultStorage::new(41);
    let dir = tempfile::tempdir().unwrap();
    written(&fs, dir.path(), 60, true);
    let mut segments = live_wal_segments(&fs, dir.path());
    let newest = segments.pop().unwrap();
    let damaged = segments.pop().unwrap();
    fs.remove_file(&newest).unwrap();
    let len = usize::try_from(fs.file_len(&damaged).unwrap()).unwrap();
    flip(&fs, &damaged, len / 2);
    let db = Db::open(dir.path(), salvage(&fs)).unwrap();
    assert_eq!(db.open_report().wal_missing, [segment_id(&newest)]);
    for i in 1000..1010 {
        put(&db, i);
    }
    drop(db); // a crash
    let new = live_wal_segments(&fs, dir.path()).pop().unwrap();
    assert!(segment_id(&new) > segment_id(&newest), "{new:?}");
    fs.remove_file(&new).unwrap();
    let db = Db::open(dir.path(), salvage(&fs)).unwrap();
    assert_eq!(db.open_report().wal_missing, [segment_id(&new)]);
    db.close().unwrap();
}

/// Damage at the end of a sealed segment shows in the next segment too (its metadata
/// names a predecessor state recovery did not reach; its first batch comes after a gap),
/// but that segment is whole: a salvage repair sets aside only the damaged one.
#[test]
fn a_salvage_repair_sets_aside_only_the_segment_holding_the_damage() {
    let fs = FaultStorage::new(42);
    let dir = tempfile::tempdir().unwrap();
    let wal = dir.path().join(memforest_engine::WAL_DIR);
    written(&fs, dir.path(), 60, true);
    let segments = live_wal_segments(&fs, dir.path());
    let damaged = &segments[segments.len() - 2];
    let len = usize::try_from(fs.file_len(damaged).unwrap()).unwrap();
    flip(&fs, damaged, len - 20);
    let report = Db::repair(dir.path(), salvage(&fs)).unwrap();
    let name = damaged.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        report.wal_set_aside,
        [format!("{name}.quarantine")],
        "{report:?}"
    );
    assert!(
        report.wal_skipped.iter().any(|d| d.lost.is_some()),
        "{report:?}"
    );
    let quarantined: Vec<String> = fs
        .list_dir(&wal)
        .unwrap()
        .into_iter()
        .filter(|n| n.contains("quarantine"))
        .collect();
    assert_eq!(quarantined, report.wal_set_aside);
}

/// The one segment file of a new store holding keys `keys`, written after `burn` writes
/// to one other key (so its seqnos start above `burn`).
fn another_store_s_file(fs: &FaultStorage, keys: std::ops::Range<u32>, burn: u32) -> Vec<u8> {
    let other = tempfile::tempdir().unwrap();
    let db = Db::open(other.path(), options(fs)).unwrap();
    let t = Table::new(3);
    for _ in 0..burn {
        db.put(&tenant(), t, b"burn", b"x", Durability::Buffered)
            .unwrap();
    }
    for i in keys {
        put(&db, i);
    }
    db.compact_all().unwrap();
    db.close().unwrap();
    let names = fs.list_dir(other.path()).unwrap();
    let mut files = names.iter().filter(|n| n.ends_with(".sst"));
    let file = files.next().unwrap();
    assert!(files.next().is_none());
    fs.read(&other.path().join(file)).unwrap()
}

/// A segment file of another store lands in the directory: its seqnos hold other writes
/// than the store's WAL, so repair sets it aside as `.foreign` instead of adopting it
/// (which would have skipped the store's WAL writes below its seqnos). A later repair
/// leaves it aside, and a second such file under the same name is set aside beside it.
#[test]
fn a_repair_sets_aside_another_store_s_segment_file_and_keeps_the_wal_writes() {
    let fs = FaultStorage::new(34);
    let dir = tempfile::tempdir().unwrap();
    let bytes = another_store_s_file(&fs, 1000..1300, 0);
    written(&fs, dir.path(), 5, true);
    let name = memforest_sst::file_name(99);
    for round in 0..3u8 {
        if round != 1 {
            put_file(&fs, &dir.path().join(&name), &bytes);
        }
        let report = Db::repair(dir.path(), options(&fs)).unwrap();
        match round {
            1 => assert!(report.foreign.is_empty(), "{report:?}"),
            _ => assert_eq!(report.foreign.len(), 1, "{report:?}"),
        }
        assert!(report.adopted.iter().all(|a| *a != name), "{report:?}");
        for aside in [format!("{name}.foreign"), format!("{name}.foreign.1")] {
            let kept = fs.read(&dir.path().join(&aside));
            assert_eq!(
                kept.ok().as_ref(),
                (round > 1 || !aside.ends_with(".1")).then_some(&bytes)
            );
        }
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        let n = 5 + usize::from(round);
        assert_eq!(
            count(&db),
            n,
            "the store's writes, none of the other store's"
        );
        assert!(db.verify().unwrap().is_clean());
        put(&db, 5 + u32::from(round));
        db.close().unwrap();
    }
}

/// Another store's segment file whose seqnos are all above the WAL's: nothing in the WAL
/// contradicts it, but the manifest does not list it and no write of the store got such a
/// seqno, so repair sets it aside.
#[test]
fn a_repair_sets_aside_another_store_s_file_with_seqnos_above_the_wal_s() {
    let fs = FaultStorage::new(37);
    let dir = tempfile::tempdir().unwrap();
    let bytes = another_store_s_file(&fs, 1000..1300, 500);
    written(&fs, dir.path(), 5, true);
    let name = memforest_sst::file_name(99);
    put_file(&fs, &dir.path().join(&name), &bytes);
    let report = Db::repair(dir.path(), options(&fs)).unwrap();
    assert_eq!(report.foreign.len(), 1, "{report:?}");
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 5);
    db.close().unwrap();
}

/// The store's own segment files hold exactly the WAL's writes at their seqnos: a repair
/// of a store that lost `CURRENT` sets none aside (overwrites, a delete and a range delete
/// compacted at the bottom level included) and serves what the store held.
#[test]
fn a_repair_of_a_store_s_own_files_sets_none_aside() {
    let fs = FaultStorage::new(35);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    let t = Table::new(3);
    for i in 0..100 {
        put(&db, i);
    }
    let mut batch = memforest_engine::WriteBatch::new();
    batch.delete(&tenant(), t, &3u32.to_be_bytes());
    batch.delete_range(&tenant(), t, &10u32.to_be_bytes(), &20u32.to_be_bytes());
    db.write(&batch, Durability::SyncData).unwrap();
    put(&db, 4);
    db.flush().unwrap();
    db.compact_all().unwrap();
    for i in 100..110 {
        put(&db, i);
    }
    db.close().unwrap();
    fs.remove_file(&dir.path().join(manifest::CURRENT)).unwrap();
    let report = Db::repair(dir.path(), options(&fs)).unwrap();
    assert!(report.foreign.is_empty(), "{report:?}");
    assert!(!report.adopted.is_empty(), "{report:?}");
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 99);
    assert!(db.get(&tenant(), t, &3u32.to_be_bytes()).unwrap().is_none());
    assert!(db
        .get(&tenant(), t, &15u32.to_be_bytes())
        .unwrap()
        .is_none());
    db.close().unwrap();
}

/// Keys 1 and 2 written (synced), key 2 deleted unsynced, flushed and compacted into the
/// bottom level (which drops key 2's put with its tombstone), then a power cut: the WAL
/// keeps both puts and loses the delete.
fn lose_a_flushed_delete(fs: &FaultStorage, dir: &std::path::Path) {
    let db = Db::open(dir, options(fs)).unwrap();
    put(&db, 1);
    put(&db, 2);
    let mut batch = memforest_engine::WriteBatch::new();
    batch.delete(&tenant(), Table::new(3), &2u32.to_be_bytes());
    db.write(&batch, Durability::Buffered).unwrap();
    db.flush().unwrap();
    db.compact_all().unwrap();
    drop(db);
    fs.crash(memforest_io::CrashMode::DropAll);
}

/// A power cut loses the WAL's unsynced tail after a flush: the delete of a key whose put
/// and delete were then compacted away is gone from the WAL, which still holds the put.
/// The repair keeps the key deleted, as the open does.
#[test]
fn a_repair_after_the_wal_lost_a_flushed_delete_keeps_the_key_deleted() {
    let fs = FaultStorage::new(36);
    let dir = tempfile::tempdir().unwrap();
    lose_a_flushed_delete(&fs, dir.path());
    let t = Table::new(3);
    for repair in [false, true] {
        if repair {
            let report = Db::repair(dir.path(), options(&fs)).unwrap();
            assert!(report.foreign.is_empty(), "{report:?}");
        }
        let db = Db::open(dir.path(), options(&fs)).unwrap();
        assert!(db.get(&tenant(), t, &2u32.to_be_bytes()).unwrap().is_none());
        assert_eq!(count(&db), 1);
        db.close().unwrap();
    }
}

/// The store's only segment file is unreadable and the WAL still holds its writes (a
/// flush does not rotate the WAL): repair replays them from the WAL, below the previous
/// manifest's flushed point, since the WAL holds every write up to it.
#[test]
fn a_repair_replays_the_writes_of_an_unreadable_file_the_wal_still_holds() {
    let fs = FaultStorage::new(38);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    for i in 0..10 {
        put(&db, i);
    }
    db.flush().unwrap();
    db.close().unwrap();
    let names = fs.list_dir(dir.path()).unwrap();
    let sst = names.iter().find(|n| n.ends_with(".sst")).unwrap();
    let path = dir.path().join(sst);
    let len = usize::try_from(fs.file_len(&path).unwrap()).unwrap();
    flip(&fs, &path, len / 3);
    let report = Db::repair(dir.path(), options(&fs)).unwrap();
    assert_eq!(report.unreadable.len(), 1, "{report:?}");
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert_eq!(count(&db), 10);
    db.close().unwrap();
}

/// A power cut loses a flushed delete from the WAL; the next open pads the WAL to the
/// flushed point; then `CURRENT` is lost. The no-op padding marks the flushed point, so
/// repair still does not replay the put the delete removed.
#[test]
fn a_repair_without_current_keeps_a_key_whose_delete_the_wal_lost_deleted() {
    let fs = FaultStorage::new(39);
    let dir = tempfile::tempdir().unwrap();
    lose_a_flushed_delete(&fs, dir.path());
    let t = Table::new(3);
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    put(&db, 3);
    db.close().unwrap();
    fs.remove_file(&dir.path().join(manifest::CURRENT)).unwrap();
    Db::repair(dir.path(), options(&fs)).unwrap();
    let db = Db::open(dir.path(), options(&fs)).unwrap();
    assert!(db.get(&tenant(), t, &2u32.to_be_bytes()).unwrap().is_none());
    assert_eq!(count(&db), 2);
    db.close().unwrap();
}
