//! Keyed statements without a model: which knowledge-update slot, a `(subject, attribute)`
//! pair, a sentence sets. A newer fact in the same slot supersedes an older one
//! (`recall::update`), so "I moved to Berlin" ends "I live in Paris" with no model call.
//!
//! A slot is written as the attribute key `subject/attribute` (`recall::index::slots` reads
//! the part before the slash as the subject, whatever entities the fact names). The
//! subject is a capitalized name just before the statement's verb ("Emma moved to..."), a
//! relation after "my" ("my sister lives in..."), or, for a first-person statement, the
//! speaker's subject (`user` for the user; none for the assistant, whose "I" is not about
//! the user). Statement kinds and their attributes:
//!
//! | kind | examples | attribute |
//! | --- | --- | --- |
//! | residence | live in, moved to, relocated to, based in | `residence` |
//! | job | work as, hired as, promoted to, became a, retired | `job` |
//! | employer | work at / for, joined X, quit my job, laid off | `employer` |
//! | study | study / graduated at or from; major in, studying X | `school`, `major` |
//! | names | my dog / sister ... is named, called, 's name is X | `dog.name`, `sister.name` |
//! | possessions | have / bought / drive / sold a car, phone, guitar ... | `possession.car` |
//! | favourites | my favourite X is | `favorite.x` |
//! | likes | love, like, enjoy, hate, dislike X | `likes.x` |
//! | allergies | allergic to X, X allergy | `allergy.x` |
//! | diet | I'm vegan, went vegetarian, a keto diet | `diet` |
//! | plans | dentist appointment, flight, interview ... (with a date) | `plan.dentist.appointment` |
//! | counts | I have 3 kids, I've read 12 books | `count.kid` |
//! | tools | I use X, switched from X to Y | `uses.x` (both, for a switch) |
//!
//! A "used to" statement ("I used to work as a waiter") states a past value: its keys get
//! the [`PAST`] mark (`user/job@past`), which keeps the fact out of the slot (it ends no
//! current value) and makes it superseded from the moment it was said (it is never
//! current itself). Not keyed: questions, wishes and hypotheticals, and statements whose
//! subject cannot be told. Negations ("no longer", "don't") are keyed into the same slot,
//! so they end the older value.

use crate::memory::extract::dates;
use crate::memory::text::{is_stop_word, stem};

/// Relations after "my" that name a person: the subject of "my sister lives in...", and
/// the `<relation>.name` of "my sister's name is...".
const RELATIONS: &[&str] = &[
    "wife",
    "husband",
    "partner",
    "boyfriend",
    "girlfriend",
    "fiance",
    "fiancee",
    "son",
    "daughter",
    "sister",
    "brother",
    "mom",
    "mother",
    "dad",
    "father",
    "grandma",
    "grandmother",
    "grandpa",
    "grandfather",
    "aunt",
    "uncle",
    "cousin",
    "niece",
    "nephew",
    "friend",
    "roommate",
    "boss",
    "therapist",
    "doctor",
    "coach",
    "colleague",
    "coworker",
    "neighbor",
    "neighbour",
    "teacher",
    "manager",
    "classmate",
    "landlord",
    "ex",
];

/// The statement kinds led by a verb phrase ([`PHRASES`]): "my X lives in..." is about X,
/// so when X is no known relation the subject is unknown, not the speaker.
const VERB_LED: &[&str] = &["residence", "job", "employer", "school", "major"];

/// Pet species, with the young's names folded into the species.
const PETS: &[(&str, &str)] = &[
    ("dog", "dog"),
    ("puppy", "dog"),
    ("cat", "cat"),
    ("kitten", "cat"),
    ("parrot", "parrot"),
    ("bird", "bird"),
    ("hamster", "hamster"),
    ("rabbit", "rabbit"),
    ("bunny", "rabbit"),
    ("fish", "fish"),
    ("goldfish", "fish"),
    ("turtle", "turtle"),
    ("horse", "horse"),
    ("snake", "snake"),
    ("lizard", "lizard"),
];

/// Things one has one of at a time.
const POSSESSIONS: &[&str] = &[
    "car",
    "truck",
    "suv",
    "motorcycle",
    "bike",
    "bicycle",
    "phone",
    "iphone",
    "smartphone",
    "laptop",
    "computer",
    "tablet",
    "watch",
    "camera",
    "guitar",
    "piano",
    "violin",
    "cello",
    "drums",
    "ukulele",
    "flute",
    "saxophone",
    "house",
    "apartment",
];

