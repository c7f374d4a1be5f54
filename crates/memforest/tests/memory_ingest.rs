//! Memory write path: re-ingest no-op, append, dedup merge, entity activation with
//! backfill, summaries current after flush (also with two concurrent writers), and the
//! summarizer off the write path.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

#[path = "memory_common/mod.rs"]
mod common;

use std::sync::{Arc, Condvar, Mutex};

use common::*;
use memforest::memory::extract::{Extraction, ExtractionInput, Extractor, HeuristicExtractor};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::record::{self, EntityState, ENTITY_PREFIX};
use memforest::memory::stats::CallKind;
use memforest::memory::summarize::{Summarizer, SummaryOutput, SummaryRequest};
use memforest::{schema::Table, Memory};
use memforest_tree::TreeKind;

/// Ingests one session a day for `days` days: the user says `said(day)`, the assistant
/// replies `reply`.
fn ingest_days(db: &Memory, days: i64, said: impl Fn(i64) -> String, reply: &str) {
    for i in 0..days {
        let text = said(i);
        db.ingest_session(&tenant(), &session(&format!("s{i}"), i, &[&text, reply]))
            .unwrap();
    }
}

#[test]
fn reingest_is_a_noop_and_append_extends() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let s = session(
        "s1",
        0,
        &[
            "I adopted a dog named Rex last week.",
            "That is lovely news for you.",
        ],
    );
    let r1 = db.ingest_session(&tenant(), &s).unwrap();
    assert_eq!((r1.turns, r1.cells), (2, 1));
    assert_eq!(r1.facts_added, 2);
    let before = facts(&db);
    let r2 = db.ingest_session(&tenant(), &s).unwrap();
    assert_eq!((r2.turns, r2.cells, r2.facts_added, r2.seqno), (0, 0, 0, 0));
    assert_eq!(facts(&db), before);
    let longer = session(
        "s1",
        0,
        &[
            "I adopted a dog named Rex last week.",
            "That is lovely news for you.",
            "Rex loves the park near my house.",
        ],
    );
    let r3 = db.ingest_session(&tenant(), &longer).unwrap();
    assert_eq!((r3.turns, r3.cells, r3.facts_added), (1, 1, 1));
    assert_eq!(facts(&db).len(), 3);
    // "last week" resolved against the turn time (2023-03-01, a Wednesday): Feb 20-26.
    let rex = facts(&db)
        .into_iter()
        .find(|(_, f)| f.text.contains("adopted"))
        .unwrap()
        .1;
    assert_eq!(rex.time.0, T0 - 9 * DAY);
    db.close().unwrap();
}

#[test]
fn exact_duplicates_merge_occurrences() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    db.ingest_session(
        &tenant(),
        &session("a", 0, &["My sister lives in Denver now."]),
    )
    .unwrap();
    let r = db
        .ingest_session(
            &tenant(),
            &session("b", 1, &["my sister lives in denver now!"]),
        )
        .unwrap();
    assert_eq!((r.facts_added, r.facts_merged), (0, 1));
    let all = facts(&db);
    assert_eq!(all.len(), 1);
    let f = &all[0].1;
    assert_eq!(f.occurrences.len(), 2);
    assert_eq!(f.text, "Alice: My sister lives in Denver now.");
    assert_eq!(f.time, (T0, T0 + DAY));
    db.close().unwrap();
}

