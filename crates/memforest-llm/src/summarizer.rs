//! [`OpenAiSummarizer`]: the `Summarizer` backed by an OpenAI-compatible chat model.

use memforest_tree::TreeKind;

use super::batch::{answers, missing, node_id, NODES};
use super::json::extract_json;
use super::{ChatMessage, LlmClient, LlmConfig, LlmError};
use memforest::memory::model::ModelError;
use memforest::memory::summarize::{
    header, BatchSummary, Summarizer, SummaryOutput, SummaryRequest,
};
use memforest::memory::time::to_datetime;

/// Default word budget of a summary (paper: about 200-250).
pub const DEFAULT_WORD_BUDGET: usize = 220;

/// Most nodes one batched call summarizes (`Summarizer::max_batch`).
pub const MAX_SUMMARY_BATCH: usize = 16;

/// Summarizes a MemTree node from its children with one chat call (paper, "Refresh").
///
/// The prompt carries the paper's rules: keep every number and date, write state changes
/// as "X -> Y", order by time and end with the latest state, stay within the word budget.
/// The `[Mon YYYY - Mon YYYY | label]` header is computed here from the node's time range
/// and prefixed to the model's text; a header the model adds anyway is removed. A summary
/// longer than 4x the budget is cut there. An empty or unusable reply is a [`ModelError`]
/// (the node stays dirty and is retried).
///
/// Several nodes (up to [`MAX_SUMMARY_BATCH`]) can be summarized in one call
/// (`Summarizer::summarize_batch`): each node is named `N1`, `N2`, ..., the reply is
/// `{"summaries": [{"node": "N1", "summary": "..."}, ...]}` (in JSON mode or not), and a
/// node the reply leaves out or answers with nothing usable fails alone.
#[derive(Debug)]
pub struct OpenAiSummarizer {
    client: LlmClient,
    name: String,
    word_budget: usize,
}

impl OpenAiSummarizer {
    /// A summarizer using `config` with the default word budget (220 words). With
    /// [`LlmConfig::json_mode`] the model is asked for `{"summary": "..."}`, otherwise for
    /// plain text.
    ///
    /// # Errors
    /// As [`LlmClient::new`].
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let name = format!("openai:{}", config.model);
        Ok(Self {
            client: LlmClient::new(config)?,
            name,
            word_budget: DEFAULT_WORD_BUDGET,
        })
    }

    /// Sets the word budget (at least 20 words).
    pub fn with_word_budget(mut self, words: usize) -> Self {
        self.word_budget = words.max(20);
        self
    }

    fn system_prompt(&self) -> String {
        let format = if self.client.config().json_mode {
            r#"Return only a JSON object: {"summary": "<the summary>"}."#
        } else {
            "Return only the summary text, with no title, header or preamble."
        };
        format!(
            "You summarize one node of a memory tree. The numbered texts are its children, oldest first.\n{}{format}",
            self.rules("a single summary")
        )
    }

    /// The instructions of a batched call.
    fn batch_system_prompt(&self) -> String {
        format!(
            "You summarize several nodes of memory trees. Each node starts with a line \"Node <id>\" and is summarized on its own; its numbered texts are its children, oldest first.\n{}\
             Return only a JSON object with one entry per node, in order: {{\"summaries\": [{{\"node\": \"<id>\", \"summary\": \"<the summary>\"}}, ...]}}.",
            self.rules("for each node a summary")
        )
    }

    /// The summary rules, for `what` ("a single summary").
    fn rules(&self, what: &str) -> String {
        format!(
            "Write {what} of at most {} words that:\n\
             - keeps every number, amount and date exactly as written;\n\
             - writes each change of state as \"X -> Y\" (old value -> new value);\n\
             - follows the order of time and ends with the latest state;\n\
             - uses the third person and adds nothing that is not in the texts.\n",
            self.word_budget
        )
    }

    /// The model's summary text, without any header it added, cut to 4x the budget.
    fn body(&self, content: &str) -> Result<String, LlmError> {
        let text = if self.client.config().json_mode {
            let payload = extract_json(content)?;
            match payload.value.get("summary") {
                Some(serde_json::Value::String(s)) => s.clone(),
                _ => {
                    return Err(LlmError::Unusable(
                        "no \"summary\" string in the reply".into(),
                    ))
                }
            }
        } else {
            strip_fences(content).to_owned()
        };
        self.finish(&text)
    }

    /// A summary text without any header the model added, cut to 4x the budget.
    fn finish(&self, text: &str) -> Result<String, LlmError> {
        let text = strip_header(text.trim());
        if text.is_empty() {
            return Err(LlmError::Unusable("empty summary".into()));
        }
        let limit = self.word_budget.saturating_mul(4);
        Ok(text
            .split_whitespace()
            .take(limit)
            .collect::<Vec<_>>()
            .join(" "))
    }
}

