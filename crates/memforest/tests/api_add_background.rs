//! `Memory::add` with an extractor that calls a model: the call returns once the messages
//! are durable while the extraction waits on the model, the memories commit in the
//! background, `flush_summaries` waits for them (`flush_summaries_for` as long as it is told) and `close` lets them finish, a crash
//! (SIGKILL of a child process) leaves them to the next open, `AddOptions::wait` waits and lists
//! them, and the background backlog is bounded with the stall recorded.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use memforest::memory::extract::{Extraction, ExtractionInput, Extractor, HeuristicExtractor};
use memforest::memory::model::ModelError;
use memforest::memory::summarize::{Summarizer, SummaryOutput, SummaryRequest};
use memforest::{AddOptions, ListOptions, Memory, Message};

/// The heuristic extractor behind a gate the test opens, as a model call would be: every
/// call blocks while the gate is shut. Counts the calls made.
#[derive(Debug, Default)]
struct Gated {
    open: Mutex<bool>,
    cv: Condvar,
    calls: AtomicUsize,
}

impl Gated {
    fn shut() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn opened() -> Arc<Self> {
        let g = Self::shut();
        g.open();
        g
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    /// Waits (up to 20 s) until `n` calls have started.
    fn wait_calls(&self, n: usize) {
        let t0 = Instant::now();
        while self.calls.load(Ordering::SeqCst) < n {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "no extraction call started"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Extractor for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
        drop(open);
        HeuristicExtractor.extract(input)
    }
}

/// Opens the gate when dropped, so a failing assertion cannot leave a worker blocked.
struct OpenOnDrop(Arc<Gated>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

fn open(dir: &std::path::Path, extractor: &Arc<Gated>) -> Memory {
    Memory::builder()
        .extractor(Arc::clone(extractor) as Arc<dyn Extractor>)
        .open(dir)
        .unwrap()
}

fn exchange(i: usize) -> [Message; 2] {
    [
        Message::user(format!(
            "I adopted a dog named Rex{i} from the Riverside shelter."
        ))
        .by("Alice"),
        Message::assistant("What a lovely name!"),
    ]
}

fn memories(mem: &Memory) -> Vec<String> {
    mem.list("alice", &ListOptions::default())
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect()
}

#[test]
fn add_returns_while_the_model_is_busy_and_the_memories_follow() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::shut();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let mem = open(dir.path(), &gate);
    for i in 0..3 {
        let added = mem.add("alice", &format!("s{i}"), &exchange(i)).unwrap();
        assert_eq!(added.messages, 2);
        assert!(added.memories.is_empty());
        assert!(added.pending > 0);
    }
    // Every add returned although no extraction can finish while the gate is shut; the
    // messages are stored and readable already.
    gate.wait_calls(1);
    assert_eq!(mem.messages("alice", "s2").unwrap().len(), 2);
    assert!(memories(&mem).is_empty());
    assert!(mem.memory_stats().pending_cells >= 3);
    // A bounded wait gives up while the model is busy; the work goes on.
    assert!(!mem.flush_summaries_for(Duration::from_millis(120)).unwrap());

    gate.open();
    assert!(mem.flush_summaries_for(Duration::from_secs(60)).unwrap());
    mem.flush_summaries().unwrap();
    let texts = memories(&mem);
    for i in 0..3 {
        assert!(
            texts.iter().any(|t| t.contains(&format!("Rex{i}"))),
            "{texts:?}"
        );
    }
    assert_eq!(mem.memory_stats().pending_cells, 0);
    mem.close().unwrap();
}

#[test]
fn wait_lists_the_memories_the_model_found() {
    let dir = tempfile::tempdir().unwrap();
    let mem = open(dir.path(), &Gated::opened());
    let wait = AddOptions {
        wait: true,
        ..AddOptions::default()
    };
    let added = mem.add_with("alice", "s", &exchange(0), &wait).unwrap();
    assert_eq!(added.pending, 0);
    assert!(!added.memories.is_empty());
    let first = mem.get("alice", added.memories[0]).unwrap().unwrap();
    assert!(first.text.contains("Rex0"), "{}", first.text);
    mem.close().unwrap();
}

#[test]
fn close_lets_background_extraction_finish() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::shut();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let mem = open(dir.path(), &gate);
    mem.add("alice", "s", &exchange(0)).unwrap();
    gate.wait_calls(1);
    let opener = {
        let gate = Arc::clone(&gate);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            gate.open();
        })
    };
    mem.close().unwrap();
    opener.join().unwrap();

    // Reopened with an extractor that counts: nothing was left to extract.
    let again = Gated::opened();
    let mem = open(dir.path(), &again);
    assert!(memories(&mem).iter().any(|t| t.contains("Rex0")));
    mem.flush_summaries().unwrap();
    assert_eq!(again.calls.load(Ordering::SeqCst), 0);
    mem.close().unwrap();
}

const CHILD_ENV: &str = "MEMFOREST_ADD_BACKGROUND_CRASH_DIR";

