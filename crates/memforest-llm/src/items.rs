//! Validating the memory items a model returns into [`ExtractedItem`]s.
//!
//! The model's JSON is untrusted: every field is checked. An item without a usable
//! `fact_text` (or that is not an object) is dropped, with the reason recorded; a malformed
//! optional field is cleared (or clipped to its limit), with a note. Only a reply with no
//! item list, or whose items are all unusable, is an error.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_json::{Map, Value};

use super::json::{extract_json, Truncation};
use super::LlmError;
use memforest::memory::extract::{ExtractedItem, Origin, SemanticRole};
use memforest::memory::time::{date_start, day_span};

/// Most topics kept per item (paper: <= 3).
pub const MAX_TOPICS: usize = 3;
/// Most keys kept per key kind per item (paper: <= 2).
pub const MAX_KEYS: usize = 2;
/// Most participants kept per item: each name is a speaker field term of the memory's
/// postings (`memforest::recall::index::speaker_term`) and a name the speaker filter
/// matches.
pub const MAX_PARTICIPANTS: usize = 8;
/// Longest `fact_text` accepted, in bytes (a MemCell holds at most 8,000 chars).
pub const MAX_FACT_BYTES: usize = 8_000;
/// Longest list element (entity, topic, key, name) kept, in bytes.
pub const MAX_TERM_BYTES: usize = 200;

/// The outcome of validating one reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedItems {
    /// The usable items, in the model's order.
    pub items: Vec<ExtractedItem>,
    /// Why each dropped item was dropped (`item 3: fact_text is missing`).
    pub dropped: Vec<String>,
    /// Fields cleared or clipped in kept items, and a truncation notice.
    pub notes: Vec<String>,
    /// Set when the reply was cut off and only its complete items were kept.
    pub truncation: Option<Truncation>,
}

/// Parses the model's message `content` into items. `turn_ids` are the cell's turn ids
/// (`source_turns` naming any other id are ignored).
///
/// Accepted shapes: `{"items": [...]}`, a bare array of items, or a single item object.
///
/// # Errors
/// [`LlmError::Payload`] when no JSON can be recovered; [`LlmError::Unusable`] when there is
/// no item list or when every item is unusable.
pub fn parse_items(content: &str, turn_ids: &[String]) -> Result<ParsedItems, LlmError> {
    let payload = extract_json(content)?;
    let mut parsed = parse_item_list(&payload.value, turn_ids)?;
    if let Some(cut) = payload.truncated {
        parsed.truncation = Some(cut);
        parsed.notes.insert(
            0,
            format!(
                "reply cut off at byte {}: kept {} complete items",
                cut.at, cut.kept
            ),
        );
    }
    Ok(parsed)
}

/// Validates one item list already parsed from a reply: `{"items": [...]}`, a bare array
/// of items, or a single item object (as [`parse_items`], without the JSON recovery).
///
/// # Errors
/// [`LlmError::Unusable`] when there is no item list or when every item is unusable.
pub fn parse_item_list(value: &Value, turn_ids: &[String]) -> Result<ParsedItems, LlmError> {
    let mut parsed = ParsedItems::default();
    let list = match value {
        Value::Array(list) => list.as_slice(),
        Value::Object(map) => match map.get("items") {
            Some(Value::Array(list)) => list.as_slice(),
            Some(_) => return Err(LlmError::Unusable("`items` is not an array".into())),
            None if map.contains_key("fact_text") => std::slice::from_ref(value),
            None => return Err(LlmError::Unusable("no `items` array in the reply".into())),
        },
        _ => {
            return Err(LlmError::Unusable(
                "the reply's JSON is not an object or array".into(),
            ))
        }
    };
    for (index, raw) in list.iter().enumerate() {
        let mut notes = Notes {
            index,
            notes: &mut parsed.notes,
        };
        match parse_item(raw, turn_ids, &mut notes) {
            Ok(item) => parsed.items.push(item),
            Err(reason) => parsed.dropped.push(format!("item {index}: {reason}")),
        }
    }
    if parsed.items.is_empty() && !parsed.dropped.is_empty() {
        let first = parsed.dropped.first().cloned().unwrap_or_default();
        return Err(LlmError::Unusable(format!(
            "all {} items are unusable ({first})",
            parsed.dropped.len()
        )));
    }
    Ok(parsed)
}

