//! Checkpoints in a block's long restart intervals, so that a seek does
//! not scan an interval of many entries from its restart point for every
//! key. A block kept for lookups (an index, a partition, a filter's index)
//! is walked once, interval by interval as a seek scans each; every
//! [`EVERY`]th entry of an interval is kept: the cursor's state there, its
//! key, and the greatest key of the interval up to it. A seek that lands in
//! the interval binary-searches those greatest keys for the last below its
//! target, resumes the scan there and scans at most [`EVERY`] entries past
//! it. Every entry before that point is below the target, so the scan
//! stops where RocksDB's would, in order or out of it.

use std::cmp::Ordering;
use std::mem::size_of;

use super::Cursor;
use crate::format::BlockHandle;

/// Entries between checkpoints: what a seek scans at most past the one it
/// resumes from (where the block's checkpoints fit in its size).
pub(crate) const EVERY: usize = 16;

/// A block's checkpoints, within its size: what they hold (states, keys)
/// adds up to at most the block's length; past that, an interval's later
/// entries are scanned as before.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checkpoints {
    points: Vec<Point>,
    /// The points' keys and greatest keys, one after the other.
    keys: Vec<u8>,
    /// Each restart interval with points: its restart index, and its points'
    /// range in `points`.
    intervals: Vec<(usize, usize, usize)>,
    /// The last entry, as `seek_to_last` reaches it from the last restart
    /// point (its key in `keys`).
    last: Option<Point>,
}

/// A cursor's state on an entry, and what the seek compares.
#[derive(Clone, Debug)]
struct Point {
    current: usize,
    next: usize,
    entry: usize,
    value: (usize, usize),
    handle: Option<BlockHandle>,
    key: (usize, usize),
    /// The interval's greatest key up to this entry, in `keys`.
    max: (usize, usize),
    /// The key budget a scan from the restart point has spent here.
    spent: usize,
}

impl Checkpoints {
    /// The bytes they hold.
    pub(crate) fn bytes(&self) -> usize {
        let points = self.points.len() + usize::from(self.last.is_some());
        points * size_of::<Point>() + self.keys.len() + self.intervals.len() * 24
    }

    /// Moves `cursor`, at the last restart point, to the last entry, as
    /// its walk from there would (false where it has no such point, or too
    /// little key budget left: then it walks).
    pub(super) fn resume_last(&self, cursor: &mut Cursor<'_>) -> bool {
        let Some(point) = &self.last else {
            return false;
        };
        let Some(budget) = cursor.budget.checked_sub(point.spent) else {
            return false;
        };
        self.restore(cursor, point, budget);
        true
    }

    /// Moves `cursor`, on the first entry of restart interval `restart`
    /// with `before` of its key budget left before it, to the last point of
    /// that interval whose greatest key is below the seek's target
    /// (`order`), if any: the state a scan from the restart point reaches
    /// there, every entry before it below the target.
    pub(super) fn resume(
        &self,
        cursor: &mut Cursor<'_>,
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
        self.restore(cursor, point, budget);
    }

    /// Puts `cursor` in `point`'s state, with `budget` of keys left.
    fn restore(&self, cursor: &mut Cursor<'_>, point: &Point, budget: usize) {
        cursor.current = point.current;
        cursor.next = point.next;
        cursor.entry = point.entry;
        cursor.value = point.value;
        cursor.handle = point.handle;
        cursor.budget = budget;
        cursor.key.clear();
        cursor
            .key
            .extend_from_slice(&self.keys[point.key.0..point.key.1]);
    }
}

