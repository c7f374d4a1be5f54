//! OpenAI-compatible LLM and embedding clients, and the `Extractor` / `Summarizer` /
//! `Embedder` implementations built on them.
//!
//! Any server speaking the OpenAI HTTP API works: `POST {base_url}/chat/completions` and
//! `POST {base_url}/embeddings`. Point [`LlmConfig`] at it:
//!
//! | server | `base_url` | `model` | `api_key_env` |
//! |---|---|---|---|
//! | vLLM (`vllm serve MODEL`) | `http://127.0.0.1:8000/v1` | the served model name | `None` (or the variable holding `--api-key`) |
//! | llama.cpp (`llama-server -m model.gguf`) | `http://127.0.0.1:8080/v1` | any string (one model is loaded) | `None` |
//! | Ollama | `http://127.0.0.1:11434/v1` | e.g. `llama3.1:8b` | `None` |
//! | OpenAI | `https://api.openai.com/v1` | e.g. `gpt-4o-mini`, `text-embedding-3-small` | `Some("OPENAI_API_KEY")` |
//!
//! ```no_run
//! use std::time::Duration;
//! use memforest_llm::{ChatMessage, LlmClient, LlmConfig};
//! # fn main() -> Result<(), memforest_llm::LlmError> {
//! let config = LlmConfig::new("https://api.openai.com/v1", "gpt-4o-mini")
//!     .with_api_key_env("OPENAI_API_KEY")
//!     .with_timeout(Duration::from_secs(30));
//! let client = LlmClient::new(config)?;
//! let reply = client.chat(&[ChatMessage::user("Reply with {\"ok\": true}")])?;
//! println!("{} ({} prompt tokens)", reply.content, reply.usage.prompt_tokens);
//! # Ok(())
//! # }
//! ```
//!
//! Failure handling: every call has a per-attempt timeout and a bounded number of retries
//! (transient errors only, see [`LlmClient`]); reply bodies are capped
//! ([`LlmConfig::max_body_bytes`]) and parsed without panics ([`reply`]); the JSON inside a
//! model's message is recovered by [`json::extract_json`] even from code fences, leading
//! prose, or an item array cut off by `max_tokens` (the complete items are kept and the cut
//! reported). Servers without `response_format` support: `LlmConfig::with_json_mode(false)`.
//!
//! The memory layer's model traits are implemented by:
//! - [`OpenAiExtractor`] (`Extractor`): one chat call per MemCell asking for
//!   `{"items": [...]}` with the paper's item fields; each item is validated by
//!   [`items::parse_items`] (bad items dropped, bad optional fields cleared, both logged in
//!   [`OpenAiExtractor::recent_notes`]); or several cells in one call, each an excerpt
//!   with its id, the reply's entry per excerpt validated by [`batch::parse_batch`].
//! - [`OpenAiSummarizer`] (`Summarizer`): one chat call per dirty node with the paper's rules
//!   (every number and date kept, state changes as "X -> Y", latest state last, ~220 words);
//!   the `[Mon YYYY - Mon YYYY | label]` header is ours, not the model's.
//! - [`OpenAiEmbedder`] (`Embedder`): batched `/embeddings` calls, vector count and
//!   dimension checked.
//!
//! Their failures reach the memory layer as `ModelError` (`From<LlmError>`): `Timeout` for
//! timeouts (also after retries), `Malformed` for unusable reply content, `Backend` for
//! HTTP and transport failures; in every case the work item stays pending and is retried.
//! Token usage is the server's `usage` when it sends one, else the memory layer's
//! bytes / 4 estimate (`Usage::reported` tells which).

pub mod batch;
mod client;
mod config;
mod embedder;
mod error;
mod extractor;
pub mod items;
pub mod json;
pub mod reply;
mod retry;
mod summarizer;

pub use client::{ChatMessage, ChatRole, EmbedRequest, LlmClient};
pub use config::LlmConfig;
pub use embedder::OpenAiEmbedder;
pub use error::LlmError;
pub use extractor::{OpenAiExtractor, MAX_BATCH};
pub use reply::{ChatReply, EmbeddingReply};
pub use summarizer::{OpenAiSummarizer, MAX_SUMMARY_BATCH};
