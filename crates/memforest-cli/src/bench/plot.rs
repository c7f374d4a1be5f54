//! `memforest bench plot`: draws `docs/benchmarks-scale.png` from saved `--json` reports:
//! per-insert cost (µs per fact) against N from `bench ingest` (ingest-only and settled
//! wall time, settled process CPU, the ingesting thread's CPU; a series absent from an
//! older report is left out), and summarizer calls per
//! fact against facts per refresh from `bench llm` (batched at each k, eager for
//! reference). Needs a TrueType font file (`--font`); CI does not run it.

use std::path::PathBuf;

use anyhow::Context as _;
use plotters::prelude::*;
use serde_json::Value;

/// Settings of `bench plot`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotArgs {
    /// `bench ingest --json` output.
    #[arg(long)]
    pub ingest: PathBuf,
    /// `bench llm --json` output.
    #[arg(long)]
    pub llm: PathBuf,
    /// PNG to write.
    #[arg(long, default_value = "docs/benchmarks-scale.png")]
    pub out: PathBuf,
    /// TrueType font for the labels.
    #[arg(
        long,
        default_value = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    )]
    pub font: PathBuf,
}

fn read(path: &PathBuf) -> anyhow::Result<Value> {
    let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("parse {}", path.display()))
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// (N, `field` µs per fact) points: the decades of the largest ingest size that report
/// `field` above zero.
fn ingest_points(v: &Value, field: &str) -> Vec<(f64, f64)> {
    let largest = arr(v, "sizes").iter().max_by(|a, b| {
        num(a, "facts")
            .unwrap_or(0.0)
            .total_cmp(&num(b, "facts").unwrap_or(0.0))
    });
    largest.map_or_else(Vec::new, |s| {
        arr(s, "decades")
            .iter()
            .filter_map(|d| Some((num(d, "facts")?, num(d, field).filter(|&us| us > 0.0)?)))
            .collect()
    })
}

/// One k of the llm sweep: (batch, batched calls per fact) points and eager's calls per
/// fact.
type Series = (u64, Vec<(f64, f64)>, f64);

/// The llm sweep's series, one per k.
fn llm_series(v: &Value) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in arr(v, "rows") {
        let (Some(k), Some(batch)) = (r.get("k").and_then(Value::as_u64), num(r, "batch")) else {
            continue;
        };
        let b = r
            .get("batched")
            .and_then(|c| num(c, "calls_per_fact"))
            .unwrap_or(0.0);
        let e = r
            .get("eager")
            .and_then(|c| num(c, "calls_per_fact"))
            .unwrap_or(0.0);
        match out.iter_mut().find(|s| s.0 == k) {
            Some(s) => s.1.push((batch, b)),
            None => out.push((k, vec![(batch, b)], e)),
        }
    }
    out
}

fn bounds(points: impl Iterator<Item = (f64, f64)>) -> ((f64, f64), (f64, f64)) {
    points.fold(
        ((f64::MAX, f64::MIN), (f64::MAX, f64::MIN)),
        |((x0, x1), (y0, y1)), (x, y)| ((x0.min(x), x1.max(x)), (y0.min(y), y1.max(y))),
    )
}