impl Cursor<'_> {
    /// The checkpoints of this cursor's block (see the module), from a
    /// cursor that has not moved. `cmp` orders two keys of the block so
    /// that every seek's order is monotone in it: a key at or past a seek's
    /// target is followed, in `cmp`, only by such keys. The walk reads each
    /// interval as a seek scans it (from its restart point to the next
    /// one's, or the end, or the first entry that does not read) and stops
    /// after twice the block's bytes.
    pub(crate) fn checkpoints(&self, cmp: impl Fn(&[u8], &[u8]) -> Ordering) -> Checkpoints {
        let mut out = Checkpoints::default();
        let mut walk = self.clone();
        walk.checkpoints = None;
        let (budget, room) = (walk.budget, self.block.len());
        let mut work = self.block.len().saturating_mul(2);
        let mut max = Vec::new();
        for restart in 0..walk.restarts {
            walk.at_restart(restart);
            walk.budget = budget;
            let stop = (restart + 1 < walk.restarts).then(|| walk.restart(restart + 1));
            let first = out.points.len();
            let mut n = 0;
            while walk.advance() == Ok(true) && Some(walk.current) != stop {
                work = work.saturating_sub(walk.next.saturating_sub(walk.current).max(1));
                if work == 0 {
                    return out.close(restart, first);
                }
                let greatest = n == 0 || cmp(&walk.key, &max).is_gt();
                if greatest {
                    max.clone_from(&walk.key);
                }
                n += 1;
                let state = |key, max| Point {
                    current: walk.current,
                    next: walk.next,
                    entry: walk.entry,
                    value: walk.value,
                    handle: walk.handle,
                    key,
                    max,
                    spent: budget - walk.budget,
                };
                if stop.is_none() && walk.next >= walk.entries_end && out.last.is_none() {
                    let at = out.keys.len();
                    out.keys.extend_from_slice(&walk.key);
                    out.last = Some(state((at, out.keys.len()), (at, out.keys.len())));
                }
                let cost = size_of::<Point>() + walk.key.len() + max.len();
                if n % EVERY != 0 || out.bytes() + cost > room {
                    continue;
                }
                let at = out.keys.len();
                out.keys.extend_from_slice(&walk.key);
                let key = (at, out.keys.len());
                let max = match greatest {
                    true => key,
                    false => {
                        out.keys.extend_from_slice(&max);
                        (key.1, out.keys.len())
                    }
                };
                out.points.push(state(key, max));
            }
            out = out.close(restart, first);
        }
        out
    }
}

impl Checkpoints {
    /// Notes interval `restart`'s points, from `first` on, if it has any.
    fn close(mut self, restart: usize, first: usize) -> Self {
        if self.points.len() > first {
            self.intervals.push((restart, first, self.points.len()));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Layout;

    /// A block of `keys` (each sharing its prefix with the one before, values
    /// one byte) with restart points at the entries `restarts`.
    fn block(keys: &[Vec<u8>], restarts: &[usize]) -> Vec<u8> {
        let (mut out, mut offsets) = (Vec::new(), Vec::new());
        let mut previous: &[u8] = &[];
        for (i, key) in keys.iter().enumerate() {
            offsets.push(out.len() as u32);
            let shared = match restarts.contains(&i) {
                true => 0,
                false => key.iter().zip(previous).take_while(|(a, b)| a == b).count(),
            };
            out.extend_from_slice(&[shared as u8, (key.len() - shared) as u8, 1]);
            out.extend_from_slice(&key[shared..]);
            out.push(b'v');
            previous = key;
        }
        for &r in restarts {
            out.extend_from_slice(&offsets[r].to_le_bytes());
        }
        out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        out
    }

    /// What a seek of every target finds, and the last entry, with and
    /// without checkpoints.
    fn same_seeks(keys: &[Vec<u8>], restarts: &[usize]) {
        let b = block(keys, restarts);
        let plain = Cursor::new(&b, Layout::Plain).unwrap();
        let checkpoints = plain.checkpoints(<[u8]>::cmp);
        assert!(!checkpoints.points.is_empty());
        let fast = plain.clone().with_checkpoints(&checkpoints);
        let mut targets: Vec<Vec<u8>> = keys.to_vec();
        targets.extend(keys.iter().map(|k| [&k[..], b"\0"].concat()));
        targets.extend([vec![], vec![0xff; 4]]);
        for target in &targets {
            let found = |mut cursor: Cursor<'_>| {
                let more = cursor.seek(|key| key.cmp(target));
                (more, cursor.key().to_vec(), cursor.value().to_vec())
            };
            assert_eq!(found(plain.clone()), found(fast.clone()), "{target:?}");
        }
        let last = |mut cursor: Cursor<'_>| (cursor.seek_to_last(), cursor.key().to_vec());
        assert_eq!(last(plain.clone()), last(fast));
    }

    #[test]
    fn seeks_find_what_a_scan_from_the_restart_point_finds() {
        let sorted: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("k{:05}", i * 7).into_bytes())
            .collect();
        same_seeks(&sorted, &[0]);
        same_seeks(&sorted, &[0, 100, 101, 250]);
        // Out of order: a scan stops at the first key at or past the
        // target, wherever the greater keys lie.
        let shuffled: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("k{:05}", i * 7919 % 1000).into_bytes())
            .collect();
        same_seeks(&shuffled, &[0]);
        same_seeks(&shuffled, &[0, 40, 200]);
    }
}
