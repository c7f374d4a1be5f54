//! Sentence splitting: the heuristic extractor's unit (one fact per sentence) and the
//! extractive summarizer's.
//!
//! Spaced scripts end a sentence at `.`, `!` or `?` followed by whitespace, the end, or a
//! CJK character (a period after a known abbreviation excepted). CJK text, which puts no
//! space after its punctuation, ends one at the ideographic full stop `。` (and half-width
//! `｡`), the full-width `！`, `？`, `；`, `．`, and at an ellipsis (`…`, `⋯`) that follows a
//! CJK character; the closing quotes and brackets and the repeated marks that follow
//! (`？！`, `……`, `。」`) stay with the sentence they close. A newline always ends one.

use super::script::is_cjk;

/// Marks that end a sentence of CJK text whatever follows them.
const CJK_TERMINATORS: &[char] = &['。', '｡', '！', '？', '；', '．'];

/// Ellipses: they end a sentence when they follow a CJK character.
const ELLIPSES: &[char] = &['…', '⋯'];

/// Closing quotes and brackets kept with the CJK sentence they follow.
const CLOSERS: &[char] = &[
    '」', '』', '》', '〉', '）', '】', '〕', '”', '’', '"', '\'', ')',
];

/// Words that end with a period without ending a sentence ("Dr. Ortiz", "e.g. this"):
/// titles before a name and Latin abbreviations, not those that often end a sentence
/// ("5 p.m.", "Acme Inc.", "in the U.S.").
const ABBREVIATIONS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "mt", "vs", "e.g", "i.e", "approx", "fig", "dept",
];

/// The sentences of `text`, in order, each a trimmed, non-empty slice of it (see the
/// module docs for the boundaries); what lies between two of them is whitespace.
#[must_use]
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let (boundary, cjk) = match c {
            '\n' => (true, false),
            '.' if abbreviation(text.get(start..i).unwrap_or_default()) => (false, false),
            '.' | '!' | '?' => {
                let next = chars.peek().map(|&(_, n)| n);
                (next.is_none_or(|n| n.is_whitespace() || is_cjk(n)), false)
            }
            _ if c.is_ascii() => (false, false),
            _ if CJK_TERMINATORS.contains(&c) => (true, true),
            _ if ELLIPSES.contains(&c) => {
                let prev = text.get(..i).and_then(|b| b.chars().next_back());
                (prev.is_some_and(is_cjk), true)
            }
            _ => (false, false),
        };
        if !boundary {
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some(&(j, n)) = chars.peek().filter(|_| cjk) {
            if !(CLOSERS.contains(&n) || CJK_TERMINATORS.contains(&n) || ELLIPSES.contains(&n)) {
                break;
            }
            end = j + n.len_utf8();
            chars.next();
        }
        if let Some(s) = text.get(start..end) {
            push_trimmed(&mut out, s);
        }
        start = end;
    }
    if let Some(s) = text.get(start..) {
        push_trimmed(&mut out, s);
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn cjk_sentences_end_at_full_width_marks_with_their_closers() {
        assert_eq!(
            sentences("我看了《流浪地球》。真的吗？！他说：「好的。」然后走了；好吧……明天见!再见"),
            vec![
                "我看了《流浪地球》。",
                "真的吗？！",
                "他说：「好的。」",
                "然后走了；",
                "好吧……",
                "明天见!",
                "再见"
            ]
        );
        assert_eq!(
            sentences("Well… I think so. 昨日は雨でした。"),
            vec!["Well… I think so.", "昨日は雨でした。"]
        );
    }

    proptest! {
        #[test]
        fn sentences_are_ordered_slices_separated_by_whitespace(text in "\\PC{0,60}|[a-z中。！…」. \n]{0,60}") {
            let base = text.as_ptr() as usize;
            let mut at = 0;
            for s in sentences(&text) {
                let start = s.as_ptr() as usize - base;
                prop_assert!(start >= at && start + s.len() <= text.len());
                prop_assert!(!s.is_empty());
                let gap = text.get(at..start).unwrap();
                prop_assert!(gap.chars().all(char::is_whitespace), "{gap:?} lost from {text:?}");
                at = start + s.len();
            }
            prop_assert!(text.get(at..).unwrap().chars().all(char::is_whitespace));
        }
    }
}