/// Weekday names and relative days: with the month names, "moved to June" or "moved to
/// Friday" is a date, not a place.
const DAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "tomorrow",
    "today",
    "next",
];

fn is_calendar(x: &str) -> bool {
    dates::MONTHS.contains(&x) || DAYS.contains(&x)
}

/// Possessions named by a kind of them, folded into the kind.
const POSSESSION_KINDS: &[(&str, &str)] = &[("iphone", "phone"), ("smartphone", "phone")];

/// Verbs that say one has (or stopped having) a possession.
const HAVE: &[&str] = &[
    "have", "has", "own", "owns", "bought", "got", "drive", "drives", "sold", "leased", "traded",
];

/// Events with a date that a newer statement reschedules.
const PLANS: &[&str] = &[
    "appointment",
    "meeting",
    "interview",
    "flight",
    "surgery",
    "exam",
    "wedding",
    "vacation",
    "trip",
    "concert",
    "checkup",
    "deadline",
    "party",
];

/// Diets.
const DIETS: &[&str] = &[
    "vegan",
    "vegetarian",
    "pescatarian",
    "keto",
    "paleo",
    "gluten-free",
    "dairy-free",
    "carnivore",
];

/// Verbs of liking and disliking.
const LIKES: &[&str] = &[
    "love", "loves", "like", "likes", "enjoy", "enjoys", "adore", "adores", "hate", "hates",
    "dislike", "dislikes", "prefer", "prefers",
];

/// Words that make a following number a count of something the subject has or did.
const COUNT_VERBS: &[&str] = &[
    "have",
    "has",
    "own",
    "owns",
    "read",
    "visited",
    "adopted",
    "raised",
    "completed",
    "finished",
    "ran",
    "run",
    "written",
    "wrote",
    "now",
];

/// Adverbs that can stand between the subject and a verb of liking.
const LIKE_ADVERBS: &[&str] = &[
    "really",
    "also",
    "still",
    "totally",
    "absolutely",
    "actually",
    "truly",
    "do",
    "don't",
    "didn't",
    "longer",
    "now",
    "always",
    "never",
    "definitely",
    "kinda",
    "genuinely",
];

/// Words that make a statement hypothetical or wished for: it sets nothing.
const HYPOTHETICAL: &[&str] = &[
    "if",
    "would",
    "might",
    "maybe",
    "perhaps",
    "thinking",
    "considering",
    "wish",
    "hope",
    "dream",
    "could",
    "should",
    "whether",
    "wonder",
];

/// Negations, and the words that make a negation a change ("not ... anymore").
const NEGATIONS: &[&str] = &[
    "not", "don't", "doesn't", "didn't", "never", "isn't", "aren't", "wasn't", "no", "dont",
    "doesnt", "won't", "can't",
];
const CHANGED: &[&str] = &["anymore", "longer", "now", "stopped", "quit"];

/// Attributes keyed by their value (`likes.sushi`): a negation of one is about that value.
fn keyed_by_value(attribute: &str) -> bool {
    ["likes.", "allergy.", "uses.", "possession."]
        .iter()
        .any(|p| attribute.starts_with(p))
}

/// Number words a count can be written with.
const NUMBERS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "twenty", "thirty", "forty", "fifty", "hundred",
];

/// First-person words: a statement with one of them before its verb is the speaker's.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "we", "we're", "we've", "we'll", "me", "my", "our", "im",
    "ive",
];

/// Words a question about an attribute uses, which the value's statement may lack ("where
/// does she live" for "I moved to Berlin"): a keyed fact is indexed with them
/// ([`index_words`]).
const ATTRIBUTE_WORDS: &[(&str, &str)] = &[
    ("residence", "live lives living home city"),
    ("job", "job work works occupation profession"),
    ("employer", "work works employer company job"),
    ("school", "school university college study"),
    ("major", "major study studying degree"),
    ("name", "name named called"),
    ("favorite", "favorite favourite"),
    ("likes", "like likes"),
    ("allergy", "allergic allergy"),
    ("diet", "diet eat"),
    ("uses", "use uses using"),
];

/// The mark at the end of a key whose sentence states a past value ("used to").
pub const PAST: &str = "@past";

