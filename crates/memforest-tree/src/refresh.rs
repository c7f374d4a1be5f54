//! Summaries as compaction: the refresh plan, summary inputs, and stamp-checked application
//! (MemForest paper, Algorithm 1 and "Refresh").
//!
//! Inserts and deletes only mark nodes dirty. Later, in batches, [`refresh_plan`] lists the
//! dirty nodes of many trees grouped by level, bottom-up; the nodes of one level do not depend
//! on each other, so a caller may summarize them in parallel and must finish a level before
//! starting the next. For each node, [`MemTree::summary_input`] gives what the summarizer (an
//! LLM, in the engine) needs, and [`MemTree::apply_summary`] stores the result only if the
//! node's page is still the one its input was read from ([`InputStamp`]: page CRC and
//! version).
//!
//! How a stamp identifies the input without re-reading it: a node's input is its entries
//! and its children's summaries, and its page holds its entries and each child's page CRC
//! (a child given a new summary is rewritten, so its CRC changes). So the stamp is the
//! node's page CRC and structure version ([`crate::node::Node::version`], bumped by every
//! insert and delete on the node's path), and the check costs the one descent that
//! rewriting the path needs anyway instead of re-reading every child. The page CRC also
//! tells a node apart from one of the same id in a tree deleted and created again under the
//! same id (node ids and versions then start over). The check's blind spots are CRC-32
//! collisions: two pages of one node at one version with the same CRC, or a child page
//! rewritten with an unchanged CRC (which leaves the node's page byte for byte the same).
//! For pages nobody crafted that is 2^-32 per rewrite; a tenant that shapes its own text
//! could force one, and at worst get a summary of input it has since changed or forgotten
//! accepted into its own tree.

use crate::error::TreeError;
use crate::hash::StableHasher;
use crate::key::{LeafKey, TimeRange};
use crate::kind::TreeKind;
use crate::node::{NodeId, Summary, TreeId};
use crate::store::NodeStore;
use crate::tree::{check_text, MemTree};

/// One node to refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PlanItem {
    /// The tree it belongs to.
    pub tree: TreeId,
    /// The dirty node.
    pub node: NodeId,
}

/// The dirty nodes of one level, across trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLevel {
    /// Node level (1 = the nodes holding leaves).
    pub level: u8,
    /// The nodes, by tree then node id.
    pub nodes: Vec<PlanItem>,
}

/// Dirty nodes of several trees, level 1 first. Processing a level may only start once the
/// previous level is done, because a node's input is its children's summaries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshPlan {
    /// Non-empty levels, ascending.
    pub levels: Vec<PlanLevel>,
}

impl RefreshPlan {
    /// Number of nodes in the plan: the summary calls it needs at most.
    #[must_use]
    pub fn len(&self) -> usize {
        self.levels.iter().map(|l| l.nodes.len()).sum()
    }

    /// True when nothing is dirty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

/// Lists the dirty nodes of `trees` grouped by level, bottom-up. A snapshot: nodes dirtied
/// afterwards are not in it, and a node changed afterwards will reject its stale summary.
#[must_use]
pub fn refresh_plan(trees: &[&MemTree]) -> RefreshPlan {
    let top = trees
        .iter()
        .map(|t| t.dirty().top_level())
        .max()
        .unwrap_or(0);
    let levels = (1..=top)
        .filter_map(|level| {
            let nodes: Vec<PlanItem> = trees
                .iter()
                .flat_map(|t| {
                    t.dirty()
                        .level(level)
                        .into_iter()
                        .map(|node| PlanItem { tree: t.id(), node })
                })
                .collect();
            (!nodes.is_empty()).then_some(PlanLevel { level, nodes })
        })
        .collect();
    RefreshPlan { levels }
}

/// One child's contribution to its parent's summary input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildSummary {
    /// The child's time range (a leaf's own range; a node's min start and max end).
    pub time: TimeRange,
    /// A leaf's text, or a child node's current summary.
    pub text: String,
}

