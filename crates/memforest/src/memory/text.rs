//! Tokenizer shared by extraction, scene routing and the read path: lower-cased words,
//! an English stop-word list, Snowball (Porter 2) stemming via `rust-stemmers`, and
//! sentence splitting.

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// English stop words (function words, auxiliaries, pronouns and conversational filler).
pub const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "oh",
    "ok",
    "okay",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "really",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "well",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yeah",
    "yes",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "thanks",
    "thank",
    "hey",
    "hi",
    "hello",
    "sure",
    "great",
    "good",
    "know",
    "think",
    "want",
    "make",
    "made",
    "going",
    "way",
    "thing",
    "things",
    "lot",
    "im",
    "ive",
    "dont",
    "youre",
    "thats",
    "its",
    "can't",
    "don't",
    "i'm",
    "it's",
];

/// True for a stop word (`word` lower-case).
#[must_use]
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// The words of `text`: maximal runs of alphanumeric characters (apostrophes inside a word
/// kept), lower-cased.
#[must_use]
pub fn tokenize(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The Snowball English stem of a lower-case word.
#[must_use]
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The distinct stemmed keywords of `text`, in order of first appearance: words of at least
/// 3 characters that are not stop words and not pure numbers.
#[must_use]
pub fn keywords(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in tokenize(text) {
        if w.chars().count() < 3 || is_stop_word(&w) || w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let s = stem(&w);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Splits `text` into sentences at `.`, `!`, `?` or a newline followed by whitespace or the
/// end; trims each, drops empty ones.
#[must_use]
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let boundary = match c {
            '\n' => true,
            '.' if abbreviation(text.get(start..i).unwrap_or_default()) => false,
            '.' | '!' | '?' => chars.peek().is_none_or(|(_, n)| n.is_whitespace()),
            _ => false,
        };
        if boundary {
            let end = i + c.len_utf8();
            if let Some(s) = text.get(start..end) {
                push_trimmed(&mut out, s);
            }
            start = end;
        }
    }
    if let Some(s) = text.get(start..) {
        push_trimmed(&mut out, s);
    }
    out
}

/// Words that end with a period without ending a sentence ("Dr. Ortiz", "e.g. this"):
/// titles before a name and Latin abbreviations, not those that often end a sentence
/// ("5 p.m.", "Acme Inc.", "in the U.S.").
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "mt", "vs", "e.g", "i.e", "approx", "fig", "dept",
];

/// Whether the last word of `before` (the text before a period) is an abbreviation. A
/// single capital letter is not one: "Vitamin D." and "Plan B." end sentences far more
/// often than initials occur, so "J. R. R. Tolkien" is split.
fn abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .next()
        .unwrap_or_default();
    ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s);
    }
}

/// Normalized text for exact-duplicate detection: lower-cased words joined by one space
/// (punctuation and spacing differences vanish).
#[must_use]
pub fn normalize(text: &str) -> String {
    tokenize(text).join(" ")
}

/// Jaccard similarity |a ∩ b| / |a ∪ b| of two keyword sets (0 when both are empty).
#[must_use]
pub fn jaccard(a: &[String], b: &[String]) -> f32 {
    let inter = a.iter().filter(|w| b.contains(w)).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f32 / union as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_stem_and_drop_stop_words() {
        assert_eq!(
            keywords("I was running to the Running club, the runners ran!"),
            vec!["run", "club", "runner", "ran"]
        );
    }

    #[test]
    fn sentences_keep_abbreviations_and_initials() {
        assert_eq!(
            sentences("I told Dr. Ortiz about my cholesterol. He said e.g. oats help."),
            vec![
                "I told Dr. Ortiz about my cholesterol.",
                "He said e.g. oats help."
            ]
        );
        assert_eq!(
            sentences("I need more vitamin D. No. I mean yes."),
            vec!["I need more vitamin D.", "No.", "I mean yes."]
        );
    }

    #[test]
    fn sentences_split_on_terminators_not_decimals() {
        assert_eq!(
            sentences("It costs 3.50 dollars. Really?\nYes! ok"),
            vec!["It costs 3.50 dollars.", "Really?", "Yes!", "ok"]
        );
    }

    #[test]
    fn normalize_ignores_case_and_punctuation() {
        assert_eq!(normalize("Hello,  World!"), normalize("hello world"));
        assert!((jaccard(&["a".into(), "b".into()], &["b".into()]) - 0.5).abs() < 1e-6);
    }
}
