//! [`OpenAiExtractor`]: the `Extractor` backed by an OpenAI-compatible chat model.

use std::collections::VecDeque;

use parking_lot::Mutex;

use super::batch::{excerpt_id, parse_batch};
use super::items::{parse_items, ParsedItems, MAX_KEYS, MAX_TOPICS};
use super::{ChatMessage, LlmClient, LlmConfig, LlmError};
use memforest::memory::extract::{BatchExtraction, Extraction, ExtractionInput, Extractor};
use memforest::memory::model::ModelError;
use memforest::memory::session::Role;
use memforest::memory::time::to_datetime;

/// Diagnostics kept from recent calls (dropped items, cleared fields, truncations).
const MAX_RECENT_NOTES: usize = 256;

/// Most MemCells one batched call extracts (`Extractor::max_batch`).
pub const MAX_BATCH: usize = 16;

/// Extracts memory items from a MemCell with one chat call (paper, "Extraction"), or from
/// up to [`MAX_BATCH`] cells with one call (`Extractor::extract_batch`: each cell an
/// excerpt named `E1`, `E2`, ..., the reply `{"excerpts": [{"excerpt": "E1", "items":
/// [...]}, ...]}`, validated by [`super::batch::parse_batch`]).
///
/// The prompt asks for `{"items": [...]}` with the paper's item fields; the reply is
/// recovered with [`super::json::extract_json`] (code fences, prose, a cut-off item list)
/// and validated by [`parse_items`]. Dropped items and repaired fields do not fail the call:
/// they are counted and kept in a bounded log ([`OpenAiExtractor::recent_notes`]). A reply
/// with nothing usable, and every transport / HTTP failure, is a [`ModelError`], so the
/// cell stays pending and is retried.
#[derive(Debug)]
pub struct OpenAiExtractor {
    client: LlmClient,
    name: String,
    notes: Mutex<VecDeque<String>>,
}

impl OpenAiExtractor {
    /// An extractor using `config` (see [`LlmConfig`]; temperature 0 keeps replays close to
    /// deterministic, and JSON mode is recommended).
    ///
    /// # Errors
    /// As [`LlmClient::new`].
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let name = format!("openai:{}", config.model);
        Ok(Self {
            client: LlmClient::new(config)?,
            name,
            notes: Mutex::new(VecDeque::new()),
        })
    }

    /// The most recent diagnostics (oldest first, at most 256): dropped items with their
    /// reason, cleared or clipped fields, and truncated replies, each prefixed with the
    /// session id.
    pub fn recent_notes(&self) -> Vec<String> {
        self.notes.lock().iter().cloned().collect()
    }

    /// The chat messages [`Extractor::extract`] sends for `input`: the instructions
    /// (system), then the cell (user): its session id and start, and each turn as
    /// `[turn id] time role (speaker): text`.
    #[must_use]
    pub fn messages(input: &ExtractionInput) -> [ChatMessage; 2] {
        [
            ChatMessage::system(system_prompt()),
            ChatMessage::user(cell_prompt(input)),
        ]
    }

    /// The chat messages [`Extractor::extract_batch`] sends for `inputs`: the batch
    /// instructions, then each cell as [`Self::messages`] writes it after an `Excerpt
    /// <id>` line.
    #[must_use]
    pub fn batch_messages(inputs: &[ExtractionInput]) -> [ChatMessage; 2] {
        [
            ChatMessage::system(batch_system_prompt()),
            ChatMessage::user(batch_prompt(inputs)),
        ]
    }

    /// Keeps the diagnostics of one validated item list.
    fn record_parsed(&self, session: &str, parsed: &mut ParsedItems) {
        let dropped = parsed.dropped.drain(..).map(|d| format!("dropped {d}"));
        let notes = std::mem::take(&mut parsed.notes);
        self.record(session, dropped.chain(notes));
    }

    fn record(&self, session: &str, lines: impl IntoIterator<Item = String>) {
        let mut notes = self.notes.lock();
        for line in lines {
            if notes.len() == MAX_RECENT_NOTES {
                notes.pop_front();
            }
            notes.push_back(format!("{session}: {line}"));
        }
    }
}

impl Extractor for OpenAiExtractor {
    fn name(&self) -> &str {
        &self.name
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let reply = self.client.chat(&Self::messages(input))?;
        let turn_ids: Vec<String> = input.turns.iter().map(|t| t.turn_id.clone()).collect();
        let mut parsed = match parse_items(&reply.content, &turn_ids) {
            Ok(parsed) => parsed,
            Err(e) => {
                self.record(&input.session_id, [format!("reply unusable: {e}")]);
                return Err(e.into());
            }
        };
        self.record_parsed(&input.session_id, &mut parsed);
        Ok(Extraction {
            items: parsed.items,
            usage: reply.usage,
        })
    }

    fn max_batch(&self) -> usize {
        MAX_BATCH
    }

