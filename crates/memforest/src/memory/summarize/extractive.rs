//! [`ExtractiveSummarizer`]: the default, deterministic summarizer. It keeps the sentences
//! of the children that carry the most distinct entities, numbers and dates, within a word
//! budget, in time order so the newest state comes last, behind a
//! `[Mon YYYY - Mon YYYY | label]` header.

use crate::memory::model::{ModelError, Usage};
use crate::memory::summarize::{header, Summarizer, SummaryOutput, SummaryRequest};
use crate::memory::text::{sentences, word_count};

/// Default word budget of a summary (the paper asks for about 200-250 words), counted by
/// `memory::text::word_count`.
pub const DEFAULT_WORD_BUDGET: usize = 200;

/// The default summarizer: picks informative sentences, calls no model.
#[derive(Debug, Clone, Copy)]
pub struct ExtractiveSummarizer {
    /// Most words in the summary body (the header excluded).
    pub word_budget: usize,
}

impl Default for ExtractiveSummarizer {
    fn default() -> Self {
        Self {
            word_budget: DEFAULT_WORD_BUDGET,
        }
    }
}

struct Candidate<'a> {
    text: &'a str,
    words: usize,
    score: usize,
    /// Position in time order (child, then sentence).
    order: usize,
}

impl Summarizer for ExtractiveSummarizer {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, request: &SummaryRequest) -> Result<SummaryOutput, ModelError> {
        let mut candidates: Vec<Candidate<'_>> = Vec::new();
        for child in &request.children {
            for s in sentences(strip_header(&child.text)) {
                if candidates.iter().any(|c| c.text == s) {
                    continue;
                }
                candidates.push(Candidate {
                    text: s,
                    words: word_count(s),
                    score: informative_tokens(s),
                    order: candidates.len(),
                });
            }
        }
        // Most informative first; among equals the newer one (it carries the latest state).
        let mut ranked: Vec<&Candidate<'_>> = candidates.iter().collect();
        ranked.sort_by(|a, b| b.score.cmp(&a.score).then(b.order.cmp(&a.order)));
        let mut chosen: Vec<&Candidate<'_>> = Vec::new();
        let mut words = 0;
        for c in ranked {
            if words + c.words <= self.word_budget {
                words += c.words;
                chosen.push(c);
            }
        }
        chosen.sort_by_key(|c| c.order);
        let mut text = header(request.time, &request.label);
        for c in chosen {
            text.push(' ');
            text.push_str(c.text);
        }
        let prompt: String = request.children.iter().map(|c| c.text.as_str()).collect();
        Ok(SummaryOutput {
            usage: Usage::estimated(&prompt, &text),
            text,
        })
    }
}

/// `text` without a leading `[...]` summary header.
fn strip_header(text: &str) -> &str {
    match (text.starts_with('['), text.find(']')) {
        (true, Some(end)) => text.get(end + 1..).unwrap_or_default().trim_start(),
        _ => text,
    }
}

/// Distinct capitalized words (past the first), numbers and month names in `sentence`.
fn informative_tokens(sentence: &str) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for (i, raw) in sentence.split_whitespace().enumerate() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let informative = w.chars().any(|c| c.is_ascii_digit())
            || (i > 0 && w.chars().next().is_some_and(char::is_uppercase) && w != "I");
        if informative && !seen.contains(&w) {
            seen.push(w);
        }
    }
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use memforest_tree::refresh::ChildSummary;
    use memforest_tree::{TimeRange, TreeKind};

    fn request(texts: &[&str]) -> SummaryRequest {
        let t = |s| TimeRange::new(s, s).unwrap();
        SummaryRequest {
            kind: TreeKind::Entity,
            label: "user".into(),
            level: 1,
            time: TimeRange::new(1_677_628_800_000_000, 1_680_307_200_000_000).unwrap(),
            children: texts
                .iter()
                .enumerate()
                .map(|(i, s)| ChildSummary {
                    time: t(i as i64),
                    text: (*s).to_owned(),
                })
                .collect(),
        }
    }

    #[test]
    fn header_budget_informative_first_time_order() {
        let s = ExtractiveSummarizer { word_budget: 13 };
        let out = s
            .summarize(&request(&[
                "[Jan 2023 - Jan 2023 | user] we chatted about nothing much at all today",
                "Alice moved to Paris in 2021.",
                "Alice moved to Berlin in March 2023.",
            ]))
            .unwrap();
        assert_eq!(
            out.text,
            "[Mar 2023 - Apr 2023 | user] Alice moved to Paris in 2021. Alice moved to Berlin in March 2023."
        );
        assert!(out.usage.prompt_tokens > 0 && !out.usage.reported);
        assert_eq!(
            s.summarize(&request(&["a b c"])).unwrap().text,
            "[Mar 2023 - Apr 2023 | user] a b c"
        );
    }

    #[test]
    fn chinese_sentences_spend_the_budget_by_characters() {
        let s = ExtractiveSummarizer { word_budget: 10 };
        let out = s
            .summarize(&request(&[
                "我昨天去了北京。我们吃了烤鸭。",
                "我下个月要去上海出差。",
            ]))
            .unwrap();
        // 3 + 3 + 5 words: the newest two fit, the third would pass 10 (counted by
        // whitespace, all three would).
        assert_eq!(
            out.text,
            "[Mar 2023 - Apr 2023 | user] 我们吃了烤鸭。 我下个月要去上海出差。"
        );
    }
}