#[test]
fn entity_activates_after_three_facts_in_two_sessions_and_backfills() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let t = tenant();
    db.ingest_session(&t, &session("a", 0, &["I called Melanie about the trip."]))
        .unwrap();
    db.ingest_session(
        &t,
        &session("a2", 0, &["Then I visited Melanie on Friday evening."]),
    )
    .unwrap();
    let entity_tree = record::tree_id(TreeKind::Entity, "melanie");
    assert!(
        !trees(&db).iter().any(|(id, _)| *id == entity_tree),
        "2 facts: still inactive"
    );
    db.ingest_session(
        &t,
        &session("b", 3, &["Melanie gave me a painting yesterday."]),
    )
    .unwrap();
    let tree = trees(&db).into_iter().find(|(id, _)| *id == entity_tree);
    assert_eq!(tree.unwrap().1.label, "melanie");
    let members: Vec<u64> = facts(&db)
        .iter()
        .filter(|(id, _)| {
            db.db()
                .get(
                    &t,
                    Table::Memberships.into(),
                    &record::pair_key(*id, entity_tree),
                )
                .unwrap()
                .is_some()
        })
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(members.len(), 3, "backfill inserted the two earlier facts");
    let state = db
        .db()
        .get(
            &t,
            Table::RouterState.into(),
            &record::prefixed(ENTITY_PREFIX, b"melanie"),
        )
        .unwrap()
        .unwrap();
    let state: EntityState = record::decode(&state, "entity").unwrap();
    assert!(state.active && state.facts.is_empty());
    db.ingest_session(&t, &session("c", 4, &["Melanie is moving to Austin soon."]))
        .unwrap();
    let count = facts(&db)
        .iter()
        .filter(|(id, _)| {
            db.db()
                .get(
                    &t,
                    Table::Memberships.into(),
                    &record::pair_key(*id, entity_tree),
                )
                .unwrap()
                .is_some()
        })
        .count();
    assert_eq!(count, 4, "an active entity takes new facts directly");
    db.close().unwrap();
}

/// The stored entity state of `key` for the test tenant, if any.
fn entity_state(db: &Memory, key: &str) -> Option<EntityState> {
    db.db()
        .get(
            &tenant(),
            Table::RouterState.into(),
            &record::prefixed(ENTITY_PREFIX, key.as_bytes()),
        )
        .unwrap()
        .map(|b| record::decode(&b, "entity").unwrap())
}

/// Routing remembers which entities are active; forgetting every fact of one deletes its
/// tree and state, and a later mention must start it over as a candidate in the same open
/// `Db` rather than go straight into a new tree.
#[test]
fn an_entity_forgotten_whole_starts_over_as_a_candidate() {
    use memforest::lifecycle::Forget;
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    let t = tenant();
    let mentions = [
        ("a", 0, "I called Melanie about the trip."),
        ("a2", 0, "Then I visited Melanie on Friday evening."),
        ("b", 3, "Melanie gave me a painting yesterday."),
        ("c", 4, "Melanie is moving to Austin soon."),
    ];
    for (s, day, text) in mentions {
        db.ingest_session(&t, &session(s, day, &[text])).unwrap();
    }
    let entity_tree = record::tree_id(TreeKind::Entity, "melanie");
    assert!(trees(&db).iter().any(|(id, _)| *id == entity_tree));
    assert!(entity_state(&db, "melanie").unwrap().active);
    for (s, _, _) in mentions {
        db.forget(&t, &Forget::Session(s.into())).unwrap();
    }
    assert!(!trees(&db).iter().any(|(id, _)| *id == entity_tree));
    assert_eq!(entity_state(&db, "melanie"), None);
    db.ingest_session(&t, &session("d", 5, &["Melanie sent me a postcard."]))
        .unwrap();
    assert!(
        !trees(&db).iter().any(|(id, _)| *id == entity_tree),
        "one new mention: a candidate again, no tree"
    );
    let state = entity_state(&db, "melanie").unwrap();
    assert!(!state.active);
    assert_eq!(state.facts.len(), 1);
    db.close().unwrap();
}

#[test]
fn flush_summaries_leaves_every_summary_current_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Memory::open_with(dir.path(), options(None)).unwrap();
        ingest_days(
            &db,
            30,
            |i| format!("I ran {i} km with Jordan in the Central Park loop today."),
            "Nice pace for a long run.",
        );
        db.flush_summaries().unwrap();
        assert!(assert_summaries_current(&db) > 0);
        let stats = db.memory_stats();
        assert!(stats.dirty_by_level.iter().all(|n| *n == 0));
        let usage = &stats.usage["t"];
        assert!(usage.values().any(|u| u.calls > 0));
        drop(db);
    }
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    assert!(assert_summaries_current(&db) > 0);
    db.close().unwrap();
}

