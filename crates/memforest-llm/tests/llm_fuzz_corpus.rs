//! Runs the `llm_reply` fuzz check (`fuzz/checks/llm_reply.rs`) over its seed corpus, so CI
//! exercises it on every run. `regenerate_llm_reply_seeds` (ignored) rewrites the seeds:
//! `cargo test -p memforest-llm --test llm_fuzz_corpus -- --ignored`.
#![allow(clippy::unwrap_used, reason = "test code")]

#[path = "../../../fuzz/checks/llm_reply.rs"]
mod llm_reply;

use std::path::{Path, PathBuf};

use serde_json::json;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/llm_reply")
}

#[test]
fn llm_reply_seeds() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        llm_reply::check(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 6, "only {n} seeds");
}

/// Seeds: real reply shapes, whole and cut off. The first byte also picks the embeddings
/// input count (byte % 4), so the embeddings seeds start with `{` (0x7b -> 3 inputs).
#[test]
#[ignore = "rewrites fuzz/corpus/llm_reply"]
fn regenerate_llm_reply_seeds() {
    let items = json!({"items": [
        {"fact_text": "Alice adopted a cat named Miso on 2023-05-07.", "origin": "user",
         "semantic_role": "event", "entities": ["Miso"], "topics": ["pets"],
         "time_start": "2023-05-07", "time_end": "2023-05-07", "source_turns": ["t0"]},
        {"fact_text": "Alice pays $1,200 rent.", "topics": ["rent", "home", "money", "extra"],
         "attribute_keys": ["rent.amount"], "time_start": "2023-06", "time_end": "2023-05"}]})
    .to_string();
    let chat = |content: &str| {
        json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
        .to_string()
    };
    let fenced_cut = format!("Here:\n```json\n{}", &items[..items.len() / 2]);
    let embeddings = json!({"data": [{"index": 2, "embedding": [0.5, 1.0]}, {"index": 0, "embedding": [1.0, 0.0]},
                                     {"index": 1, "embedding": [0.0, 1.0]}], "usage": {"prompt_tokens": 3}})
    .to_string();
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        ("chat_items", chat(&items).into_bytes()),
        ("chat_fenced_cut", chat(&fenced_cut).into_bytes()),
        ("chat_body_cut", chat(&items).as_bytes()[..150].to_vec()),
        ("items_plain", items.clone().into_bytes()),
        ("items_fenced_cut", fenced_cut.into_bytes()),
        ("embeddings", embeddings.clone().into_bytes()),
        ("embeddings_cut", embeddings.as_bytes()[..60].to_vec()),
        (
            "summary",
            chat(r#"{"summary": "Alice: Paris -> Berlin (2023-06-17)."}"#).into_bytes(),
        ),
        ("not_utf8", b"{\"choices\": \"\xc3\x28\"}".to_vec()),
    ];
    std::fs::create_dir_all(corpus()).unwrap();
    for (name, bytes) in seeds {
        std::fs::write(corpus().join(name), bytes).unwrap();
    }
}
