//! The peer benchmark's mock OpenAI-compatible server (`benches/peers/mock_openai.py`,
//! Python standard library only) against MemForest's own clients: started by the test on a
//! free 127.0.0.1 port with no latency, it must answer the extraction, summary (JSON and
//! plain text) and embedding calls in shapes `memforest-llm` accepts, so the benchmark's
//! figures come from calls that succeed. `MEMFOREST_PYTHON` names another interpreter.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use memforest::memory::extract::{CellTurn, ExtractionInput, Extractor};
use memforest::memory::session::Role;
use memforest::memory::stats::CallKind;
use memforest::memory::summarize::{Summarizer, SummaryRequest};
use memforest::{AddOptions, Memory, Message, Options};
use memforest_llm::{
    ChatMessage, LlmClient, LlmConfig, LlmError, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer,
};
use memforest_tree::refresh::ChildSummary;
use memforest_tree::{TimeRange, TreeKind};
use serde_json::Value;

/// The mock server process, killed on drop.
struct Mock {
    child: Child,
    root: String,
    _dir: tempfile::TempDir,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Mock {
    fn start() -> Self {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/peers/mock_openai.py");
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let python = std::env::var("MEMFOREST_PYTHON").unwrap_or_else(|_| "python3".into());
        let mut child = Command::new(&python)
            .arg(&script)
            .args([
                "--port",
                "0",
                "--chat-ms",
                "0",
                "--embed-ms",
                "0",
                "--cap",
                "4",
            ])
            .arg("--port-file")
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} {}: {e}", script.display()));
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the mock server exited with {status}");
            }
            assert!(Instant::now() < deadline, "the mock server did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Self {
            child,
            root: format!("http://127.0.0.1:{}", port.trim()),
            _dir: dir,
        }
    }

    fn config(&self, model: &str) -> LlmConfig {
        LlmConfig::new(format!("{}/v1", self.root), model)
    }

    fn stats(&self) -> Value {
        let mut reply = ureq::get(format!("{}/stats", self.root)).call().unwrap();
        serde_json::from_str(&reply.body_mut().read_to_string().unwrap()).unwrap()
    }
}

/// Three LoCoMo-like exchanges of one session, each added as an agent adds them, waiting
/// for their extraction.
fn add_exchanges(memory: &Memory) {
    let at = |minute| Utc.with_ymd_and_hms(2023, 5, 8, 13, minute, 0).unwrap();
    let said = [
        (
            "I went to the LGBTQ support group yesterday.",
            "That sounds so meaningful, Caroline!",
        ),
        (
            "I'm looking into adoption agencies in Boston.",
            "Wow, a big step. Which ones?",
        ),
        (
            "Melanie, I painted a sunrise last week.",
            "I'd love to see the painting!",
        ),
    ];
    let wait = AddOptions {
        wait: true,
        ..AddOptions::default()
    };
    for (i, (user, reply)) in (0u32..).zip(said) {
        let messages = [
            Message::user(user).by("Caroline").at(at(2 * i)),
            Message::assistant(reply).by("Melanie").at(at(2 * i + 1)),
        ];
        let added = memory.add_with("conv-26", "s1", &messages, &wait).unwrap();
        assert_eq!(added.messages, 2);
        assert_eq!(added.memories.len(), 2, "one memory per message: {added:?}");
    }
}

/// A store whose three model clients all call the mock; the summarizer in JSON mode or not.
fn store(mock: &Mock, dir: &Path, json_summaries: bool) -> Memory {
    let mut options = Options::default();
    let m = &mut options.memory;
    m.extractor = Arc::new(OpenAiExtractor::new(mock.config("mock-chat")).unwrap());
    let summaries = mock.config("mock-chat").with_json_mode(json_summaries);
    m.summarizer = Arc::new(OpenAiSummarizer::new(summaries).unwrap());
    m.embedder = Some(Arc::new(
        OpenAiEmbedder::new(mock.config("mock-embed"))
            .unwrap()
            .with_dimensions(64),
    ));
    Memory::open_with(dir, options).unwrap()
}

fn every_call_is_understood(json_summaries: bool) {
    let mock = Mock::start();
    let dir = tempfile::tempdir().unwrap();
    let memory = store(&mock, dir.path(), json_summaries);
    add_exchanges(&memory);
    memory.flush_summaries().unwrap();

    let stats = memory.memory_stats();
    let usage = stats.usage.values().next().unwrap();
    let calls = |kind| usage.get(&kind).map_or(0, |u| u.calls);
    assert_eq!(calls(CallKind::Extraction), 3);
    assert!(calls(CallKind::Summary) > 0, "{usage:?}");
    assert!(calls(CallKind::Embedding) > 0, "{usage:?}");
    assert!(usage.values().all(|u| u.errors == 0), "{usage:?}");
    assert_eq!((stats.failed_cells, stats.summary_fallbacks), (0, 0));

    let served = mock.stats();
    assert_eq!(served["calls"]["memforest_extract"], 3, "{served}");
    assert_eq!(
        served["calls"]["memforest_summary"],
        calls(CallKind::Summary),
        "{served}"
    );
    assert!(served["calls"].get("unknown").is_none(), "{served}");

    let texts: Vec<String> = memory
        .list("conv-26", &Default::default())
        .unwrap()
        .into_iter()
        .map(|r| r.text)
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("Caroline said on 2023-05-08: I'm looking into adoption")),
        "{texts:?}"
    );
    memory.close().unwrap();
}

