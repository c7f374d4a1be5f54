//! [`OpenAiEmbedder`]: the `Embedder` backed by an OpenAI-compatible `/v1/embeddings`.

use super::{LlmClient, LlmConfig, LlmError};
use memforest::memory::embed::{Embedder, Embeddings};
use memforest::memory::model::{ModelError, Usage};

/// Default number of texts sent per request.
pub const DEFAULT_BATCH: usize = 64;

/// Embeds texts in batches of [`OpenAiEmbedder::with_batch_size`] inputs per request.
///
/// Every reply is checked: one vector per input, all of one dimension (the configured one,
/// or else that of the first vector of the call, across batches), finite values. Any
/// mismatch is a [`ModelError`].
#[derive(Debug)]
pub struct OpenAiEmbedder {
    client: LlmClient,
    name: String,
    batch: usize,
    dims: Option<usize>,
}

impl OpenAiEmbedder {
    /// An embedder for `config.model` (e.g. `text-embedding-3-small`, or the model a local
    /// server was started with) with batches of 64 inputs.
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
        })
    }

    /// Sets the inputs per request (at least 1).
    pub fn with_batch_size(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// Requires every vector to have `dims` dimensions.
    pub fn with_dimensions(mut self, dims: usize) -> Self {
        self.dims = Some(dims);
        self
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String]) -> Result<Embeddings, ModelError> {
        let usage = Usage {
            reported: !texts.is_empty(),
            ..Usage::default()
        };
        let mut out = Embeddings {
            vectors: Vec::with_capacity(texts.len()),
            usage,
        };
        for chunk in texts.chunks(self.batch) {
            let dims = self.dims.or_else(|| out.vectors.first().map(Vec::len));
            let reply = self.client.embed(chunk, dims)?;
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
