//! The [`Summarizer`] trait: one call per dirty MemTree node turns its children's
//! summaries into the node's summary (paper, "Refresh").

mod extractive;
mod header_only;

pub use extractive::ExtractiveSummarizer;
pub use header_only::HeaderOnlySummarizer;

use std::fmt::Debug;

use memforest_tree::refresh::ChildSummary;
use memforest_tree::{TimeRange, TreeKind};

use crate::memory::model::{ModelError, Usage};

/// The input of one summary call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRequest {
    /// The tree's kind.
    pub kind: TreeKind,
    /// The tree's label (`user`, an entity name, a scene label, a session id).
    pub label: String,
    /// The node's level (1 = its children are leaves).
    pub level: u8,
    /// The node's time range, microseconds since the Unix epoch.
    pub time: TimeRange,
    /// The children's texts (leaf texts or child summaries), oldest first.
    pub children: Vec<ChildSummary>,
}

/// The result of one summary call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryOutput {
    /// The summary, starting with a `[Mon YYYY - Mon YYYY | label]` header.
    pub text: String,
    /// Tokens spent.
    pub usage: Usage,
}

/// The result of one [`Summarizer::summarize_batch`] call.
#[derive(Debug, Default)]
pub struct BatchSummary {
    /// Per request, in the requests' order: its summary (`usage` left at zero; the call's
    /// is in [`BatchSummary::usage`]), or why the reply had none usable for it (that node
    /// stays dirty and is retried).
    pub nodes: Vec<Result<SummaryOutput, ModelError>>,
    /// Tokens spent by the call.
    pub usage: Usage,
}

/// Summarizes one MemTree node. Called from the refresh worker pool, many calls at once.
pub trait Summarizer: Send + Sync + Debug {
    /// A short name for stats and logs.
    fn name(&self) -> &str;

    /// Summarizes `request`.
    ///
    /// # Errors
    /// [`ModelError`]: the node stays dirty and is retried with backoff.
    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError>;

    /// Most nodes [`Summarizer::summarize_batch`] takes in one call. Default 1: no batched
    /// call, each node is summarized on its own.
    fn max_batch(&self) -> usize {
        1
    }

    /// Summarizes several nodes of one user (at most [`Summarizer::max_batch`]) in one
    /// model call: one entry per request, in order; a node the reply leaves out or answers
    /// with nothing usable is an `Err` entry. The default makes one
    /// [`Summarizer::summarize`] call per request and sums their usage.
    ///
    /// # Errors
    /// [`ModelError`] when the call as a whole failed: every node stays dirty.
    fn summarize_batch(&self, requests: &[SummaryRequest]) -> Result<BatchSummary, ModelError> {
        let mut out = BatchSummary::default();
        for request in requests {
            let node = match self.summarize(request) {
                Ok(mut o) => {
                    out.usage.prompt_tokens += o.usage.prompt_tokens;
                    out.usage.completion_tokens += o.usage.completion_tokens;
                    out.usage.reported |= o.usage.reported;
                    o.usage = Usage::default();
                    Ok(o)
                }
                Err(e) => Err(e),
            };
            out.nodes.push(node);
        }
        Ok(out)
    }
}

/// The `[Mon YYYY - Mon YYYY | label]` header of a summary of `time` in a tree labelled
/// `label` (months in UTC).
#[must_use]
pub fn header(time: TimeRange, label: &str) -> String {
    format!(
        "[{} - {} | {label}]",
        crate::memory::time::month_year(time.start),
        crate::memory::time::month_year(time.end)
    )
}
