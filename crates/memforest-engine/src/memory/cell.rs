//! MemCell segmentation: contiguous turns of one session, cut when the cell already has
//! `max_turns` turns, when adding a turn would exceed `max_chars`, or when the gap to the
//! previous turn is over `max_gap` (paper, "MemCell").

use std::ops::Range;

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

/// Cuts turns given as `(time in microseconds, text length in chars)` into cells; returns
/// each cell's turn index range. Cells never span two calls: an appended batch of turns
/// starts a new cell.
#[must_use]
pub fn segment(turns: &[(i64, usize)], limits: CellLimits) -> Vec<Range<usize>> {
    let mut cells = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    let mut last_time = None;
    for (i, &(time, len)) in turns.iter().enumerate() {
        let count = i - start;
        let cut = count > 0
            && (count >= limits.max_turns
                || chars + len > limits.max_chars
                || last_time.is_some_and(|t: i64| time.saturating_sub(t) > limits.max_gap_micros));
        if cut {
            cells.push(start..i);
            start = i;
            chars = 0;
        }
        chars += len;
        last_time = Some(time);
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

    #[test]
    fn splits_on_count_size_and_gap() {
        let l = CellLimits::default();
        assert_eq!(segment(&[(0, 1); 5], l), vec![0..2, 2..4, 4..5]);
        assert_eq!(
            segment(&[(0, 5_000), (0, 5_000), (0, 1)], l),
            vec![0..1, 1..3]
        );
        assert_eq!(segment(&[(0, 9_000), (0, 1)], l), vec![0..1, 1..2]);
        assert_eq!(
            segment(&[(0, 1), (6 * H, 1), (13 * H, 1)], l),
            vec![0..2, 2..3]
        );
        assert_eq!(segment(&[], l), Vec::<Range<usize>>::new());
        let b3 = CellLimits { max_turns: 3, ..l };
        assert_eq!(segment(&[(0, 1); 4], b3), vec![0..3, 3..4]);
    }
}
