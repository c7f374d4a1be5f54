//! [`HeuristicExtractor`]: the default, network-free extractor. One item per sentence of
//! at least three words or, in scripts written without spaces, [`MIN_CJK_CHARS`] CJK
//! characters; origin from the speaker's role; entities are proper names, quoted titles
//! (`"..."`, `《...》`, `「...」`) and numbers with units; topics are the sentence's first
//! three keywords; time is the first date or relative phrase in the sentence (English or
//! CJK, [`dates`]), resolved against the turn's time;
//! knowledge-update keys from [`statements::keys`] (the first person of a user-role turn is
//! its speaker, of an assistant turn no one). An assistant's acknowledgements ("Got it,
//! I'll remember.", "Rex sounds lovely.") are no items ([`acknowledgement`]).

use std::cell::LazyCell;
use std::collections::HashSet;

use crate::memory::extract::acknowledgement::is_acknowledgement;
use crate::memory::extract::{dates, statements};
use crate::memory::extract::{
    ExtractedItem, Extraction, ExtractionInput, Extractor, Origin, SemanticRole,
};
use crate::memory::model::{ModelError, Usage};
use crate::memory::session::Role;
use crate::memory::text::{is_cjk, is_stop_word, keywords, sentences};

/// The fewest Han, Kana or Hangul characters that make a sentence a fact when it has fewer
/// than three whitespace-separated words: a Chinese or Japanese word is one to three
/// characters, so four is a short clause (`我喜欢猫`), while acknowledgements (`好的`,
/// `谢谢你`) stay out, as "Thanks a lot" does in English.
pub const MIN_CJK_CHARS: usize = 4;

/// Quote pairs whose text is an entity (a title, a name): an opening mark and the marks
/// that close it.
const QUOTES: &[(char, &[char])] = &[
    ('"', &['"', '\u{201d}']),
    ('\u{201c}', &['"', '\u{201d}']),
    ('《', &['》']),
    ('「', &['」']),
    ('『', &['』']),
];

/// Words that make a number an amount ("3 km", "$20" is handled separately).
const UNITS: &[&str] = &[
    "km",
    "kilometers",
    "kilometres",
    "miles",
    "mile",
    "m",
    "meters",
    "kg",
    "kilograms",
    "lbs",
    "pounds",
    "g",
    "grams",
    "dollars",
    "dollar",
    "usd",
    "euros",
    "eur",
    "percent",
    "%",
    "years",
    "year",
    "months",
    "month",
    "weeks",
    "week",
    "days",
    "day",
    "hours",
    "hour",
    "minutes",
    "minute",
    "hrs",
    "mins",
    "times",
    "people",
    "kids",
    "children",
    "books",
    "cups",
    "pages",
    "steps",
    "calories",
    "liters",
    "litres",
    "gb",
    "mb",
    "mph",
    "feet",
    "ft",
    "inches",
    "cm",
    "mm",
];

/// The default extractor: deterministic and free of network calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeuristicExtractor;

impl Extractor for HeuristicExtractor {
    fn name(&self) -> &str {
        "heuristic"
    }

    fn is_local(&self) -> bool {
        true
    }

    fn extract(&self, input: &ExtractionInput) -> Result<Extraction, ModelError> {
        let mut items = Vec::new();
        let mut prompt = String::new();
        // Only a cell with an assistant's turn needs them (most cells have none).
        let user_keywords: LazyCell<HashSet<String>, _> = LazyCell::new(|| {
            input
                .turns
                .iter()
                .filter(|t| t.role == Role::User)
                .flat_map(|t| keywords(&t.text))
                .collect()
        });
        for turn in &input.turns {
            prompt.push_str(&turn.text);
            let speaker = if turn.speaker.is_empty() {
                role_name(turn.role)
            } else {
                turn.speaker.as_str()
            };
            let first_person = (turn.role == Role::User).then(|| speaker.to_lowercase());
            for sentence in sentences(&turn.text) {
                if !long_enough(sentence)
                    || (turn.role == Role::Assistant
                        && is_acknowledgement(sentence, &user_keywords))
                {
                    continue;
                }
                let mut item = item_for(sentence, turn.time);
                item.attribute_keys = statements::keys(sentence, first_person.as_deref());
                item.fact_text = format!("{speaker}: {sentence}");
                item.participants = vec![speaker.to_owned()];
                item.origin = Some(Origin::from_role(turn.role));
                item.source_turns = vec![turn.turn_id.clone()];
                items.push(item);
            }
        }
        let completion: usize = items.iter().map(|i| i.fact_text.len()).sum();
        let usage = Usage {
            completion_tokens: (completion as u64).div_ceil(4),
            ..Usage::estimated(&prompt, "")
        };
        Ok(Extraction { items, usage })
    }
}