/// The words a fact keyed by `keys` is indexed with besides its text: for each
/// `subject/attribute` key, the question words of its attribute (the attribute's first
/// part, or its last for `x.name`) and, for possessions and plans, the thing itself.
#[must_use]
pub fn index_words(keys: &[String]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for key in keys {
        let Some((_, attribute)) = key.trim_end_matches(PAST).split_once('/') else {
            continue;
        };
        let mut parts = attribute.split('.');
        let head = parts.next().unwrap_or_default();
        let last = attribute.rsplit('.').next().unwrap_or_default();
        for (a, words) in ATTRIBUTE_WORDS {
            if *a == head || *a == last {
                out.extend(words.split(' '));
            }
        }
        if matches!(head, "possession" | "plan") {
            out.extend(parts);
        }
    }
    out.dedup();
    out.join(" ")
}

/// One word of a sentence.
#[derive(Debug, Clone)]
struct Word {
    /// Lower case, a possessive `'s` cut off.
    lower: String,
    /// Starts with a capital letter (and is not "I").
    capital: bool,
}

/// The words of `sentence`: runs of letters, digits, apostrophes and hyphens.
fn words(sentence: &str) -> Vec<Word> {
    sentence
        .replace(['\u{2019}', '\u{2018}'], "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(|w| {
            let base = w
                .strip_suffix("'s")
                .filter(|b| !b.is_empty() && !b.eq_ignore_ascii_case("it"))
                .unwrap_or(w);
            Word {
                lower: base.to_lowercase(),
                capital: w.starts_with(char::is_uppercase) && w != "I" && !w.starts_with("I'"),
            }
        })
        .collect()
}

/// The knowledge-update keys (`subject/attribute`, at most 2) sentence `sentence` sets;
/// `speaker` is the subject of its first person (`None`: first-person statements are not
/// keyed).
#[must_use]
pub fn keys(sentence: &str, speaker: Option<&str>) -> Vec<String> {
    if sentence.trim_end().ends_with('?') {
        return Vec::new();
    }
    let w = words(sentence);
    let lower: Vec<&str> = w.iter().map(|x| x.lower.as_str()).collect();
    if lower.iter().any(|x| HYPOTHETICAL.contains(x)) {
        return Vec::new();
    }
    let past = lower.windows(2).any(|p| p == ["used", "to"]);
    // "I don't live in London" says nothing of where one lives; "I don't live in Paris
    // anymore" ends it, and "I don't like sushi" is about sushi.
    let changed = lower.iter().any(|x| CHANGED.contains(x));
    let mut out: Vec<String> = Vec::new();
    for (at, attribute) in statements(&lower) {
        let before = lower.get(at.saturating_sub(3)..at).unwrap_or_default();
        let negated = before.iter().any(|x| NEGATIONS.contains(x));
        if negated && !changed && !keyed_by_value(&attribute) {
            continue;
        }
        let unknown_owner = at >= 2
            && lower.get(at - 2) == Some(&"my")
            && lower.get(at - 1).is_some_and(|x| !RELATIONS.contains(x));
        if unknown_owner && VERB_LED.contains(&attribute.as_str()) {
            continue;
        }
        if let Some(subject) = subject(&w, at, speaker) {
            let mark = if past { PAST } else { "" };
            let key = format!("{subject}/{attribute}{mark}");
            if !out.contains(&key) && out.len() < 2 {
                out.push(key);
            }
        }
    }
    out
}

/// Verb phrases of the phrase-led statement kinds, with the attribute each sets.
const PHRASES: &[(&str, &[&[&str]])] = &[
    (
        "residence",
        &[
            &["live", "in"],
            &["lives", "in"],
            &["living", "in"],
            &["moved", "to"],
            &["moving", "to"],
            &["move", "to"],
            &["moved", "back", "to"],
            &["relocated", "to"],
            &["relocating", "to"],
            &["based", "in"],
            &["settled", "in"],
        ],
    ),
    (
        "job",
        &[
            &["work", "as"],
            &["works", "as"],
            &["working", "as"],
            &["job", "as"],
            &["hired", "as"],
            &["promoted", "to"],
            &["became", "a"],
            &["became", "an"],
            &["employed", "as"],
            &["retired"],
        ],
    ),
    (
        "employer",
        &[
            &["work", "at"],
            &["works", "at"],
            &["working", "at"],
            &["work", "for"],
            &["works", "for"],
            &["working", "for"],
            &["hired", "by"],
            &["employed", "by"],
            &["quit", "my", "job"],
            &["job", "at"],
            &["started", "at"],
            &["laid", "off"],
            &["joined"],
        ],
    ),
    (
        "school",
        &[
            &["study", "at"],
            &["studying", "at"],
            &["studies", "at"],
            &["enrolled", "at"],
            &["graduated", "from"],
        ],
    ),
    (
        "major",
        &[
            &["major", "in"],
            &["majoring", "in"],
            &["studying"],
            &["study"],
        ],
    ),
];

