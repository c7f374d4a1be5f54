//! Words and search tokens of a text: the one tokenizer of extraction, scene routing, the
//! postings, the summaries' term counts, the fusion and the flat baseline.
//!
//! The text is first width-folded ([`fold_width`]: full-width ASCII to ASCII). Word
//! boundaries are Unicode's default ones (UAX #29, "Unicode Text Segmentation", through
//! `unicode-segmentation`), so combining marks, vowel signs and joiners stay inside their
//! word (Devanagari vowel signs and viramas, Arabic diacritics). Inside a UAX #29 word, a
//! grapheme cluster with no alphanumeric character (`.` of `3.50`, `:`, `’`, `_`) splits
//! it, so spaced scripts keep the English rule "runs of alphanumerics and inner
//! apostrophes", except that UAX #29 keeps an apostrophe only between two letters or two
//! digits (`1970's` gives `1970`, `s`).
//!
//! Han, Kana and Hangul ([`is_cjk`]) are written without spaces between words: a maximal
//! run of them is one *word* (what [`words`] returns, the exact-duplicate key) and is
//! indexed as its overlapping character bigrams (`流浪地球` -> `流浪`, `浪地`, `地球`), a
//! run of one character as that unigram: Lucene's CJKAnalyzer (StandardTokenizer, then
//! CJKBigramFilter). A run ends at any other character, so a mixed-language turn yields
//! English words and CJK bigrams side by side.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;

use super::script::{fold_width, is_cjk};

/// One word of a width-folded text, a slice of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word<'a> {
    /// A word of a spaced script (no CJK character).
    Spaced(&'a str),
    /// A maximal run of CJK characters.
    Cjk(&'a str),
}

/// `text` width-folded (the full-width ASCII forms and the ideographic space replaced by
/// their ASCII equivalents); borrowed when nothing changes.
#[must_use]
pub fn fold(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(|c| fold_width(c) != c) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().map(fold_width).collect())
    }
}

/// The words of `text`, lower-cased, in order: spaced-script words and whole CJK runs
/// (punctuation and spacing dropped).
#[must_use]
pub fn words(text: &str) -> Vec<String> {
    let folded = fold(text);
    let mut out = Vec::new();
    each_word(&folded, |w| match w {
        Word::Spaced(s) => out.push(s.to_lowercase()),
        Word::Cjk(s) => out.push(s.to_owned()),
    });
    out
}

/// The search tokens of `text`, lower-cased, in order, with repeats: spaced-script words,
/// and each CJK run's overlapping bigrams (a one-character run as a unigram). Stop words
/// and stems are the index's business (`recall::bm25::word_term`).
#[must_use]
pub fn tokenize(text: &str) -> Vec<String> {
    let folded = fold(text);
    let mut out = Vec::new();
    each_token(&folded, |t| out.push(t.to_lowercase()));
    out
}

/// True when `token` (from [`tokenize`]) is a CJK bigram or unigram.
#[must_use]
pub fn is_cjk_token(token: &str) -> bool {
    token.starts_with(is_cjk)
}

/// Calls `f` with every token of the width-folded `text`, as a slice of it, in order.
fn each_token<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    each_word(text, |w| match w {
        Word::Spaced(s) => f(s),
        Word::Cjk(run) => bigrams(run, &mut f),
    });
}

/// Calls `f` with the overlapping character bigrams of `run`, or `run` itself when it is
/// one character.
fn bigrams<'a>(run: &'a str, f: &mut impl FnMut(&'a str)) {
    let bounds: Vec<usize> = run
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(run.len()))
        .collect();
    if bounds.len() <= 3 {
        f(run);
        return;
    }
    for w in bounds.windows(3) {
        if let (Some(&a), Some(&b)) = (w.first(), w.get(2)) {
            if let Some(pair) = run.get(a..b) {
                f(pair);
            }
        }
    }
}

/// Calls `f` with every word of the width-folded `text`, in order.
fn each_word<'a>(text: &'a str, mut f: impl FnMut(Word<'a>)) {
    if text.is_ascii() {
        ascii_words(text, &mut |w| f(Word::Spaced(w)));
    } else {
        unicode_words(text, f);
    }
}

/// [`unicode_words`] of an ASCII text, without the segmenter's tables: the runs of
/// alphanumerics and of the apostrophes UAX #29 keeps inside a word (between two letters,
/// WB6/WB7, or two digits, WB11/WB12).
fn ascii_words<'a>(text: &'a str, f: &mut impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let inside = |i: usize| {
        let at = |j: Option<usize>| j.and_then(|j| bytes.get(j)).copied().unwrap_or(b' ');
        match bytes.get(i) {
            Some(b) if b.is_ascii_alphanumeric() => true,
            Some(b'\'') => {
                let (before, after) = (at(i.checked_sub(1)), at(Some(i + 1)));
                (before.is_ascii_alphabetic() && after.is_ascii_alphabetic())
                    || (before.is_ascii_digit() && after.is_ascii_digit())
            }
            _ => false,
        }
    };
    let mut start: Option<usize> = None;
    for i in 0..=bytes.len() {
        match (inside(i), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if let Some(w) = text.get(s..i) {
                    f(w);
                }
                start = None;
            }
            _ => {}
        }
    }
}