    fn extract_batch(&self, inputs: &[ExtractionInput]) -> Result<BatchExtraction, ModelError> {
        let reply = self.client.chat(&Self::batch_messages(inputs))?;
        let turn_ids: Vec<Vec<String>> = inputs
            .iter()
            .map(|i| i.turns.iter().map(|t| t.turn_id.clone()).collect())
            .collect();
        let first = inputs.first().map_or("", |i| i.session_id.as_str());
        let parsed = match parse_batch(&reply.content, &turn_ids) {
            Ok(parsed) => parsed,
            Err(e) => {
                self.record(first, [format!("batched reply unusable: {e}")]);
                return Err(e.into());
            }
        };
        self.record(first, parsed.notes);
        let cells = parsed
            .excerpts
            .into_iter()
            .zip(inputs)
            .map(|(excerpt, input)| match excerpt {
                Ok(mut items) => {
                    self.record_parsed(&input.session_id, &mut items);
                    Ok(items.items)
                }
                Err(e) => {
                    self.record(&input.session_id, [format!("excerpt unusable: {e}")]);
                    Err(e.into())
                }
            })
            .collect();
        Ok(BatchExtraction {
            cells,
            usage: reply.usage,
        })
    }
}

/// The instructions for one cell: the paper's item fields and rules.
fn system_prompt() -> String {
    format!(
        r#"You extract long-term memory items from an excerpt of a conversation between a user and an assistant.
Return only a JSON object: {{"items": [ ... ]}}. {}
If there is nothing to remember, return {{"items": []}}."#,
        item_rules()
    )
}

/// The instructions for several cells, each an excerpt with its id.
fn batch_system_prompt() -> String {
    format!(
        r#"You extract long-term memory items from several excerpts of conversations between a user and an assistant. Each excerpt starts with a line "Excerpt <id>" and is read on its own.
Return only a JSON object with one entry per excerpt, in order: {{"excerpts": [{{"excerpt": "<id>", "items": [ ... ]}}, ...]}}. {}
If an excerpt has nothing to remember, give it "items": []."#,
        item_rules()
    )
}

/// The item fields and the rules for choosing items, shared by both prompts.
fn item_rules() -> String {
    format!(
        r#"Each item is an object with these fields:
- "fact_text": one self-contained statement in the third person that names who it is about (the speaker's name, or "The user" / "The assistant"), with absolute dates and amounts written in; resolve relative times ("yesterday", "last week") against the turn dates.
- "participants": names of the people involved.
- "origin": "user" if the user stated it, "assistant" if the assistant did, "mixed" for both, else "unknown".
- "semantic_role": one of "event", "state", "preference", "constraint", "plan", "detail", "reference".
- "entities": proper names, titles, and amounts with units mentioned.
- "topics": at most {MAX_TOPICS} short topic keywords.
- "time_text": the time expression as written in the conversation, or null.
- "time_start", "time_end": the ISO dates (YYYY-MM-DD) the fact is about, or null.
- "attribute_keys": at most {MAX_KEYS}, for a statement that sets what is true now about someone: "subject/attribute", the subject in lower case (the speaker's name, "user" for a user without a name, another person's first name, or a relation such as "sister") and the attribute one of residence, job, employer, school, major, <pet or relation>.name (e.g. "dog.name", "sister.name"), possession.<thing>, favorite.<thing>, likes.<thing>, allergy.<thing>, diet, plan.<event>, count.<thing>, uses.<thing>; e.g. "alice/residence" for "Alice moved to Berlin". A newer item with the same key replaces the older one, so key negations and changes ("no longer", "switched from X to Y") the same way, and do not key past habits ("used to").
- "domain_keys", "collection_keys": at most {MAX_KEYS} each, e.g. "health", "books read".
- "source_turns": the ids of the turns the item comes from.
Keep only information worth remembering about the people, their lives, preferences, plans and the facts they share. Do not invent anything."#
    )
}

/// The cell: session id and start, then each turn with its id, time, role and speaker.
fn cell_prompt(input: &ExtractionInput) -> String {
    let mut prompt = format!(
        "Session {} (started {})\nTurns:\n",
        input.session_id,
        iso(input.session_start)
    );
    for turn in &input.turns {
        let role = match turn.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        };
        let speaker = if turn.speaker.is_empty() {
            String::new()
        } else {
            format!(" ({})", turn.speaker)
        };
        prompt.push_str(&format!(
            "[{}] {} {role}{speaker}: {}\n",
            turn.turn_id,
            iso(turn.time),
            turn.text
        ));
    }
    prompt
}

/// The cells of a batched call, each as [`cell_prompt`] writes it after an `Excerpt <id>`
/// line ([`excerpt_id`]).
fn batch_prompt(inputs: &[ExtractionInput]) -> String {
    let mut prompt = String::new();
    for (i, input) in inputs.iter().enumerate() {
        prompt.push_str(&format!("Excerpt {}\n", excerpt_id(i)));
        prompt.push_str(&cell_prompt(input));
        prompt.push('\n');
    }
    prompt
}

/// `YYYY-MM-DD HH:MM UTC (Weekday)`, or the raw number outside chrono's range.
fn iso(micros: i64) -> String {
    to_datetime(micros).map_or_else(
        || format!("@{micros}us"),
        |t| t.format("%Y-%m-%d %H:%M UTC (%A)").to_string(),
    )
}
