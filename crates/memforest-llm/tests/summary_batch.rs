//! `OpenAiSummarizer::summarize_batch` against a real HTTP server on 127.0.0.1 with
//! recorded replies: one call for several nodes, each node's summary under its own
//! header; a node the reply leaves out or answers with nothing usable fails alone, and a
//! reply with no JSON fails the call.
#![allow(clippy::unwrap_used, reason = "test code")]

mod llm_support;

use std::time::Duration;

use llm_support::{chat_body, Reply, TestServer};
use memforest::memory::summarize::{Summarizer, SummaryRequest};
use memforest_llm::{LlmConfig, OpenAiSummarizer};
use memforest_tree::refresh::ChildSummary;
use memforest_tree::{TimeRange, TreeKind};

/// 2023-01-10 and 2023-02-20, microseconds.
const JAN: i64 = 1_673_308_800_000_000;
const FEB: i64 = 1_676_851_200_000_000;

fn request(label: &str, text: &str) -> SummaryRequest {
    let time = TimeRange {
        start: JAN,
        end: FEB,
    };
    SummaryRequest {
        kind: TreeKind::Entity,
        label: label.to_owned(),
        level: 1,
        time,
        children: vec![ChildSummary {
            time,
            text: text.to_owned(),
        }],
    }
}

fn summarizer(server: &TestServer) -> OpenAiSummarizer {
    let config = LlmConfig::new(server.base_url(), "recorded").with_retries(
        0,
        Duration::from_millis(1),
        Duration::from_millis(1),
    );
    OpenAiSummarizer::new(config).unwrap()
}

#[test]
fn one_call_summarizes_each_node_and_a_node_left_out_fails_alone() {
    let reply = r#"```json
{"summaries": [
  {"node": "N1", "summary": "Alice moved to Oslo."},
  {"node": "N3", "summary": "[Jan 2023 - Feb 2023 | carol] Carol sings -> Carol teaches."},
  {"node": "N4", "summary": "   "}
]}
```"#;
    let server = TestServer::start(vec![Reply::json(200, &chat_body(reply, Some((90, 30))))]);
    let requests = [
        request("alice", "Alice moved to Oslo."),
        request("bob", "Bob swims."),
        request("carol", "Carol teaches."),
        request("dave", "Dave runs."),
    ];
    let batch = summarizer(&server).summarize_batch(&requests).unwrap();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(
        (batch.usage.prompt_tokens, batch.usage.completion_tokens),
        (90, 30)
    );
    let texts: Vec<Result<String, String>> = batch
        .nodes
        .into_iter()
        .map(|n| n.map(|o| o.text).map_err(|e| e.to_string()))
        .collect();
    assert_eq!(
        texts[0].as_deref(),
        Ok("[Jan 2023 - Feb 2023 | alice]\nAlice moved to Oslo.")
    );
    assert!(
        matches!(&texts[1], Err(e) if e.contains("no entry for node N2")),
        "{texts:?}"
    );
    // The model's own header is replaced by ours.
    assert_eq!(
        texts[2].as_deref(),
        Ok("[Jan 2023 - Feb 2023 | carol]\nCarol sings -> Carol teaches.")
    );
    assert!(texts[3].is_err(), "an empty summary is unusable: {texts:?}");
}

#[test]
fn a_reply_without_json_fails_the_whole_call() {
    let server = TestServer::start(vec![Reply::json(
        200,
        &chat_body("[Aug 2029 - Sep 2029 | i'll]", None),
    )]);
    let requests = [request("alice", "a"), request("bob", "b")];
    assert!(summarizer(&server).summarize_batch(&requests).is_err());
}
