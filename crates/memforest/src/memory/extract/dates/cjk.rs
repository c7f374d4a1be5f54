//! Time expressions of Chinese, Japanese and Korean text, which has no spaces to cut words
//! at: read character by character. Explicit dates (`2023年5月6日`, `4月27号`, `5月6日`,
//! `5월 6일`, `2023年5月`, `2023年`, Arabic, full-width or Chinese numerals), relative days,
//! weeks, months and years (`昨天`, `上周`, `下个月`, `去年`, `先週`, `어제`, `지난주`) and
//! counted ones (`三天前`, `两周后`, `3ヶ月前`, `2년 전`), resolved as their English
//! counterparts in the parent module.

use chrono::{Datelike, NaiveDate};

use super::{mention, unit_span, TimeMention};
use crate::memory::text::{fold, is_cjk};

/// A unit (`day`, `week`, `month` or `year`, as the parent's `unit_span` takes it) and how
/// many of it from the reference.
type Relative = (&'static str, i64);

/// Words that name a day, week, month or year relative to the reference, longest first
/// where one is a prefix of another.
const RELATIVE: &[(&str, Relative)] = &[
    // Chinese.
    ("大前天", ("day", -3)),
    ("前天", ("day", -2)),
    ("昨天", ("day", -1)),
    ("昨晚", ("day", -1)),
    ("今天", ("day", 0)),
    ("今晚", ("day", 0)),
    ("今早", ("day", 0)),
    ("明天", ("day", 1)),
    ("后天", ("day", 2)),
    ("後天", ("day", 2)),
    ("上个星期", ("week", -1)),
    ("上個星期", ("week", -1)),
    ("上星期", ("week", -1)),
    ("上礼拜", ("week", -1)),
    ("上周", ("week", -1)),
    ("上週", ("week", -1)),
    ("这个星期", ("week", 0)),
    ("这周", ("week", 0)),
    ("本周", ("week", 0)),
    ("下个星期", ("week", 1)),
    ("下個星期", ("week", 1)),
    ("下星期", ("week", 1)),
    ("下礼拜", ("week", 1)),
    ("下周", ("week", 1)),
    ("下週", ("week", 1)),
    ("上个月", ("month", -1)),
    ("上個月", ("month", -1)),
    ("上月", ("month", -1)),
    ("这个月", ("month", 0)),
    ("本月", ("month", 0)),
    ("下个月", ("month", 1)),
    ("下個月", ("month", 1)),
    ("下月", ("month", 1)),
    ("前年", ("year", -2)),
    ("去年", ("year", -1)),
    ("今年", ("year", 0)),
    ("明年", ("year", 1)),
    // Japanese (今日, 昨日, 明日 are read alike in Chinese).
    ("一昨日", ("day", -2)),
    ("昨日", ("day", -1)),
    ("昨夜", ("day", -1)),
    ("今日", ("day", 0)),
    ("明日", ("day", 1)),
    ("先週", ("week", -1)),
    ("今週", ("week", 0)),
    ("来週", ("week", 1)),
    ("先月", ("month", -1)),
    ("今月", ("month", 0)),
    ("来月", ("month", 1)),
    ("一昨年", ("year", -2)),
    ("昨年", ("year", -1)),
    ("来年", ("year", 1)),
    // Korean.
    ("그저께", ("day", -2)),
    ("어제", ("day", -1)),
    ("오늘", ("day", 0)),
    ("내일", ("day", 1)),
    ("모레", ("day", 2)),
    ("지난주", ("week", -1)),
    ("지난 주", ("week", -1)),
    ("이번 주", ("week", 0)),
    ("다음주", ("week", 1)),
    ("다음 주", ("week", 1)),
    ("지난달", ("month", -1)),
    ("지난 달", ("month", -1)),
    ("이번 달", ("month", 0)),
    ("다음달", ("month", 1)),
    ("다음 달", ("month", 1)),
    ("작년", ("year", -1)),
    ("올해", ("year", 0)),
    ("내년", ("year", 1)),
];

/// Units after a count (`三天前`), longest first where one is a prefix of another.
const COUNT_UNITS: &[(&str, &str)] = &[
    ("个星期", "week"),
    ("個星期", "week"),
    ("星期", "week"),
    ("週間", "week"),
    ("주일", "week"),
    ("个月", "month"),
    ("個月", "month"),
    ("ヶ月", "month"),
    ("か月", "month"),
    ("カ月", "month"),
    ("ケ月", "month"),
    ("개월", "month"),
    ("天", "day"),
    ("日", "day"),
    ("일", "day"),
    ("周", "week"),
    ("週", "week"),
    ("주", "week"),
    ("달", "month"),
    ("年", "year"),
    ("년", "year"),
];

/// Words after a counted unit: before (`前`, `以前`, `전`) or after (`后`, `以后`, `後`, `후`).
const DIRECTIONS: &[(&str, i64)] = &[
    ("以前", -1),
    ("之前", -1),
    ("前", -1),
    ("전", -1),
    ("以后", 1),
    ("之后", 1),
    ("以後", 1),
    ("后", 1),
    ("後", 1),
    ("후", 1),
];

const YEAR_MARKS: &[&str] = &["年", "년"];
const MONTH_MARKS: &[&str] = &["月", "월"];
const DAY_MARKS: &[&str] = &["日", "号", "號", "일"];

/// Every time expression of `sentence`, in order, resolved against `today`; none when the
/// sentence has no CJK character.
pub(super) fn find(sentence: &str, today: NaiveDate) -> Vec<TimeMention> {
    if sentence.is_ascii() || !sentence.chars().any(is_cjk) {
        return Vec::new();
    }
    let text = fold(sentence);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(rest) = text.get(at..) {
        let Some(first) = rest.chars().next() else {
            break;
        };
        match expression(rest, today) {
            Some((m, used)) if used > 0 => {
                out.extend(m);
                at += used;
            }
            _ => at += first.len_utf8(),
        }
    }
    out
}

/// The expression at the start of `rest` (its mention, `None` when it names no valid
/// date) and its length in bytes; `None` when none starts there.
fn expression(rest: &str, today: NaiveDate) -> Option<(Option<TimeMention>, usize)> {
    let written = |len: usize| rest.get(..len).unwrap_or_default().to_owned();
    if let Some((word, (unit, n))) = RELATIVE.iter().find(|(w, _)| rest.starts_with(w)) {
        return Some((unit_span(written(word.len()), today, unit, *n), word.len()));
    }
    let (n, len) = number(rest)?;
    let after = rest.get(len..)?;
    if let Some(found) = date(rest, n, len, today) {
        return Some(found);
    }
    let (unit, unit_len) = COUNT_UNITS
        .iter()
        .find_map(|(w, unit)| after.starts_with(w).then_some((*unit, w.len())))?;
    let tail = rest.get(len + unit_len..)?;
    let gap = tail.len() - tail.trim_start_matches(' ').len();
    let (sign, dir_len) = DIRECTIONS.iter().find_map(|(w, sign)| {
        tail.get(gap..)
            .is_some_and(|t| t.starts_with(w))
            .then_some((*sign, w.len()))
    })?;
    let used = len + unit_len + gap + dir_len;
    Some((unit_span(written(used), today, unit, sign * n), used))
}

/// A date starting with the number `n` (`len` bytes) at the start of `rest`: year, month
/// and day, year and month, a year, or month and day in `today`'s year.
fn date(rest: &str, n: i64, len: usize, today: NaiveDate) -> Option<(Option<TimeMention>, usize)> {
    let written = |len: usize| rest.get(..len).unwrap_or_default().to_owned();
    let (year, mut used) = match mark(rest.get(len..)?, YEAR_MARKS) {
        Some(m) if (1900..=2100).contains(&n) => (i32::try_from(n).ok(), len + m),
        _ => (None, 0),
    };
    let month_at = if year.is_some() { used } else { 0 };
    let month = part(rest.get(month_at..)?, MONTH_MARKS, 1..=12);
    let Some((m, month_len)) = month else {
        let y = year?;
        let first = NaiveDate::from_ymd_opt(y, 1, 1)?;
        let last = NaiveDate::from_ymd_opt(y, 12, 31)?;
        return Some((mention(written(used), first, last), used));
    };
    used = month_at + month_len;
    let y = year.unwrap_or(today.year());
    let m = u32::try_from(m).ok()?;
    if let Some((d, day_len)) = rest.get(used..).and_then(|r| part(r, DAY_MARKS, 1..=31)) {
        used += day_len;
        let day = NaiveDate::from_ymd_opt(y, m, u32::try_from(d).ok()?);
        return Some((day.and_then(|x| mention(written(used), x, x)), used));
    }
    // A month without a day is a span only with its year (`2021年5月`; not `5月` alone).
    year?;
    let first = NaiveDate::from_ymd_opt(y, m, 1)?;
    let last = crate::memory::time::month_start(first, 1)?.pred_opt()?;
    Some((mention(written(used), first, last), used))
}

/// A number in `range` followed by one of `marks` (a space allowed between, as Korean
/// writes `5월 6일`) at the start of `text` (after at most one space): `(number, bytes)`.
fn part(text: &str, marks: &[&str], range: std::ops::RangeInclusive<i64>) -> Option<(i64, usize)> {
    let lead = usize::from(text.starts_with(' '));
    let (n, len) = number(text.get(lead..)?)?;
    let m = mark(text.get(lead + len..)?, marks)?;
    range.contains(&n).then_some((n, lead + len + m))
}

/// The length of the mark of `marks` that starts `text`, after at most one space.
fn mark(text: &str, marks: &[&str]) -> Option<usize> {
    let lead = usize::from(text.starts_with(' '));
    let rest = text.get(lead..)?;
    marks
        .iter()
        .find(|m| rest.starts_with(**m))
        .map(|m| lead + m.len())
}

/// The number that starts `text`: 1 to 4 ASCII digits, or Chinese numerals (`五`, `十二`,
/// `二十七`, `两`, `二〇二三`); `(value, bytes)`.
fn number(text: &str) -> Option<(i64, usize)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        return (digits <= 4)
            .then(|| text.get(..digits)?.parse().ok().map(|n| (n, digits)))
            .flatten();
    }
    let len: usize = text
        .chars()
        .take_while(|c| *c == '十' || numeral(*c).is_some())
        .take(4)
        .map(char::len_utf8)
        .sum();
    let written = text.get(..len)?;
    let value = match written.split_once('十') {
        Some((tens, units)) => {
            let tens = if tens.is_empty() {
                1
            } else {
                digit_value(tens)?
            };
            let units = if units.is_empty() {
                0
            } else {
                digit_value(units)?
            };
            tens * 10 + units
        }
        None => digit_value(written)?,
    };
    Some((value, len))
}

