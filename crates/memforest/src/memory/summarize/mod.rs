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

/// Summarizes one MemTree node. Called from the refresh worker pool, many calls at once.
pub trait Summarizer: Send + Sync + Debug {
    /// A short name for stats and logs.
    fn name(&self) -> &str;

    /// Summarizes `request`.
    ///
    /// # Errors
    /// [`ModelError`]: the node stays dirty and is retried with backoff.
    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError>;
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
