//! Checkpoints in a block's long restart intervals, so that a seek does
//! not scan an interval of many entries from its restart point for every
//! key. A block kept for lookups (an index, a partition, a filter's index)
//! is walked once, interval by interval as a seek scans each; every
//! [`EVERY`]th entry of an interval is kept: the cursor's state there, its
//! key, and the greatest key of the interval up to it. A seek that lands in
//! the interval binary-searches those greatest keys for the last below its
//! target, resumes the scan there and scans at most [`EVERY`] entries past
//! it. Every entry before that point is below the target, so the scan
//! stops where the engine's would, in order or out of it.
//!
//! One walk serves both cursors ([`Walk`]): RocksDB's
//! ([`Cursor`](super::Cursor)), whose scan stops at the next restart point,
//! and LevelDB's ([`BlockIter`](super::BlockIter)), whose scan runs on past
//! it; what differs is the state a checkpoint holds.

use std::cmp::Ordering;
use std::mem::size_of;

/// Entries between checkpoints: what a seek scans at most past the one it
/// resumes from (where the block's checkpoints fit in its size).
pub(crate) const EVERY: usize = 16;

/// What the walk asks of a block's cursor.
pub(crate) trait Walk: Clone {
    /// The cursor's state on an entry, but its key and its key budget.
    type State: Clone + std::fmt::Debug;
    /// The block's restart points.
    fn restart_count(&self) -> usize;
    /// Restart point `i`'s offset.
    fn restart_offset(&self, i: usize) -> usize;
    /// Moves before restart point `i`'s entry, with no key, as a seek's scan
    /// from it starts.
    fn at_restart(&mut self, i: usize);
    /// Moves to the next entry: false past the last or on an error.
    fn step(&mut self) -> bool;
    /// The current entry's offset.
    fn current(&self) -> usize;
    /// Whether the current entry is the block's last.
    fn is_last(&self) -> bool;
    /// The current entry's key.
    fn key(&self) -> &[u8];
    /// The key bytes the cursor may still rebuild.
    fn budget(&self) -> usize;
    /// Sets the key budget.
    fn set_budget(&mut self, budget: usize);
    /// The block's length.
    fn block_len(&self) -> usize;
    /// The state on the current entry.
    fn state(&self) -> Self::State;
    /// Puts the cursor back in `state`, on an entry of key `key`, with
    /// `budget` of keys left.
    fn restore(&mut self, state: &Self::State, key: &[u8], budget: usize);
}

/// A block's checkpoints, within its size: what they hold (states, keys)
/// adds up to at most the block's length; past that, an interval's later
/// entries are scanned as before.
#[derive(Clone, Debug)]
pub(crate) struct Checkpoints<S> {
    points: Vec<Point<S>>,
    /// The points' keys and greatest keys, one after the other.
    keys: Vec<u8>,
    /// Each restart interval with points: its restart index, and its points'
    /// range in `points`.
    intervals: Vec<(usize, usize, usize)>,
    /// The last entry, as `seek_to_last` reaches it from the last restart
    /// point (its key in `keys`).
    last: Option<Point<S>>,
}

/// A cursor's state on an entry, and what the seek compares.
#[derive(Clone, Debug)]
struct Point<S> {
    state: S,
    key: (usize, usize),
    /// The interval's greatest key up to this entry, in `keys`.
    max: (usize, usize),
    /// The key budget a scan from the restart point has spent here.
    spent: usize,
}

