//! One pass over a table's keys, fed as LevelDB's `TableBuilder` feeds its
//! filter block builder (a filter cut at each 2 KiB of data-block offset),
//! one data block in memory at a time: what the keys say of themselves
//! (count, order, format) and the keys of each filter.

use std::cmp::Ordering;
use std::fmt;
use std::ops::ControlFlow;

use super::Table;
use crate::format::user_key;
use crate::format::{Block, BlockKind, Compression, BLOCK_TRAILER_LEN};
use crate::{Error, FilterBlock};

/// How a table's keys are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyFormat {
    /// The keys as the user gave them: tables written directly by a `TableBuilder`.
    User,
    /// A database's internal keys: the user key and an 8-byte tag (sequence
    /// number and type). The filter holds the user keys.
    Internal,
}

impl fmt::Display for KeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyFormat::User => "user",
            KeyFormat::Internal => "internal",
        })
    }
}

/// What one pass over a table's data blocks finds ([`Table::key_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Number of data blocks.
    pub data_blocks: usize,
    /// Number of keys.
    pub keys: usize,
    /// How the data blocks were stored, each way once, in order.
    pub compressions: Vec<Compression>,
    /// The number of keys in each filter a `TableBuilder` would cut from these
    /// blocks (0 for an empty filter).
    pub keys_per_filter: Vec<usize>,
    /// Whether the keys look like a database's internal keys: each at least 8
    /// bytes with a type of 0 (deletion) or 1 (value), user keys ascending and
    /// sequence numbers descending within a user key.
    pub looks_internal: bool,
    /// The first and last keys, as stored (empty for a table without keys).
    pub key_range: (Vec<u8>, Vec<u8>),
    /// The first two neighbouring keys (as stored) out of order: neither
    /// strictly ascending bytewise (user keys) nor, where every key has an
    /// internal key's shape, in LevelDB's internal-key order over the
    /// bytewise comparator. LevelDB's iterators take such a table for
    /// corrupt; a table written under another comparator can be so.
    pub out_of_order: Option<(Vec<u8>, Vec<u8>)>,
    /// Per key format (user, internal): whether some key's last `len % 4`
    /// bytes hold a byte >= 0x80, the only keys the hash variants tell apart.
    variant_keys: [bool; 2],
}

impl KeyStats {
    /// Whether some key, read in `format`, hashes differently under the two
    /// [`HashVariant`](crate::HashVariant)s: without one, a table cannot tell which wrote it.
    pub fn tells_variants_apart(&self, format: KeyFormat) -> bool {
        self.variant_keys[format as usize]
    }
}

impl Table<'_> {
    /// One pass over the data blocks, one block in memory at a time: their
    /// number, keys, compressions, keys per filter and key format.
    pub fn key_stats(&self) -> Result<KeyStats, Error> {
        let mut pass = StatsPass {
            stats: KeyStats {
                looks_internal: true,
                ..KeyStats::default()
            },
            pending: 0,
            previous: Vec::new(),
            unordered: [None, None],
            shaped: true,
        };
        let _ = walk(self, &mut pass)?;
        let mut stats = pass.stats;
        stats.looks_internal &= stats.keys > 0;
        stats.key_range.1 = pass.previous;
        let [bytewise, internal] = pass.unordered;
        stats.out_of_order = match pass.shaped {
            _ if bytewise.is_none() => None,
            true => internal,
            false => bytewise,
        };
        Ok(stats)
    }
}

