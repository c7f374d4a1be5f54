//! `memforest bench llm`: the LLM-bound write path at the memforest-tree level (real
//! `MemTree` inserts, the real refresh plan and stamp-checked `apply_summary`, a bounded pool
//! of summarizer workers that sleep `L` ms per call instead of calling a model). The
//! engine's scheduler is not driven here because its refresh cadence is its own; this runs
//! the same per-level loop with the cadence as a parameter.
//!
//! Three strategies on the same fact stream (tenants' sessions round-robin, time-ordered,
//! one `entity:user` tree per tenant):
//! - **batched** (MemForest): after every `batch` facts, refresh every dirty node of every
//!   tree, level by level, each level's calls in parallel on the pool. Executed: its wall
//!   time is measured with the sleeps.
//! - **eager**: after every insert, refresh that tree's dirty path (one call per level).
//! - **global**: after every session, one call that rewrites a summary of everything the
//!   tenant has said (the O(M) pattern: the input grows with the memory).
//!
//! Eager and global are counted, not slept: their time is their critical-path lower bound
//! (`ceil(calls of a level / pool) * L` summed over their refresh rounds), the least time
//! they could take. As in the engine, a node whose input hash is unchanged reuses its
//! summary and a single-child node takes its child's text; neither is a call.

use std::time::{Duration, Instant};

use memforest_tree::refresh::{refresh_plan, SummaryInput};
use memforest_tree::{
    LeafKey, MemNodeStore, MemTree, Payload, TimeRange, TreeConfig, TreeId, TreeKind, USER_ENTITY,
};
use serde::Serialize;

use crate::bench::synth::{Corpus, Shape};

/// Settings of `bench llm`.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmArgs {
    /// Facts inserted.
    #[arg(long, default_value_t = 4096)]
    pub facts: u64,
    /// Tenants (one `entity:user` tree each).
    #[arg(long, default_value_t = 8)]
    pub tenants: usize,
    /// Facts per session (the global rewrite runs once per session).
    #[arg(long, default_value_t = 32)]
    pub per_session: usize,
    /// Branching factors to sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4,8,16,32")]
    pub k: Vec<u16>,
    /// Facts per batched refresh to sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256,1024")]
    pub batch: Vec<usize>,
    /// Milliseconds one summarizer call sleeps.
    #[arg(long, default_value_t = 50)]
    pub latency_ms: u64,
    /// Summarizer calls in flight at once.
    #[arg(long, default_value_t = 16)]
    pub pool: usize,
}

/// One strategy's cost.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Cost {
    /// Summarizer calls.
    pub calls: u64,
    /// Calls per inserted fact.
    pub calls_per_fact: f64,
    /// Bytes of summarizer input (children's texts), a proxy for prompt tokens.
    pub input_bytes: u64,
    /// Critical-path lower bound in seconds: per refresh round, per level,
    /// `ceil(calls / pool) * L`.
    pub bound_seconds: f64,
    /// Measured wall seconds (inserts + refreshes with the sleeps); `None` when counted only.
    pub wall_seconds: Option<f64>,
}

/// One (k, batch) point of the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Branching factor.
    pub k: u16,
    /// Facts per batched refresh.
    pub batch: usize,
    /// Batched dirty-set refresh (executed).
    pub batched: Cost,
    /// Eager path refresh after every insert (counted).
    pub eager: Cost,
    /// Global rewrite per session (counted).
    pub global: Cost,
    /// Internal nodes of all trees at the end (the summaries that exist).
    pub summaries: u64,
    /// batched calls / eager calls (goal at k = 16, batch 256: <= 0.25).
    pub batched_over_eager: f64,
    /// 1 - batched_over_eager (paper Fig. 6a, calls saved).
    pub calls_saved: f64,
    /// batched wall / batched bound (goal <= 1.3).
    pub wall_over_bound: f64,
    /// Serial time of the batched calls (calls * L) over its measured wall: the
    /// level-parallel speed-up (Fig. 6c).
    pub parallel_speedup: f64,
    /// Batched calls per summary that exists at the end (Fig. 6d).
    pub batched_calls_per_summary: f64,
    /// Eager calls per summary that exists at the end.
    pub eager_calls_per_summary: f64,
}

/// The `bench llm` report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Facts.
    pub facts: u64,
    /// Tenants.
    pub tenants: usize,
    /// Facts per session.
    pub per_session: usize,
    /// Sleep per call, milliseconds.
    pub latency_ms: u64,
    /// Pool size.
    pub pool: usize,
    /// The sweep.
    pub rows: Vec<Row>,
}

/// How summarizer calls are carried out.
#[derive(Debug, Clone, Copy)]
struct Exec {
    pool: usize,
    latency: Duration,
    /// Sleep `latency` per call on `pool` threads (else only count).
    sleep: bool,
}