/// Everything a summarizer needs for one node, and the hash that identifies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryInput {
    /// The tree.
    pub tree: TreeId,
    /// The node.
    pub node: NodeId,
    /// The tree's kind.
    pub kind: TreeKind,
    /// The tree's label (e.g. `user` for `entity:user`).
    pub label: String,
    /// The node's level.
    pub level: u8,
    /// The node's time range (microseconds since the Unix epoch).
    pub time: TimeRange,
    /// The children in time (key) order.
    pub children: Vec<ChildSummary>,
    /// [`input_hash`] of the fields above (tree and node ids excluded).
    pub hash: u64,
    /// The node's current summary: when its `input_hash` equals `hash` it can be reused
    /// without a summarizer call.
    pub previous: Option<Summary>,
    /// What [`MemTree::apply_summary`] checks a summary of this input against.
    pub stamp: InputStamp,
}

/// Where [`MemTree::apply_summary`] finds the node an input was read from, and how it tells
/// whether the node is still the same (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputStamp {
    /// The node's smallest leaf key when the input was read (the descent to it).
    pub first: LeafKey,
    /// Its [`crate::node::Node::version`] when the input was read.
    pub version: u64,
    /// Its page CRC (trailer value) when the input was read.
    pub page_crc: u32,
}

/// The stable hash of a summary input: FNV-1a 64 ([`crate::hash`]) over the tree kind byte,
/// the label, the level, the time range, and for each child (in order) its time range and
/// text, strings length-prefixed.
#[must_use]
pub fn input_hash<'a>(
    kind: TreeKind,
    label: &str,
    level: u8,
    time: TimeRange,
    children: impl IntoIterator<Item = (TimeRange, &'a str)>,
) -> u64 {
    let mut h = StableHasher::new();
    h.write(&[kind.as_u8(), level]);
    h.write_str(label);
    h.write_i64(time.start);
    h.write_i64(time.end);
    for (t, text) in children {
        h.write_i64(t.start);
        h.write_i64(t.end);
        h.write_str(text);
    }
    h.finish()
}

impl MemTree {
    /// The summary input of `node`: its children's current summaries (a level-1 node's
    /// children are leaves, whose summary is their text).
    ///
    /// # Errors
    /// [`TreeError::UnknownNode`] for a node not in this tree (for instance freed by a merge
    /// after the plan was made); [`TreeError::ChildDirty`] when a child still needs its own
    /// summary; corruption and store errors.
    pub fn summary_input<S: NodeStore + ?Sized>(
        &self,
        store: &S,
        node: NodeId,
    ) -> Result<SummaryInput, TreeError> {
        let (n, page_crc) = self.node_and_crc(store, node)?;
        let time = n
            .time_range()
            .ok_or_else(|| self.corrupt(node, "empty node"))?;
        let first = n
            .first_key()
            .ok_or_else(|| self.corrupt(node, "empty node"))?;
        let mut children: Vec<ChildSummary> = n
            .leaves()
            .iter()
            .map(|leaf| ChildSummary {
                time: leaf.key.time,
                text: leaf.text.clone(),
            })
            .collect();
        for child in n.children() {
            let c = self.load_child(store, child, n.level)?;
            match (&c.summary, c.dirty) {
                (Some(summary), false) => children.push(ChildSummary {
                    time: child.time,
                    text: summary.text.clone(),
                }),
                _ => {
                    return Err(TreeError::ChildDirty {
                        tree: self.id,
                        node,
                        child: child.id,
                    })
                }
            }
        }
        let hash = input_hash(
            self.meta.kind,
            &self.meta.label,
            n.level,
            time,
            children.iter().map(|c| (c.time, c.text.as_str())),
        );
        Ok(SummaryInput {
            tree: self.id,
            node,
            kind: self.meta.kind,
            label: self.meta.label.clone(),
            level: n.level,
            time,
            children,
            hash,
            previous: n.summary,
            stamp: InputStamp {
                first,
                version: n.version,
                page_crc,
            },
        })
    }