/// The statements of a sentence: where each one's verb is and the attribute it sets, at
/// most one per statement kind, in the order of the module's table.
fn statements(w: &[&str]) -> Vec<(usize, String)> {
    let find = |seq: &[&str]| (0..w.len()).find(|&i| w.get(i..i + seq.len()) == Some(seq));
    let after = |i: usize| keyword_after(w, i);
    let mut out: Vec<(usize, String)> = Vec::new();
    for (attribute, phrases) in PHRASES {
        let found = phrases.iter().find_map(|p| find(p).map(|i| (i, p.len())));
        // "moved to August" reschedules; it is no move.
        let when = |(i, len): (usize, usize)| {
            w.get(i + len)
                .is_some_and(|x| is_calendar(x) || is_number(x))
        };
        if let Some(i) = found.filter(|f| !when(*f)).map(|(i, _)| i) {
            // "major" also matches "studying at": the school statement already has it.
            if !out.iter().any(|(at, _)| *at == i) {
                out.push((i, (*attribute).to_owned()));
            }
        }
    }
    if let Some(i) = w
        .iter()
        .position(|x| *x == "named" || *x == "called")
        .or_else(|| find(&["name", "is"]))
    {
        let start = i.saturating_sub(4);
        let before = w.get(start..i).unwrap_or_default();
        let named = before.iter().enumerate().rev().find_map(|(j, x)| {
            let pet = PETS.iter().find(|(p, _)| p == x).map(|(_, s)| *s);
            pet.or_else(|| RELATIONS.contains(x).then_some(*x))
                .map(|who| (start + j, who))
        });
        // "my dog's name", "our cat is called", "a puppy named": not "my neighbour's dog".
        let owner = named.and_then(|(j, _)| j.checked_sub(1).and_then(|k| w.get(k)));
        let own = owner.is_none_or(|o| {
            matches!(*o, "my" | "our" | "a" | "an" | "new" | "the") || FIRST_PERSON.contains(o)
        });
        if let Some((_, who)) = named.filter(|_| own) {
            out.push((i, format!("{who}.name")));
        }
    }
    if let Some(i) = w.iter().position(|x| *x == "favorite" || *x == "favourite") {
        if let Some(thing) = after(i) {
            out.push((i, format!("favorite.{thing}")));
        }
    }
    let allergy = find(&["allergic", "to"])
        .and_then(|i| after(i + 1).map(|t| (i, t)))
        .or_else(|| {
            let i = w.iter().position(|x| *x == "allergy")?;
            Some((i, keyword_at(w, i.checked_sub(1)?)?))
        });
    if let Some((i, thing)) = allergy {
        out.push((i, format!("allergy.{thing}")));
    }
    if let Some(i) = w.iter().position(|x| DIETS.contains(x)) {
        out.push((i, "diet".to_owned()));
    }
    if let Some(i) = find(&["switched", "from"]) {
        let to = w
            .get(i + 2..)
            .and_then(|rest| rest.iter().position(|x| *x == "to"))
            .and_then(|j| after(i + 2 + j));
        for thing in [after(i + 1), to].into_iter().flatten() {
            out.push((i, format!("uses.{thing}")));
        }
    } else if let Some((i, len)) = [&["switched", "to"][..], &["use"], &["uses"], &["using"]]
        .iter()
        .find_map(|seq| find(seq).map(|i| (i, seq.len())))
    {
        if let Some(thing) = after(i + len - 1) {
            out.push((i, format!("uses.{thing}")));
        }
    }
    if let Some(i) = w.iter().position(|x| PLANS.contains(x)) {
        // An appointment or a meeting is told apart by its kind ("dentist appointment");
        // an interview or a flight is one at a time whatever its kind ("job interview").
        let plan = w.get(i).copied().unwrap_or_default();
        let kind = matches!(plan, "appointment" | "meeting")
            .then(|| i.checked_sub(1).and_then(|j| keyword_at(w, j)))
            .flatten();
        let key = match kind {
            Some(m) => format!("plan.{m}.{plan}"),
            None => format!("plan.{plan}"),
        };
        out.push((i, key));
    }
    let counted = |i: usize| {
        w.get(i.saturating_sub(2)..i)
            .unwrap_or_default()
            .iter()
            .any(|x| COUNT_VERBS.contains(x))
    };
    if let Some(i) = (0..w.len()).find(|&i| w.get(i).is_some_and(|x| is_number(x)) && counted(i)) {
        let noun = w
            .get(i + 1..(i + 3).min(w.len()))
            .unwrap_or_default()
            .iter()
            .find(|x| !is_stop_word(x) && !is_number(x));
        if let Some(noun) = noun {
            out.push((i, format!("count.{}", stem(noun))));
        }
    }
    if let Some(i) = w.iter().position(|x| HAVE.contains(x)) {
        let thing = w
            .get(i + 1..(i + 5).min(w.len()))
            .unwrap_or_default()
            .iter()
            .find(|x| POSSESSIONS.contains(x))
            .map(|x| {
                POSSESSION_KINDS
                    .iter()
                    .find(|(k, _)| k == x)
                    .map_or(*x, |(_, kind)| *kind)
            })
            // "I drive a Honda Civic": what one drives is a car.
            .or_else(|| matches!(w.get(i), Some(&("drive" | "drives"))).then_some("car"));
        if let Some(thing) = thing {
            out.push((i, format!("possession.{thing}")));
        }
    }
    if let Some(i) = w.iter().position(|x| LIKES.contains(x)) {
        // "I really like X", not "looks like X" or "I'd like to".
        let stated = i
            .checked_sub(1)
            .and_then(|j| w.get(j))
            .is_some_and(|x| FIRST_PERSON.contains(x) && *x != "i'd" || LIKE_ADVERBS.contains(x));
        if stated && w.get(i + 1) != Some(&"to") {
            if let Some(thing) = after(i) {
                out.push((i, format!("likes.{thing}")));
            }
        }
    }
    out
}