/// Notes about one item.
struct Notes<'a> {
    index: usize,
    notes: &'a mut Vec<String>,
}

impl Notes<'_> {
    fn add(&mut self, field: &str, what: &str) {
        self.notes
            .push(format!("item {}: {field} {what}", self.index));
    }
}

fn parse_item(
    raw: &Value,
    turn_ids: &[String],
    notes: &mut Notes<'_>,
) -> Result<ExtractedItem, String> {
    let item = raw.as_object().ok_or("not an object")?;
    let fact_text = match item.get("fact_text") {
        Some(Value::String(text)) if !text.trim().is_empty() => text.trim().to_owned(),
        Some(Value::String(_)) => return Err("fact_text is empty".into()),
        None | Some(Value::Null) => return Err("fact_text is missing".into()),
        Some(_) => return Err("fact_text is not a string".into()),
    };
    if fact_text.len() > MAX_FACT_BYTES {
        return Err(format!("fact_text is longer than {MAX_FACT_BYTES} bytes"));
    }
    let (time_start, time_end) = time_range(item, notes);
    let mut source_turns = strings(item, "source_turns", usize::MAX, notes);
    let before = source_turns.len();
    source_turns.retain(|id| turn_ids.contains(id));
    if source_turns.len() < before {
        notes.add(
            "source_turns",
            "named turns outside the cell; they were ignored",
        );
    }
    Ok(ExtractedItem {
        fact_text,
        participants: strings(item, "participants", MAX_PARTICIPANTS, notes),
        origin: choice(item, "origin", notes, |s| match s {
            "user" => Some(Origin::User),
            "assistant" => Some(Origin::Assistant),
            "mixed" => Some(Origin::Mixed),
            "unknown" => Some(Origin::Unknown),
            _ => None,
        }),
        semantic_role: choice(item, "semantic_role", notes, |s| match s {
            "event" => Some(SemanticRole::Event),
            "state" => Some(SemanticRole::State),
            "preference" => Some(SemanticRole::Preference),
            "constraint" => Some(SemanticRole::Constraint),
            "plan" => Some(SemanticRole::Plan),
            "detail" => Some(SemanticRole::Detail),
            "reference" => Some(SemanticRole::Reference),
            _ => None,
        }),
        entities: strings(item, "entities", usize::MAX, notes),
        topics: strings(item, "topics", MAX_TOPICS, notes),
        time_text: choice(item, "time_text", notes, |s| Some(s.to_owned()))
            .filter(|s| !s.is_empty()),
        time_start,
        time_end,
        attribute_keys: strings(item, "attribute_keys", MAX_KEYS, notes),
        domain_keys: strings(item, "domain_keys", MAX_KEYS, notes),
        collection_keys: strings(item, "collection_keys", MAX_KEYS, notes),
        source_turns,
    })
}

/// A list of distinct non-empty strings (a lone string counts as a list of one), at most
/// `max` of them; anything else is noted and skipped.
fn strings(
    item: &Map<String, Value>,
    field: &str,
    max: usize,
    notes: &mut Notes<'_>,
) -> Vec<String> {
    let values: &[Value] = match item.get(field) {
        None | Some(Value::Null) => &[],
        Some(Value::Array(list)) => list,
        Some(one @ Value::String(_)) => std::slice::from_ref(one),
        Some(_) => {
            notes.add(field, "is not a list of strings; ignored");
            return Vec::new();
        }
    };
    let mut out: Vec<String> = Vec::new();
    for value in values {
        match value.as_str().map(str::trim) {
            Some("") => {}
            Some(s) if s.len() > MAX_TERM_BYTES => {
                notes.add(field, "has an over-long element; dropped")
            }
            Some(s) if !out.iter().any(|o| o.eq_ignore_ascii_case(s)) => out.push(s.to_owned()),
            Some(_) => {}
            None => notes.add(field, "has a non-string element; dropped"),
        }
    }
    if out.len() > max {
        notes.add(
            field,
            &format!("has {} entries; kept the first {max}", out.len()),
        );
        out.truncate(max);
    }
    out
}

