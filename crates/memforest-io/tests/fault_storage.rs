//! FaultStorage itself: crash semantics for data and directory entries, fault injection,
//! halting, determinism.
#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "test helpers; file numbers are small"
)]

use std::io::Write;
use std::path::{Path, PathBuf};

use memforest_io::{CrashMode, Errno, Fault, FaultStorage, ImmutableFile, OpKind, Storage};

fn dir() -> PathBuf {
    PathBuf::from("/db")
}

fn storage() -> FaultStorage {
    let s = FaultStorage::new(7);
    s.create_dir_all(&dir()).unwrap();
    s
}

fn write_file(s: &FaultStorage, path: &Path, data: &[u8], sync: bool) {
    let mut f = s.create_new(path).unwrap();
    f.write_all(data).unwrap();
    if sync {
        f.sync_data().unwrap();
    }
}

#[test]
fn synced_data_in_a_synced_directory_survives_every_crash_mode() {
    for mode in CrashMode::ALL {
        let s = storage();
        let p = dir().join("a");
        write_file(&s, &p, b"durable", true);
        s.sync_dir(&dir()).unwrap();
        s.crash(mode);
        assert_eq!(s.read(&p).unwrap(), b"durable", "{mode:?}");
    }
}

#[test]
fn unsynced_data_is_dropped_by_drop_all_but_readable_before_the_crash() {
    let s = storage();
    let p = dir().join("a");
    let mut f = s.create_new(&p).unwrap();
    f.write_all(b"synced.").unwrap();
    f.sync_data().unwrap();
    s.sync_dir(&dir()).unwrap();
    f.write_all(b"unsynced").unwrap();
    assert_eq!(s.read(&p).unwrap(), b"synced.unsynced");
    s.crash(CrashMode::DropAll);
    assert_eq!(s.read(&p).unwrap(), b"synced.");
}

