//! RocksDB's cursor walked for its checkpoints (`format/checkpoints.rs`):
//! what a checkpoint holds of it, and its seeks resumed from one.

use std::cmp::Ordering;

use super::Cursor;
use crate::format::checkpoints::{self, Walk};
use crate::format::BlockHandle;

/// A RocksDB block's checkpoints.
pub(crate) type Checkpoints = checkpoints::Checkpoints<State>;

/// The cursor's state on an entry, but its key and budget.
#[derive(Clone, Debug)]
pub(crate) struct State {
    current: usize,
    next: usize,
    entry: usize,
    value: (usize, usize),
    handle: Option<BlockHandle>,
}

impl Walk for Cursor<'_> {
    type State = State;

    fn restart_count(&self) -> usize {
        self.restarts
    }

    fn restart_offset(&self, i: usize) -> usize {
        self.restart(i)
    }

    fn at_restart(&mut self, i: usize) {
        Cursor::at_restart(self, i);
    }

    fn step(&mut self) -> bool {
        self.advance() == Ok(true)
    }

    fn current(&self) -> usize {
        self.current
    }

    fn is_last(&self) -> bool {
        self.next >= self.entries_end
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn budget(&self) -> usize {
        self.budget
    }

    fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    fn block_len(&self) -> usize {
        self.block.len()
    }

    fn state(&self) -> State {
        State {
            current: self.current,
            next: self.next,
            entry: self.entry,
            value: self.value,
            handle: self.handle,
        }
    }

    fn restore(&mut self, state: &State, key: &[u8], budget: usize) {
        self.current = state.current;
        self.next = state.next;
        self.entry = state.entry;
        self.value = state.value;
        self.handle = state.handle;
        self.budget = budget;
        self.key.clear();
        self.key.extend_from_slice(key);
    }
}

impl Cursor<'_> {
    /// The checkpoints of this cursor's block, from a cursor that has not
    /// moved: see [`checkpoints::Checkpoints::new`] (RocksDB's scan stops
    /// at the next restart point, as the walk does).
    pub(crate) fn checkpoints(&self, cmp: impl Fn(&[u8], &[u8]) -> Ordering) -> Checkpoints {
        let mut walk = self.clone();
        walk.checkpoints = None;
        Checkpoints::new(&walk, cmp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{BlockIter, Layout};

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
        assert!(!checkpoints.is_empty());
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
        // LevelDB's cursor, whose scan runs on past the next restart point.
        let plain = BlockIter::new(&b);
        let checkpoints = plain.checkpoints(<[u8]>::cmp);
        assert!(!checkpoints.is_empty());
        let fast = plain.clone().with_checkpoints(&checkpoints);
        for target in &targets {
            let found = |mut iter: BlockIter<'_>| {
                iter.seek(target, <[u8]>::cmp);
                (iter.valid(), iter.key().to_vec(), iter.value().to_vec())
            };
            assert_eq!(found(plain.clone()), found(fast.clone()), "{target:?}");
            // A second seek from where the first left the cursor.
            let again = |mut iter: BlockIter<'_>| {
                iter.seek(&keys[keys.len() / 2], <[u8]>::cmp);
                iter.seek(target, <[u8]>::cmp);
                (iter.valid(), iter.key().to_vec(), iter.value().to_vec())
            };
            assert_eq!(again(plain.clone()), again(fast.clone()), "{target:?}");
        }
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
