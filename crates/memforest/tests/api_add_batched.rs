//! Batched background extraction: the cells of one user that wait together go to the
//! extractor in one `extract_batch` call, in the order they were added, and every cell's
//! facts are stored; a batched reply that leaves a cell out or fails for it loses nothing
//! (the cell is retried on its own), a batched call that fails as a whole is retried, and
//! `flush_summaries` returns with everything extracted.
#![allow(clippy::unwrap_used, clippy::panic, reason = "test code")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use memforest::memory::extract::{
    BatchExtraction, Extraction, ExtractionInput, Extractor, HeuristicExtractor,
};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::stats::CallKind;
use memforest::{ListOptions, Memory, Message};

/// How the test extractor answers a batched call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    /// Every cell's items.
    Whole,
    /// Every second cell of the batch (the 2nd, 4th, ...) left out.
    DropsEverySecond,
    /// The first batched call fails as a whole; later ones answer every cell.
    FailsFirst,
}

/// The heuristic extractor behind a gate (shut: every call blocks), batching up to 8
/// cells; records the session ids of the cells of every call, in call order.
#[derive(Debug)]
struct Batching {
    reply: Reply,
    open: Mutex<bool>,
    cv: Condvar,
    started: AtomicUsize,
    calls: Mutex<Vec<Vec<String>>>,
}

impl Batching {
    fn new(reply: Reply) -> Arc<Self> {
        Arc::new(Self {
            reply,
            open: Mutex::new(false),
            cv: Condvar::new(),
            started: AtomicUsize::new(0),
            calls: Mutex::new(Vec::new()),
        })
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }

    /// Records the call, then waits for the gate.
    fn enter(&self, inputs: &[ExtractionInput]) {
        self.started.fetch_add(1, Ordering::SeqCst);
        let sessions = inputs.iter().map(|i| i.session_id.clone()).collect();
        self.calls.lock().unwrap().push(sessions);
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }

    /// Waits until a call has started (the gate holds it).
    fn wait_started(&self) {
        for _ in 0..4000 {
            if self.started.load(Ordering::SeqCst) > 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no extraction call started");
    }

    fn calls(&self) -> Vec<Vec<String>> {
        self.calls.lock().unwrap().clone()
    }
}

impl Extractor for Batching {
    fn name(&self) -> &str {
        "batching"
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        self.enter(std::slice::from_ref(input));
        HeuristicExtractor.extract(input)
    }

    fn max_batch(&self) -> usize {
        8
    }

    fn extract_batch(&self, inputs: &[ExtractionInput]) -> Result<BatchExtraction, ModelError> {
        self.enter(inputs);
        let batches = self.calls().iter().filter(|c| c.len() > 1).count();
        if self.reply == Reply::FailsFirst && batches == 1 {
            return Err(ModelError::Timeout(Duration::from_millis(1)));
        }
        let cells = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                if self.reply == Reply::DropsEverySecond && i % 2 == 1 {
                    Err(ModelError::Malformed {
                        offset: 0,
                        what: format!("no entry for excerpt E{}", i + 1),
                    })
                } else {
                    HeuristicExtractor.extract(input).map(|x| x.items)
                }
            })
            .collect();
        Ok(BatchExtraction {
            cells,
            usage: Usage::default(),
        })
    }
}

/// Opens the gate when dropped, so a failing assertion cannot leave a worker blocked.
struct OpenOnDrop(Arc<Batching>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

const CELLS: usize = 10;

fn exchange(i: usize) -> [Message; 2] {
    [
        Message::user(format!(
            "I adopted a dog named Rex{i} from the Riverside shelter."
        ))
        .by("Alice"),
        Message::assistant("What a lovely name!"),
    ]
}

/// Adds `CELLS` exchanges (session `s{i}` each) while the first extraction is held at the
/// gate, then opens it and flushes; returns the store and the sessions of every call.
fn run(reply: Reply) -> (Memory, Vec<Vec<String>>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let extractor = Batching::new(reply);
    let _guard = OpenOnDrop(Arc::clone(&extractor));
    let mut options = memforest::Options::default();
    options.memory.retry_backoff = Duration::from_millis(1);
    let mem = Memory::builder()
        .options(options)
        .extractor(Arc::clone(&extractor) as Arc<dyn Extractor>)
        .open(dir.path())
        .unwrap();
    mem.add("alice", "s0", &exchange(0)).unwrap();
    extractor.wait_started();
    for i in 1..CELLS {
        mem.add("alice", &format!("s{i}"), &exchange(i)).unwrap();
    }
    extractor.open();
    mem.flush_summaries().unwrap();
    (mem, extractor.calls(), dir)
}

/// Every exchange's memory is stored and nothing is pending.
fn assert_all_stored(mem: &Memory) {
    let texts: Vec<String> = mem
        .list("alice", &ListOptions::default())
        .unwrap()
        .into_iter()
        .map(|m| m.text)
        .collect();
    for i in 0..CELLS {
        let rex = format!("Rex{i} ");
        assert!(
            texts.iter().any(|t| t.contains(&rex)),
            "Rex{i} missing: {texts:?}"
        );
    }
    let stats = mem.memory_stats();
    assert_eq!((stats.pending_cells, stats.failed_cells), (0, 0));
}

/// The store's successful and failed extraction calls.
fn extraction_calls(mem: &Memory) -> (u64, u64) {
    let stats = mem.memory_stats();
    let usage = stats.usage.values().next().unwrap();
    let e = &usage[&CallKind::Extraction];
    (e.calls, e.errors)
}

fn sessions(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("s{i}")).collect()
}

#[test]
fn cells_waiting_together_are_extracted_in_one_call_in_order() {
    let (mem, calls, _dir) = run(Reply::Whole);
    // The first cell went alone; the nine added meanwhile went in batches of at most 8,
    // in the order they were added.
    assert_eq!(calls.first(), Some(&sessions(0..1)), "{calls:?}");
    assert_eq!(calls.concat(), sessions(0..CELLS), "{calls:?}");
    assert!(calls.iter().all(|c| c.len() <= 8), "{calls:?}");
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_all_stored(&mem);
    let (calls, errors) = extraction_calls(&mem);
    assert_eq!((calls, errors), (3, 0));
    mem.close().unwrap();
}

#[test]
fn cells_a_batched_reply_leaves_out_are_retried_alone() {
    let (mem, calls, _dir) = run(Reply::DropsEverySecond);
    assert_all_stored(&mem);
    // Each left-out cell was extracted again on its own, after the batch that dropped it.
    let batched: Vec<&Vec<String>> = calls.iter().filter(|c| c.len() > 1).collect();
    assert!(!batched.is_empty(), "{calls:?}");
    for batch in batched {
        for dropped in batch.iter().skip(1).step_by(2) {
            assert!(
                calls.iter().any(|c| c == std::slice::from_ref(dropped)),
                "{dropped} not retried alone: {calls:?}"
            );
        }
    }
    let (_, errors) = extraction_calls(&mem);
    assert_eq!(errors, 4, "one per cell left out");
    mem.close().unwrap();
}

#[test]
fn a_batched_call_that_fails_loses_no_cell() {
    let (mem, calls, _dir) = run(Reply::FailsFirst);
    assert_all_stored(&mem);
    let failed = calls.iter().find(|c| c.len() > 1).unwrap();
    for s in failed {
        let seen = calls.iter().filter(|c| c.contains(s)).count();
        assert!(seen >= 2, "{s} was not tried again: {calls:?}");
    }
    mem.close().unwrap();
}