/// Two writers ingest while the scheduler reads summary inputs at snapshots (outside the
/// forest lock) and applies them: inputs that went stale are redone, and every summary
/// ends current.
#[test]
fn summaries_converge_while_two_writers_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), options(None)).unwrap();
    std::thread::scope(|s| {
        for w in 0..2i64 {
            let db = &db;
            s.spawn(move || {
                for i in 0..40 {
                    let text = format!("Writer {w} ran {i} km with Jordan by the harbour today.");
                    let s = session(&format!("w{w}-{i}"), w * 100 + i, &[&text, "Calm sea."]);
                    db.ingest_session(&tenant(), &s).unwrap();
                }
            });
        }
    });
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    let stats = db.memory_stats();
    assert!(stats.dirty_by_level.iter().all(|n| *n == 0));
    assert!(stats.usage["t"][&CallKind::Summary].calls > 0);
    db.close().unwrap();
}

/// Blocks every call until the test opens the gate.
#[derive(Debug, Default)]
struct Gated {
    open: Mutex<bool>,
    cv: Condvar,
    /// Calls that have started (and are waiting while the gate is shut).
    started: Mutex<usize>,
}

impl Gated {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    /// Waits (up to 20 s) until a call has started.
    fn wait_started(&self) {
        let t0 = std::time::Instant::now();
        while *self.started.lock().unwrap() == 0 {
            assert!(t0.elapsed().as_secs() < 20, "no summary call started");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Summarizer for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn summarize(&self, r: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        *self.started.lock().unwrap() += 1;
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
        Ok(SummaryOutput {
            text: format!("{} children", r.children.len()),
            usage: Usage::default(),
        })
    }
}

/// Opens the gate when dropped, so a failing assertion cannot leave the summarizer (and
/// with it `Db`'s drop) blocked.
struct OpenOnDrop(Arc<Gated>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[test]
fn ingest_completes_while_the_summarizer_is_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gated::default());
    let summarizer: Arc<dyn Summarizer> = Arc::clone(&gate) as Arc<dyn Summarizer>;
    let db = Memory::open_with(dir.path(), options(Some(summarizer))).unwrap();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    for i in 0..5 {
        let text = format!("We planted {i} rows of tomatoes in the garden.");
        let s = session(&format!("s{i}"), i, &[&text, "Tomatoes need sun."]);
        let r = db.ingest_session(&tenant(), &s).unwrap();
        assert!(r.facts_added > 0);
    }
    // Every ingest returned although no summary call can finish while the gate is shut.
    assert!(db.memory_stats().dirty_by_level.iter().sum::<u64>() > 0);
    gate.open();
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    db.close().unwrap();
}

/// A summary call in flight while its session is forgotten and the same session id is
/// ingested again with other facts: the emptied trees are deleted and re-created under the
/// same ids (node ids and versions start over), so the late result names a node that looks
/// the same by id and version. It must be rejected, not stored over the new facts.
#[test]
fn a_summary_in_flight_across_a_forget_and_reingest_is_rejected() {
    use memforest::lifecycle::Forget;
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gated::default());
    let db = Memory::open_with(
        dir.path(),
        options(Some(Arc::clone(&gate) as Arc<dyn Summarizer>)),
    )
    .unwrap();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let said = |a: &str, b: &str| session("a", 0, &[a, "Nice.", b, "Cool."]);
    db.ingest_session(
        &tenant(),
        &said(
            "I adopted a dog named Rex last week.",
            "I bought a red bicycle yesterday.",
        ),
    )
    .unwrap();
    gate.wait_started();
    db.forget(&tenant(), &Forget::Session("a".into())).unwrap();
    db.ingest_session(
        &tenant(),
        &said(
            "I adopted a cat named Tom last week.",
            "I bought a blue scooter yesterday.",
        ),
    )
    .unwrap();
    gate.open();
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    db.close().unwrap();
}

/// Fails its first `fail` calls, then delegates to the default implementation.
#[derive(Debug)]
struct Flaky {
    fail: u64,
    calls: std::sync::atomic::AtomicU64,
}

impl Flaky {
    fn new(fail: u64) -> Self {
        Self {
            fail,
            calls: std::sync::atomic::AtomicU64::new(0),
        }
    }
    fn failing(&self) -> bool {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < self.fail
    }
}

