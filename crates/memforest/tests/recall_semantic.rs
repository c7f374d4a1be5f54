//! Semantic recall: with the default in-process embedder a query finds a memory by
//! meaning when it shares no word with it; the store refuses to compare vectors of two
//! embedders, and to add memories to a user with another embedder (or none); a failed
//! embedding keeps its cell pending instead of storing a fact no query could find by
//! meaning; vectors dropped as derived data come back; summaries are embedded in batches.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::ModelError;
use memforest::recall::{Mode, Query};
use memforest::{Memory, MemoryError, Message, Options, StaticEmbedder};
use memforest_engine::{Durability, TenantId};

const PET: &str = "I adopted a puppy from the shelter.";

/// Alice's memories: one about a pet, the rest about other things; none says "dog".
fn remember(mem: &Memory) {
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    let texts = [
        "My sister teaches chemistry at the high school.",
        PET,
        "The quarterly tax filing is due in April.",
        "We repainted the kitchen walls a pale yellow.",
        "The train to Lyon leaves at seven in the morning.",
    ];
    for (i, t) in texts.iter().enumerate() {
        mem.add(
            "alice",
            &format!("s{i}"),
            &[Message::user(*t).by("Alice").at(at)],
        )
        .unwrap();
    }
}

fn first_text(mem: &Memory, q: &Query) -> Option<String> {
    let t = TenantId::new("alice").unwrap();
    mem.query(&t, q)
        .unwrap()
        .facts
        .into_iter()
        .next()
        .map(|f| f.text)
}

#[test]
fn a_query_finds_a_memory_by_meaning_without_a_shared_word() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    remember(&mem);
    let question = "Does she have a dog?";
    let hybrid = first_text(&mem, &Query::new(question)).unwrap();
    assert!(hybrid.contains("puppy"), "{hybrid}");
    // Embedding only also finds it; lexical search cannot (no word is shared).
    let dense = Query {
        mode: Mode::Embedding,
        ..Query::new(question)
    };
    assert!(first_text(&mem, &dense).unwrap().contains("puppy"));
    let lexical = Query {
        mode: Mode::Lexical,
        ..Query::new(question)
    };
    assert!(first_text(&mem, &lexical).is_none_or(|t| !t.contains("puppy")));
    // Without the trees the flat candidates still find it.
    let flat = Query {
        trees: false,
        ..Query::new(question)
    };
    assert!(first_text(&mem, &flat).unwrap().contains("puppy"));
    mem.close().unwrap();
}

/// An embedder of another name and dimension.
#[derive(Debug)]
struct Other;

impl Embedder for Other {
    fn name(&self) -> &str {
        "other-3"
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        Ok(Embeddings {
            vectors: texts.iter().map(|_| vec![1.0, 0.0, 0.0]).collect(),
            ..Embeddings::default()
        })
    }
}

fn with_embedder(embedder: Option<Arc<dyn Embedder>>) -> Options {
    let mut o = Options::default();
    o.memory.embedder = embedder;
    o
}

#[test]
fn vectors_of_another_embedder_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    remember(&mem);
    mem.close().unwrap();

    let mem = Memory::open_with(dir.path(), with_embedder(Some(Arc::new(Other)))).unwrap();
    let t = TenantId::new("alice").unwrap();
    match mem.query(&t, &Query::new("dog")) {
        Err(MemoryError::EmbedderMismatch {
            stored, configured, ..
        }) => {
            assert_eq!(stored, StaticEmbedder::bundled().unwrap().name());
            assert_eq!(configured, "other-3");
        }
        other => panic!("{other:?}"),
    }
    mem.close().unwrap();
    // Without an embedder the store answers lexically.
    let mem = Memory::open_with(dir.path(), with_embedder(None)).unwrap();
    assert!(first_text(&mem, &Query::new("puppy shelter"))
        .unwrap()
        .contains("puppy"));
    mem.close().unwrap();
}

/// The static embedder, failing while `down` is set.
#[derive(Debug)]
struct Flaky {
    down: AtomicBool,
    inner: Arc<StaticEmbedder>,
}

impl Embedder for Flaky {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(ModelError::Timeout(std::time::Duration::from_secs(1)));
        }
        self.inner.embed(texts)
    }
}

