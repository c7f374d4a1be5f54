//! Character classes the tokenizer and the sentence splitter need: the scripts written
//! without spaces between words (Han, Kana, Hangul: "CJK" below, Lucene CJKAnalyzer's
//! set) and the full-width forms folded to ASCII.

/// True for a Han ideograph, a Hiragana or Katakana character (full or half width) or a
/// Hangul syllable or jamo: the characters [`super::tokenize`] cuts into overlapping
/// bigrams. Punctuation of those blocks (the Katakana middle dot `・`, the double hyphen
/// `゠`) is not CJK.
#[must_use]
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        // Han: radicals, iteration mark and numeral zero, Hangzhou numerals, unified
        // ideographs and extension A, compatibility ideographs, extensions B..I.
        '\u{2E80}'..='\u{2FDF}'
        | '\u{3005}'
        | '\u{3007}'
        | '\u{3021}'..='\u{3029}'
        | '\u{3038}'..='\u{303B}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{323AF}'
        // Hiragana, Katakana (without its punctuation), phonetic extensions, half-width
        // Katakana, Kana supplement and extensions.
        | '\u{3041}'..='\u{309F}'
        | '\u{30A1}'..='\u{30FA}'
        | '\u{30FC}'..='\u{30FF}'
        | '\u{31F0}'..='\u{31FF}'
        | '\u{FF66}'..='\u{FF9F}'
        | '\u{1B000}'..='\u{1B16F}'
        // Hangul: jamo, compatibility jamo, extended jamo, syllables, half-width jamo.
        | '\u{1100}'..='\u{11FF}'
        | '\u{3131}'..='\u{318E}'
        | '\u{A960}'..='\u{A97F}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{D7B0}'..='\u{D7FF}'
        | '\u{FFA0}'..='\u{FFDC}'
    )
}

/// `c` with the full-width ASCII forms (U+FF01..U+FF5E: `Ａ`, `１`, `！`, ...) and the
/// ideographic space (U+3000) replaced by their ASCII equivalents, as Unicode NFKC maps
/// them; any other character unchanged.
#[must_use]
pub fn fold_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_scripts_and_full_width_forms() {
        for c in ['中', '々', 'ひ', 'カ', 'ｶ', 'ー', '한', 'ㄱ', '𠀀'] {
            assert!(is_cjk(c), "{c}");
        }
        for c in ['a', '1', '・', '。', '《', 'é', 'ж', 'ก', ' '] {
            assert!(!is_cjk(c), "{c}");
        }
        let folded: String = "ＡＢｃ１２！\u{3000}x。".chars().map(fold_width).collect();
        assert_eq!(folded, "ABc12! x。");
    }
}
