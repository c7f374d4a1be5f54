//! Text analysis shared by extraction, scene routing and the read path: words and search
//! tokens ([`words`], [`tokenize`]: UAX #29 words, CJK bigrams), sentence splitting
//! ([`sentences`]), an English stop-word list and Snowball (Porter 2) stemming via
//! `rust-stemmers` for the words of spaced scripts.

mod script;
mod sentences;
mod words;

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

pub use script::is_cjk;
pub use sentences::sentences;
pub use words::{fold, is_cjk_token, tokenize, words};

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

/// The Snowball English stem of a lower-case word.
#[must_use]
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The distinct keywords of `text`, in order of first appearance: the stems of the words of
/// at least 3 characters that are not stop words and not pure numbers, and the CJK bigrams.
#[must_use]
pub fn keywords(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in tokenize(text) {
        let s = if is_cjk_token(&w) {
            if w.chars().count() < 2 {
                continue;
            }
            w
        } else if w.chars().count() < 3 || is_stop_word(&w) || w.chars().all(|c| c.is_ascii_digit())
        {
            continue;
        } else {
            stem(&w)
        };
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Normalized text for exact-duplicate detection: the lower-cased [`words`] joined by one
/// space (punctuation and spacing differences vanish; a CJK run stays whole).
#[must_use]
pub fn normalize(text: &str) -> String {
    words(text).join(" ")
}

/// The length of `text` in words, for word budgets: its whitespace-separated pieces, a
/// piece holding Han, Kana or Hangul characters counting one word per two of them (rounded
/// up), as those scripts put no space between words of one to three characters.
#[must_use]
pub fn word_count(text: &str) -> usize {
    if text.is_ascii() {
        return text.split_whitespace().count();
    }
    text.split_whitespace()
        .map(|piece| match piece.chars().filter(|c| is_cjk(*c)).count() {
            0 => 1,
            cjk => cjk.div_ceil(2),
        })
        .sum()
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
    fn cjk_text_counts_one_word_per_two_characters() {
        assert_eq!(word_count("I told Dr. Ortiz  about it."), 6);
        assert_eq!(word_count("我看了《流浪地球》。"), 4);
        assert_eq!(word_count("고양이를 좋아해요"), 4);
    }

    #[test]
    fn normalize_ignores_case_and_punctuation() {
        assert_eq!(normalize("Hello,  World!"), normalize("hello world"));
        assert!((jaccard(&["a".into(), "b".into()], &["b".into()]) - 0.5).abs() < 1e-6);
    }
}