/// Calls `f` with every word of the width-folded `text` (any script), in order: UAX #29
/// segments, cut into CJK runs and [`spaced_words`].
fn unicode_words<'a>(text: &'a str, mut f: impl FnMut(Word<'a>)) {
    // The CJK run being read: byte range in `text`.
    let mut run: Option<(usize, usize)> = None;
    for (at, segment) in text.split_word_bound_indices() {
        for (start, piece, cjk) in script_pieces(segment) {
            let start = at + start;
            if cjk {
                let end = start + piece.len();
                run = Some(run.map_or((start, end), |(a, _)| (a, end)));
                continue;
            }
            if let Some(s) = run.take().and_then(|(a, b)| text.get(a..b)) {
                f(Word::Cjk(s));
            }
            spaced_words(piece, &mut |w| f(Word::Spaced(w)));
        }
    }
    if let Some(s) = run.and_then(|(a, b)| text.get(a..b)) {
        f(Word::Cjk(s));
    }
}

/// The maximal pieces of `segment` that are all CJK or all not: `(byte offset, piece,
/// is CJK)`.
fn script_pieces(segment: &str) -> impl Iterator<Item = (usize, &str, bool)> {
    let mut rest = segment;
    let mut offset = 0;
    std::iter::from_fn(move || {
        let cjk = rest.chars().next().map(is_cjk)?;
        let len = rest
            .char_indices()
            .find(|(_, c)| is_cjk(*c) != cjk)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at_checked(len)?;
        let out = (offset, piece, cjk);
        offset += len;
        rest = tail;
        Some(out)
    })
}

/// Calls `f` with the words of `piece` (part of one UAX #29 segment, no CJK): the runs of
/// grapheme clusters holding an alphanumeric character or an apostrophe, apostrophes
/// trimmed, those with an alphanumeric character.
fn spaced_words<'a>(piece: &'a str, f: &mut impl FnMut(&'a str)) {
    let mut emit = |w: &'a str| {
        let w = w.trim_matches('\'');
        if w.chars().any(char::is_alphanumeric) {
            f(w);
        }
    };
    if piece.chars().all(|c| c.is_alphanumeric() || c == '\'') {
        emit(piece);
        return;
    }
    let mut start: Option<usize> = None;
    for (i, g) in piece.grapheme_indices(true) {
        let inside = g.starts_with('\'') || g.chars().any(char::is_alphanumeric);
        match (inside, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                emit(piece.get(s..i).unwrap_or_default());
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        emit(piece.get(s..).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spaced_scripts_keep_the_english_rule_and_their_marks() {
        assert_eq!(
            tokenize("It costs 3.50, e.g. in the U.S. Don't! don’t rock'n'roll '90s"),
            vec![
                "it",
                "costs",
                "3",
                "50",
                "e",
                "g",
                "in",
                "the",
                "u",
                "s",
                "don't",
                "don",
                "t",
                "rock'n'roll",
                "90s"
            ]
        );
        assert_eq!(
            tokenize("x''y a'1 1'000"),
            vec!["x", "y", "a", "1", "1'000"]
        );
        assert_eq!(tokenize("हिन्दी भाषा"), vec!["हिन्दी", "भाषा"]);
        assert_eq!(
            tokenize("Ｈｅｌｌｏ，ＷＯＲＬＤ１２"),
            vec!["hello", "world12"]
        );
    }

    #[test]
    fn cjk_runs_become_bigrams_and_mix_with_words() {
        assert_eq!(
            tokenize("科幻电影，可以看《流浪地球》"),
            vec!["科幻", "幻电", "电影", "可以", "以看", "流浪", "浪地", "地球"]
        );
        assert_eq!(
            tokenize("我买了iPhone手机和猫"),
            vec!["我买", "买了", "iphone", "手机", "机和", "和猫"]
        );
        assert_eq!(tokenize("猫 と 犬"), vec!["猫", "と", "犬"]);
        assert_eq!(
            tokenize("고양이를 좋아해요"),
            vec!["고양", "양이", "이를", "좋아", "아해", "해요"]
        );
        assert_eq!(tokenize("3월에"), vec!["3", "월에"]);
        assert_eq!(words("我喜欢《流浪地球》!"), vec!["我喜欢", "流浪地球"]);
    }

    proptest! {
        #[test]
        fn the_ascii_path_is_the_unicode_path(text in "[a-zA-Z0-9'._,:;!?\\- ]{0,40}|[ -~]{0,40}") {
            let mut fast = Vec::new();
            ascii_words(&text, &mut |w| fast.push(w));
            let mut slow = Vec::new();
            unicode_words(&text, |w| slow.push(w));
            let slow: Vec<&str> = slow
                .into_iter()
                .map(|w| match w {
                    Word::Spaced(s) | Word::Cjk(s) => s,
                })
                .collect();
            prop_assert_eq!(fast, slow);
        }

        #[test]
        fn every_token_is_a_slice_and_every_alphanumeric_is_covered(text in "\\PC{0,40}|[a-z中文。.’' ]{0,40}") {
            let folded = fold(&text);
            let base = folded.as_ptr() as usize;
            let mut covered = vec![false; folded.len()];
            each_token(&folded, |t| {
                let at = t.as_ptr() as usize - base;
                assert!(at + t.len() <= folded.len(), "{t:?} outside {folded:?}");
                assert!(!t.is_empty());
                for c in covered.iter_mut().skip(at).take(t.len()) {
                    *c = true;
                }
            });
            for (i, c) in folded.char_indices() {
                if c.is_alphanumeric() {
                    prop_assert!(covered[i], "{c:?} at {i} lost from {folded:?}");
                }
            }
            let _ = (tokenize(&text), words(&text));
        }
    }
}