#[test]
fn a_failed_embedding_keeps_the_memory_pending_until_it_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = Arc::new(Flaky {
        down: AtomicBool::new(true),
        inner: StaticEmbedder::bundled().unwrap(),
    });
    let mut o = with_embedder(Some(flaky.clone()));
    o.memory.retry_backoff = std::time::Duration::from_millis(10);
    let mem = Memory::open_with(dir.path(), o).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    mem.add("alice", "s0", &[Message::user(PET).by("Alice").at(at)])
        .unwrap();
    assert_eq!(mem.memory_stats().pending_cells, 1);
    let lexical = Query {
        mode: Mode::Lexical,
        ..Query::new("puppy")
    };
    assert!(first_text(&mem, &lexical).is_none());
    // The query needs the embedder too: its failure is the query's error.
    assert!(matches!(
        mem.query(&TenantId::new("alice").unwrap(), &Query::new("puppy")),
        Err(MemoryError::Model(_))
    ));
    flaky.down.store(false, Ordering::SeqCst);
    mem.flush_summaries().unwrap();
    assert_eq!(mem.memory_stats().pending_cells, 0);
    assert!(first_text(&mem, &Query::new("Does she have a dog?"))
        .unwrap()
        .contains("puppy"));
    mem.close().unwrap();
}

#[test]
fn an_update_whose_embedding_fails_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = Arc::new(Flaky {
        down: AtomicBool::new(false),
        inner: StaticEmbedder::bundled().unwrap(),
    });
    let mem = Memory::open_with(dir.path(), with_embedder(Some(flaky.clone()))).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    mem.add("alice", "s0", &[Message::user(PET).by("Alice").at(at)])
        .unwrap();
    mem.flush_summaries().unwrap();
    let old = mem
        .list("alice", &memforest::ListOptions::default())
        .unwrap()[0]
        .id;
    flaky.down.store(true, Ordering::SeqCst);
    let failed = mem.update("alice", old, "Alice adopted a kitten named Pip.");
    assert!(matches!(failed, Err(MemoryError::Model(_))), "{failed:?}");
    flaky.down.store(false, Ordering::SeqCst);
    mem.close().unwrap();
    // Nothing of the failed update is extracted later, at the next open or after it.
    let mem = Memory::open_with(dir.path(), with_embedder(Some(flaky))).unwrap();
    mem.flush_summaries().unwrap();
    let texts: Vec<String> = mem
        .list("alice", &memforest::ListOptions::default())
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert!(!texts.iter().any(|t| t.contains("Pip")), "{texts:?}");
    assert_eq!(mem.memory_stats().pending_cells, 0);
    mem.close().unwrap();
}

/// An embedder that, while `hold` is set, waits in its call until the test lets it go,
/// saying it `entered`.
#[derive(Debug)]
struct Held {
    hold: AtomicBool,
    entered: AtomicBool,
    inner: Arc<StaticEmbedder>,
}

impl Embedder for Held {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        while self.hold.load(Ordering::SeqCst) {
            self.entered.store(true, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        self.inner.embed(texts)
    }
}

/// Every file of `from` copied into `to`: what a crash at this moment leaves on disk.
fn crash_image(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            crash_image(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A crash while an update waits for its embedding leaves nothing of the update: no
/// message for the next open to extract as a memory of its own, unlinked from the
/// version it was to replace.
#[test]
fn a_crash_while_an_update_embeds_leaves_nothing_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let held = Arc::new(Held {
        hold: AtomicBool::new(false),
        entered: AtomicBool::new(false),
        inner: StaticEmbedder::bundled().unwrap(),
    });
    let mem = Memory::open_with(dir.path(), with_embedder(Some(held.clone()))).unwrap();
    let mem = Arc::new(mem);
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    mem.add("alice", "s0", &[Message::user(PET).by("Alice").at(at)])
        .unwrap();
    mem.flush_summaries().unwrap();
    let old = mem.list("alice", &Default::default()).unwrap()[0].id;
    held.hold.store(true, Ordering::SeqCst);
    let updating = {
        let mem = Arc::clone(&mem);
        std::thread::spawn(move || mem.update("alice", old, "Alice adopted a kitten named Pip."))
    };
    while !held.entered.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let image = tempfile::tempdir().unwrap();
    crash_image(dir.path(), image.path());
    held.hold.store(false, Ordering::SeqCst);
    updating.join().unwrap().unwrap();

    let crashed = Memory::open(image.path()).unwrap();
    crashed.flush_summaries().unwrap();
    let all = crashed.list("alice", &Default::default()).unwrap();
    let texts: Vec<&str> = all.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, [format!("Alice: {PET}")], "{texts:?}");
    assert!(all[0].current);
    let updates = crashed.messages("alice", memforest::api::UPDATES_SESSION);
    assert!(
        matches!(updates, Err(MemoryError::NotFound { .. })),
        "{updates:?}"
    );
    crashed.close().unwrap();
    Arc::into_inner(mem).unwrap().close().unwrap();
}

#[test]
fn dropped_vectors_come_back_with_embed_missing() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    remember(&mem);
    mem.flush_summaries().unwrap();
    let dense = Query {
        mode: Mode::Embedding,
        ..Query::new("Does she have a dog?")
    };
    mem.drop_derived(Durability::Buffered).unwrap();
    assert!(mem.embed_missing().unwrap() >= 5);
    assert!(first_text(&mem, &dense).unwrap().contains("puppy"));
    assert_eq!(mem.embed_missing().unwrap(), 0);
    mem.close().unwrap();
}