impl Exec {
    /// Lower bound of one level's `calls` on the pool.
    fn level_bound(&self, calls: usize) -> Duration {
        self.latency * u32::try_from(calls.div_ceil(self.pool.max(1))).unwrap_or(u32::MAX)
    }

    /// Summaries of `inputs`, in order; with `sleep`, each call takes `latency` on one of
    /// `pool` threads (equal-length calls: round-robin assignment is optimal).
    fn run(&self, inputs: &[&SummaryInput]) -> Vec<String> {
        if !self.sleep || inputs.is_empty() {
            return inputs.iter().map(|i| fake_summary(i)).collect();
        }
        let pool = self.pool.max(1).min(inputs.len());
        let mut out: Vec<(usize, String)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..pool)
                .map(|w| {
                    s.spawn(move || {
                        inputs
                            .iter()
                            .enumerate()
                            .skip(w)
                            .step_by(pool)
                            .map(|(i, input)| {
                                std::thread::sleep(self.latency);
                                (i, fake_summary(input))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        out.sort_by_key(|(i, _)| *i);
        out.into_iter().map(|(_, t)| t).collect()
    }
}

/// A stand-in summary of about 600 bytes (a 200-word summary's size), unique per input.
fn fake_summary(input: &SummaryInput) -> String {
    let line = format!(
        "[level {} | {}] {:016x} ",
        input.level, input.label, input.hash
    );
    line.repeat(600 / line.len().max(1) + 1)
}

/// Calls, input bytes and bound of some refresh rounds.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    calls: u64,
    input_bytes: u64,
    bound: Duration,
}

/// One `entity:user` tree per tenant in one in-memory node store.
struct Forest {
    store: MemNodeStore,
    trees: Vec<MemTree>,
}

impl Forest {
    fn new(tenants: usize, k: u16) -> anyhow::Result<Self> {
        let config = TreeConfig::uniform(k)?;
        let mut store = MemNodeStore::new();
        let trees = (0..tenants.max(1))
            .map(|t| {
                MemTree::create(
                    &mut store,
                    TreeId(t as u64 + 1),
                    TreeKind::Entity,
                    USER_ENTITY,
                    &config,
                )
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { store, trees })
    }

    fn insert(&mut self, tenant: usize, id: u64, time: i64, text: &str) -> anyhow::Result<()> {
        let tree = self
            .trees
            .get_mut(tenant)
            .ok_or_else(|| anyhow::anyhow!("no tree for tenant {tenant}"))?;
        let key = LeafKey {
            time: TimeRange {
                start: time,
                end: time,
            },
            payload: Payload::fact(id),
        };
        Ok(tree.insert(&mut self.store, key, text)?)
    }

    /// One refresh round over the trees `only` names (all when `None`), level by level.
    fn refresh(&mut self, only: Option<usize>, exec: &Exec) -> anyhow::Result<Tally> {
        let plan = {
            let refs: Vec<&MemTree> = match only {
                Some(t) => self.trees.get(t).into_iter().collect(),
                None => self.trees.iter().collect(),
            };
            refresh_plan(&refs)
        };
        let mut tally = Tally::default();
        for level in &plan.levels {
            let mut ready: Vec<(usize, SummaryInput, String)> = Vec::new();
            let mut calls: Vec<(usize, SummaryInput)> = Vec::new();
            for item in &level.nodes {
                let t = usize::try_from(item.tree.0.saturating_sub(1))?;
                let tree = self
                    .trees
                    .get(t)
                    .ok_or_else(|| anyhow::anyhow!("plan names unknown tree {}", item.tree.0))?;
                let input = tree.summary_input(&self.store, item.node)?;
                let reuse = match (&input.previous, input.children.as_slice()) {
                    (Some(p), _) if p.input_hash == input.hash => Some(p.text.clone()),
                    (_, [only]) => Some(only.text.clone()),
                    _ => None,
                };
                match reuse {
                    Some(text) => ready.push((t, input, text)),
                    None => calls.push((t, input)),
                }
            }
            let inputs: Vec<&SummaryInput> = calls.iter().map(|(_, i)| i).collect();
            let texts = exec.run(&inputs);
            tally.calls += calls.len() as u64;
            tally.input_bytes += inputs
                .iter()
                .flat_map(|i| &i.children)
                .map(|c| c.text.len() as u64)
                .sum::<u64>();
            tally.bound += exec.level_bound(calls.len());
            ready.extend(calls.into_iter().zip(texts).map(|((t, i), s)| (t, i, s)));
            for (t, input, text) in ready {
                if let Some(tree) = self.trees.get_mut(t) {
                    tree.apply_summary(&mut self.store, &input, &text)?;
                }
            }
        }
        Ok(tally)
    }

    /// Internal nodes of all trees.
    fn internal_nodes(&self) -> anyhow::Result<u64> {
        let mut n = 0;
        for t in &self.trees {
            n += t.verify(&self.store)?.nodes.iter().sum::<u64>();
        }
        Ok(n)
    }
}

/// The fact stream: (tenant, time, text, session end) per fact.
fn stream(args: &LlmArgs) -> Vec<(usize, i64, String, bool)> {
    let shape = Shape {
        tenants: args.tenants,
        per_session: args.per_session,
        late: 0.0,
        seed: 11,
    };
    let total = usize::try_from(args.facts).unwrap_or(usize::MAX);
    Corpus::new(shape, total)
        .flat_map(|g| {
            let last = g.facts.len().saturating_sub(1);
            let times: Vec<i64> = g
                .session
                .turns
                .iter()
                .map(|t| t.time.unwrap_or(0))
                .collect();
            g.facts
                .into_iter()
                .zip(times)
                .enumerate()
                .map(move |(i, (f, at))| (g.tenant, at, f, i == last))
        })
        .collect()
}

fn cost(t: Tally, facts: u64, wall: Option<Duration>) -> Cost {
    Cost {
        calls: t.calls,
        calls_per_fact: t.calls as f64 / facts.max(1) as f64,
        input_bytes: t.input_bytes,
        bound_seconds: t.bound.as_secs_f64(),
        wall_seconds: wall.map(|w| w.as_secs_f64()),
    }
}

/// Eager refresh: each insert refreshes its tree's path. Returns the tally and the
/// internal node count at the end.
fn eager(
    args: &LlmArgs,
    k: u16,
    facts: &[(usize, i64, String, bool)],
    exec: &Exec,
) -> anyhow::Result<(Tally, u64)> {
    let mut f = Forest::new(args.tenants, k)?;
    let mut t = Tally::default();
    for (id, (tenant, at, text, _)) in (0u64..).zip(facts) {
        f.insert(*tenant, id, *at, text)?;
        let r = f.refresh(Some(*tenant), exec)?;
        t.calls += r.calls;
        t.input_bytes += r.input_bytes;
        t.bound += r.bound;
    }
    Ok((t, f.internal_nodes()?))
}

/// Batched refresh every `batch` facts (and once at the end), executed with the sleeps.
fn batched(
    args: &LlmArgs,
    k: u16,
    batch: usize,
    facts: &[(usize, i64, String, bool)],
    exec: &Exec,
) -> anyhow::Result<(Tally, Duration)> {
    let mut f = Forest::new(args.tenants, k)?;
    let mut t = Tally::default();
    let start = Instant::now();
    for (n, (id, (tenant, at, text, _))) in (1usize..).zip((0u64..).zip(facts)) {
        f.insert(*tenant, id, *at, text)?;
        if n % batch.max(1) == 0 || n == facts.len() {
            let r = f.refresh(None, exec)?;
            t.calls += r.calls;
            t.input_bytes += r.input_bytes;
            t.bound += r.bound;
        }
    }
    Ok((t, start.elapsed()))
}

/// Global rewrite: one call per session over all the tenant's fact bytes so far.
fn global(args: &LlmArgs, facts: &[(usize, i64, String, bool)], exec: &Exec) -> Tally {
    let mut per_tenant = vec![0u64; args.tenants.max(1)];
    let mut t = Tally::default();
    for (tenant, _, text, end) in facts {
        if let Some(b) = per_tenant.get_mut(*tenant) {
            *b += text.len() as u64;
            if *end {
                t.calls += 1;
                t.input_bytes += *b;
                t.bound += exec.level_bound(1);
            }
        }
    }
    t
}

/// Runs the sweep.
///
/// # Errors
/// Tree errors (none expected) and invalid `k`.
pub fn run(args: &LlmArgs) -> anyhow::Result<Report> {
    let facts = stream(args);
    let n = facts.len() as u64;
    let counted = Exec {
        pool: args.pool.max(1),
        latency: Duration::from_millis(args.latency_ms),
        sleep: false,
    };
    let slept = Exec {
        sleep: true,
        ..counted
    };
    let global = cost(global(args, &facts, &counted), n, None);
    let mut rows = Vec::new();
    for &k in &args.k {
        let (eager_tally, summaries) = eager(args, k, &facts, &counted)?;
        let eager = cost(eager_tally, n, None);
        for &batch in &args.batch {
            eprintln!("bench llm: k = {k}, batch = {batch}");
            let (t, wall) = batched(args, k, batch, &facts, &slept)?;
            let b = cost(t, n, Some(wall));
            let serial = b.calls as f64 * counted.latency.as_secs_f64();
            let ratio = b.calls as f64 / eager.calls.max(1) as f64;
            rows.push(Row {
                k,
                batch,
                batched: b,
                eager,
                global,
                summaries,
                batched_over_eager: ratio,
                calls_saved: 1.0 - ratio,
                wall_over_bound: wall.as_secs_f64() / b.bound_seconds.max(1e-9),
                parallel_speedup: serial / wall.as_secs_f64().max(1e-9),
                batched_calls_per_summary: b.calls as f64 / summaries.max(1) as f64,
                eager_calls_per_summary: eager.calls as f64 / summaries.max(1) as f64,
            });
        }
    }
    Ok(Report {
        facts: n,
        tenants: args.tenants,
        per_session: args.per_session,
        latency_ms: args.latency_ms,
        pool: args.pool,
        rows,
    })
}

/// The report as text.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "llm: {} facts, {} tenants, {} facts/session, summarizer sleeps {} ms, pool {}\n{:>3} {:>5} | {:>7} {:>6} {:>8} {:>8} {:>6} | {:>7} {:>6} {:>8} | {:>6} {:>6} {:>9} | {:>6} {:>6} {:>7}\n",
        r.facts, r.tenants, r.per_session, r.latency_ms, r.pool,
        "k", "batch", "b.calls", "b.c/f", "b.wall s", "b.bound", "w/b", "e.calls", "e.c/f", "e.bound", "g.calls", "g.c/f", "g.bound", "b/e", "speedup", "c/summ"
    );
    for x in &r.rows {
        s.push_str(&format!(
            "{:>3} {:>5} | {:>7} {:>6.3} {:>8.2} {:>8.2} {:>6.2} | {:>7} {:>6.3} {:>8.1} | {:>6} {:>6.3} {:>9.1} | {:>6.3} {:>6.1} {:>7.2}\n",
            x.k, x.batch,
            x.batched.calls, x.batched.calls_per_fact, x.batched.wall_seconds.unwrap_or(0.0), x.batched.bound_seconds, x.wall_over_bound,
            x.eager.calls, x.eager.calls_per_fact, x.eager.bound_seconds,
            x.global.calls, x.global.calls_per_fact, x.global.bound_seconds,
            x.batched_over_eager, x.parallel_speedup, x.batched_calls_per_summary
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> LlmArgs {
        LlmArgs {
            facts: 300,
            tenants: 3,
            per_session: 25,
            k: vec![4],
            batch: vec![1],
            latency_ms: 1,
            pool: 4,
        }
    }

    fn exec(sleep: bool) -> Exec {
        Exec {
            pool: 4,
            latency: Duration::from_millis(1),
            sleep,
        }
    }

    #[test]
    fn batches_of_one_fact_make_exactly_the_eager_calls() {
        let a = args();
        let facts = stream(&a);
        let (eager_tally, _) = eager(&a, 4, &facts, &exec(false)).unwrap();
        let (batched_tally, _) = batched(&a, 4, 1, &facts, &exec(false)).unwrap();
        assert_eq!(batched_tally.calls, eager_tally.calls);
        assert_eq!(batched_tally.input_bytes, eager_tally.input_bytes);
        let (big, _) = batched(&a, 4, 100, &facts, &exec(false)).unwrap();
        assert!(
            big.calls < eager_tally.calls / 2,
            "{} vs {}",
            big.calls,
            eager_tally.calls
        );
    }

    #[test]
    fn sleeping_pool_takes_at_least_the_bound_and_gives_the_same_counts() {
        let a = args();
        let facts = stream(&a);
        let (counted, _) = batched(&a, 4, 50, &facts, &exec(false)).unwrap();
        let (slept, wall) = batched(&a, 4, 50, &facts, &exec(true)).unwrap();
        assert_eq!(counted.calls, slept.calls);
        assert!(wall >= slept.bound, "{wall:?} < {:?}", slept.bound);
        assert!(slept.bound >= Duration::from_millis(1));
    }

    #[test]
    fn global_rewrite_calls_once_per_session_over_the_whole_memory() {
        let a = args();
        let facts = stream(&a);
        let t = global(&a, &facts, &exec(false));
        assert_eq!(t.calls, 12);
        let bytes: u64 = facts.iter().map(|f| f.2.len() as u64).sum();
        assert!(t.input_bytes > bytes, "re-sends earlier sessions");
    }

    #[test]
    fn level_bound_rounds_up_per_pool() {
        let e = exec(false);
        assert_eq!(e.level_bound(0), Duration::ZERO);
        assert_eq!(e.level_bound(4), Duration::from_millis(1));
        assert_eq!(e.level_bound(5), Duration::from_millis(2));
    }
}