/// The value of a string of Chinese digits read positionally (`二〇二三` = 2023).
fn digit_value(s: &str) -> Option<i64> {
    if s.is_empty() || s.contains('十') {
        return None;
    }
    s.chars().try_fold(0, |acc, c| Some(acc * 10 + numeral(c)?))
}

fn numeral(c: char) -> Option<i64> {
    Some(match c {
        '〇' | '零' => 0,
        '一' => 1,
        '二' | '两' | '兩' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::time::to_date;
    use proptest::prelude::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn spans(text: &str, today: NaiveDate) -> Vec<(String, NaiveDate, NaiveDate)> {
        find(text, today)
            .into_iter()
            .map(|m| (m.text, to_date(m.start).unwrap(), to_date(m.end).unwrap()))
            .collect()
    }

    #[test]
    fn explicit_dates() {
        let r = day(2023, 6, 10);
        let one = |t: &str, d: NaiveDate| vec![(t.to_owned(), d, d)];
        assert_eq!(
            spans("我4月27号去了北京", r),
            one("4月27号", day(2023, 4, 27))
        );
        assert_eq!(spans("５月６日は晴れ", r), one("5月6日", day(2023, 5, 6)));
        assert_eq!(
            spans("2022年3月1日出生", r),
            one("2022年3月1日", day(2022, 3, 1))
        );
        assert_eq!(spans("五月六日见", r), one("五月六日", day(2023, 5, 6)));
        assert_eq!(
            spans("十二月二十七日", r),
            one("十二月二十七日", day(2023, 12, 27))
        );
        assert_eq!(
            spans("5월 6일에 만나요", r),
            one("5월 6일", day(2023, 5, 6))
        );
        assert_eq!(
            spans("2021年5月搬家", r),
            vec![("2021年5月".to_owned(), day(2021, 5, 1), day(2021, 5, 31))]
        );
        assert_eq!(
            spans("二〇二〇年毕业", r),
            vec![("二〇二〇年".to_owned(), day(2020, 1, 1), day(2020, 12, 31))]
        );
        assert!(spans("2月30日", r).is_empty());
        assert!(spans("三个苹果和5个人", r).is_empty());
        assert!(spans("no cjk at all yesterday", r).is_empty());
    }

    #[test]
    fn relative_phrases_resolve_against_the_reference() {
        let r = day(2023, 3, 8); // a Wednesday
        let got = |t: &str| {
            spans(t, r)
                .into_iter()
                .map(|(_, a, b)| (a, b))
                .collect::<Vec<_>>()
        };
        let d = |m, dd| (day(2023, m, dd), day(2023, m, dd));
        assert_eq!(got("我昨天去了"), vec![d(3, 7)]);
        assert_eq!(got("三天前"), vec![d(3, 5)]);
        assert_eq!(got("两周后"), vec![(day(2023, 3, 20), day(2023, 3, 26))]);
        assert_eq!(
            got("上周我们见过"),
            vec![(day(2023, 2, 27), day(2023, 3, 5))]
        );
        assert_eq!(got("下个月"), vec![(day(2023, 4, 1), day(2023, 4, 30))]);
        assert_eq!(got("去年"), vec![(day(2022, 1, 1), day(2022, 12, 31))]);
        assert_eq!(got("昨日は雨"), vec![d(3, 7)]);
        assert_eq!(got("3ヶ月前"), vec![(day(2022, 12, 1), day(2022, 12, 31))]);
        assert_eq!(got("어제 봤어요"), vec![d(3, 7)]);
        assert_eq!(got("3일 전에"), vec![d(3, 5)]);
        assert_eq!(got("지난주"), vec![(day(2023, 2, 27), day(2023, 3, 5))]);
    }

    proptest! {
        #[test]
        fn any_text_resolves_without_panic_to_spans_of_its_own_words(
            text in "\\PC{0,30}|[0-9一二三十两年月日号天周前后上下个星期 ]{0,30}",
            days in -30_000i64..60_000,
        ) {
            let today = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + chrono::Duration::days(days);
            let folded = fold(&text);
            for m in find(&text, today) {
                prop_assert!(folded.contains(&m.text), "{:?} not in {:?}", m.text, folded);
                prop_assert!(m.start <= m.end);
            }
        }
    }
}
