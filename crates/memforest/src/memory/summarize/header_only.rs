//! [`HeaderOnlySummarizer`]: the `none` summarizer, for benchmarks and deployments that
//! want trees without summary text.

use crate::memory::model::{ModelError, Usage};
use crate::memory::summarize::{header, Summarizer, SummaryOutput, SummaryRequest};

/// A node's summary is only its `[Mon YYYY - Mon YYYY | label]` header: no model call, no
/// text from the children (the tree still refreshes, so hashes and dirty sets behave as
/// with a real summarizer).
#[derive(Debug, Clone, Copy, Default)]
pub struct HeaderOnlySummarizer;

impl Summarizer for HeaderOnlySummarizer {
    fn name(&self) -> &str {
        "none"
    }

    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        Ok(SummaryOutput {
            text: header(request.time, &request.label),
            usage: Usage::default(),
        })
    }
}