impl Summarizer for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn summarize(&self, r: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        if self.failing() {
            return Err(ModelError::Timeout(std::time::Duration::from_millis(1)));
        }
        memforest::memory::summarize::ExtractiveSummarizer::default().summarize(r)
    }
}

impl Extractor for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        if self.failing() {
            return Err(ModelError::Malformed {
                offset: 3,
                what: "items".into(),
            });
        }
        HeuristicExtractor.extract(input)
    }
}

fn fast_retry(summarizer: Option<Arc<dyn Summarizer>>) -> memforest::Options {
    let mut o = options(summarizer);
    o.memory.retry_backoff = std::time::Duration::from_millis(1);
    o
}

#[test]
fn failed_summaries_stay_dirty_and_are_retried() {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), fast_retry(Some(Arc::new(Flaky::new(5))))).unwrap();
    ingest_days(
        &db,
        6,
        |i| format!("I swam {i} laps at the Riverside pool with Maya."),
        "Great effort.",
    );
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    let usage = db.memory_stats().usage["t"][&CallKind::Summary];
    assert_eq!(usage.errors, 5);
    assert!(usage.calls > 0);
    db.close().unwrap();
}

/// Every reply is unusable (a model that answers with a header only, stripped to nothing).
#[derive(Debug)]
struct Unusable;

impl Summarizer for Unusable {
    fn name(&self) -> &str {
        "unusable"
    }
    fn summarize(&self, _: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        Err(ModelError::Malformed {
            offset: 0,
            what: "empty summary".into(),
        })
    }
}

/// A new store summarized by `summarizer` (retried fast) after six days of swims.
fn swims_summarized_by(summarizer: Arc<dyn Summarizer>) -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let db = Memory::open_with(dir.path(), fast_retry(Some(summarizer))).unwrap();
    ingest_days(
        &db,
        6,
        |i| format!("I swam {i} laps at the Riverside pool with Maya."),
        "Great effort.",
    );
    (dir, db)
}

#[test]
fn a_summarizer_that_never_gives_a_usable_reply_ends_in_the_extractive_summary() {
    let (_dir, db) = swims_summarized_by(Arc::new(Unusable));
    // Returns: every node that needs a call fails `summary_attempts` times, then gets the
    // extractive summary.
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    let stats = db.memory_stats();
    let usage = stats.usage["t"][&CallKind::Summary];
    assert_eq!(usage.calls, 0);
    assert!(stats.summary_fallbacks > 0);
    assert_eq!(usage.errors, 4 * stats.summary_fallbacks);
    let texts = root_summaries(&db);
    assert!(
        texts.iter().any(|t| t.contains("Riverside pool")),
        "{texts:?}"
    );
    db.close().unwrap();
}

/// Every reply is longer than a tree page holds.
#[derive(Debug)]
struct Verbose;

impl Summarizer for Verbose {
    fn name(&self) -> &str {
        "verbose"
    }
    fn summarize(&self, _: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        Ok(SummaryOutput {
            text: "summary ".repeat(400_000),
            usage: Usage::default(),
        })
    }
}

/// A summary too long for a tree page is a failed call: retried, then the extractive
/// summary; it used to fail the tree write, leaving the node dirty for good, so
/// `flush_summaries` and `purge` failed until the summarizer changed.
#[test]
fn a_summary_too_long_for_a_page_ends_in_the_extractive_summary() {
    let (_dir, db) = swims_summarized_by(Arc::new(Verbose));
    db.flush_summaries().unwrap();
    assert!(assert_summaries_current(&db) > 0);
    assert!(db.memory_stats().summary_fallbacks > 0);
    db.purge().unwrap();
    db.close().unwrap();
}

#[test]
fn failed_extraction_keeps_the_cell_pending_until_a_retry_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = fast_retry(None);
    o.memory.extractor = Arc::new(Flaky::new(1));
    let db = Memory::open_with(dir.path(), o).unwrap();
    let r = db
        .ingest_session(
            &tenant(),
            &session("s", 0, &["My cat Luna turned 4 years old today."]),
        )
        .unwrap();
    assert_eq!((r.cells, r.cells_pending, r.facts_added), (1, 1, 0));
    db.flush_summaries().unwrap();
    assert_eq!(facts(&db).len(), 1);
    assert_eq!(db.memory_stats().pending_cells, 0);
    db.close().unwrap();
}

