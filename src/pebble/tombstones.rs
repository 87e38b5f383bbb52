//! A Pebble table's range deletions, read once per table and asked per
//! key: Pebble writes them fragmented (spans sorted by start, disjoint, a
//! span's deletions sharing its bounds), so the span that covers a key is
//! found by binary search.

use crate::format::{BlockKind, Limit};
use crate::Error;

use super::{Comparer, Table};

/// What a span holds besides its keys' bytes: two vectors and a number.
const SPAN_OVERHEAD: usize = 56;

/// A span's start and end user keys and the largest sequence number among
/// its deletions.
type Span = (Vec<u8>, Vec<u8>, u64);

/// The table's range deletions, by start.
#[derive(Clone, Debug, Default)]
pub(super) struct Tombstones {
    spans: Vec<Span>,
    /// Whether each span ends past its start and the spans are disjoint
    /// and sorted, as Pebble writes them; else (a file crafted so) every
    /// span is asked.
    fragmented: bool,
}

impl Tombstones {
    /// The table's range deletions: the block `rocksdb.range_del2` names,
    /// or where there is none (as Pebble v1 reads) `rocksdb.range_del`.
    pub(super) fn read(table: &Table<'_>) -> Result<Tombstones, Error> {
        let comparer = table.comparer().unwrap_or(Comparer::Bytewise);
        let handle = match table.meta_handle("rocksdb.range_del2")? {
            Some(handle) => handle,
            None => match table.meta_handle("rocksdb.range_del")? {
                Some(handle) => handle,
                None => return Ok(Tombstones::default()),
            },
        };
        // Keys rebuilt from shared prefixes, and a codec's ratio, could make
        // the copies far larger than the file: they are held up to a limit.
        let limit = table.file.len().saturating_mul(2).saturating_add(64 << 10);
        let (mut spans, mut held) = (Vec::<Span>::new(), 0u64);
        table.for_each_range_deletion(handle, |start, end, trailer| match spans.last_mut() {
            Some(last) if last.0 == start && last.1 == end => last.2 = last.2.max(trailer >> 8),
            _ if held > limit => {}
            _ => {
                held += (start.len() + end.len() + SPAN_OVERHEAD) as u64;
                spans.push((start.to_vec(), end.to_vec(), trailer >> 8));
            }
        })?;
        if held > limit {
            return Err(Error::LimitExceeded {
                block: BlockKind::RangeDeletion,
                offset: handle.offset,
                what: Limit::RangeDeletions,
                found: held,
                limit,
            });
        }
        let before = |a: &[u8], b: &[u8]| comparer.compare(a, b).is_lt();
        let fragmented = spans.iter().all(|(start, end, _)| before(start, end))
            && spans.windows(2).all(|w| !before(&w[1].0, &w[0].1));
        Ok(Tombstones { spans, fragmented })
    }

    /// The bytes the spans hold.
    pub(super) fn bytes(&self) -> u64 {
        let each = |(start, end, _): &Span| start.len() + end.len() + SPAN_OVERHEAD;
        self.spans.iter().map(each).sum::<usize>() as u64
    }

    /// The largest sequence number of the deletions that cover `key` (in
    /// the comparer's order, in which Pebble wrote the spans), 0 for none.
    pub(super) fn covering(&self, key: &[u8], comparer: Comparer) -> u64 {
        let (at_or_before, before) = (
            |a: &[u8], b: &[u8]| comparer.compare(a, b).is_le(),
            |a: &[u8], b: &[u8]| comparer.compare(a, b).is_lt(),
        );
        let covers = |(start, end, _): &&Span| at_or_before(start, key) && before(key, end);
        if !self.fragmented {
            return self
                .spans
                .iter()
                .filter(covers)
                .map(|s| s.2)
                .max()
                .unwrap_or(0);
        }
        // The last span starting at or before the key is the only one that
        // may cover it.
        let at = self
            .spans
            .partition_point(|(start, _, _)| &start[..] <= key);
        at.checked_sub(1)
            .map(|i| &self.spans[i])
            .filter(covers)
            .map_or(0, |span| span.2)
    }
}