/// Draws the PNG.
///
/// # Errors
/// Unreadable inputs or font, drawing errors.
pub fn run(args: &PlotArgs) -> anyhow::Result<()> {
    let font =
        std::fs::read(&args.font).with_context(|| format!("read font {}", args.font.display()))?;
    let font: &'static [u8] = Box::leak(font.into_boxed_slice());
    plotters::style::register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| anyhow::anyhow!("{} is not a usable TrueType font", args.font.display()))?;
    let ingest_json = read(&args.ingest)?;
    let ingest = ingest_points(&ingest_json, "us_per_fact");
    let settled = ingest_points(&ingest_json, "settled_us_per_fact");
    let settled_cpu = ingest_points(&ingest_json, "settled_cpu_us_per_fact");
    let own = ingest_points(&ingest_json, "ingest_cpu_us_per_fact");
    let llm_json = read(&args.llm)?;
    let llm = llm_series(&llm_json);
    // The global rewrite's calls per fact (the same in every row).
    let global = arr(&llm_json, "rows")
        .first()
        .and_then(|r| r.get("global"))
        .and_then(|g| num(g, "calls_per_fact"))
        .unwrap_or(f64::NAN);
    anyhow::ensure!(
        !ingest.is_empty(),
        "{}: no decades to plot",
        args.ingest.display()
    );
    anyhow::ensure!(!llm.is_empty(), "{}: no rows to plot", args.llm.display());

    let root = BitMapBackend::new(&args.out, (1200, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(600);

    let ((x0, x1), (_, y1)) = bounds(ingest.iter().chain(&settled).chain(&settled_cpu).copied());
    let mut c = ChartBuilder::on(&left)
        .caption(
            "ingest: per-insert cost vs N (summarizer none)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), 0.0..y1 * 1.3)?;
    c.configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("facts ingested (N, log)")
        .y_desc("µs per fact in the decade ending at N")
        .draw()?;
    for (points, color, label) in [
        (&ingest, BLUE, "wall, ingest calls only"),
        (
            &settled,
            GREEN,
            "wall, settled (refresh, flush, compaction)",
        ),
        (&settled_cpu, MAGENTA, "CPU of every thread, settled"),
        (&own, RED, "CPU of the ingesting thread"),
    ] {
        c.draw_series(LineSeries::new(points.iter().copied(), color))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        c.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;

    let all = llm.iter().flat_map(|s| {
        s.1.iter()
            .copied()
            .chain([(s.1.first().map_or(1.0, |p| p.0), s.2)])
    });
    let ((bx0, bx1), (by0, by1)) = bounds(all);
    let mut c = ChartBuilder::on(&right)
        .caption(
            "llm: summarizer calls per fact vs batch",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (bx0 * 0.8..bx1 * 1.25).log_scale(),
            (by0.min(global).max(1e-4) * 0.005..by1 * 2.0).log_scale(),
        )?;
    c.configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y}"))
        .x_desc("facts per batched refresh (log)")
        .y_desc("calls per fact (log)")
        .draw()?;
    for (i, (k, points, eager)) in llm.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        c.draw_series(LineSeries::new(
            points.iter().copied(),
            color.stroke_width(2),
        ))?
        .label(format!("batched k={k}"))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        let span = [(bx0, *eager), (bx1, *eager)];
        c.draw_series(DashedLineSeries::new(span, 4, 4, color.into()))?
            .label(format!("eager k={k}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
    }
    if global.is_finite() {
        c.draw_series(DashedLineSeries::new(
            [(bx0, global), (bx1, global)],
            2,
            6,
            BLACK.into(),
        ))?
        .label("global rewrite per session (input grows with M)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK));
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()?;
    root.present()?;
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ingest_points_take_the_largest_size_and_skip_unreported_decades() {
        let v = serde_json::json!({"sizes": [
            {"facts": 100000, "decades": [{"facts": 1000, "us_per_fact": 9.0}]},
            {"facts": 1000000, "decades": [
                {"facts": 10000, "us_per_fact": 50.0, "settled_us_per_fact": 0.0},
                {"facts": 1000000, "us_per_fact": 80.0, "settled_us_per_fact": 90.0}
            ]}
        ]});
        assert_eq!(
            ingest_points(&v, "us_per_fact"),
            vec![(10000.0, 50.0), (1000000.0, 80.0)]
        );
        assert_eq!(
            ingest_points(&v, "settled_us_per_fact"),
            vec![(1000000.0, 90.0)],
            "a decade reporting 0 (an older report) is left out"
        );
        assert!(ingest_points(&v, "missing").is_empty());
    }
}
