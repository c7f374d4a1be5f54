//! `OpenAiExtractor`, `OpenAiSummarizer` and `OpenAiEmbedder` against a real HTTP/1.1 server
//! on 127.0.0.1: what they send, how they map replies (including fenced and cut-off item
//! JSON), and which failures become which `ModelError`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod llm_support;

use std::time::Duration;

use llm_support::{chat_body, embeddings_body, Reply, TestServer};
use memforest::memory::embed::Embedder;
use memforest::memory::extract::{CellTurn, ExtractionInput, Extractor, Origin, SemanticRole};
use memforest::memory::model::{ModelError, Usage};
use memforest::memory::session::Role;
use memforest::memory::summarize::{Summarizer, SummaryRequest};
use memforest_llm::{LlmConfig, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer};
use memforest_tree::refresh::ChildSummary;
use memforest_tree::{TimeRange, TreeKind};
use serde_json::json;

/// 2023-05-08 09:00 UTC.
const MAY_8_9AM: i64 = 1_683_536_400_000_000;
const DAY: i64 = 86_400_000_000;

fn config(server: &TestServer) -> LlmConfig {
    LlmConfig::new(server.base_url(), "test-model")
        .with_timeout(Duration::from_millis(200))
        .with_retries(1, Duration::from_millis(1), Duration::from_millis(5))
}

fn cell() -> ExtractionInput {
    let turn = |i: i64, role, speaker: &str, text: &str| CellTurn {
        turn_id: format!("s1#turn_{i}"),
        role,
        speaker: speaker.into(),
        text: text.into(),
        time: MAY_8_9AM + i * 60_000_000,
    };
    ExtractionInput {
        session_id: "s1".into(),
        session_start: MAY_8_9AM,
        turns: vec![
            turn(
                0,
                Role::User,
                "Alice",
                "I adopted a cat named Miso yesterday, she cost $120.",
            ),
            turn(1, Role::Assistant, "", "Congratulations on Miso!"),
        ],
    }
}

fn item(text: &str) -> serde_json::Value {
    json!({"fact_text": text, "participants": ["Alice"], "origin": "user", "semantic_role": "event",
           "entities": ["Miso", "$120"], "topics": ["pets"], "time_text": "yesterday",
           "time_start": "2023-05-07", "time_end": "2023-05-07", "attribute_keys": ["alice/cat.name"],
           "domain_keys": ["pets"], "collection_keys": [], "source_turns": ["s1#turn_0"]})
}

#[test]
fn extractor_sends_the_cell_and_maps_items() {
    let content =
        json!({"items": [item("Alice adopted a cat named Miso on 2023-05-07 for $120.")]})
            .to_string();
    let server = TestServer::start(vec![Reply::json(
        200,
        &chat_body(&content, Some((300, 80))),
    )]);
    let extractor = OpenAiExtractor::new(config(&server)).unwrap();
    assert_eq!(extractor.name(), "openai:test-model");
    let extraction = extractor.extract(&cell()).unwrap();

    assert_eq!(
        extraction.usage,
        Usage {
            prompt_tokens: 300,
            completion_tokens: 80,
            reported: true
        }
    );
    assert_eq!(extraction.items.len(), 1);
    let got = &extraction.items[0];
    assert_eq!(
        got.fact_text,
        "Alice adopted a cat named Miso on 2023-05-07 for $120."
    );
    assert_eq!(
        (got.origin, got.semantic_role),
        (Some(Origin::User), Some(SemanticRole::Event))
    );
    assert_eq!(got.entities, vec!["Miso", "$120"]);
    assert_eq!(
        (got.time_start, got.time_end),
        (
            Some(MAY_8_9AM - 9 * 3_600_000_000 - DAY),
            Some(MAY_8_9AM - 9 * 3_600_000_000 - 1)
        )
    );
    assert_eq!(got.source_turns, vec!["s1#turn_0"]);
    // the knowledge-update key of the default extractor: one supersession mechanism
    assert_eq!(got.attribute_keys, vec!["alice/cat.name"]);
    assert!(
        extractor.recent_notes().is_empty(),
        "{:?}",
        extractor.recent_notes()
    );

    let body = server.requests()[0].json();
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("\"subject/attribute\""), "{system}");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("[s1#turn_0] 2023-05-08 09:00 UTC (Monday) user (Alice): I adopted"),
        "{user}"
    );
    assert!(
        user.contains("[s1#turn_1] 2023-05-08 09:01 UTC (Monday) assistant: Congratulations"),
        "{user}"
    );
    let system = body["messages"][0]["content"].as_str().unwrap();
    for field in [
        "fact_text",
        "semantic_role",
        "time_start",
        "collection_keys",
        "at most 3",
    ] {
        assert!(system.contains(field), "prompt lacks {field}");
    }
}