#[test]
fn ingest_waits_when_the_backlog_exceeds_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gated::default());
    let mut o = options(Some(Arc::clone(&gate) as Arc<dyn Summarizer>));
    o.memory.backlog_limit = 0;
    let db = Arc::new(Memory::open_with(dir.path(), o).unwrap());
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let writer = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || {
            // Two user facts: entity:user gets a node with two children, which needs a call.
            let user = "Jordan bought a red bike in Denver. He rides it to work daily.";
            let s = session("s", 0, &[user, "Nice."]);
            db.ingest_session(&tenant(), &s).unwrap()
        })
    };
    // The writer must stall: the summarizer cannot finish while the gate is shut.
    while db.memory_stats().stalls == 0 {
        std::thread::yield_now();
    }
    assert!(!writer.is_finished());
    let reason = db.memory_stats().last_stall_reason.unwrap();
    assert!(reason.contains("backlog"), "{reason}");
    gate.open();
    let receipt = writer.join().unwrap();
    assert!(receipt.facts_added > 0);
    // It returned only once nothing was dirty (limit 0).
    assert!(db.memory_stats().dirty_by_level.iter().all(|n| *n == 0));
}

/// Refresh passes are paced by `refresh_interval`: what ingest dirties after a pass waits
/// for the next one, and `flush_summaries` starts it at once. The longest interval there
/// is means "only when someone waits".
#[test]
fn refresh_passes_wait_for_the_interval_unless_someone_waits_for_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(None);
    o.memory.refresh_interval = std::time::Duration::MAX;
    let db = Arc::new(Memory::open_with(dir.path(), o).unwrap());
    let dirty = |db: &Memory| db.memory_stats().dirty_by_level.iter().sum::<u64>();
    let ingest = |i: i64| {
        let text = format!("I ran {i} km with Jordan in the Central Park loop today.");
        let s = session(&format!("s{i}"), i, &[&text, "Nice pace for a long run."]);
        db.ingest_session(&tenant(), &s).unwrap();
    };
    ingest(0);
    // The first pass starts at once (no pass ran within the interval)...
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while dirty(&db) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first pass did not run"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // ...the next waits for the interval, however often ingest wakes the scheduler.
    for i in 1..4 {
        ingest(i);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(dirty(&db) > 0, "a pass ran before the interval was up");
    let flusher = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.flush_summaries())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !flusher.is_finished() {
        assert!(
            std::time::Instant::now() < deadline,
            "flush_summaries waited for the interval"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    flusher.join().unwrap().unwrap();
    assert_eq!(dirty(&db), 0);
    assert!(assert_summaries_current(&db) > 0);
}

/// A cell whose extraction failed is retried when its backoff ends, even while the
/// scheduler rests between refresh passes (nobody calls `flush_summaries`).
#[test]
fn a_failed_cell_is_retried_while_refresh_passes_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(None);
    o.memory.refresh_interval = std::time::Duration::from_secs(3600);
    o.memory.retry_backoff = std::time::Duration::from_millis(300);
    o.memory.extractor = Arc::new(Flaky::new(1));
    let db = Memory::open_with(dir.path(), o).unwrap();
    // Two cells: the first one's extraction fails, the second one's facts dirty the trees,
    // so the scheduler's pass does work and then rests.
    let s = session(
        "s",
        0,
        &[
            "My cat Luna turned 4 years old today.",
            "Happy birthday to Luna!",
            "I ran 10 km with Jordan in Central Park.",
            "Nice pace.",
        ],
    );
    let r = db.ingest_session(&tenant(), &s).unwrap();
    assert_eq!((r.cells, r.cells_pending), (2, 1));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while db.memory_stats().pending_cells > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the cell was not retried"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let texts: Vec<String> = facts(&db).into_iter().map(|(_, f)| f.text).collect();
    for word in ["Luna", "Jordan"] {
        assert!(texts.iter().any(|t| t.contains(word)), "{word}: {texts:?}");
    }
}