#[test]
fn the_mock_answers_extraction_json_summaries_and_embeddings_that_memforest_accepts() {
    every_call_is_understood(true);
}

#[test]
fn the_mock_answers_plain_text_summaries_that_memforest_accepts() {
    every_call_is_understood(false);
}

#[test]
fn the_mock_answers_a_batched_extraction_that_memforest_accepts() {
    let mock = Mock::start();
    let extractor = OpenAiExtractor::new(mock.config("mock-chat")).unwrap();
    let at = |minute| {
        Utc.with_ymd_and_hms(2023, 5, 8, 13, minute, 0)
            .unwrap()
            .timestamp_micros()
    };
    let cell = |session: &str, turns: &[(&str, &str)]| ExtractionInput {
        session_id: session.to_owned(),
        session_start: at(0),
        turns: (0u32..)
            .zip(turns)
            .map(|(i, (id, text))| CellTurn {
                turn_id: (*id).to_owned(),
                role: if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                speaker: "Caroline".into(),
                text: (*text).to_owned(),
                time: at(i),
            })
            .collect(),
    };
    let inputs = [
        cell(
            "s1",
            &[
                ("t1", "I went to the support group."),
                ("t2", "How was it?"),
            ],
        ),
        cell("s2", &[("t3", "I painted a sunrise.")]),
        cell("s3", &[("t4", "We moved to Boston."), ("t5", "Big step!")]),
    ];
    let batch = extractor.extract_batch(&inputs).unwrap();
    let sources: Vec<Vec<String>> = batch
        .cells
        .into_iter()
        .map(|c| {
            c.unwrap()
                .into_iter()
                .flat_map(|i| i.source_turns)
                .collect()
        })
        .collect();
    assert_eq!(
        sources,
        vec![vec!["t1", "t2"], vec!["t3"], vec!["t4", "t5"]]
    );
    assert_eq!(mock.stats()["calls"]["memforest_extract"], 1);
}

#[test]
fn the_mock_answers_batched_summaries_that_memforest_accepts() {
    let mock = Mock::start();
    let summarizer = OpenAiSummarizer::new(mock.config("mock-chat")).unwrap();
    let time = TimeRange {
        start: Utc
            .with_ymd_and_hms(2023, 5, 8, 13, 0, 0)
            .unwrap()
            .timestamp_micros(),
        end: Utc
            .with_ymd_and_hms(2023, 6, 8, 13, 0, 0)
            .unwrap()
            .timestamp_micros(),
    };
    let request = |label: &str, texts: &[&str]| SummaryRequest {
        kind: TreeKind::Session,
        label: label.to_owned(),
        level: 1,
        time,
        children: texts
            .iter()
            .map(|t| ChildSummary {
                time,
                text: (*t).to_owned(),
            })
            .collect(),
    };
    let requests = [
        request("s1", &["Caroline: I went to the support group."]),
        request(
            "s2",
            &["Melanie: I painted a sunrise.", "Caroline: Lovely!"],
        ),
    ];
    let batch = summarizer.summarize_batch(&requests).unwrap();
    let texts: Vec<String> = batch.nodes.into_iter().map(|n| n.unwrap().text).collect();
    assert_eq!(
        texts,
        vec![
            "[May 2023 - Jun 2023 | s1]\nCaroline: I went to the support group.",
            "[May 2023 - Jun 2023 | s2]\nMelanie: I painted a sunrise. Caroline: Lovely!",
        ]
    );
    assert_eq!(mock.stats()["calls"]["memforest_summary"], 1);
}

#[test]
fn the_mock_refuses_a_prompt_it_does_not_know() {
    let mock = Mock::start();
    let client = LlmClient::new(mock.config("mock-chat")).unwrap();
    let err = client
        .chat(&[
            ChatMessage::system("Translate into French."),
            ChatMessage::user("Good morning"),
        ])
        .unwrap_err();
    assert!(
        matches!(err, LlmError::Status { status: 400, .. }),
        "{err:?}"
    );
    assert_eq!(mock.stats()["calls"]["unknown"], 1);
}
