//! [`TokenUsage`]: tokens a call consumed, as reported by the server or estimated.

/// Prompt and completion tokens of one call.
///
/// Taken from the reply's `usage` object (`prompt_tokens`, `completion_tokens`) when the
/// server sends a well-formed one; otherwise estimated as characters / 4 (rounded up) of the
/// prompt and of the completion, with `estimated` set so stats can tell the two apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenUsage {
    /// Tokens in the request (messages or embedding inputs).
    pub prompt_tokens: u64,
    /// Tokens generated (0 for embeddings).
    pub completion_tokens: u64,
    /// True when the counts are the chars/4 estimate rather than the server's.
    pub estimated: bool,
}

impl TokenUsage {
    /// The chars/4 estimate for a prompt of `prompt_chars` and a completion of
    /// `completion_chars` Unicode scalar values.
    pub fn estimate(prompt_chars: usize, completion_chars: usize) -> Self {
        Self {
            prompt_tokens: chars_to_tokens(prompt_chars),
            completion_tokens: chars_to_tokens(completion_chars),
            estimated: true,
        }
    }

    /// Adds `other` to `self`; the sum is estimated if either part is.
    pub fn add(&mut self, other: TokenUsage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.estimated |= other.estimated;
    }
}

fn chars_to_tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_rounds_up_and_adds() {
        let mut usage = TokenUsage::estimate(9, 4);
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (3, 1));
        usage.add(TokenUsage { prompt_tokens: 10, completion_tokens: 2, estimated: false });
        assert_eq!((usage.prompt_tokens, usage.completion_tokens, usage.estimated), (13, 3, true));
        assert_eq!(TokenUsage::estimate(0, 0).prompt_tokens, 0);
    }
}