impl<S: Clone + std::fmt::Debug> Checkpoints<S> {
    /// The checkpoints of `cursor`'s block (see the module), from a cursor
    /// that has not moved. `cmp` orders two keys of the block so that every
    /// seek's order is monotone in it: a key at or past a seek's target is
    /// followed, in `cmp`, only by such keys. The walk reads each interval
    /// from its restart point to the next one's (or the end, or the first
    /// entry that does not read) and stops after twice the block's bytes.
    pub(crate) fn new<W: Walk<State = S>>(
        cursor: &W,
        cmp: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> Self {
        let mut out = Checkpoints {
            points: Vec::new(),
            keys: Vec::new(),
            intervals: Vec::new(),
            last: None,
        };
        let mut walk = cursor.clone();
        let (budget, room) = (walk.budget(), walk.block_len());
        let mut work = room.saturating_mul(2);
        let mut max = Vec::new();
        let restarts = walk.restart_count();
        for restart in 0..restarts {
            walk.at_restart(restart);
            walk.set_budget(budget);
            let stop = (restart + 1 < restarts).then(|| walk.restart_offset(restart + 1));
            let first = out.points.len();
            let mut n = 0;
            let mut at = walk.restart_offset(restart);
            while walk.step() && Some(walk.current()) != stop {
                // An entry's bytes, at least one: what the walk has read.
                work = work.saturating_sub(walk.current().saturating_sub(at).max(1));
                at = walk.current();
                if work == 0 {
                    return out.close(restart, first);
                }
                let greatest = n == 0 || cmp(walk.key(), &max).is_gt();
                if greatest {
                    max.clear();
                    max.extend_from_slice(walk.key());
                }
                n += 1;
                let spent = budget - walk.budget();
                if stop.is_none() && walk.is_last() && out.last.is_none() {
                    let at = out.keys.len();
                    out.keys.extend_from_slice(walk.key());
                    let key = (at, out.keys.len());
                    out.last = Some(Point {
                        state: walk.state(),
                        key,
                        max: key,
                        spent,
                    });
                }
                let cost = size_of::<Point<S>>() + walk.key().len() + max.len();
                if n % EVERY != 0 || out.bytes() + cost > room {
                    continue;
                }
                let at = out.keys.len();
                out.keys.extend_from_slice(walk.key());
                let key = (at, out.keys.len());
                let max = match greatest {
                    true => key,
                    false => {
                        out.keys.extend_from_slice(&max);
                        (key.1, out.keys.len())
                    }
                };
                out.points.push(Point {
                    state: walk.state(),
                    key,
                    max,
                    spent,
                });
            }
            out = out.close(restart, first);
        }
        out
    }

    /// Notes interval `restart`'s points, from `first` on, if it has any.
    fn close(mut self, restart: usize, first: usize) -> Self {
        if self.points.len() > first {
            self.intervals.push((restart, first, self.points.len()));
        }
        self
    }

    /// The bytes they hold.
    pub(crate) fn bytes(&self) -> usize {
        let points = self.points.len() + usize::from(self.last.is_some());
        points * size_of::<Point<S>>() + self.keys.len() + self.intervals.len() * 24
    }

    /// Moves `cursor`, at the last restart point, to the last entry, as
    /// its walk from there would (false where it has no such point, or too
    /// little key budget left: then it walks).
    pub(crate) fn resume_last<W: Walk<State = S>>(&self, cursor: &mut W) -> bool {
        let Some(point) = &self.last else {
            return false;
        };
        let Some(budget) = cursor.budget().checked_sub(point.spent) else {
            return false;
        };
        cursor.restore(&point.state, &self.keys[point.key.0..point.key.1], budget);
        true
    }

    /// Moves `cursor`, before or on the first entry of restart interval
    /// `restart` with `before` of its key budget left at the restart point,
    /// to the last point of that interval whose greatest key is below the
    /// seek's target (`order`), if any: the state a scan from the restart
    /// point reaches there, every entry before it below the target.
    pub(crate) fn resume<W: Walk<State = S>>(
        &self,
        cursor: &mut W,
        restart: usize,
        before: usize,
        order: &impl Fn(&[u8]) -> Ordering,
    ) {
        let Ok(i) = self
            .intervals
            .binary_search_by_key(&restart, |&(r, _, _)| r)
        else {
            return;
        };
        let (_, first, end) = self.intervals[i];
        let points = &self.points[first..end];
        let below = points.partition_point(|p| order(&self.keys[p.max.0..p.max.1]).is_lt());
        let Some(point) = below.checked_sub(1).map(|k| &points[k]) else {
            return;
        };
        // A cursor with less budget than the walk's stops earlier, on an
        // error: it scans as it would have.
        let Some(budget) = before.checked_sub(point.spent) else {
            return;
        };
        cursor.restore(&point.state, &self.keys[point.key.0..point.key.1], budget);
    }

    /// Whether the block has points in any interval (for tests).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}
