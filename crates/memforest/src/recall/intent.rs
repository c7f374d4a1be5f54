//! What a question asks for, read from its words once ([`Asked::of`]): a time
//! ([`temporal`]), what the assistant said ([`about_the_assistant`]), or what happened at
//! the calendar days or months it names ([`named_times`]). They steer the candidates
//! (`recall::search`) and the last ranking step (`recall::fuse::rank`).

use memforest_tree::TimeRange;

use crate::memory::extract::dates;
use crate::memory::record::FactRecord;
use crate::memory::text::tokenize;
use crate::memory::time::DAY_MICROS;

/// What a question asks for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Asked {
    /// It asks for a time ([`temporal`]).
    pub temporal: bool,
    /// It asks what the assistant said ([`about_the_assistant`]).
    pub about_the_assistant: bool,
    /// The calendar days or months it names, each widened ([`named_times`]).
    pub named_times: Vec<TimeRange>,
}

impl Asked {
    /// What `question` asks for.
    #[must_use]
    pub fn of(question: &str) -> Self {
        let words = tokenize(question);
        Self {
            temporal: temporal(question, &words),
            about_the_assistant: about_the_assistant(question, &words),
            named_times: named_times(question),
        }
    }

    /// Whether `rec` was said at a time the question names: one of its occurrences' times
    /// meets one of [`Asked::named_times`] (a sentence said in 2022 and again in 2025 was
    /// not said in between).
    #[must_use]
    pub fn names_time_of(&self, rec: &FactRecord) -> bool {
        rec.occurrences.iter().any(|o| {
            let said = TimeRange {
                start: o.time.0,
                end: o.time.1.max(o.time.0),
            };
            self.named_times.iter().any(|w| w.overlaps(said))
        })
    }
}

/// Days added before and after a named time: the session that tells of an event is often
/// days after it ("last Friday"), and a plan is told before it.
pub const NAMED_TIME_SLACK_DAYS: i64 = 7;

/// Longest span of a named time: a calendar day or month is a time the answer belongs to;
/// a year (`2023年`) is most of a history.
const NAMED_TIME_MAX_DAYS: i64 = 31;

/// The calendar days and months `question` names with their year ("in August 2023", "on
/// 30 August, 2023", "2023-08-30", `2023年5月`), each widened by
/// [`NAMED_TIME_SLACK_DAYS`] on both sides. Dates without a year and relative phrases
/// ("March 5", "tonight", "last week") do not count: in a question they are as often chat
/// as a time the answer belongs to; neither does a whole year.
fn named_times(question: &str) -> Vec<TimeRange> {
    let with_year = |text: &str| {
        text.split(' ')
            .any(|w| w.len() >= 4 && w.bytes().take(4).all(|b| b.is_ascii_digit()))
    };
    let slack = NAMED_TIME_SLACK_DAYS.saturating_mul(DAY_MICROS);
    let longest = NAMED_TIME_MAX_DAYS.saturating_mul(DAY_MICROS);
    dates::find(question, 0)
        .into_iter()
        .filter(|m| with_year(&m.text) && m.end.saturating_sub(m.start) < longest)
        .map(|m| TimeRange {
            start: m.start.saturating_sub(slack),
            end: m.end.saturating_add(slack),
        })
        .collect()
}

/// Chinese, Japanese and Korean phrases that ask for a time ("when", "which day", "what
/// date", "which year").
const CJK_TEMPORAL: &[&str] = &[
    "什么时候",
    "哪天",
    "哪一天",
    "几号",
    "几月",
    "哪年",
    "哪一年",
    "何时",
    "いつ",
    "何日",
    "何月",
    "何年",
    "언제",
    "며칠",
    "몇 월",
    "몇 년",
];

/// True when `question` asks for a time: it contains `when`, or asks `how long ago` or
/// `what|which year|month|date|day|time`, or one of the CJK phrases of [`CJK_TEMPORAL`].
fn temporal(question: &str, words: &[String]) -> bool {
    if CJK_TEMPORAL.iter().any(|p| question.contains(p)) {
        return true;
    }
    words.iter().enumerate().any(|(i, w)| {
        let next = words.get(i + 1).map(String::as_str);
        match w.as_str() {
            "when" => true,
            "what" | "which" => matches!(next, Some("year" | "month" | "date" | "day" | "time")),
            "how" => next == Some("long") && words.get(i + 2).map(String::as_str) == Some("ago"),
            _ => false,
        }
    })
}

/// Past-tense verbs of saying that, after "you", point at something the assistant said
/// ("the hotel you recommended").
const SAID: &[&str] = &[
    "told",
    "said",
    "suggested",
    "recommended",
    "mentioned",
    "provided",
    "gave",
    "listed",
    "shared",
    "explained",
    "described",
    "wrote",
    "created",
    "offered",
    "made",
];

