//! A Pebble table's range deletions, read once per table and asked per
//! key: Pebble writes them fragmented (spans sorted by start, disjoint, a
//! span's deletions sharing its bounds), so the span that covers a key is
//! found by binary search.

use crate::Error;

use super::Table;

/// The table's range deletions: each span's bounds and the largest
/// sequence number among its deletions, by start.
#[derive(Clone, Debug, Default)]
pub(super) struct Tombstones {
    spans: Vec<(Vec<u8>, Vec<u8>, u64)>,
    /// Whether the spans are disjoint and sorted, as Pebble writes them;
    /// else (a file crafted so) every span is asked.
    fragmented: bool,
}

impl Tombstones {
    /// The table's range deletions (none without a `rocksdb.range_del2`
    /// block).
    pub(super) fn read(table: &Table<'_>) -> Result<Tombstones, Error> {
        let Some(handle) = table.meta_handle("rocksdb.range_del2")? else {
            return Ok(Tombstones::default());
        };
        let mut spans: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
        table.for_each_range_deletion(handle, |start, end, trailer| match spans.last_mut() {
            Some(last) if last.0 == start && last.1 == end => last.2 = last.2.max(trailer >> 8),
            _ => spans.push((start.to_vec(), end.to_vec(), trailer >> 8)),
        })?;
        let fragmented = spans.windows(2).all(|w| w[0].1 <= w[1].0);
        Ok(Tombstones { spans, fragmented })
    }

    /// The bytes the spans hold.
    pub(super) fn bytes(&self) -> u64 {
        let each = |(start, end, _): &(Vec<u8>, Vec<u8>, u64)| start.len() + end.len() + 56;
        self.spans.iter().map(each).sum::<usize>() as u64
    }

    /// The largest sequence number of the deletions that cover `key`
    /// (bytewise), 0 for none.
    pub(super) fn covering(&self, key: &[u8]) -> u64 {
        let covers =
            |(start, end, _): &&(Vec<u8>, Vec<u8>, u64)| &start[..] <= key && key < &end[..];
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
            .filter(|span| covers(span))
            .map_or(0, |span| span.2)
    }
}
