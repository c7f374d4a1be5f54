//! `--resident-mib`: the segment residency budget a workload runs with, shared by the
//! workloads that open a store and read it at scale (`ingest`, `query`).

use memforest_engine::Options;

/// The `--resident-mib` flag.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ResidentArg {
    /// Mapped segment-file pages kept resident, MiB (`Options::segment_resident_bytes`;
    /// default: the engine's default). Past it, reads re-fault released pages.
    #[arg(long = "resident-mib", value_parser = clap::value_parser!(u64).range(1..))]
    pub mib: Option<u64>,
}

impl ResidentArg {
    /// Sets `options.segment_resident_bytes` when the flag was given.
    pub fn apply(self, options: &mut Options) {
        if let Some(mib) = self.mib {
            options.segment_resident_bytes = mib.saturating_mul(1 << 20);
        }
    }

    /// The budget a run gets, MiB: the flag's or the engine's default.
    #[must_use]
    pub fn effective_mib(self) -> u64 {
        self.mib
            .unwrap_or(Options::default().segment_resident_bytes >> 20)
    }
}
