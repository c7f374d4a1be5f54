//! Damage and operator error through the built `memforest` binary: a
//! lost `CURRENT`, an empty or cut manifest, a damaged manifest snapshot, deleted WAL
//! segments, a stray segment file, and the read-only commands, which must never change a
//! store. Each case is refused or reported, never served silently, nothing is deleted, and
//! `memforest repair` brings the data back where it is on disk.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{data, fails, ok};

fn sessions() -> String {
    data("sessions.jsonl").to_str().unwrap().to_owned()
}

/// A store holding the sample sessions; with `compact`, all of it in segment files and
/// the WAL purged.
fn store(dir: &Path, compact: bool) -> (PathBuf, String) {
    let db = dir.join("db");
    let dbs = db.to_str().unwrap().to_owned();
    ok(&["ingest", "--db", &dbs, "--format", "jsonl", &sessions()]);
    if compact {
        ok(&["compact", "--db", &dbs]);
    }
    (db, dbs)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else {
            out.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    out
}

fn names_with(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

fn manifest_path(db: &Path) -> PathBuf {
    let current = std::fs::read_to_string(db.join("CURRENT")).unwrap();
    db.join(current.lines().next().unwrap())
}

fn finds_miso(dbs: &str) -> bool {
    ok(&[
        "query", "--db", dbs, "--tenant", "alice", "--json", "cat Miso",
    ])
    .contains("Miso")
}

#[test]
fn a_lost_current_is_refused_by_ingest_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), true);
    std::fs::remove_file(db.join("CURRENT")).unwrap();
    let before = snapshot(&db);
    let err = fails(&["ingest", "--db", &dbs, "--format", "jsonl", &sessions()]);
    assert!(err.contains("not a MemForest store"), "{err}");
    assert!(err.contains("memforest repair"), "{err}");
    assert_eq!(snapshot(&db), before, "the refused ingest changed nothing");
    for cmd in ["stats", "verify"] {
        let err = fails(&[cmd, "--db", &dbs]);
        assert!(err.contains("not a MemForest store"), "{cmd}: {err}");
    }
    let out = ok(&["repair", "--db", &dbs]);
    assert!(out.contains("repaired"), "{out}");
    assert!(finds_miso(&dbs));
    ok(&["verify", "--db", &dbs]);
}

#[test]
fn a_directory_that_is_not_a_store_is_never_initialised_or_touched() {
    let names = [
        "00000000000000000001.sst",
        "MANIFEST-000001",
        "00000000000000000002.sst.tmp",
        "notes.txt",
    ];
    // All of them, then each alone: a user's file named like a manifest is not what an
    // interrupted creation leaves, and is never removed.
    let sets = std::iter::once(&names[..]).chain(names.chunks(1));
    for set in sets {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("mine");
        std::fs::create_dir(&user).unwrap();
        for name in set {
            std::fs::write(user.join(name), format!("the user's own {name}")).unwrap();
        }
        let before = snapshot(&user);
        let users = user.to_str().unwrap();
        let err = fails(&["ingest", "--db", users, "--format", "jsonl", &sessions()]);
        assert!(err.contains("not a MemForest store"), "{set:?}: {err}");
        let last = set.last().unwrap();
        assert!(err.contains(last), "names what it found: {err}");
        assert_eq!(
            snapshot(&user),
            before,
            "{set:?}: nothing created, changed or deleted"
        );
    }
}

#[test]
fn an_empty_manifest_refuses_and_keeps_the_segment_files() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), true);
    let segments = names_with(&db, ".sst");
    assert!(!segments.is_empty());
    let manifest = manifest_path(&db);
    std::fs::write(&manifest, b"").unwrap();
    let err = fails(&["verify", "--db", &dbs]);
    let name = manifest.file_name().unwrap().to_str().unwrap();
    assert!(err.contains(name), "{err}");
    assert!(err.contains("no record"), "{err}");
    fails(&["stats", "--db", &dbs]);
    fails(&["ingest", "--db", &dbs, "--format", "jsonl", &sessions()]);
    assert_eq!(names_with(&db, ".sst"), segments, "no segment file deleted");
    ok(&["repair", "--db", &dbs]);
    assert!(finds_miso(&dbs));
    ok(&["verify", "--db", &dbs]);
}

