//! `Memory::ingest_session` on bad or repeated input: limits are
//! checked before anything is written, a session seen again appends by turn id, and a cell
//! that can never be extracted does not block the store.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod memory_common;

use memforest::memory::limits::{TurnAt, MAX_TURN_TEXT_BYTES};
use memforest::memory::record::{
    self, CellRecord, SessionRecord, TurnRecord, CELL_PREFIX, FAILED_PREFIX, PENDING_PREFIX,
    SESSION_PREFIX,
};
use memforest::memory::session::{Role, Session, Turn};
use memforest::memory::MemoryError;
use memforest::{schema::Table, Memory};
use memforest_engine::{Durability, InputError, TenantId, WriteBatch};
use memory_common::{options, session, tenant, T0};

fn turn(id: &str, text: &str) -> Turn {
    Turn {
        id: Some(id.into()),
        time: Some(T0),
        ..Turn::new(Role::User, "Alice", text)
    }
}

fn with_turns(id: &str, turns: Vec<Turn>) -> Session {
    Session {
        id: id.into(),
        start: T0,
        turns,
    }
}

/// The stored turns of `session`, in stored order, as `(id, text)`.
fn stored(db: &Memory, t: &TenantId, session: &str) -> Vec<(String, String)> {
    let prefix = record::session_hash(session).to_be_bytes();
    db.db()
        .scan_prefix(t, Table::Turns.into(), &prefix, None)
        .unwrap()
        .map(|r| {
            let rec: TurnRecord = record::decode(&r.unwrap().1, "turn").unwrap();
            (rec.id, rec.text)
        })
        .collect()
}

#[test]
fn an_oversized_turn_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let big = "word ".repeat(2 << 20 >> 2);
    let s = with_turns("s1", vec![turn("t0", "I adopted a cat."), turn("t1", &big)]);
    let e = db.ingest_session(&tenant(), &s).unwrap_err();
    let MemoryError::Input(e) = e else {
        panic!("not an input error: {e}")
    };
    assert_eq!(e.session, "s1");
    assert_eq!(
        e.turn,
        Some(TurnAt {
            index: 1,
            id: Some("t1".into())
        })
    );
    assert_eq!(
        e.source,
        InputError::TooLong {
            field: "turn text",
            len: big.len(),
            limit: MAX_TURN_TEXT_BYTES
        }
    );
    assert!(db.tenants().unwrap().is_empty(), "nothing may be stored");
    // The store is not poisoned: the next ingest and the summaries work.
    let r = db
        .ingest_session(
            &tenant(),
            &session("s2", 0, &["I adopted a cat named Tom."]),
        )
        .unwrap();
    assert_eq!(r.turns, 1);
    db.flush_summaries().unwrap();
    db.close().unwrap();
}

#[test]
fn a_session_seen_again_appends_new_turn_ids_and_skips_stored_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let t = tenant();
    let first = with_turns(
        "s1",
        vec![turn("t0", "I adopted a cat."), turn("t1", "She is grey.")],
    );
    let r1 = db.ingest_session(&t, &first).unwrap();
    assert_eq!((r1.turns, r1.turns_duplicate), (2, 0));
    // Seen again: one stored turn re-sent unchanged, one with other text, one new.
    let again = with_turns(
        "s1",
        vec![
            turn("t2", "Her name is Miso."),
            turn("t1", "She is grey."),
            turn("t0", "I adopted a dog."),
        ],
    );
    let r2 = db.ingest_session(&t, &again).unwrap();
    assert_eq!(r2.turns, 1);
    assert_eq!(r2.turns_duplicate, 1);
    assert_eq!(r2.conflicts, ["t0"]);
    assert_eq!(
        stored(&db, &t, "s1"),
        [
            ("t0".to_owned(), "I adopted a cat.".to_owned()),
            ("t1".to_owned(), "She is grey.".to_owned()),
            ("t2".to_owned(), "Her name is Miso.".to_owned()),
        ]
    );
    // One exchange at a time, each with its own id: every call appends.
    for i in 3..6 {
        let r = db
            .ingest_session(
                &t,
                &with_turns("s1", vec![turn(&format!("t{i}"), "More news.")]),
            )
            .unwrap();
        assert_eq!((r.turns, r.turns_duplicate), (1, 0));
    }
    assert_eq!(stored(&db, &t, "s1").len(), 6);
    // Turns without ids are identified by their position in the call: a re-sent session
    // is a no-op, a longer one appends its tail.
    let plain = session("s2", 1, &["One thing.", "Another thing."]);
    db.ingest_session(&t, &plain).unwrap();
    let r = db.ingest_session(&t, &plain).unwrap();
    assert_eq!((r.turns, r.turns_duplicate, r.seqno), (0, 2, 0));
    // A repeated id inside one call is a duplicate too.
    let twice = with_turns("s3", vec![turn("x", "Same."), turn("x", "Other.")]);
    let r = db.ingest_session(&t, &twice).unwrap();
    assert_eq!((r.turns, r.conflicts.len()), (1, 1));
    db.close().unwrap();
}