/// The child: adds one exchange with a model that never answers, says so, and waits to be
/// killed.
fn child(dir: &str) {
    let gate = Gated::shut();
    let mem = open(std::path::Path::new(dir), &gate);
    mem.add("alice", "s", &exchange(0)).unwrap();
    gate.wait_calls(1);
    println!("added");
    std::thread::sleep(Duration::from_secs(30));
}

#[test]
fn a_crash_before_the_model_answers_loses_nothing() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_crash_before_the_model_answers_loses_nothing",
            "--nocapture",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(proc.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|l| l.unwrap() == "added"),
        "the child never added"
    );
    proc.kill().unwrap();
    proc.wait().unwrap();

    // The acknowledged messages are there, and their extraction runs at the next open.
    let mem = open(dir.path(), &Gated::opened());
    assert_eq!(mem.messages("alice", "s").unwrap().len(), 2);
    mem.flush_summaries().unwrap();
    assert!(
        memories(&mem).iter().any(|t| t.contains("Rex0")),
        "{:?}",
        memories(&mem)
    );
    mem.close().unwrap();
}

#[test]
fn add_waits_when_the_background_backlog_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::shut();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let mut options = memforest::Options::default();
    options.memory.extract_backlog = 1;
    options.memory.extract_pool = 1;
    let mem = Arc::new(
        Memory::builder()
            .options(options)
            .extractor(Arc::clone(&gate) as Arc<dyn Extractor>)
            .open(dir.path())
            .unwrap(),
    );
    mem.add("alice", "s0", &exchange(0)).unwrap();
    gate.wait_calls(1);
    // One cell runs (blocked), the next one queues, and the third add waits for room.
    let writer = {
        let mem = Arc::clone(&mem);
        std::thread::spawn(move || {
            for i in 1..3 {
                mem.add("alice", &format!("s{i}"), &exchange(i)).unwrap();
            }
        })
    };
    let t0 = Instant::now();
    while mem.memory_stats().stalls == 0 {
        assert!(t0.elapsed() < Duration::from_secs(20), "add never waited");
        std::thread::sleep(Duration::from_millis(5));
    }
    let reason = mem.memory_stats().last_stall_reason.unwrap();
    assert!(
        reason.contains("extraction backlog over 1 cells"),
        "{reason}"
    );
    gate.open();
    writer.join().unwrap();
    mem.flush_summaries().unwrap();
    let rex = memories(&mem)
        .into_iter()
        .filter(|t| t.contains("Rex"))
        .count();
    assert_eq!(rex, 3, "{:?}", memories(&mem));
    Arc::try_unwrap(mem).unwrap().close().unwrap();
}

/// Fails every call, as a model that stays down does.
#[derive(Debug)]
struct Down;

impl Extractor for Down {
    fn name(&self) -> &str {
        "down"
    }
    fn extract(&self, _: &ExtractionInput) -> Result<Extraction, ModelError> {
        Err(ModelError::Timeout(Duration::from_millis(1)))
    }
}

#[test]
fn flush_reports_a_model_that_keeps_failing_instead_of_waiting_forever() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = memforest::Options::default();
    options.memory.retry_backoff = Duration::from_millis(1);
    let mem = Memory::builder()
        .options(options)
        .extractor(Arc::new(Down))
        .open(dir.path())
        .unwrap();
    mem.add("alice", "s", &exchange(0)).unwrap();
    let err = mem.flush_summaries().unwrap_err();
    assert!(
        matches!(&err, memforest::MemoryError::Model(m)
            if m.contains("failed 4 times") && m.contains("the last error: model call timed out")),
        "{err}"
    );
    // The messages are stored, and the cell stays pending for the next open.
    assert_eq!(mem.messages("alice", "s").unwrap().len(), 2);
    assert_eq!(mem.memory_stats().pending_cells, 1);
    mem.close().unwrap();
    let mem = open(dir.path(), &Gated::opened());
    mem.flush_summaries().unwrap();
    assert!(memories(&mem).iter().any(|t| t.contains("Rex0")));
    mem.close().unwrap();
}

/// An extractor with a bug: it panics on every call.
#[derive(Debug)]
struct Panics;

impl Extractor for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn extract(&self, _: &ExtractionInput) -> Result<Extraction, ModelError> {
        panic!("extractor bug")
    }
}

/// A summarizer with a bug: it panics on every call.
#[derive(Debug)]
struct PanicsSummarizing;

impl Summarizer for PanicsSummarizing {
    fn name(&self) -> &str {
        "panics"
    }
    fn summarize(&self, _: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        panic!("summarizer bug")
    }
}