/// The manifest cut back to its first record. Here the WAL still holds every write (one
/// small segment, never purged), so the segment files the manifest no longer lists are
/// provably redundant: the store must serve every record, before and after a writer opens
/// it, and `verify` names the dropped records' files as garbage. (When the WAL no longer
/// holds their data they are quarantined: `open_safety.rs` in the engine's tests.)
#[test]
fn a_manifest_cut_at_a_record_boundary_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), true);
    let tenants = |dbs: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&ok(&["stats", "--db", dbs, "--json"])).unwrap();
        v["tenants"].clone()
    };
    let before = tenants(&dbs);
    let manifest = manifest_path(&db);
    let id: u64 = manifest
        .to_str()
        .unwrap()
        .rsplit('-')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let bytes = std::fs::read(&manifest).unwrap();
    let first = memforest_wal::LogReader::new(&bytes, id)
        .next()
        .unwrap()
        .unwrap();
    std::fs::write(&manifest, &bytes[..usize::try_from(first.end).unwrap()]).unwrap();
    let out = ok(&["verify", "--db", &dbs]);
    assert!(out.contains("garbage"), "{out}");
    assert_eq!(tenants(&dbs), before);
    ok(&["compact", "--db", &dbs]);
    assert_eq!(tenants(&dbs), before);
    assert!(finds_miso(&dbs));
}

/// After `compact --purge` the manifest is a snapshot record (then the close's record of
/// the WAL's synced length); damage in the snapshot is never a torn append (it was synced
/// before CURRENT named the file): refused.
#[test]
fn a_damaged_manifest_snapshot_refuses_instead_of_hiding_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), true);
    ok(&["compact", "--db", &dbs, "--purge"]);
    let manifest = manifest_path(&db);
    let mut bytes = std::fs::read(&manifest).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    std::fs::write(&manifest, &bytes).unwrap();
    for cmd in ["verify", "stats"] {
        // The snapshot is the first record; a clean close may have appended one more.
        let err = fails(&[cmd, "--db", &dbs]);
        let snapshot = err.contains("first record") || err.contains("byte offset 0");
        assert!(snapshot && err.contains("MANIFEST"), "{cmd}: {err}");
        assert_rebuild_hint(&err);
    }
    ok(&["repair", "--db", &dbs]);
    assert!(finds_miso(&dbs));
}

/// The hint a refusal for damage in `CURRENT`, a manifest or a segment file ends with.
fn assert_rebuild_hint(err: &str) {
    assert!(err.contains("hint: `memforest verify --db DIR`"), "{err}");
    assert!(
        err.contains("`memforest repair --db DIR` rebuilds"),
        "{err}"
    );
    assert!(!err.contains("--salvage"), "{err}");
}

/// A flipped byte in a segment file: `verify` names the file and offset and the repair
/// that mends it, at its cost (the file set aside, kept).
#[test]
fn a_damaged_segment_file_is_reported_with_the_repair_that_mends_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), true);
    let segment = db.join(names_with(&db, ".sst").pop().unwrap());
    let mut bytes = std::fs::read(&segment).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 0x55;
    std::fs::write(&segment, &bytes).unwrap();
    let err = fails(&["verify", "--db", &dbs]);
    assert!(err.contains(segment.to_str().unwrap()), "{err}");
    assert_rebuild_hint(&err);
}

