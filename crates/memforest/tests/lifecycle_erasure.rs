//! Erasure: a canary written in one turn, its session forgotten: no read path returns it;
//! after `purge`, no file of the store holds its bytes (raw files, and with zstd on, every
//! entry of every segment file read back through the SST reader). Also when the canary
//! fact opened a scene that survives the forget with another fact in it (the scene's
//! label, keyword profile and summaries must lose it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod recall_common;

use std::path::Path;

use memforest::lifecycle::Forget;
use memforest::recall::Query;
use memforest::schema::Table;
use memforest::Memory;
use memforest_engine::TenantId;
use memforest_sst::{Compression, EntrySource, SstReader};
use recall_common::{options, session};

/// In every case form the canary can take: the turn text, the lower-cased normalized fact,
/// and the stem in postings and scene keyword counts all contain these bytes.
const CANARY: &[u8] = b"yxwquorbl";

fn contains(hay: &[u8]) -> bool {
    hay.windows(CANARY.len())
        .any(|w| w.eq_ignore_ascii_case(CANARY))
}

/// Files under `dir` whose raw bytes hold the canary.
fn raw_hits(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(raw_hits(&p));
        } else if contains(&std::fs::read(&p).unwrap()) {
            out.push(p.display().to_string());
        }
    }
    out
}

/// Segment files with an entry (any version, tombstones included) holding the canary,
/// read through the SST reader (so compressed blocks are decompressed).
fn sst_hits(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "sst") {
            continue;
        }
        let r = SstReader::open(&p).unwrap();
        let mut it = r.iter().unwrap();
        it.seek_to_first().unwrap();
        while let Some(entry) = it.next_entry().unwrap() {
            if contains(&entry.user_key) || contains(&entry.value) {
                out.push(p.display().to_string());
                break;
            }
        }
    }
    out
}

/// Every live key and value of every tenant.
/// The keys each batch in the WAL of the store at `dir` writes, in order, read beside its
/// writer.
fn wal_batches(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let (_, recovered) = memforest_wal::Wal::open_read_only(
        memforest_io::default_storage(),
        dir.join(memforest_engine::WAL_DIR),
        memforest_wal::WalOptions::default(),
    )
    .unwrap();
    recovered
        .batches
        .iter()
        .map(|b| b.batch.entries().iter().map(|e| e.key.clone()).collect())
        .collect()
}

fn logical_hits(db: &Memory) -> usize {
    let mut n = 0;
    for t in db.tenants().unwrap() {
        for kv in db.db().scan_tenant(&t, None).unwrap() {
            let (k, v) = kv.unwrap();
            n += usize::from(contains(&k) || contains(&v));
        }
    }
    n
}