#[test]
fn extractor_keeps_the_complete_items_of_a_fenced_cut_off_reply() {
    let full = json!({"items": [item("First fact."), item("Second fact."), item("Third fact.")]})
        .to_string();
    let cut = &full[..full.find("Third").unwrap() + 3];
    let content = format!("Here are the items:\n```json\n{cut}");
    let mut body = chat_body(&content, None);
    body["choices"][0]["finish_reason"] = json!("length");
    let server = TestServer::start(vec![Reply::json(200, &body)]);
    let extractor = OpenAiExtractor::new(config(&server)).unwrap();
    let extraction = extractor.extract(&cell()).unwrap();
    let texts: Vec<_> = extraction
        .items
        .iter()
        .map(|i| i.fact_text.as_str())
        .collect();
    assert_eq!(texts, ["First fact.", "Second fact."]);
    assert!(!extraction.usage.reported);
    let notes = extractor.recent_notes();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("s1: reply cut off at byte")
            && notes[0].ends_with("kept 2 complete items"),
        "{notes:?}"
    );
}

#[test]
fn extractor_failures_become_model_errors() {
    let prose = chat_body("I'm sorry, I can't do that.", None);
    let all_bad = chat_body(&json!({"items": [{"fact_text": 3}, {}]}).to_string(), None);
    let slow = Reply::json(200, &chat_body("{}", None)).after(Duration::from_millis(500));
    let server = TestServer::start(vec![
        Reply::json(200, &prose),
        Reply::json(200, &all_bad),
        Reply::json(503, &json!({"error": "down"})),
        Reply::json(503, &json!({"error": "down"})),
        slow.clone(),
        slow,
    ]);
    let extractor = OpenAiExtractor::new(config(&server)).unwrap();
    assert!(matches!(
        extractor.extract(&cell()),
        Err(ModelError::Malformed { .. })
    ));
    match extractor.extract(&cell()) {
        Err(ModelError::Malformed { what, .. }) => {
            assert!(what.contains("all 2 items are unusable"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        extractor.extract(&cell()),
        Err(ModelError::Backend(_))
    ));
    assert!(
        matches!(extractor.extract(&cell()), Err(ModelError::Timeout(d)) if d == Duration::from_millis(200))
    );
    assert_eq!(
        extractor.recent_notes().len(),
        2,
        "the two unusable replies are logged"
    );
}

fn summary_request() -> SummaryRequest {
    let child = |day: i64, text: &str| ChildSummary {
        time: TimeRange {
            start: MAY_8_9AM + day * DAY,
            end: MAY_8_9AM + day * DAY,
        },
        text: text.into(),
    };
    SummaryRequest {
        kind: TreeKind::Entity,
        label: "Alice".into(),
        level: 1,
        time: TimeRange {
            start: MAY_8_9AM,
            end: MAY_8_9AM + 40 * DAY,
        },
        children: vec![
            child(0, "Alice lives in Paris."),
            child(40, "Alice moved to Berlin on 2023-06-17."),
        ],
    }
}

#[test]
fn summarizer_prefixes_its_own_header_and_sends_the_rules() {
    let content = json!({"summary": "[Jan 1999 - Feb 1999 | wrong] Alice's home: Paris -> Berlin (2023-06-17). She lives in Berlin."}).to_string();
    let server = TestServer::start(vec![Reply::json(200, &chat_body(&content, Some((90, 20))))]);
    let summarizer = OpenAiSummarizer::new(config(&server)).unwrap();
    let out = summarizer.summarize(&summary_request()).unwrap();
    assert_eq!(out.text, "[May 2023 - Jun 2023 | Alice]\nAlice's home: Paris -> Berlin (2023-06-17). She lives in Berlin.");
    assert_eq!(
        out.usage,
        Usage {
            prompt_tokens: 90,
            completion_tokens: 20,
            reported: true
        }
    );

    let body = server.requests()[0].json();
    let system = body["messages"][0]["content"].as_str().unwrap();
    for rule in [
        "at most 220 words",
        "every number",
        "\"X -> Y\"",
        "ends with the latest state",
        "{\"summary\"",
    ] {
        assert!(system.contains(rule), "prompt lacks {rule}: {system}");
    }
    let user = body["messages"][1]["content"].as_str().unwrap();
    let (paris, berlin) = (user.find("Paris").unwrap(), user.find("Berlin").unwrap());
    assert!(paris < berlin, "children oldest first: {user}");
    assert!(
        user.contains("Tree: entity \"Alice\" (level 1)\nTime range: 2023-05-08 to 2023-06-17"),
        "{user}"
    );
}

#[test]
fn summarizer_plain_text_mode_budget_and_errors() {
    let long = "word ".repeat(200);
    let server = TestServer::start(vec![
        Reply::json(200, &chat_body("```\nAlice: Paris -> Berlin.\n```", None)),
        Reply::json(200, &chat_body(&long, None)),
        Reply::json(200, &chat_body("   ", None)),
    ]);
    let summarizer = OpenAiSummarizer::new(config(&server).with_json_mode(false))
        .unwrap()
        .with_word_budget(25);
    let out = summarizer.summarize(&summary_request()).unwrap();
    assert_eq!(
        out.text,
        "[May 2023 - Jun 2023 | Alice]\nAlice: Paris -> Berlin."
    );
    assert!(!out.usage.reported);
    let system = server.requests()[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.contains("at most 25 words") && !system.contains("{\"summary\""),
        "{system}"
    );

    let out = summarizer.summarize(&summary_request()).unwrap();
    assert_eq!(
        out.text.lines().nth(1).unwrap().split_whitespace().count(),
        100,
        "cut at 4x the budget"
    );
    assert!(matches!(
        summarizer.summarize(&summary_request()),
        Err(ModelError::Malformed { .. })
    ));
}

#[test]
fn summarizer_json_mode_without_a_summary_field_is_an_error() {
    let server = TestServer::start(vec![Reply::json(
        200,
        &chat_body("{\"text\": \"x\"}", None),
    )]);
    let summarizer = OpenAiSummarizer::new(config(&server)).unwrap();
    match summarizer.summarize(&summary_request()) {
        Err(ModelError::Malformed { what, .. }) => assert!(what.contains("summary"), "{what}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn embedder_batches_and_checks_shapes() {
    let texts: Vec<String> = (0..5).map(|i| format!("text {i}")).collect();
    let vector = |i: usize| vec![i as f32, 1.0];
    let server = TestServer::start(vec![
        Reply::json(200, &embeddings_body(&[vector(0), vector(1)])),
        Reply::json(200, &embeddings_body(&[vector(2), vector(3)])),
        Reply::json(200, &embeddings_body(&[vector(4)])),
        // Second call: the second batch changes dimension.
        Reply::json(200, &embeddings_body(&[vector(0), vector(1)])),
        Reply::json(
            200,
            &embeddings_body(&[vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]]),
        ),
        // Third call: a vector missing.
        Reply::json(200, &embeddings_body(&[vector(0)])),
    ]);
    let embedder = OpenAiEmbedder::new(config(&server))
        .unwrap()
        .with_batch_size(2);
    let out = embedder.embed(&texts).unwrap();
    assert_eq!(out.vectors, (0..5).map(vector).collect::<Vec<_>>());
    assert_eq!(
        out.usage,
        Usage {
            prompt_tokens: 21,
            completion_tokens: 0,
            reported: true
        }
    );
    let inputs: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.json()["input"].clone())
        .collect();
    assert_eq!(
        inputs,
        vec![
            json!(["text 0", "text 1"]),
            json!(["text 2", "text 3"]),
            json!(["text 4"])
        ]
    );

    assert!(
        matches!(embedder.embed(&texts), Err(ModelError::Malformed { what, .. }) if what.contains("3 dimensions, expected 2"))
    );
    assert!(
        matches!(embedder.embed(&texts[..2]), Err(ModelError::Malformed { what, .. }) if what.contains("expected 2 embeddings, got 1"))
    );
    let empty = embedder.embed(&[]).unwrap();
    assert!(empty.vectors.is_empty());
    assert_eq!(
        server.requests().len(),
        6,
        "an empty input makes no request"
    );
}