/// A WAL segment file past the last one that holds no valid segment header (junk, a stray
/// copy): `verify` and `stats`, which open read-only, report it as damage before any
/// writer has set it aside, and change nothing; a writer then sets it aside, never
/// deleting it.
#[test]
fn a_junk_wal_segment_is_damage_in_verify_before_a_writer_sets_it_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), false);
    let wal = db.join("wal");
    let last = names_with(&wal, ".wal").pop().unwrap();
    let id: u64 = last.trim_end_matches(".wal").parse().unwrap();
    let junk = format!("{:020}.wal", id + 1);
    let junk_bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(wal.join(&junk), &junk_bytes).unwrap();
    let before = snapshot(&db);
    let out = fails(&["verify", "--db", &dbs]);
    assert!(out.contains("DAMAGED"), "{out}");
    assert!(out.contains(&junk), "{out}");
    let stats = ok(&["stats", "--db", &dbs]);
    assert!(stats.starts_with("DAMAGED"), "{stats}");
    assert_eq!(
        snapshot(&db),
        before,
        "the read-only commands changed nothing"
    );
    ok(&["compact", "--db", &dbs]);
    let aside = format!("{junk}.quarantine");
    assert_eq!(std::fs::read(wal.join(&aside)).unwrap(), junk_bytes);
    let out = fails(&["verify", "--db", &dbs]);
    assert!(out.contains(&aside), "{out}");
}