/// A string field mapped through `pick` (given the trimmed, lower-cased value for enums);
/// unknown values are noted and become `None`.
fn choice<T>(
    item: &Map<String, Value>,
    field: &str,
    notes: &mut Notes<'_>,
    pick: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    match item.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            let trimmed = s.trim();
            let picked = pick(trimmed).or_else(|| pick(&trimmed.to_ascii_lowercase()));
            if picked.is_none() {
                notes.add(
                    field,
                    &format!("has the unknown value {trimmed:?}; ignored"),
                );
            }
            picked
        }
        Some(_) => {
            notes.add(field, "is not a string; ignored");
            None
        }
    }
}

/// `time_start` / `time_end` as microseconds: each ISO value covers its unit (a date its
/// day, `YYYY-MM` its month, `YYYY` its year, a date-time its instant); a missing end takes
/// the end of the start's unit and vice versa. A reversed range is dropped.
fn time_range(item: &Map<String, Value>, notes: &mut Notes<'_>) -> (Option<i64>, Option<i64>) {
    let start = time_field(item, "time_start", notes);
    let end = time_field(item, "time_end", notes);
    match (start, end) {
        (Some(s), Some(e)) if s.0 > e.1 => {
            notes.add("time_end", "is before time_start; both ignored");
            (None, None)
        }
        (Some(s), Some(e)) => (Some(s.0), Some(e.1)),
        (Some(s), None) => (Some(s.0), Some(s.1)),
        (None, Some(e)) => (Some(e.0), Some(e.1)),
        (None, None) => (None, None),
    }
}

fn time_field(item: &Map<String, Value>, field: &str, notes: &mut Notes<'_>) -> Option<(i64, i64)> {
    match item.get(field) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            let span = iso_span(s.trim());
            if span.is_none() {
                notes.add(field, &format!("{s:?} is not an ISO date; ignored"));
            }
            span
        }
        Some(_) => {
            notes.add(field, "is not an ISO date string; ignored");
            None
        }
    }
}

