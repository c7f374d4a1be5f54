//! Which assistant sentences are acknowledgements: replies such as "Got it, I'll
//! remember." or "Rex sounds lovely." that say nothing the user did not say, and would
//! otherwise become memories that rank beside the user's own statements.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::memory::text::{keywords, stem};

/// Words of acknowledgement, politeness and praise. An assistant sentence made of these,
/// stop words and the user's own words adds no memory.
const ACKNOWLEDGEMENT_WORDS: &[&str] = &[
    "absolutely",
    "amazing",
    "anything",
    "anytime",
    "ask",
    "awesome",
    "beautiful",
    "best",
    "certainly",
    "congratulations",
    "congrats",
    "cool",
    "course",
    "definitely",
    "delightful",
    "else",
    "enjoy",
    "excellent",
    "excited",
    "exciting",
    "fantastic",
    "feel",
    "free",
    "fun",
    "glad",
    "good",
    "got",
    "great",
    "happy",
    "hear",
    "help",
    "hope",
    "interesting",
    "keep",
    "know",
    "let",
    "lovely",
    "luck",
    "mind",
    "need",
    "nice",
    "noted",
    "okay",
    "perfect",
    "pleasure",
    "question",
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

/// The stems of [`ACKNOWLEDGEMENT_WORDS`], as [`keywords`] gives them.
static ACKNOWLEDGEMENT_STEMS: LazyLock<HashSet<String>> =
    LazyLock::new(|| ACKNOWLEDGEMENT_WORDS.iter().map(|w| stem(w)).collect());

/// The most words an acknowledgement that repeats the user's words has ("Rex sounds
/// lovely.", "Golden retrievers are wonderful."): a longer sentence about what the user
/// said is an answer ("The Colosseum is open until 7 pm on Sundays.").
const MAX_ECHO_WORDS: usize = 5;

/// Whether assistant sentence `sentence` is an acknowledgement: each of its keywords is a
/// word of acknowledgement or praise ("Got it, I'll remember.", "Let me know if you need
/// anything else."), or, in a sentence of at most [`MAX_ECHO_WORDS`] words, one of
/// `user_keywords`, the keywords of the user's turns it answers (after "My dog Rex is a
/// golden retriever.": "Rex sounds lovely."). "What breed is Rex?" and "I recommend the
/// Artemide in Rome." are not. Contractions and possessives ("i'll", "that's", "rex's")
/// are passed over: their word is a stop word or stands beside the sentence's other words.
pub fn is_acknowledgement(sentence: &str, user_keywords: &HashSet<String>) -> bool {
    let echo = sentence.split_whitespace().nth(MAX_ECHO_WORDS).is_none();
    keywords(sentence)
        .iter()
        .filter(|k| !k.contains(['\'', '\u{2019}']))
        .all(|k| ACKNOWLEDGEMENT_STEMS.contains(k) || (echo && user_keywords.contains(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> HashSet<String> {
        keywords(text).into_iter().collect()
    }

    #[test]
    fn acknowledgements_and_praise_of_what_the_user_said() {
        let dog = user("My dog Rex is a golden retriever.");
        for said in [
            "Got it, I'll remember.",
            "Rex sounds lovely.",
            "Thanks for letting me know!",
            "Let me know if you need anything else.",
            "Golden retrievers are wonderful.",
        ] {
            assert!(is_acknowledgement(said, &dog), "{said}");
        }
        for said in [
            "What breed is Rex?",
            "I recommend the Artemide in Rome.",
            "Your appointment is on March 3 at noon.",
            "Rex needs his vaccine next week.",
            "A golden retriever like Rex is a dog breed.",
        ] {
            assert!(!is_acknowledgement(said, &dog), "{said}");
        }
    }
}
