//! MemCell segmentation: contiguous turns of one session, cut when the cell already has
//! `max_turns` turns, when adding a turn would exceed `max_chars` (or the leaf text would
//! exceed [`LEAF_TEXT_BUDGET`] bytes), or when the gap to the previous turn is over
//! `max_gap` (paper, "MemCell").

use std::ops::Range;

use crate::memory::limits::LEAF_TEXT_BUDGET;

/// Where cells are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellLimits {
    /// Most turns per cell (paper's b). Default 2.
    pub max_turns: usize,
    /// Most characters of turn text per cell (a single longer turn gets a cell of its
    /// own). Default 8,000.
    pub max_chars: usize,
    /// Longest gap between consecutive turns of a cell, microseconds. Default 6 hours.
    pub max_gap_micros: i64,
}

impl Default for CellLimits {
    fn default() -> Self {
        Self {
            max_turns: 2,
            max_chars: 8_000,
            max_gap_micros: 6 * 3_600 * 1_000_000,
        }
    }
}

/// What segmentation needs to know of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnSize {
    /// When it was said, microseconds since the Unix epoch.
    pub time: i64,
    /// Length of its text, in chars.
    pub chars: usize,
    /// Length of its `speaker: text` line in the cell's session-tree leaf, newline
    /// included, in bytes.
    pub leaf_bytes: usize,
}

/// Cuts turns into cells; returns each cell's turn index range. A single turn always fits
/// (`memory::limits` bounds it below [`LEAF_TEXT_BUDGET`]). Cells never span two calls: an
/// appended batch of turns starts a new cell.
#[must_use]
pub fn segment(turns: &[TurnSize], limits: CellLimits) -> Vec<Range<usize>> {
    let mut cells = Vec::new();
    let mut start = 0;
    let (mut chars, mut bytes) = (0, 0);
    let mut last_time = None;
    for (i, t) in turns.iter().enumerate() {
        let count = i - start;
        let cut = count > 0
            && (count >= limits.max_turns
                || chars + t.chars > limits.max_chars
                || bytes + t.leaf_bytes > LEAF_TEXT_BUDGET
                || last_time
                    .is_some_and(|l: i64| t.time.saturating_sub(l) > limits.max_gap_micros));
        if cut {
            cells.push(start..i);
            start = i;
            (chars, bytes) = (0, 0);
        }
        chars += t.chars;
        bytes += t.leaf_bytes;
        last_time = Some(t.time);
    }
    if start < turns.len() {
        cells.push(start..turns.len());
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: i64 = 3_600 * 1_000_000;

    /// Turns of `(time, chars)`, one byte per char.
    fn turns(t: &[(i64, usize)]) -> Vec<TurnSize> {
        t.iter()
            .map(|&(time, chars)| TurnSize {
                time,
                chars,
                leaf_bytes: chars,
            })
            .collect()
    }

    #[test]
    fn splits_on_count_size_and_gap() {
        let l = CellLimits::default();
        assert_eq!(segment(&turns(&[(0, 1); 5]), l), vec![0..2, 2..4, 4..5]);
        assert_eq!(
            segment(&turns(&[(0, 5_000), (0, 5_000), (0, 1)]), l),
            vec![0..1, 1..3]
        );
        assert_eq!(segment(&turns(&[(0, 9_000), (0, 1)]), l), vec![0..1, 1..2]);
        assert_eq!(
            segment(&turns(&[(0, 1), (6 * H, 1), (13 * H, 1)]), l),
            vec![0..2, 2..3]
        );
        assert_eq!(segment(&[], l), Vec::<Range<usize>>::new());
        let b3 = CellLimits { max_turns: 3, ..l };
        assert_eq!(segment(&turns(&[(0, 1); 4]), b3), vec![0..3, 3..4]);
    }

    #[test]
    fn a_cell_is_cut_before_its_leaf_text_outgrows_a_page() {
        let huge = CellLimits {
            max_turns: 1_000,
            max_chars: usize::MAX / 2,
            ..CellLimits::default()
        };
        let big = TurnSize {
            time: 0,
            chars: 1,
            leaf_bytes: LEAF_TEXT_BUDGET / 2,
        };
        assert_eq!(segment(&[big; 5], huge), vec![0..2, 2..4, 4..5]);
    }
}
