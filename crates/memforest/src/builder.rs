//! [`MemoryBuilder`]: a `Memory` with its own models or options.

use std::path::Path;
use std::sync::Arc;

use crate::memory::embed::Embedder;
use crate::memory::extract::Extractor;
use crate::memory::summarize::Summarizer;
use crate::memory::MemoryError;
use crate::{Memory, Options};

/// Builds a [`Memory`]: `Memory::builder().summarizer(s).open(path)`. Unset parts keep
/// the defaults, which need no network.
#[derive(Debug, Clone, Default)]
pub struct MemoryBuilder {
    options: Options,
    read_only: bool,
}

impl MemoryBuilder {
    /// Extracts memories from messages with `extractor` (e.g. `memforest_llm::OpenAiExtractor`).
    #[must_use]
    pub fn extractor(mut self, extractor: Arc<dyn Extractor>) -> Self {
        self.options.memory.extractor = extractor;
        self
    }

    /// Writes tree summaries with `summarizer`.
    #[must_use]
    pub fn summarizer(mut self, summarizer: Arc<dyn Summarizer>) -> Self {
        self.options.memory.summarizer = summarizer;
        self
    }

    /// Embeds memories and summaries with `embedder`.
    #[must_use]
    pub fn embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.options.memory.embedder = Some(embedder);
        self
    }

    /// Every option at once (engine and memory layer).
    #[must_use]
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Opens the store read-only ([`Memory::open_read_only`]).
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Opens (or, unless read-only, creates) the store in `dir`.
    ///
    /// # Errors
    /// As [`Memory::open_with`] or [`Memory::open_read_only`].
    pub fn open(self, dir: impl AsRef<Path>) -> Result<Memory, MemoryError> {
        if self.read_only {
            Memory::open_read_only(dir, self.options)
        } else {
            Memory::open_with(dir, self.options)
        }
    }
}