/// What a walk over a table's keys feeds ([`walk`]); `Break` ends it early.
pub(super) trait FilterSink {
    /// A data block, before its keys.
    fn block(&mut self, _block: &Block<'_>) {}
    /// A key of the filter being gathered.
    fn key(&mut self, key: &[u8]) -> ControlFlow<String>;
    /// Filter `index` is cut: it holds the keys given since the last cut.
    fn cut(&mut self, index: usize) -> ControlFlow<String>;
}

/// Feeds a table's keys to `sink` as LevelDB's `TableBuilder` feeds its
/// filter block builder: `StartBlock(0)`, each data block's keys, then
/// `StartBlock` at the offset after the block and its trailer, which cuts a
/// filter for each 2 KiB boundary passed, and `Finish`, which cuts the keys
/// left. Data blocks lie inside the file, so
/// there are at most as many filters as 2 KiB pieces of the file.
pub(super) fn walk(
    table: &Table<'_>,
    sink: &mut impl FilterSink,
) -> Result<ControlFlow<String>, Error> {
    let mut cut = 0;
    // Whether keys were given since the last cut: `Finish` cuts them.
    let mut pending = false;
    for block in table.data_blocks() {
        let block = block?;
        sink.block(&block);
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Data,
            offset: block.handle.offset,
            what,
        };
        let mut entries = block.entries();
        while let Some((key, _)) = entries.next_entry().map_err(corrupt)? {
            pending = true;
            if let ControlFlow::Break(difference) = sink.key(key) {
                return Ok(ControlFlow::Break(difference));
            }
        }
        let end = block.handle.offset + block.handle.size + BLOCK_TRAILER_LEN;
        while cut < (end >> FilterBlock::BASE_LG) as usize {
            pending = false;
            if let ControlFlow::Break(difference) = sink.cut(cut) {
                return Ok(ControlFlow::Break(difference));
            }
            cut += 1;
        }
    }
    Ok(match pending {
        true => sink.cut(cut),
        false => ControlFlow::Continue(()),
    })
}

/// [`Table::key_stats`]'s pass.
struct StatsPass {
    stats: KeyStats,
    /// Keys since the last cut.
    pending: usize,
    /// The last key.
    previous: Vec<u8>,
    /// The first neighbours out of order bytewise, and out of internal-key
    /// order while every key so far has an internal key's shape.
    unordered: [Option<(Vec<u8>, Vec<u8>)>; 2],
    /// Whether every key so far has an internal key's shape.
    shaped: bool,
}

impl FilterSink for StatsPass {
    fn block(&mut self, block: &Block<'_>) {
        let stats = &mut self.stats;
        stats.data_blocks += 1;
        if let Err(at) = stats.compressions.binary_search(&block.compression) {
            stats.compressions.insert(at, block.compression);
        }
    }

    fn key(&mut self, key: &[u8]) -> ControlFlow<String> {
        let stats = &mut self.stats;
        stats.keys += 1;
        self.pending += 1;
        let high_tail = |k: &[u8]| k[k.len() - k.len() % 4..].iter().any(|&b| b >= 0x80);
        stats.variant_keys[KeyFormat::User as usize] |= high_tail(key);
        stats.variant_keys[KeyFormat::Internal as usize] |= high_tail(user_key(key));
        let shaped = key.len() >= 8 && key[key.len() - 8] <= 1;
        let follows = |unordered: &mut Option<_>, ordered: bool| {
            if !ordered && unordered.is_none() {
                *unordered = Some((self.previous.clone(), key.to_vec()));
            }
        };
        if stats.keys > 1 {
            follows(&mut self.unordered[0], self.previous[..] < *key);
            if self.shaped && shaped {
                let ordered = compare_internal(&self.previous, key) == Ordering::Less;
                follows(&mut self.unordered[1], ordered);
            }
        }
        self.shaped &= shaped;
        stats.looks_internal = self.shaped && self.unordered[1].is_none();
        if stats.keys == 1 {
            stats.key_range.0 = key.to_vec();
        }
        self.previous.clear();
        self.previous.extend_from_slice(key);
        ControlFlow::Continue(())
    }

    fn cut(&mut self, _: usize) -> ControlFlow<String> {
        self.stats
            .keys_per_filter
            .push(std::mem::take(&mut self.pending));
        ControlFlow::Continue(())
    }
}

/// LevelDB's `InternalKeyComparator` over the bytewise comparator: user keys
/// ascending, then tags (sequence and type) descending.
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    let tag = |k: &[u8]| -> u64 {
        let t = &k[k.len().saturating_sub(8)..];
        let mut bytes = [0u8; 8];
        bytes[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(bytes)
    };
    user_key(a)
        .cmp(user_key(b))
        .then_with(|| tag(b).cmp(&tag(a)))
}