/// A segment file no manifest record lists, holding data found nowhere else, is
/// quarantined: `verify` exits non-zero naming it, `stats` says DAMAGED. It is another
/// store's, so repair sets it aside as `.foreign` instead of adopting it, and the main
/// store's WAL writes stay (adopting it used to skip them).
#[test]
fn a_stray_file_is_damage_in_verify_and_stats_and_repair_sets_another_store_s_aside() {
    let dir = tempfile::tempdir().unwrap();
    // The donor holds a message the main store lacks, so its segment file is not garbage
    // whatever the two ingests' summary passes made.
    let (donor, donors) = store(&dir.path().join("donor"), false);
    ok(&[
        "add",
        "--db",
        &donors,
        "--user",
        "zed",
        "--session",
        "s1",
        "Only the donor store has heard of the Zanzibar expedition.",
    ]);
    ok(&["compact", "--db", &donors]);
    let (db, dbs) = store(&dir.path().join("main"), true);
    // Messages only the main store holds, written before the stray file comes: they take
    // the main store's seqnos past the donor's. (A read-only open leaves out a file whose
    // unknown entries are all newer than what it read: a writer's flush beside it.)
    let only = "Only the main store holds this note about the Oslo trip.";
    for text in [
        only,
        "The Oslo trip starts on a Monday.",
        "Amy packs light.",
    ] {
        ok(&[
            "add",
            "--db",
            &dbs,
            "--user",
            "amy",
            "--session",
            "s9",
            text,
        ]);
    }
    let donated = names_with(&donor, ".sst").pop().unwrap();
    let stray = "00000000000000009999.sst";
    std::fs::copy(donor.join(&donated), db.join(stray)).unwrap();
    let out = fails(&["verify", "--db", &dbs]);
    assert!(out.contains("DAMAGED"), "{out}");
    assert!(out.contains(stray), "{out}");
    let stats = ok(&["stats", "--db", &dbs]);
    assert!(stats.starts_with("DAMAGED"), "{stats}");
    // The read-only commands only say what a writer would do; a writer sets it aside.
    assert_eq!(names_with(&db, stray), vec![stray.to_owned()]);
    ok(&["compact", "--db", &dbs]);
    assert_eq!(
        names_with(&db, ".quarantine"),
        vec![format!("{stray}.quarantine")]
    );
    fails(&["verify", "--db", &dbs]);
    let out = ok(&["repair", "--db", &dbs, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // From the first seqno after the two stores' identical ingests on, the donor's file
    // holds other writes than the main store's WAL: it is another store's.
    assert_eq!(v["foreign"][0][0], stray, "{out}");
    assert!(v["unquarantined"].as_array().unwrap().is_empty(), "{out}");
    ok(&["verify", "--db", &dbs]);
    assert!(names_with(&db, ".quarantine").is_empty());
    assert_eq!(
        names_with(&db, ".foreign"),
        vec![format!("{stray}.foreign")]
    );
    let found = ok(&["messages", "--db", &dbs, "--user", "amy", "--session", "s9"]);
    assert!(found.contains("Only the main store"), "{found}");
}

/// Deleting the WAL (all of it, or its newest segment) after a clean close with nothing
/// flushed: the manifest tracks the segments, so every command refuses naming what is
/// missing instead of serving a shorter history; repair accepts the loss and says so.
#[test]
fn deleted_wal_segments_refuse_to_open_and_name_the_segment() {
    for whole in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (db, dbs) = store(dir.path(), false);
        let wal = db.join("wal");
        let newest = names_with(&wal, ".wal").pop().unwrap();
        if whole {
            std::fs::remove_dir_all(&wal).unwrap();
        } else {
            std::fs::remove_file(wal.join(&newest)).unwrap();
        }
        for args in [
            vec!["verify", "--db", &dbs],
            vec!["stats", "--db", &dbs],
            vec!["query", "--db", &dbs, "--tenant", "alice", "cat"],
        ] {
            let err = fails(&args);
            assert!(err.contains(&newest), "{args:?}: {err}");
            assert!(err.contains("missing"), "{args:?}: {err}");
        }
        fails(&["ingest", "--db", &dbs, "--format", "jsonl", &sessions()]);
        let out = ok(&["repair", "--db", &dbs, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(!v["wal_lost"].as_array().unwrap().is_empty(), "{out}");
        ok(&["verify", "--db", &dbs]);
    }
}

/// `query`, `stats` and `verify` open read-only: repeated, they leave every byte of the
/// store as it was (no flush, no WAL purge, no manifest write), so `verify` cannot race
/// its own open.
#[test]
fn read_only_commands_never_change_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (db, dbs) = store(dir.path(), false);
    let before = snapshot(&db);
    for _ in 0..3 {
        ok(&["verify", "--db", &dbs]);
        ok(&["stats", "--db", &dbs]);
        assert!(finds_miso(&dbs));
    }
    assert_eq!(snapshot(&db), before);
}

/// A flipped byte in the WAL makes every command refuse, naming the segment and pointing
/// at `repair --salvage`; a plain repair refuses too and changes nothing. The salvage
/// keeps every write that reads back, reports the damage and the writes lost with it, and
/// sets the damaged segment aside byte for byte; then every command works again. With
/// every write already flushed, the salvage reports that none was lost.
#[test]
fn a_damaged_wal_refuses_with_a_hint_and_repair_salvage_keeps_the_rest() {
    for compact in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (db, dbs) = store(dir.path(), compact);
        let wal = db.join("wal");
        let newest = names_with(&wal, ".wal").pop().unwrap();
        let mut bytes = std::fs::read(wal.join(&newest)).unwrap();
        let at = bytes.len() / 2;
        bytes[at] ^= 0x55;
        std::fs::write(wal.join(&newest), &bytes).unwrap();
        let before = snapshot(&db);
        for args in [
            vec!["verify", "--db", &dbs],
            vec!["query", "--db", &dbs, "--tenant", "alice", "cat"],
            vec!["repair", "--db", &dbs],
        ] {
            let err = fails(&args);
            assert!(err.contains("byte offset"), "{args:?}: {err}");
            assert!(err.contains("repair --salvage"), "{args:?}: {err}");
        }
        assert_eq!(
            snapshot(&db),
            before,
            "{compact}: a refusal changed the store"
        );
        let out = ok(&["repair", "--salvage", "--db", &dbs, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let skipped = v["wal_skipped"].as_array().unwrap();
        assert!(!skipped.is_empty(), "{out}");
        let lost = skipped.iter().any(|d| !d["lost"].is_null());
        assert_eq!(lost, !compact, "{out}");
        assert!(skipped.iter().all(|d| d["lost_after"].is_null()), "{out}");
        let aside = format!("{newest}.quarantine");
        assert!(std::fs::read(wal.join(&aside)).unwrap() == bytes, "{out}");
        assert!(!wal.join(&newest).exists());
        if compact {
            assert!(finds_miso(&dbs));
        }
        ok(&["query", "--db", &dbs, "--tenant", "alice", "cat"]);
        ok(&["ingest", "--db", &dbs, "--format", "jsonl", &sessions()]);
        assert!(finds_miso(&dbs));
        // Damage stays reported while the set-aside segment is in wal/.
        let err = fails(&["verify", "--db", &dbs]);
        assert!(err.contains(&aside), "{err}");
        std::fs::rename(wal.join(&aside), dir.path().join(&aside)).unwrap();
        ok(&["verify", "--db", &dbs]);
    }
}