/// Whether `sentence` is long enough to be a fact: three words, or [`MIN_CJK_CHARS`] CJK
/// characters.
fn long_enough(sentence: &str) -> bool {
    sentence.split_whitespace().nth(2).is_some()
        || sentence
            .chars()
            .filter(|c| is_cjk(*c))
            .nth(MIN_CJK_CHARS - 1)
            .is_some()
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

/// The item fields one sentence yields (text, participants and origin filled by the caller).
fn item_for(sentence: &str, reference: i64) -> ExtractedItem {
    let time = dates::find(sentence, reference).into_iter().next();
    ExtractedItem {
        semantic_role: Some(semantic_role(sentence)),
        entities: entities(sentence),
        topics: keywords(sentence).into_iter().take(3).collect(),
        time_text: time.as_ref().map(|t| t.text.clone()),
        time_start: time.as_ref().map(|t| t.start),
        time_end: time.as_ref().map(|t| t.end),
        ..ExtractedItem::default()
    }
}

/// A coarse semantic role from cue words.
fn semantic_role(sentence: &str) -> SemanticRole {
    let lower = format!(" {} ", sentence.to_lowercase());
    let has = |cues: &[&str]| cues.iter().any(|c| lower.contains(c));
    if has(&[
        " plan ",
        " planning ",
        " going to ",
        " will ",
        " next ",
        " intend ",
    ]) {
        SemanticRole::Plan
    } else if has(&[
        " love ",
        " like ",
        " prefer ",
        " hate ",
        " favorite ",
        " favourite ",
        " enjoy ",
    ]) {
        SemanticRole::Preference
    } else if has(&[
        " must ",
        " can't ",
        " cannot ",
        " allergic ",
        " never ",
        " not allowed ",
    ]) {
        SemanticRole::Constraint
    } else if has(&[" http", " book ", " titled ", " called ", " \""]) {
        SemanticRole::Reference
    } else if has(&[
        " went ",
        " did ",
        " visited ",
        " bought ",
        " met ",
        " started ",
        " finished ",
        "ed ",
    ]) {
        SemanticRole::Event
    } else if has(&[
        " is ", " am ", " are ", " have ", " has ", " live ", " work ",
    ]) {
        SemanticRole::State
    } else {
        SemanticRole::Detail
    }
}

/// Proper names (runs of capitalized words, the sentence's first word only when it is not
/// a stop word), quoted titles, and numbers with units or a currency sign.
fn entities(sentence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |e: String| {
        if !e.is_empty() && !out.contains(&e) {
            out.push(e);
        }
    };
    for title in quoted(sentence) {
        push(title);
    }
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut run: Vec<&str> = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '$' && c != '%');
        // "DGIA's" names DGIA.
        let w = ["'s", "\u{2019}s"]
            .iter()
            .find_map(|s| w.strip_suffix(s))
            .filter(|b| !b.is_empty())
            .unwrap_or(w);
        let capital = w.chars().next().is_some_and(char::is_uppercase)
            && w.chars()
                .skip(1)
                .all(|c| c.is_alphabetic() || c == '\'' || c == '-')
            && w != "I"
            && !(i == 0 && is_stop_word(&w.to_lowercase()));
        if capital {
            run.push(w);
        }
        let ends_run = !capital || raw.ends_with([',', '.', '!', '?', ';', ':']);
        if ends_run && !run.is_empty() {
            push(run.join(" "));
            run.clear();
        }
        if let Some(amount) = amount(w, words.get(i + 1).copied()) {
            push(amount);
        }
    }
    if !run.is_empty() {
        push(run.join(" "));
    }
    out
}

/// `w` (and the next word when it is a unit) when it is a number with a unit or currency.
fn amount(w: &str, next: Option<&str>) -> Option<String> {
    let digits = w.trim_start_matches('$').trim_end_matches('%');
    if digits.is_empty()
        || !digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    {
        return None;
    }
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if w.starts_with('$') || w.ends_with('%') {
        return Some(w.to_owned());
    }
    let unit = next?.trim_matches(|c: char| !c.is_alphanumeric() && c != '%');
    UNITS
        .contains(&unit.to_lowercase().as_str())
        .then(|| format!("{w} {unit}"))
}