/// Chinese phrases that point at something the assistant said earlier ("you said",
/// "you recommended before", "we talked before").
const CJK_SAID: &[&str] = &[
    "你说过",
    "你之前",
    "你上次",
    "你推荐过",
    "你提到过",
    "你建议过",
    "我们之前",
    "我们上次",
];

/// True when `question` asks what the assistant said earlier: "you" + a past verb of
/// saying ([`SAID`]: "the hotel you recommended"), "did you say|recommend|suggest|mention|
/// tell", "remind me", "our previous|last|earlier chat|conversation|discussion", "we
/// discussed|talked", or one of the Chinese phrases of [`CJK_SAID`]. A request ("can you
/// recommend ...") is not.
fn about_the_assistant(question: &str, words: &[String]) -> bool {
    if CJK_SAID.iter().any(|p| question.contains(p)) {
        return true;
    }
    let at = |i: usize| words.get(i).map_or("", String::as_str);
    (0..words.len()).any(|i| match at(i) {
        "you" => SAID.contains(&at(i + 1)),
        "did" => {
            at(i + 1) == "you"
                && matches!(
                    at(i + 2),
                    "say" | "recommend" | "suggest" | "mention" | "tell"
                )
        }
        "remind" => at(i + 1) == "me",
        "our" => {
            matches!(at(i + 1), "previous" | "last" | "earlier")
                && matches!(at(i + 2), "chat" | "conversation" | "discussion" | "talk")
        }
        "we" => matches!(at(i + 1), "discussed" | "talked"),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::Asked;

    #[test]
    fn temporal_is_asked_time() {
        for q in [
            "When did Caroline go to the support group?",
            "In what year did she move? And when?",
            "What year did Jon open the studio?",
            "Which month was the race?",
            "How long ago did you start painting?",
            "周杰是哪天去的杭州？",
            "小雨是什么时候看的电影？",
            "いつ演奏しましたか？",
            "불고기를 만든 날은 언제야?",
        ] {
            assert!(Asked::of(q).temporal, "{q}");
        }
        for q in [
            "What did Melanie paint?",
            "How long is the hike?",
            "Which dog did they adopt?",
            "What happened whenever it rained?",
            "周杰推荐的电影叫什么？",
        ] {
            assert!(!Asked::of(q).temporal, "{q}");
        }
    }

    #[test]
    fn a_named_time_is_a_calendar_date_with_its_year() {
        use crate::memory::time::to_date;
        use chrono::NaiveDate;
        let span = |q: &str| {
            Asked::of(q)
                .named_times
                .iter()
                .map(|w| (to_date(w.start).unwrap(), to_date(w.end).unwrap()))
                .collect::<Vec<_>>()
        };
        let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(
            span("What injury did Evan suffer from in August 2023?"),
            vec![(day(2023, 7, 25), day(2023, 9, 7))]
        );
        assert_eq!(
            span("Why did Jolene get the new plant on 30 August, 2023?"),
            vec![(day(2023, 8, 23), day(2023, 9, 6))]
        );
        assert_eq!(
            span("Did I swim more in May 2019 or on 2023-06-20?"),
            vec![
                (day(2019, 4, 24), day(2019, 6, 7)),
                (day(2023, 6, 13), day(2023, 6, 27))
            ]
        );
        assert_eq!(
            span("我2023年5月在哪里工作？"),
            vec![(day(2023, 4, 24), day(2023, 6, 7))]
        );
        for q in [
            "What is my sister's name? I want to call her tonight.",
            "What did I cook last week?",
            "How did the march 5 race go?",
            "Which of my 2023 goals did I meet?",
            "我2023年在哪里工作？",
            "When did Caroline go to the support group?",
        ] {
            assert!(Asked::of(q).named_times.is_empty(), "{q}");
        }
    }

    #[test]
    fn about_the_assistant_is_asking_what_it_said() {
        for q in [
            "Can you remind me of the name of the restaurant you recommended?",
            "I remember you told me about the refineries. Which processes were used?",
            "In our previous chat, what was the 7th job in the list?",
            "What song did you say best exemplified the album?",
            "We discussed powwows earlier: which game was played?",
            "What was the move you made after 27. Kg2 Bd5+?",
            "你之前推荐的那家餐厅叫什么？",
        ] {
            assert!(Asked::of(q).about_the_assistant, "{q}");
        }
        for q in [
            "Can you recommend a show for me to watch tonight?",
            "Where did I go on vacation last month?",
            "What did Melanie paint?",
            "你能推荐一部电影吗？",
        ] {
            assert!(!Asked::of(q).about_the_assistant, "{q}");
        }
    }
}