#[test]
fn a_file_created_after_the_last_directory_sync_is_gone_after_a_crash() {
    let s = storage();
    let p = dir().join("new");
    write_file(&s, &p, b"data", true);
    assert!(s.exists(&p));
    s.crash(CrashMode::Prefix);
    assert!(!s.exists(&p), "file synced but its directory entry was not");
    assert_eq!(s.read(&p).unwrap_err().kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn renames_and_removals_are_undone_unless_the_directory_was_synced() {
    let s = storage();
    let (a, b, c) = (dir().join("a"), dir().join("b"), dir().join("c"));
    write_file(&s, &a, b"A", true);
    write_file(&s, &c, b"C", true);
    s.sync_dir(&dir()).unwrap();
    s.rename(&a, &b).unwrap();
    s.remove_file(&c).unwrap();
    assert!(!s.exists(&a) && s.exists(&b) && !s.exists(&c));
    s.crash(CrashMode::DropAll);
    assert!(s.exists(&a) && !s.exists(&b) && s.exists(&c), "undone");
    assert_eq!(s.read(&c).unwrap(), b"C");

    s.rename(&a, &b).unwrap();
    s.remove_file(&c).unwrap();
    s.sync_dir(&dir()).unwrap();
    s.crash(CrashMode::DropAll);
    assert!(!s.exists(&a) && s.exists(&b) && !s.exists(&c), "kept");
    assert_eq!(s.read(&b).unwrap(), b"A");
}

#[test]
fn a_sync_of_another_directory_does_not_make_entries_durable() {
    let s = storage();
    let other = PathBuf::from("/other");
    s.create_dir_all(&other).unwrap();
    let p = dir().join("a");
    write_file(&s, &p, b"x", true);
    s.sync_dir(&other).unwrap();
    s.crash(CrashMode::DropAll);
    assert!(!s.exists(&p));
}

#[test]
fn handles_from_before_a_crash_fail_with_eio() {
    let s = storage();
    let p = dir().join("a");
    let mut f = s.create_new(&p).unwrap();
    s.sync_dir(&dir()).unwrap();
    s.crash(CrashMode::DropAll);
    assert_eq!(f.write(b"late").unwrap_err().raw_os_error(), Some(5));
    assert!(f.sync_data().is_err());
    assert_eq!(s.read(&p).unwrap(), b"");
}

#[test]
fn the_nth_write_fails_with_enospc_once_and_appends_nothing() {
    let s = storage();
    let p = dir().join("a");
    let mut f = s.create_new(&p).unwrap();
    s.inject(Fault::once(OpKind::Write, 2, Errno::NoSpace));
    f.write_all(b"1").unwrap();
    let e = f.write_all(b"2").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(28));
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
    f.write_all(b"3").unwrap();
    assert_eq!(s.read(&p).unwrap(), b"13");
    assert_eq!(s.injected(), 1);
}

#[test]
fn a_sticky_fault_fails_every_later_operation_until_cleared() {
    let s = storage();
    s.inject(Fault::from_nth(OpKind::Rename, 1, Errno::Io));
    let (a, b) = (dir().join("a"), dir().join("b"));
    write_file(&s, &a, b"x", false);
    for _ in 0..3 {
        assert_eq!(s.rename(&a, &b).unwrap_err().raw_os_error(), Some(5));
    }
    s.clear_faults();
    s.rename(&a, &b).unwrap();
    assert_eq!(s.injected(), 3);
}

#[test]
fn every_kind_of_operation_can_be_failed() {
    let s = storage();
    let a = dir().join("a");
    let mut f = s.create_new(&a).unwrap();
    f.write_all(b"abc").unwrap();
    let fails = |kind| {
        s.inject(Fault::once(kind, 1, Errno::Io));
    };
    fails(OpKind::Sync);
    assert!(f.sync_data().is_err());
    fails(OpKind::SetLen);
    assert!(f.set_len(1).is_err());
    fails(OpKind::Read);
    assert!(s.read(&a).is_err());
    fails(OpKind::Open);
    assert!(s.open_append(&a).is_err());
    fails(OpKind::Remove);
    assert!(s.remove_file(&a).is_err());
    fails(OpKind::List);
    assert!(s.list_dir(&dir()).is_err());
    fails(OpKind::SyncDir);
    assert!(s.sync_dir(&dir()).is_err());
    fails(OpKind::CreateDir);
    assert!(s.create_dir_all(Path::new("/x")).is_err());
    assert_eq!(s.injected(), 8);
    // A failed sync leaves the data unsynced: a crash drops it.
    s.sync_dir(&dir()).unwrap();
    s.crash(CrashMode::DropAll);
    assert_eq!(s.read(&a).unwrap(), b"");
}

#[test]
fn halt_after_stops_every_operation_after_the_chosen_sync() {
    let s = storage();
    let p = dir().join("a");
    let mut f = s.create_new(&p).unwrap();
    s.sync_dir(&dir()).unwrap();
    s.halt_after(&[OpKind::Sync, OpKind::SyncDir], 2);
    assert_eq!(s.total(&[OpKind::Sync, OpKind::SyncDir]), 1);
    f.write_all(b"one").unwrap();
    f.sync_data().unwrap();
    f.write_all(b"two").unwrap();
    s.sync_dir(&dir()).unwrap();
    f.sync_data().unwrap_err();
    assert!(f.write_all(b"three").is_err(), "the process is dead");
    assert!(s.read(&p).is_err());
    s.crash(CrashMode::Prefix);
    assert_eq!(s.read(&p).unwrap(), b"one");
}

#[test]
fn listing_truncation_read_at_and_immutable_copies() {
    let s = storage();
    let a = dir().join("a");
    let mut f = s.create_new(&a).unwrap();
    f.write_all(b"0123456789").unwrap();
    f.set_len(4).unwrap();
    assert_eq!(f.current_len().unwrap(), 4);
    f.write_all(b"X").unwrap();
    s.create_dir_all(&dir().join("sub")).unwrap();
    let mut names = s.list_dir(&dir()).unwrap();
    names.sort();
    assert_eq!(names, ["a", "sub"]);
    let mut two = [0u8; 2];
    s.read_at(&a, 3, &mut two).unwrap();
    assert_eq!(&two, b"3X");
    assert!(s.read_at(&a, 4, &mut two).is_err(), "past the end");
    let ImmutableFile::Bytes(copy) = s.open_immutable(&a).unwrap() else {
        panic!("FaultStorage hands out bytes")
    };
    f.write_all(b"Y").unwrap();
    assert_eq!(
        &copy[..],
        b"0123X",
        "an owned copy, unaffected by later writes"
    );
    assert_eq!(s.file_len(&a).unwrap(), 6);
    assert!(s.create_new(&a).is_err());
    assert!(s.create_new(Path::new("/missing/a")).is_err());
    let mut t = s.create(&a).unwrap();
    t.write_all(b"new").unwrap();
    assert_eq!(s.read(&a).unwrap(), b"new");
}

#[test]
fn crashes_replay_exactly_from_the_seed() {
    let run = |seed| {
        let s = FaultStorage::new(seed);
        s.create_dir_all(&dir()).unwrap();
        let mut out = Vec::new();
        for (i, mode) in CrashMode::ALL.iter().cycle().take(9).enumerate() {
            let p = dir().join(format!("f{i}"));
            let mut f = s.create_new(&p).unwrap();
            f.write_all(&vec![i as u8 + 1; 3000]).unwrap();
            s.sync_dir(&dir()).unwrap();
            s.crash(*mode);
            out.push(s.read(&p).unwrap());
        }
        out
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11), run(12));
}

/// `mkdir -p` of an existing directory writes nothing, so a full disk cannot fail it
/// (the engine's open calls it on every open and must work on a full disk).
#[test]
fn creating_an_existing_directory_cannot_fail_but_a_new_one_can() {
    let s = storage();
    s.inject(Fault::from_nth(OpKind::CreateDir, 1, Errno::NoSpace));
    s.create_dir_all(&dir()).unwrap();
    assert_eq!(s.injected(), 0);
    assert_eq!(
        s.create_dir_all(&dir().join("new"))
            .unwrap_err()
            .raw_os_error(),
        Some(28)
    );
}