    /// Stores `text`, a summary of `input`, as its node's summary if that node is unchanged
    /// since the input was read (`input.stamp`: the same page CRC and version; see the module
    /// doc for why that identifies the input), or does nothing if the node already holds
    /// exactly this summary of this input and is clean. On acceptance the node becomes clean,
    /// its summary records `input.hash`, and its ancestors are marked dirty (their input, which includes this
    /// summary, changed); the path's pages are rewritten because each parent records its
    /// child's page CRC.
    ///
    /// # Errors
    /// [`TreeError::StaleSummary`] when the node changed since its input was read (the
    /// summary is discarded and the node stays dirty); [`TreeError::UnknownNode`] when the
    /// descent by the node's first key no longer ends at it (the node is gone, or lost its
    /// first leaf: changed either way); [`TreeError::TextTooLong`]; corruption and store
    /// errors.
    pub fn apply_summary<S: NodeStore + ?Sized>(
        &mut self,
        store: &mut S,
        input: &SummaryInput,
        text: &str,
    ) -> Result<(), TreeError> {
        check_text(text)?;
        let (node, stamp) = (input.node, &input.stamp);
        let mut path = self.descend(store, &stamp.first, input.level)?;
        let Some(step) = path.last_mut().filter(|step| step.id == node) else {
            return Err(TreeError::UnknownNode {
                tree: self.id,
                node,
            });
        };
        let summary = Summary {
            input_hash: input.hash,
            text: text.to_owned(),
        };
        if !step.node.dirty && step.node.summary.as_ref() == Some(&summary) {
            return Ok(());
        }
        if (step.crc, step.node.version) != (stamp.page_crc, stamp.version) {
            return Err(TreeError::StaleSummary {
                tree: self.id,
                node,
                read_at: stamp.page_crc,
                current: step.crc,
            });
        }
        step.node.summary = Some(summary);
        step.node.dirty = false;
        let root = self.meta.root;
        let written = path
            .into_iter()
            .map(|mut step| {
                if step.id != node {
                    step.node.dirty = true;
                }
                (step.id, step.node)
            })
            .collect();
        self.commit(store, self.meta.clone(), written, &[], root)
    }
}

/// Counts from [`refresh_all`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Summaries generated (summarizer calls).
    pub calls: u64,
    /// Summaries reused because the node's input was unchanged.
    pub reused: u64,
}

/// Runs one refresh pass sequentially: makes the plan over `trees`, then level by level asks
/// `summarize` for every dirty node whose input changed (reusing the previous summary when the
/// input hash is unchanged) and applies the result. The engine runs the same loop with an LLM
/// and a bounded pool per level; tests and the cost model use this one.
///
/// # Errors
/// The first error from reading an input or applying a summary.
pub fn refresh_all<S, F>(
    trees: &mut [&mut MemTree],
    store: &mut S,
    mut summarize: F,
) -> Result<RefreshStats, TreeError>
where
    S: NodeStore + ?Sized,
    F: FnMut(&SummaryInput) -> String,
{
    let plan = {
        let shared: Vec<&MemTree> = trees.iter().map(|t| &**t).collect();
        refresh_plan(&shared)
    };
    let mut stats = RefreshStats::default();
    for level in &plan.levels {
        for item in &level.nodes {
            let Some(tree) = trees.iter_mut().find(|t| t.id() == item.tree) else {
                continue;
            };
            let input = tree.summary_input(store, item.node)?;
            let text = match &input.previous {
                Some(prev) if prev.input_hash == input.hash => {
                    stats.reused += 1;
                    prev.text.clone()
                }
                _ => {
                    stats.calls += 1;
                    summarize(&input)
                }
            };
            tree.apply_summary(store, &input, &text)?;
        }
    }
    Ok(stats)
}
