//! Which assistant sentences are acknowledgements: replies such as "Got it, I'll
//! remember." or "Rex sounds lovely." that say nothing the user did not say, and would
//! otherwise become memories that rank beside the user's own statements.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::memory::text::{is_cjk, keywords, stem, tokenize};

/// Words of thanks, acknowledgement and praise. An assistant sentence made of these and
/// stop words, or a short one made of these and the user's own words, adds no memory.
const PRAISE_WORDS: &[&str] = &[
    "absolutely",
    "amazing",
    "awesome",
    "beautiful",
    "certainly",
    "congratulations",
    "congrats",
    "cool",
    "definitely",
    "delightful",
    "enjoy",
    "excellent",
    "excited",
    "exciting",
    "fantastic",
    "fun",
    "glad",
    "good",
    "great",
    "happy",
    "hear",
    "hope",
    "interesting",
    "lovely",
    "luck",
    "nice",
    "noted",
    "okay",
    "perfect",
    "pleasure",
    "remember",
    "sorry",
    "sounds",
    "sure",
    "thank",
    "thanks",
    "understand",
    "understood",
    "welcome",
    "wish",
    "wonderful",
    "wow",
];

/// Words of an offer to help ("Let me know if you need anything else.", "Feel free to
/// ask."): an acknowledgement only in a sentence of nothing else, since beside other
/// words they say something ("You need a visa.").
const OFFER_WORDS: &[&str] = &[
    "anything", "anytime", "ask", "else", "feel", "free", "help", "know", "let", "need", "question",
];

/// Words that answer a question: a sentence with one is never an acknowledgement
/// ("Yes, Rex is allowed.", "Rex is not allowed.").
const ANSWER_WORDS: &[&str] = &["yes", "no", "not", "never", "nothing", "none", "nobody"];

/// The stems of `words`, as [`keywords`] gives them.
fn stems(words: &[&str]) -> HashSet<String> {
    words.iter().map(|w| stem(w)).collect()
}

static PRAISE: LazyLock<HashSet<String>> = LazyLock::new(|| stems(PRAISE_WORDS));
static OFFER: LazyLock<HashSet<String>> = LazyLock::new(|| stems(OFFER_WORDS));

/// The most words an acknowledgement that repeats the user's words has ("Rex sounds
/// lovely.", "Golden retrievers are wonderful."): a longer sentence about what the user
/// said is an answer ("The Colosseum is open until seven on Sundays.").
const MAX_ECHO_WORDS: usize = 5;

/// Whether assistant sentence `sentence` is an acknowledgement: with no digit, no answer
/// word (yes, no, not, ...) and no negation (`n't`), either each of its keywords is a
/// word of thanks, praise or an offer to help ("Got it, I'll remember.", "Let me know if
/// you need anything else."), or it has at most [`MAX_ECHO_WORDS`] words, no CJK, a word
/// of praise, and otherwise only `user_keywords`, the keywords of the user's turns it
/// answers (after "My dog Rex is a golden retriever.": "Rex sounds lovely."). "What breed
/// is Rex?", "Your room number is 1204." and "Courses are free." are not.
/// Contractions and possessives ("i'll", "rex's") are passed over as keywords.
pub fn is_acknowledgement(sentence: &str, user_keywords: &HashSet<String>) -> bool {
    if sentence.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    let answers = tokenize(sentence).iter().any(|t| {
        ANSWER_WORDS.contains(&t.as_str()) || t.ends_with("n't") || t.ends_with("n\u{2019}t")
    });
    if answers {
        return false;
    }
    let keys: Vec<String> = keywords(sentence)
        .into_iter()
        .filter(|k| !k.contains(['\'', '\u{2019}']))
        .collect();
    if keys.iter().all(|k| PRAISE.contains(k) || OFFER.contains(k)) {
        return true;
    }
    let echo =
        sentence.split_whitespace().nth(MAX_ECHO_WORDS).is_none() && !sentence.chars().any(is_cjk);
    echo && keys.iter().any(|k| PRAISE.contains(k))
        && keys
            .iter()
            .all(|k| PRAISE.contains(k) || user_keywords.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> HashSet<String> {
        keywords(text).into_iter().collect()
    }

    #[test]
    fn acknowledgements_and_praise_of_what_the_user_said() {
        let dog = user("My dog Rex is a golden retriever. Is Rex allowed in the hotel?");
        for said in [
            "Got it, I'll remember.",
            "Rex sounds lovely.",
            "Thanks for letting me know!",
            "Let me know if you need anything else.",
            "Golden retrievers are wonderful.",
            "Feel free to ask.",
        ] {
            assert!(is_acknowledgement(said, &dog), "{said}");
        }
        for said in [
            "What breed is Rex?",
            "I recommend the Artemide in Rome.",
            "Your appointment is on March 3 at noon.",
            "Rex needs his vaccine next week.",
            "A golden retriever like Rex is a dog breed.",
            "Yes, Rex is allowed.",
            "Rex is not allowed.",
            "Rex isn't allowed.",
            "The hotel is 1204.",
            "Courses are free.",
            "You need a visa.",
            "Rex is allowed in the hotel.",
        ] {
            assert!(!is_acknowledgement(said, &dog), "{said}");
        }
        let room = user("What's my room number?");
        assert!(!is_acknowledgement("Your room number is 1204.", &room));
    }
}