/// The first keyword (stemmed, not a stop word) after position `i`, within three words.
fn keyword_after(w: &[&str], i: usize) -> Option<String> {
    (i + 1..(i + 4).min(w.len())).find_map(|j| keyword_at(w, j))
}

/// Word `j` as a keyword, when it is one.
fn keyword_at(w: &[&str], j: usize) -> Option<String> {
    let x = w.get(j)?;
    (x.chars().count() >= 2 && !is_stop_word(x) && !FIRST_PERSON.contains(x) && !is_number(x))
        .then(|| stem(x))
}

fn is_number(x: &str) -> bool {
    NUMBERS.contains(&x) || (!x.is_empty() && x.chars().all(|c| c.is_ascii_digit()))
}

/// Who the statement whose verb is at `at` is about: the nearest of a first-person word,
/// a capitalized name or "my <relation>" in the three words before the verb; else "my
/// <relation>" or a first-person word anywhere before it; else the speaker when the
/// sentence starts with its verb.
fn subject(w: &[Word], at: usize, speaker: Option<&str>) -> Option<String> {
    // "my sister lives in..." is about the sister, "my sister's name is..." about the
    // speaker (its attribute `sister.name`).
    let names_relation = w
        .get(at..at + 3)
        .unwrap_or_default()
        .iter()
        .any(|x| matches!(x.lower.as_str(), "named" | "called" | "name"));
    let relation = |j: usize| -> Option<String> {
        let r = w.get(j)?;
        let my = w.get(j.checked_sub(1)?)?;
        (!names_relation && my.lower == "my" && RELATIONS.contains(&r.lower.as_str()))
            .then(|| r.lower.clone())
    };
    let first_person = |x: &Word| FIRST_PERSON.contains(&x.lower.as_str());
    for j in (at.saturating_sub(3)..at).rev() {
        let Some(x) = w.get(j) else { continue };
        if let Some(r) = relation(j) {
            return Some(r);
        }
        if first_person(x) {
            return speaker.map(str::to_owned);
        }
        if x.capital && !is_stop_word(&x.lower) {
            return Some(x.lower.clone());
        }
    }
    if let Some(r) = (0..at).rev().find_map(relation) {
        return Some(r);
    }
    let said_by_speaker = w.get(..=at).unwrap_or_default().iter().any(first_person);
    (said_by_speaker || at == 0)
        .then(|| speaker.map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> Vec<String> {
        keys(s, Some("user"))
    }

    #[test]
    fn residence_job_employer_and_study() {
        assert_eq!(
            user("I live in Paris and I work as a nurse."),
            ["user/residence", "user/job"]
        );
        assert_eq!(
            user("Big news: I moved to Berlin last week!"),
            ["user/residence"]
        );
        assert_eq!(user("We relocated to Austin in May."), ["user/residence"]);
        assert_eq!(user("I work as a nurse at St. Mary's."), ["user/job"]);
        assert_eq!(user("I got promoted to senior engineer."), ["user/job"]);
        assert_eq!(user("I retired last spring."), ["user/job"]);
        assert_eq!(user("I work at Google now."), ["user/employer"]);
        assert_eq!(user("I quit my job at the bank."), ["user/employer"]);
        assert_eq!(
            user("I just started a new job at Globex."),
            ["user/employer"]
        );
        assert_eq!(user("I'm studying chemistry this year."), ["user/major"]);
        assert_eq!(user("I graduated from Stanford."), ["user/school"]);
    }

    #[test]
    fn subjects_are_names_relations_or_the_speaker() {
        assert_eq!(user("Emma moved to Lisbon in March."), ["emma/residence"]);
        assert_eq!(user("My sister lives in Porto."), ["sister/residence"]);
        assert_eq!(
            user("My colleague lives in Prague."),
            ["colleague/residence"]
        );
        assert_eq!(user("I don't live in Rome anymore."), ["user/residence"]);
        assert_eq!(user("My sister's name is Emma."), ["user/sister.name"]);
        assert_eq!(user("My dog is named Rex."), ["user/dog.name"]);
        assert_eq!(
            user("We adopted a puppy called Biscuit."),
            ["user/dog.name"]
        );
        assert_eq!(
            user("Emma's favorite color is green."),
            ["emma/favorite.color"]
        );
        // the assistant's "I" is not the user's
        assert!(keys("I live in the cloud, so to speak.", None).is_empty());
    }

    #[test]
    fn preferences_possessions_plans_counts_and_tools() {
        assert_eq!(user("My favourite food is ramen."), ["user/favorite.food"]);
        assert_eq!(user("I really love sushi."), ["user/likes.sushi"]);
        assert_eq!(user("I don't like sushi anymore."), ["user/likes.sushi"]);
        assert_eq!(user("I'm allergic to peanuts."), ["user/allergy.peanut"]);
        assert_eq!(user("I went vegan in January."), ["user/diet"]);
        assert_eq!(
            user("I bought a new car, a Honda Civic."),
            ["user/possession.car"]
        );
        assert_eq!(user("I drive a Honda Civic."), ["user/possession.car"]);
        assert_eq!(user("I have an iPhone 12."), ["user/possession.phone"]);
        assert_eq!(
            user("They moved my interview to Thursday."),
            ["user/plan.interview"]
        );
        assert_eq!(
            user("My dentist appointment is on May 5."),
            ["user/plan.dentist.appointment"]
        );
        assert_eq!(user("I have 3 kids."), ["user/count.kid"]);
        assert_eq!(
            user("I've read twelve books this year."),
            ["user/count.book"]
        );
        assert_eq!(
            user("I switched from Android to iPhone."),
            ["user/uses.android", "user/uses.iphon"]
        );
        assert_eq!(user("I use Notion for my notes."), ["user/uses.notion"]);
    }

    #[test]
    fn used_to_marks_the_key_as_a_past_value() {
        assert_eq!(user("I used to live in Paris."), ["user/residence@past"]);
        assert_eq!(user("I used to work at Google."), ["user/employer@past"]);
        assert_eq!(
            index_words(&user("I used to work as a waiter.")),
            index_words(&user("I work as a waiter."))
        );
    }

    #[test]
    fn questions_desires_and_chit_chat_set_nothing() {
        for s in [
            "Where do you live?",
            "I'd like to visit Japan someday.",
            "Thanks, that sounds great.",
            "It was a lovely afternoon.",
            "I don't live in London.",
            "I'm thinking about moving to Rome.",
            "If I moved to Vienna I would be happy.",
            "My neighbor's dog's name is Max.",
        ] {
            assert!(user(s).is_empty(), "{s}: {:?}", user(s));
        }
    }
}