#[test]
fn a_writer_with_another_embedder_or_none_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::open(dir.path()).unwrap();
    remember(&mem);
    let id = mem.list("alice", &Default::default()).unwrap()[0].id;
    mem.close().unwrap();
    let at = Utc.with_ymd_and_hms(2024, 4, 1, 9, 0, 0).unwrap();
    let more = [Message::user("I play the violin on Sundays.")
        .by("Alice")
        .at(at)];
    for (other, user) in [
        (Some(Arc::new(Other) as Arc<dyn Embedder>), "bob"),
        (None, "carol"),
    ] {
        let mem = Memory::open_with(dir.path(), with_embedder(other)).unwrap();
        let stored = mem.list("alice", &Default::default()).unwrap().len();
        let refused = |e: MemoryError| matches!(e, MemoryError::EmbedderMismatch { .. });
        assert!(refused(mem.add("alice", "s9", &more).unwrap_err()));
        assert!(refused(
            mem.update("alice", id, "Alice teaches physics.")
                .unwrap_err()
        ));
        assert_eq!(
            mem.list("alice", &Default::default()).unwrap().len(),
            stored
        );
        assert!(mem.messages("alice", "s9").is_err(), "no message stored");
        // Another user starts afresh with this writer's embedder.
        mem.add(user, "s0", &more).unwrap();
        mem.close().unwrap();
    }
    // Users written with another embedder, or none, refuse the default one too.
    let mem = Memory::open(dir.path()).unwrap();
    for (user, by) in [("bob", "other-3"), ("carol", "none")] {
        let refused = mem.add(user, "s1", &more).unwrap_err();
        assert!(
            matches!(refused, MemoryError::EmbedderMismatch { ref stored, .. } if stored == by),
            "{refused:?}"
        );
    }
    mem.close().unwrap();
}

/// The static embedder, recording how many summaries (texts with a `[Mon YYYY - ...]`
/// header) each call embedded.
#[derive(Debug)]
struct Counting {
    inner: Arc<StaticEmbedder>,
    summary_calls: std::sync::Mutex<Vec<usize>>,
}

impl Embedder for Counting {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let summaries = texts.iter().filter(|t| t.starts_with('[')).count();
        if summaries > 0 {
            self.summary_calls.lock().unwrap().push(summaries);
        }
        self.inner.embed(texts)
    }
}

#[test]
fn summaries_are_embedded_in_batches_across_trees() {
    let dir = tempfile::tempdir().unwrap();
    let counting = Arc::new(Counting {
        inner: StaticEmbedder::bundled().unwrap(),
        summary_calls: std::sync::Mutex::new(Vec::new()),
    });
    let mem = Memory::open_with(dir.path(), with_embedder(Some(counting.clone()))).unwrap();
    let at = Utc.with_ymd_and_hms(2024, 3, 1, 9, 0, 0).unwrap();
    let people = ["Maya", "Omar", "Lena", "Theo"];
    for i in 0..24 {
        let who = people[i % people.len()];
        let messages = [
            Message::user(format!("I went hiking with {who} near lake number {i}."))
                .by("Alice")
                .at(at),
            Message::user(format!("{who} brought {i} sandwiches for the trip.")).at(at),
        ];
        mem.add("alice", &format!("s{i}"), &messages).unwrap();
    }
    mem.flush_summaries().unwrap();
    let calls = counting.summary_calls.lock().unwrap().clone();
    let summaries: usize = calls.iter().sum();
    eprintln!("summary embedding calls: {calls:?}");
    assert!(summaries > 0);
    assert!(
        calls.len() < summaries,
        "{} calls for {summaries} summaries: {calls:?}",
        calls.len()
    );
    mem.close().unwrap();
}