fn run(compression: Compression) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(false, None);
    opts.engine.sst.compression = compression;
    let db = Memory::open_with(dir.path(), opts).unwrap();
    let t = TenantId::new("t").unwrap();
    let other = TenantId::new("other").unwrap();
    let ordinary = [
        "I went hiking with Melanie near the lake on Saturday morning.",
        "Melanie recommended a bakery called Sunrise Loaves downtown.",
        "My sister Caroline started a pottery class at the community center.",
    ];
    for (i, text) in ordinary.iter().enumerate() {
        let s = session(
            &format!("s{i}"),
            i as i64,
            &[text, "The weather was lovely all week."],
        );
        db.ingest_session(&t, &s).unwrap();
        db.ingest_session(&other, &s).unwrap();
    }
    let canary = session(
        "secret",
        5,
        &[
            "I hid the spare key under the Zyxwquorble flowerpot by the back door.",
            "Remember the Zyxwquorble password hint is my childhood street.",
        ],
    );
    db.ingest_session(&t, &canary).unwrap();
    db.flush_summaries().unwrap();
    db.db().flush().unwrap();
    let q = Query::new("Where is the spare key hidden? Zyxwquorble flowerpot");
    let before = db.query(&t, &q).unwrap();
    assert!(
        contains(before.context().as_bytes()),
        "the canary must be recallable first"
    );
    assert!(logical_hits(&db) > 0);
    if compression == Compression::None {
        assert!(
            !raw_hits(dir.path()).is_empty(),
            "raw scan must see the canary first"
        );
    }

    let report = db.forget(&t, &Forget::Session("secret".into())).unwrap();
    assert_eq!(report.turns, 2);
    assert!(report.facts_removed >= 2, "{report:?}");
    // Read paths right after forget returns (summaries may still be regenerating).
    for text in [
        "Zyxwquorble",
        "spare key flowerpot back door",
        "password hint street",
        "Melanie",
    ] {
        let r = db.query(&t, &Query::new(text)).unwrap();
        assert!(
            !contains(format!("{r:?}").as_bytes()),
            "{text}: {}",
            r.context()
        );
        assert!(!contains(r.context().as_bytes()));
    }
    assert!(!contains(
        format!("{:?}", db.profile(&t.to_string()).unwrap()).as_bytes()
    ));
    db.flush_summaries().unwrap();
    assert!(!contains(
        format!("{:?}", db.profile(&t.to_string()).unwrap()).as_bytes()
    ));
    assert_eq!(logical_hits(&db), 0, "a live row still holds the canary");
    let r = db.query(&t, &Query::new("Melanie bakery")).unwrap();
    assert!(!r.facts.is_empty(), "other memories survive");

    let purge = db.purge().unwrap();
    assert!(purge.files_after > 0);
    assert_eq!(raw_hits(dir.path()), Vec::<String>::new(), "{purge:?}");
    assert_eq!(sst_hits(dir.path()), Vec::<String>::new());
    db.close().unwrap();
    // Reopening (WAL replay) does not resurrect it either.
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    assert_eq!(logical_hits(&db), 0);
    let r = db.query(&t, &q).unwrap();
    assert!(!contains(r.context().as_bytes()));
}

/// The canary fact opens a scene (its topics: the canary and `garden`); a kept fact of
/// another session joins it (topic `garden`); the canary's session is forgotten.
fn surviving_scene(compression: Compression) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(true, None);
    opts.engine.sst.compression = compression;
    let db = Memory::open_with(dir.path(), opts).unwrap();
    let t = TenantId::new("t").unwrap();
    db.ingest_session(
        &t,
        &session(
            "secret",
            0,
            &["Zyxwquorble seeds grow by the shed || || zyxwquorble garden"],
        ),
    )
    .unwrap();
    db.ingest_session(
        &t,
        &session("kept", 1, &["Tomatoes ripen in August || || garden"]),
    )
    .unwrap();
    db.flush_summaries().unwrap();
    let garden = |db: &Memory| db.query(&t, &Query::new("tomatoes garden")).unwrap();
    let scene_of = |r: &memforest::recall::QueryResult| {
        r.facts
            .iter()
            .flat_map(|f| f.trees.iter())
            .find(|l| l.starts_with("scene:"))
            .cloned()
    };
    let scene = scene_of(&garden(&db)).expect("the kept fact is in a scene");
    let canary = db.query(&t, &Query::new("Zyxwquorble seeds")).unwrap();
    assert_eq!(
        scene_of(&canary),
        Some(scene.clone()),
        "one scene holds both"
    );

    db.forget(&t, &Forget::Session("secret".into())).unwrap();
    for r in [
        garden(&db),
        db.query(&t, &Query::new("Zyxwquorble")).unwrap(),
    ] {
        assert!(!contains(format!("{r:?}").as_bytes()), "{r:?}");
    }
    db.flush_summaries().unwrap();
    let r = garden(&db);
    assert_eq!(scene_of(&r), Some(scene), "the scene survives");
    assert!(!contains(format!("{r:?}{}", r.context()).as_bytes()));
    assert!(!contains(
        format!("{:?}", db.profile(&t.to_string()).unwrap()).as_bytes()
    ));
    assert_eq!(logical_hits(&db), 0, "a live row still holds the canary");
    db.purge().unwrap();
    assert_eq!(raw_hits(dir.path()), Vec::<String>::new());
    assert_eq!(sst_hits(dir.path()), Vec::<String>::new());
}

#[test]
fn forgotten_fact_leaves_a_surviving_scene_uncompressed() {
    surviving_scene(Compression::None);
}

#[test]
fn forgotten_fact_leaves_a_surviving_scene_with_zstd() {
    surviving_scene(Compression::Zstd { level: 3 });
}

#[test]
fn forgotten_session_leaves_no_bytes_uncompressed() {
    run(Compression::None);
}