/// The inclusive microsecond span an ISO date / date-time / month / year denotes (UTC when
/// no offset is given).
pub fn iso_span(text: &str) -> Option<(i64, i64)> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        let micros = at.timestamp_micros();
        return Some((micros, micros));
    }
    for format in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M"] {
        if let Ok(at) = NaiveDateTime::parse_from_str(text, format) {
            let micros = at.and_utc().timestamp_micros();
            return Some((micros, micros));
        }
    }
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return day_span(day, day);
    }
    let (first, next) = match text.split_once('-') {
        Some((year, month)) if year.len() == 4 && month.len() == 2 => {
            let (year, month) = (year.parse().ok()?, month.parse().ok()?);
            let first = NaiveDate::from_ymd_opt(year, month, 1)?;
            (first, first.checked_add_months(chrono::Months::new(1))?)
        }
        None if text.len() == 4 => {
            let year = text.parse().ok()?;
            (
                NaiveDate::from_ymd_opt(year, 1, 1)?,
                NaiveDate::from_ymd_opt(year.checked_add(1)?, 1, 1)?,
            )
        }
        _ => return None,
    };
    Some((date_start(first)?, date_start(next)?.checked_sub(1)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000_000;
    const MAY_7_2023: i64 = 1_683_417_600_000_000;

    fn turns() -> Vec<String> {
        vec!["s1#turn_0".into(), "s1#turn_1".into()]
    }

    #[test]
    fn full_item_is_mapped() {
        let reply = r#"{"items": [{"fact_text": " Alice adopted a cat named Miso on 2023-05-07. ",
            "participants": ["Alice"], "origin": "User", "semantic_role": "event",
            "entities": ["Miso", "Miso", ""], "topics": "pets", "time_text": "yesterday",
            "time_start": "2023-05-07", "attribute_keys": ["alice/cat.name"], "domain_keys": ["pets"],
            "collection_keys": [], "source_turns": ["s1#turn_1", "s9#turn_4"]}]}"#;
        let parsed = parse_items(reply, &turns()).unwrap();
        assert!(parsed.dropped.is_empty());
        assert_eq!(
            parsed.notes,
            vec!["item 0: source_turns named turns outside the cell; they were ignored"]
        );
        let item = &parsed.items[0];
        assert_eq!(
            item.fact_text,
            "Alice adopted a cat named Miso on 2023-05-07."
        );
        assert_eq!(item.origin, Some(Origin::User));
        assert_eq!(item.semantic_role, Some(SemanticRole::Event));
        assert_eq!(item.entities, vec!["Miso"]);
        assert_eq!(item.topics, vec!["pets"]);
        assert_eq!(item.time_text.as_deref(), Some("yesterday"));
        assert_eq!(
            (item.time_start, item.time_end),
            (Some(MAY_7_2023), Some(MAY_7_2023 + DAY - 1))
        );
        assert_eq!(item.source_turns, vec!["s1#turn_1"]);
        // the key the default extractor writes for "my cat is named Miso": one mechanism
        assert_eq!(item.attribute_keys, vec!["alice/cat.name"]);
    }

    #[test]
    fn bad_items_are_dropped_and_bad_fields_cleared() {
        let reply = r#"[{"fact_text": ""}, 7, {"topics": ["a"]},
            {"fact_text": "Bob runs.", "topics": ["a","b","c","d"], "origin": "robot",
             "participants": ["p1","p2","p3","p4","p5","p6","p7","p8","p9","p10"],
             "domain_keys": {"x": 1}, "entities": ["ok", 5], "time_start": "2023-06-01",
             "time_end": "2023-05-01", "semantic_role": 3}]"#;
        let parsed = parse_items(reply, &turns()).unwrap();
        assert_eq!(
            parsed.dropped,
            vec![
                "item 0: fact_text is empty",
                "item 1: not an object",
                "item 2: fact_text is missing",
            ]
        );
        let item = &parsed.items[0];
        assert_eq!(item.topics, vec!["a", "b", "c"]);
        assert_eq!(item.participants.len(), MAX_PARTICIPANTS);
        assert_eq!(item.participants.last().map(String::as_str), Some("p8"));
        assert_eq!((item.origin, item.semantic_role), (None, None));
        assert!(item.domain_keys.is_empty());
        assert_eq!(item.entities, vec!["ok"]);
        assert_eq!((item.time_start, item.time_end), (None, None));
        assert_eq!(parsed.notes.len(), 7, "{:?}", parsed.notes);
    }

    #[test]
    fn unusable_replies_are_errors() {
        assert!(matches!(
            parse_items("I cannot help", &turns()),
            Err(LlmError::Payload(_))
        ));
        assert!(matches!(
            parse_items(r#"{"facts": []}"#, &turns()),
            Err(LlmError::Unusable(_))
        ));
        assert!(matches!(
            parse_items(r#"{"items": [1, {"x": 2}]}"#, &turns()),
            Err(LlmError::Unusable(_))
        ));
        assert!(parse_items(r#"{"items": []}"#, &turns())
            .unwrap()
            .items
            .is_empty());
        let single = parse_items(r#"{"fact_text": "One fact."}"#, &turns()).unwrap();
        assert_eq!(single.items.len(), 1);
    }

    #[test]
    fn truncated_reply_keeps_complete_items() {
        let reply = "```json\n{\"items\": [{\"fact_text\": \"A.\"}, {\"fact_text\": \"B.\"}, {\"fact_text\": \"C";
        let parsed = parse_items(reply, &turns()).unwrap();
        assert_eq!(
            parsed
                .items
                .iter()
                .map(|i| i.fact_text.as_str())
                .collect::<Vec<_>>(),
            ["A.", "B."]
        );
        assert_eq!(parsed.truncation.map(|t| t.kept), Some(2));
        assert!(parsed.notes[0].starts_with("reply cut off at byte"));
    }

    #[test]
    fn iso_spans() {
        assert_eq!(
            iso_span("2023-05-07"),
            Some((MAY_7_2023, MAY_7_2023 + DAY - 1))
        );
        assert_eq!(
            iso_span("2023-05-07T00:00:00Z"),
            Some((MAY_7_2023, MAY_7_2023))
        );
        assert_eq!(
            iso_span("2023-05-07 00:00:00"),
            Some((MAY_7_2023, MAY_7_2023))
        );
        let may = iso_span("2023-05").unwrap();
        assert_eq!(may.1 - may.0 + 1, 31 * DAY);
        let year = iso_span("2024").unwrap();
        assert_eq!(year.1 - year.0 + 1, 366 * DAY);
        for bad in [
            "",
            "May 2023",
            "2023-13",
            "2023-02-30",
            "99999-01-01",
            "20x3",
            "-202",
        ] {
            assert_eq!(iso_span(bad), None, "{bad}");
        }
    }
}