impl Summarizer for OpenAiSummarizer {
    fn name(&self) -> &str {
        &self.name
    }

    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        let messages = [
            ChatMessage::system(self.system_prompt()),
            ChatMessage::user(node_prompt(request)),
        ];
        let reply = self.client.chat(&messages)?;
        let body = self.body(&reply.content)?;
        Ok(SummaryOutput {
            text: format!("{}\n{body}", header(request.time, &request.label)),
            usage: reply.usage,
        })
    }

    fn max_batch(&self) -> usize {
        MAX_SUMMARY_BATCH
    }

    fn summarize_batch(&self, requests: &[SummaryRequest]) -> Result<BatchSummary, ModelError> {
        let mut prompt = String::new();
        for (i, request) in requests.iter().enumerate() {
            prompt.push_str(&format!("Node {}\n{}\n", node_id(i), node_prompt(request)));
        }
        let messages = [
            ChatMessage::system(self.batch_system_prompt()),
            ChatMessage::user(prompt),
        ];
        let reply = self.client.chat(&messages)?;
        let payload = extract_json(&reply.content).map_err(LlmError::from)?;
        let found = answers(&payload, NODES, requests.len(), &mut Vec::new())?;
        let nodes = found
            .into_iter()
            .zip(requests)
            .enumerate()
            .map(|(i, (entry, request))| {
                let text = match entry {
                    Some(serde_json::Value::String(s)) => s.as_str(),
                    Some(e) => match e.get("summary") {
                        Some(serde_json::Value::String(s)) => s.as_str(),
                        _ => return Err(missing(NODES, i).into()),
                    },
                    None => return Err(missing(NODES, i).into()),
                };
                let body = self.finish(text)?;
                Ok(SummaryOutput {
                    text: format!("{}\n{body}", header(request.time, &request.label)),
                    ..SummaryOutput::default()
                })
            })
            .collect();
        Ok(BatchSummary {
            nodes,
            usage: reply.usage,
        })
    }
}

/// The node: tree kind and label, time range, then the children oldest first with dates.
fn node_prompt(request: &SummaryRequest) -> String {
    let kind = match request.kind {
        TreeKind::Session => "session",
        TreeKind::Entity => "entity",
        TreeKind::Scene => "scene",
    };
    let mut prompt = format!(
        "Tree: {kind} \"{}\" (level {})\nTime range: {} to {}\nChildren:\n",
        request.label,
        request.level,
        day(request.time.start),
        day(request.time.end)
    );
    for (i, child) in request.children.iter().enumerate() {
        prompt.push_str(&format!(
            "{}. [{} to {}] {}\n",
            i + 1,
            day(child.time.start),
            day(child.time.end),
            child.text
        ));
    }
    prompt
}

fn day(micros: i64) -> String {
    to_datetime(micros).map_or_else(|| "?".to_owned(), |t| t.format("%Y-%m-%d").to_string())
}

/// The inside of a code fence wrapping the whole reply, if any.
fn strip_fences(content: &str) -> &str {
    let trimmed = content.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.strip_suffix("```").unwrap_or(body)
}

/// Removes a leading `[... | ...]` header line the model may have copied.
fn strip_header(text: &str) -> &str {
    match text.strip_prefix('[').and_then(|rest| rest.split_once(']')) {
        Some((inside, rest)) if inside.contains('|') => rest.trim_start(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_and_headers_are_stripped() {
        assert_eq!(strip_fences("```text\nAlice moved.\n```"), "Alice moved.\n");
        assert_eq!(strip_fences("  plain  "), "plain");
        assert_eq!(strip_fences("```"), "");
        assert_eq!(
            strip_header("[Jan 2023 - Mar 2023 | user] Alice moved."),
            "Alice moved."
        );
        assert_eq!(strip_header("[note] kept"), "[note] kept");
        assert_eq!(strip_header("[unclosed | x"), "[unclosed | x");
    }
}