#[test]
fn forgotten_session_leaves_no_bytes_with_zstd() {
    run(Compression::Zstd { level: 3 });
}

/// A canary written by `Memory::update`: deleting the memory deletes the message that
/// holds its text, so after `purge` no file holds it; the updates' session never becomes
/// the conversation of the short-term memory, and no `add` may write into it.
#[test]
fn a_deleted_update_leaves_no_bytes_and_its_session_is_reserved() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let said = |text: &str| memforest::Message::user(text);
    db.add("u", "chat", &[said("My password hint is my first school.")])
        .unwrap();
    let old = db.list("u", &Default::default()).unwrap()[0].id;
    let new = db
        .update("u", old, "My password hint is the Zyxwquorble street.")
        .unwrap();
    db.flush_summaries().unwrap();
    db.db().flush().unwrap();
    assert!(logical_hits(&db) > 0);
    let context = db
        .context("u", "password hint", 500, &Default::default())
        .unwrap();
    assert!(
        !context.contains(memforest::api::UPDATES_SESSION),
        "{context}"
    );
    assert!(
        context.contains("chat"),
        "the conversation stays the latest: {context}"
    );
    let refused = db.add(
        "u",
        memforest::api::UPDATES_SESSION,
        &[said("Hello there, friend.")],
    );
    assert!(
        matches!(refused, Err(memforest::MemoryError::ReservedSession(_))),
        "{refused:?}"
    );
    // The importers' entry point refuses it too.
    let session = memforest::memory::session::Session {
        id: memforest::api::UPDATES_SESSION.to_owned(),
        start: 0,
        turns: vec![memforest::memory::session::Turn::new(
            memforest::memory::session::Role::User,
            "u",
            "Hello there, friend.",
        )],
    };
    let refused = db.ingest_session(&memforest::TenantId::new("u").unwrap(), &session);
    assert!(
        matches!(refused, Err(memforest::MemoryError::ReservedSession(_))),
        "{refused:?}"
    );

    let deleted = db.delete("u", new).unwrap();
    assert_eq!((deleted.messages, deleted.memories), (1, 1), "{deleted:?}");
    assert!(db.get("u", old).is_ok(), "the older version stays");
    db.flush_summaries().unwrap();
    assert_eq!(logical_hits(&db), 0, "a live row still holds the canary");
    db.purge().unwrap();
    assert_eq!(raw_hits(dir.path()), Vec::<String>::new());
    db.close().unwrap();
}

/// A memory stated twice by the same update (a retry) is supported by two update
/// messages: deleting it deletes both and the memory in
/// one WAL batch, so a crash cannot leave it half deleted (one message gone, the memory
/// still answering searches).
#[test]
fn deleting_a_memory_of_two_updates_is_one_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(false, None)).unwrap();
    let said = memforest::Message::user("I like black coffee a lot.");
    db.add("u", "chat", &[said]).unwrap();
    let old = db.list("u", &Default::default()).unwrap()[0].id;
    let new = db.update("u", old, "Rooibos is my favourite.").unwrap();
    let again = db.update("u", old, "Rooibos is my favourite.").unwrap();
    assert_eq!(new, again, "the same update again is the same version");
    let sources = db.get("u", new).unwrap().unwrap().sources;
    assert_eq!(sources.len(), 2, "{sources:?}");
    let before = wal_batches(dir.path()).len();
    let deleted = db.delete("u", new).unwrap();
    assert_eq!((deleted.messages, deleted.memories), (2, 1), "{deleted:?}");
    // The summaries may write batches of their own meanwhile: find the delete's.
    let tenant = TenantId::new("u").unwrap();
    let touches = |keys: &[Vec<u8>], table: Table| {
        let prefix = tenant.table_prefix(table.into());
        keys.iter().any(|k| k.starts_with(&prefix))
    };
    let batches = wal_batches(dir.path());
    let turns: Vec<&Vec<Vec<u8>>> = batches[before..]
        .iter()
        .filter(|keys| touches(keys, Table::Turns))
        .collect();
    assert_eq!(turns.len(), 1, "the two messages go in one batch");
    assert!(touches(turns[0], Table::Facts), "the memory goes with them");
    assert!(db.get("u", new).unwrap().is_none());
    db.close().unwrap();
}