/// What an older version left behind for a turn too long for a tree page (2.6 MB) and one
/// whose record is over the decoder's 16 MiB limit: the turns, their cells, pending marks.
fn write_unextractable_cells(db: &Memory, t: &TenantId) {
    let mut batch = WriteBatch::new();
    let texts = ["word ".repeat(2_638_891 / 5), "x".repeat(17 << 20)];
    for (index, text) in texts.iter().enumerate() {
        let index = u32::try_from(index).unwrap();
        let rec = TurnRecord {
            id: format!("old#turn_{index}"),
            role: Role::User,
            speaker: "Alice".into(),
            text: text.clone(),
            time: T0,
        };
        // Encoded directly: the memory layer's encoder now refuses the second one.
        let value = memforest_codec::serde_codec::encode(&rec).unwrap();
        batch.put(
            t,
            Table::Turns.into(),
            &record::turn_key("old", index),
            &value,
        );
        let cell = record::cell_id("old", index);
        let crec = CellRecord {
            session: "old".into(),
            session_start: T0,
            index,
            first: index,
            count: 1,
            time: (T0, T0),
        };
        let key = record::prefixed(CELL_PREFIX, &cell.to_be_bytes());
        batch.put(
            t,
            Table::Sessions.into(),
            &key,
            &record::encode(&crec).unwrap(),
        );
        let pending = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
        batch.put(t, Table::RouterState.into(), &pending, b"");
    }
    let srec = SessionRecord {
        id: "old".into(),
        start: T0,
        turns: 2,
        cells: 2,
        last_time: T0,
    };
    let key = record::prefixed(SESSION_PREFIX, b"old");
    batch.put(
        t,
        Table::Sessions.into(),
        &key,
        &record::encode(&srec).unwrap(),
    );
    db.db().write(&batch, Durability::SyncData).unwrap();
}

#[test]
fn a_cell_that_can_never_be_extracted_is_recorded_and_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = tenant();
    {
        let db = Memory::open_with(dir.path(), options(None)).unwrap();
        write_unextractable_cells(&db, &t);
        db.close().unwrap();
    }
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let r = db
        .ingest_session(&t, &session("new", 3, &["I adopted a cat named Tom."]))
        .unwrap();
    assert_eq!((r.turns, r.facts_added, r.cells_failed), (1, 1, 0));
    db.flush_summaries().unwrap();
    assert_eq!(db.memory_stats().failed_cells, 2);
    assert_eq!(db.memory_stats().pending_cells, 0);
    for index in 0..2 {
        let cell = record::cell_id("old", index).to_be_bytes();
        let failed = record::prefixed(FAILED_PREFIX, &cell);
        assert!(db
            .db()
            .get(&t, Table::RouterState.into(), &failed)
            .unwrap()
            .is_some());
        let pending = record::prefixed(PENDING_PREFIX, &cell);
        assert!(db
            .db()
            .get(&t, Table::RouterState.into(), &pending)
            .unwrap()
            .is_none());
        // Nothing is lost: the raw turn stays.
        let raw = db
            .db()
            .get(&t, Table::Turns.into(), &record::turn_key("old", index));
        assert!(raw.unwrap().is_some());
    }
    db.close().unwrap();
    // Not retried after a reopen either: the count comes from the store.
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    db.flush_summaries().unwrap();
    assert_eq!(db.memory_stats().failed_cells, 2);
    assert_eq!(db.memory_stats().pending_cells, 0);
    db.close().unwrap();
}

#[test]
fn tenant_names_with_nul_or_over_the_limit_are_refused_by_name() {
    assert_eq!(
        TenantId::new("a\0b").unwrap_err().to_string(),
        "tenant name contains a NUL byte at byte offset 1"
    );
    assert_eq!(
        TenantId::new("x".repeat(70_000)).unwrap_err().to_string(),
        "tenant name of 70000 bytes exceeds the 1024-byte limit"
    );
    assert_eq!(
        TenantId::new("").unwrap_err(),
        InputError::Empty {
            field: "tenant name"
        }
    );
}