/// Texts between the marks of a [`QUOTES`] pair, 1..=80 chars, in order.
fn quoted(sentence: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = sentence;
    while let Some((open, c)) = rest
        .char_indices()
        .find(|(_, c)| QUOTES.iter().any(|q| q.0 == *c))
    {
        let closers = QUOTES.iter().find(|q| q.0 == c).map_or(&[][..], |q| q.1);
        let after = rest.get(open + c.len_utf8()..).unwrap_or_default();
        let Some((close, end)) = after.char_indices().find(|(_, e)| closers.contains(e)) else {
            break;
        };
        let inner = after.get(..close).unwrap_or_default().trim();
        if (1..=80).contains(&inner.chars().count()) {
            out.push(inner.to_owned());
        }
        rest = after.get(close + end.len_utf8()..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::extract::CellTurn;
    use crate::memory::time::{date_start, to_date};
    use chrono::NaiveDate;

    fn extract(role: Role, text: &str, day: NaiveDate) -> Vec<ExtractedItem> {
        let input = ExtractionInput {
            session_id: "s".into(),
            session_start: 0,
            turns: vec![CellTurn {
                turn_id: "s#turn_0".into(),
                role,
                speaker: "Caroline".into(),
                text: text.into(),
                time: date_start(day).unwrap(),
            }],
        };
        HeuristicExtractor.extract(&input).unwrap().items
    }

    #[test]
    fn one_item_per_sentence_with_origin_entities_topics_and_time() {
        let day = NaiveDate::from_ymd_opt(2023, 5, 8).unwrap();
        let items = extract(
            Role::User,
            "I went to the LGBTQ support group with Melanie Smith yesterday. Ok. \
             We read \"Becoming Nicole\" and walked 5 km for $20.",
            day,
        );
        assert_eq!(items.len(), 2);
        let first = &items[0];
        assert_eq!(
            first.fact_text,
            "Caroline: I went to the LGBTQ support group with Melanie Smith yesterday."
        );
        assert_eq!(first.origin, Some(Origin::User));
        assert_eq!(first.semantic_role, Some(SemanticRole::Event));
        assert_eq!(first.entities, vec!["LGBTQ", "Melanie Smith"]);
        assert_eq!(first.topics, vec!["went", "lgbtq", "support"]);
        assert_eq!(first.time_text.as_deref(), Some("yesterday"));
        let start = to_date(first.time_start.unwrap()).unwrap();
        assert_eq!(start, NaiveDate::from_ymd_opt(2023, 5, 7).unwrap());
        assert_eq!(items[1].entities, vec!["Becoming Nicole", "5 km", "$20"]);
        assert_eq!(items[1].time_start, None);
        let items = extract(Role::User, "I told Dr. Ortiz about DGIA's report.", day);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].entities, vec!["Dr", "Ortiz", "DGIA"]);
    }

    #[test]
    fn chinese_sentences_titles_and_relative_dates() {
        let day = NaiveDate::from_ymd_opt(2023, 4, 28).unwrap();
        let items = extract(
            Role::User,
            "好的。我昨天带豆豆去了「爱宠之家」。科幻电影，如果你喜欢可以去看一下《流浪地球》！",
            day,
        );
        assert_eq!(items.len(), 2, "好的 is too short to be a fact");
        assert_eq!(
            items[0].fact_text,
            "Caroline: 我昨天带豆豆去了「爱宠之家」。"
        );
        assert_eq!(items[0].entities, vec!["爱宠之家"]);
        assert_eq!(items[0].time_text.as_deref(), Some("昨天"));
        let start = to_date(items[0].time_start.unwrap()).unwrap();
        assert_eq!(start, NaiveDate::from_ymd_opt(2023, 4, 27).unwrap());
        assert_eq!(items[1].entities, vec!["流浪地球"]);
        assert_eq!(items[1].topics, vec!["科幻", "幻电", "电影"]);
    }

    #[test]
    fn assistant_origin_and_explicit_dates() {
        let day = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
        let items = extract(
            Role::Assistant,
            "Your appointment is on March 3, 2023 at noon.",
            day,
        );
        assert_eq!(items[0].origin, Some(Origin::Assistant));
        let start = to_date(items[0].time_start.unwrap()).unwrap();
        assert_eq!(start, NaiveDate::from_ymd_opt(2023, 3, 3).unwrap());
        assert_eq!(items[0].time_text.as_deref(), Some("march 3 2023"));
    }
}