/// A panic in a caller's extractor or summarizer is a failed model call: the extraction is
/// retried and then reported by `flush_summaries` with the panic's message, a summary
/// falls back to the extractive one on its last try, and `close` returns. A panic that
/// unwound through a background worker left `flush_summaries` and `close` waiting forever.
#[test]
fn a_model_that_panics_is_a_failed_call_and_close_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = memforest::Options::default();
    options.memory.retry_backoff = Duration::from_millis(1);
    let mem = Memory::builder()
        .options(options.clone())
        .extractor(Arc::new(Panics))
        .open(dir.path())
        .unwrap();
    mem.add("alice", "s", &exchange(0)).unwrap();
    let err = mem.flush_summaries().unwrap_err();
    assert!(
        err.to_string()
            .contains("the extractor panicked: extractor bug"),
        "{err}"
    );
    assert_eq!(mem.memory_stats().pending_cells, 1);
    mem.close().unwrap();

    let mem = Memory::builder()
        .options(options)
        .summarizer(Arc::new(PanicsSummarizing))
        .open(dir.path())
        .unwrap();
    for i in 1..4 {
        mem.add("alice", "s", &exchange(i)).unwrap();
    }
    mem.flush_summaries().unwrap();
    assert!(memories(&mem).iter().any(|t| t.contains("Rex0")));
    assert!(mem.memory_stats().summary_fallbacks > 0);
    mem.close().unwrap();
}

/// An extractor whose `max_batch` panics: one cell a call, and nothing else changes.
#[derive(Debug)]
struct NoBatchSize;

impl Extractor for NoBatchSize {
    fn name(&self) -> &str {
        "no-batch-size"
    }
    fn max_batch(&self) -> usize {
        panic!("max_batch bug")
    }
    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        HeuristicExtractor.extract(input)
    }
}

/// A panic in any of the extractor's methods the background job calls leaves the job
/// working: the user's cells are extracted and `flush_summaries` returns.
#[test]
fn an_extractor_whose_batch_size_panics_still_extracts() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Memory::builder()
        .extractor(Arc::new(NoBatchSize))
        .open(dir.path())
        .unwrap();
    for i in 0..3 {
        mem.add("alice", "s", &exchange(i)).unwrap();
    }
    mem.flush_summaries().unwrap();
    assert_eq!(memories(&mem).len(), 3);
    mem.close().unwrap();
}

/// A store closed right after background extraction is open again at once: `close`
/// returns only once no worker holds the store (a job that finished its cells but had
/// not returned kept the directory locked, and the open failed with `Locked`).
#[test]
fn a_store_closed_after_background_extraction_opens_again_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = Gated::opened();
    for i in 0..40 {
        let mem = open(dir.path(), &model);
        mem.add("alice", "s", &exchange(i)).unwrap();
        mem.close().unwrap_or_else(|e| panic!("close {i}: {e}"));
    }
    let mem = open(dir.path(), &model);
    mem.flush_summaries().unwrap();
    assert_eq!(memories(&mem).len(), 40);
    mem.close().unwrap();
}

/// One worker behind a shut gate: the first cell's extraction is loaded and waiting on
/// the model while the test forgets things under it.
fn one_worker(dir: &std::path::Path, gate: &Arc<Gated>) -> Memory {
    let mut options = memforest::Options::default();
    options.memory.extract_pool = 1;
    Memory::builder()
        .options(options)
        .extractor(Arc::clone(gate) as Arc<dyn Extractor>)
        .open(dir)
        .unwrap()
}

#[test]
fn a_message_deleted_while_its_extraction_waits_leaves_no_memory_and_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::shut();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let mem = one_worker(dir.path(), &gate);
    // s0's cell is loaded and waits on the model; s1's cell waits in the queue.
    mem.add("alice", "s0", &exchange(0)).unwrap();
    gate.wait_calls(1);
    mem.add("alice", "s1", &exchange(1)).unwrap();
    for session in ["s0", "s1"] {
        mem.delete_message("alice", session, &format!("{session}#turn_0"))
            .unwrap();
    }
    gate.open();
    mem.flush_summaries().unwrap();
    let texts = memories(&mem);
    assert!(!texts.iter().any(|t| t.contains("Rex")), "{texts:?}");
    assert_eq!(mem.messages("alice", "s1").unwrap().len(), 1);
    assert_eq!(mem.memory_stats().pending_cells, 0);
    mem.close().unwrap();
    let mem = open(dir.path(), &Gated::opened());
    mem.flush_summaries().unwrap();
    assert!(!memories(&mem).iter().any(|t| t.contains("Rex")));
    mem.close().unwrap();
}

#[test]
fn a_session_deleted_and_written_again_while_its_extraction_waits_keeps_only_the_new_text() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Gated::shut();
    let _guard = OpenOnDrop(Arc::clone(&gate));
    let mem = one_worker(dir.path(), &gate);
    let said = |text: &str, day: u32| {
        let time = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2024, 3, day, 9, 0, 0).unwrap();
        [Message::user(text).by("Alice").at(time)]
    };
    mem.add("alice", "s", &said("I adopted a cat named Miso today.", 1))
        .unwrap();
    gate.wait_calls(1);
    // The session is forgotten and written again: its new cell has the old one's id.
    mem.delete_session("alice", "s").unwrap();
    mem.add(
        "alice",
        "s",
        &said("I adopted a parrot named Kiwi today.", 2),
    )
    .unwrap();
    gate.open();
    mem.flush_summaries().unwrap();
    let texts = memories(&mem);
    assert!(texts.iter().any(|t| t.contains("Kiwi")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("Miso")), "{texts:?}");
    assert_eq!(mem.memory_stats().pending_cells, 0);
    mem.close().unwrap();
}
