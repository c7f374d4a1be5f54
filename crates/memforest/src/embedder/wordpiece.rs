//! BERT's uncased text pipeline (Devlin et al. 2019, and the `BertNormalizer`,
//! `BertPreTokenizer` and `WordPiece` of the tokenizer the bundled model was trained with):
//! clean the text, put spaces around CJK ideographs, lowercase and strip accents, split on
//! whitespace and punctuation, then cut each word into the longest vocabulary pieces from
//! its start, continuation pieces prefixed `##`.
//!
//! Punctuation is every character that is neither alphanumeric nor whitespace (BERT uses
//! the Unicode `P*` categories plus ASCII symbols; the two differ only on symbols such as
//! `©`, which the vocabulary barely covers).

use std::collections::HashMap;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// Words longer than this (in characters) are one unknown token, as in BERT.
const MAX_WORD_CHARS: usize = 100;

/// A WordPiece vocabulary: token -> id.
#[derive(Debug, Default)]
pub struct WordPiece {
    ids: HashMap<String, u32>,
    unknown: Option<u32>,
}

/// True for the CJK ideograph blocks BERT surrounds with spaces.
fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// `text` cleaned, lowercased and accent-stripped, cut into words and punctuation marks.
fn pre_tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.nfd() {
        if c == '\0' || c == '\u{FFFD}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if is_combining_mark(c) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if is_cjk(c) || !c.is_alphanumeric() {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.extend(c.to_lowercase());
        }
    }
    flush(&mut word, &mut words);
    words
}

impl WordPiece {
    /// A vocabulary from its tokens, id = position; `[UNK]` is the unknown token.
    #[must_use]
    pub fn new(tokens: impl IntoIterator<Item = String>) -> Self {
        let ids: HashMap<String, u32> = tokens
            .into_iter()
            .enumerate()
            .filter_map(|(i, t)| u32::try_from(i).ok().map(|i| (t, i)))
            .collect();
        let unknown = ids.get("[UNK]").copied();
        Self { ids, unknown }
    }

    /// The token ids of `text`, in order (unknown words as `[UNK]`, when the vocabulary
    /// has it).
    #[must_use]
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for word in pre_tokenize(text) {
            if !self.pieces(&word, &mut out) {
                out.extend(self.unknown);
            }
        }
        out
    }

    /// Appends the pieces of `word`; false (nothing appended) when it cannot be cut.
    fn pieces(&self, word: &str, out: &mut Vec<u32>) -> bool {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > MAX_WORD_CHARS {
            return false;
        }
        let mut found = Vec::new();
        let mut start = 0;
        let mut key = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut piece = None;
            while end > start {
                let from = chars.get(start).map_or(word.len(), |c| c.0);
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                key.clear();
                if start > 0 {
                    key.push_str("##");
                }
                key.push_str(word.get(from..to).unwrap_or_default());
                if let Some(&id) = self.ids.get(&key) {
                    piece = Some(id);
                    break;
                }
                end -= 1;
            }
            let Some(id) = piece else {
                return false;
            };
            found.push(id);
            start = end;
        }
        out.extend(found);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        WordPiece::new(
            [
                "[UNK]", "the", "cat", "play", "##ing", "##s", ",", "!", "cafe", "你", "好",
            ]
            .map(String::from),
        )
    }

    #[test]
    fn words_are_cut_into_the_longest_pieces_from_the_start() {
        let v = vocab();
        assert_eq!(v.encode("The CAT, playing!"), [1, 2, 6, 3, 4, 7]);
        assert_eq!(v.encode("plays"), [3, 5]);
    }

    #[test]
    fn accents_are_stripped_and_cjk_is_split_per_character() {
        let v = vocab();
        assert_eq!(v.encode("Café"), [8]);
        assert_eq!(v.encode("你好"), [9, 10]);
    }

    #[test]
    fn words_that_cannot_be_cut_are_unknown() {
        let v = vocab();
        assert_eq!(v.encode("dog playing"), [0, 3, 4]);
        assert_eq!(v.encode(&"a".repeat(MAX_WORD_CHARS + 1)), [0]);
        assert!(WordPiece::new(["x".to_owned()]).encode("dog").is_empty());
    }

    #[test]
    fn control_characters_vanish() {
        assert_eq!(vocab().encode("\0the\u{7}\u{FFFD} cat"), [1, 2]);
    }
}
