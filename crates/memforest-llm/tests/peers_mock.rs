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
use memforest::memory::stats::CallKind;
use memforest::{AddOptions, Memory, Message, Options};
use memforest_llm::{
    ChatMessage, LlmClient, LlmConfig, LlmError, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer,
};
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
