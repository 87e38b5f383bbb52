//! Checking a RocksDB table's filter against the table's own keys: each
//! Bloom filter (or partition) rebuilt from the keys RocksDB put in it and
//! compared byte for byte; each Ribbon filter solved again from the keys'
//! hashes and compared byte for byte.

use super::builders::{fast_local_len, fast_local_probes, legacy_lines, legacy_probes};
use super::ribbon::{num_slots, sized_by, solve};
use super::{FilterBits, SstFilter, Table};
use crate::format::BlockHandle;
use crate::{BloomFilterPolicy, Error, FilterBlock, FilterBlockBuilder};

/// A filter of the table (the full filter, or one partition) and the keys
/// the table puts in it.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterReport {
    /// Its index among the partitions (0 for a full filter).
    pub index: usize,
    /// The keys and prefixes the table adds to it, as RocksDB's builder
    /// counts them (a hash equal to the last one once; together, the
    /// property `rocksdb.num.filter_entries`).
    pub keys: u64,
    /// Its payload's size in bytes, metadata included.
    pub bytes: usize,
    /// What the check found.
    pub check: FilterCheck,
}

/// What checking one filter found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FilterCheck {
    /// Rebuilt by RocksDB 7.8's builder, at these bits per key (the range
    /// that gives the stored size and probes), byte for byte equal.
    Built {
        /// Bits per key: the smallest and largest that build these bytes.
        bits_per_key: (f64, f64),
    },
    /// Equal to its rebuild with the stored size and probes, though no bits
    /// per key of RocksDB 7.8's default sizing gives that size for these
    /// keys (another writer's sizing, or `optimize_filters_for_memory`).
    Rebuilt,
    /// Not rebuilt (a filter of fixed answer), and every
    /// key of the table matches it.
    EveryKeyMatches,
    /// The stored filter differs from its rebuild (or, for a filter not
    /// rebuilt, rules out a key of the table).
    Mismatch {
        /// What differs.
        what: String,
    },
}

/// What [`Table::check_filter`] found for the table's filter.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// The table has no filter RocksDB reads.
    NoFilter,
    /// The filter cannot be checked against the keys: why.
    NotChecked {
        /// Why.
        why: &'static str,
    },
    /// Each filter (one, or one per partition), checked.
    Filters(Vec<FilterReport>),
}

impl Verdict {
    /// Whether every filter checked is as RocksDB makes it.
    pub fn ok(&self) -> bool {
        match self {
            Verdict::NoFilter => true,
            Verdict::NotChecked { .. } => false,
            Verdict::Filters(filters) => filters
                .iter()
                .all(|f| !matches!(f.check, FilterCheck::Mismatch { .. })),
        }
    }
}

/// Keys to add for a user key, as `FullFilterBlockBuilder` adds them: the
/// whole key (with whole-key filtering) and its prefix (with a prefix
/// extractor, where the key is in its domain).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Prefix {
    /// No extractor.
    None,
    /// `rocksdb.FixedPrefix.N`: the first N bytes of keys of N or more.
    Fixed(usize),
    /// `rocksdb.CappedPrefix.N`: the first N bytes, or the whole key.
    Capped(usize),
    /// `rocksdb.Noop`: the whole key.
    Whole,
}

impl Prefix {
    /// The extractor a table names (`None`: none), if this crate knows it
    /// by the name RocksDB's reader gives it (`AsString`, the length in
    /// plain decimal): a reader whose extractor's name differs from the
    /// table's does no prefix filtering.
    pub(crate) fn of(name: Option<&str>) -> Option<Prefix> {
        let Some(name) = name else {
            return Some(Prefix::None);
        };
        let len = |rest: &str| rest.parse::<usize>().ok().filter(|n| n.to_string() == rest);
        if let Some(n) = name.strip_prefix("rocksdb.FixedPrefix.").and_then(len) {
            return Some(Prefix::Fixed(n));
        }
        if let Some(n) = name.strip_prefix("rocksdb.CappedPrefix.").and_then(len) {
            return Some(Prefix::Capped(n));
        }
        (name == "rocksdb.Noop").then_some(Prefix::Whole)
    }

    /// The key's prefix, where the key is in the extractor's domain.
    pub(crate) fn of_key<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            Prefix::None => None,
            Prefix::Fixed(n) => key.get(..n),
            Prefix::Capped(n) => Some(&key[..n.min(key.len())]),
            Prefix::Whole => Some(key),
        }
    }
}

impl Table<'_> {
    /// Checks the table's filter against the table's keys (see the module
    /// notes): each Bloom filter rebuilt and compared, each Ribbon filter
    /// solved again from its entries' hashes and compared. One pass over
    /// the keys, holding one rebuilt filter (a Ribbon filter's hashes, 8
    /// bytes an entry, then its system, 20 bytes a slot) at a time. Errors
    /// are the table's (a block that does not read); a filter that does not
    /// read is a [`FilterCheck::Mismatch`].
    ///
    /// The keys each filter gets are as the writer's `FullFilterBlockBuilder`
    /// and `PartitionedFilterBlockBuilder` add them, which changed in RocksDB
    /// 9.6 for filters of prefixes alone (7.8 adds an empty prefix to each
    /// filter; 9.6 the previous key's prefix to each partition it starts):
    /// the table is checked as the one its format_version suggests (9.6 from
    /// format_version 6), then, where that fails, as the other.
    pub fn check_filter(&self) -> Result<Verdict, Error> {
        let (first, second) = match self.footer().format_version >= 6 {
            true => (Writer::Since96, Writer::Before96),
            false => (Writer::Before96, Writer::Since96),
        };
        let check = self.check_filter_as(first)?;
        if check.ok() || self.whole_key_filtering() || self.prefix_extractor().is_none() {
            return Ok(check);
        }
        let other = self.check_filter_as(second)?;
        Ok(if other.ok() { other } else { check })
    }

    fn check_filter_as(&self, writer: Writer) -> Result<Verdict, Error> {
        let filter = match self.filter() {
            Ok(None) => return Ok(Verdict::NoFilter),
            Ok(Some(filter)) => filter,
            Err(e) => return Ok(Verdict::Filters(vec![Rebuild::unreadable(e).finish(0)])),
        };
        let Some(prefix) = Prefix::of(self.prefix_extractor()) else {
            return Ok(Verdict::NotChecked {
                why: "a prefix extractor this crate does not know",
            });
        };
        let whole = self.whole_key_filtering();
        match filter {
            SstFilter::BlockBased(block) => self.check_block_based(block, whole, prefix),
            SstFilter::Full(bits) => {
                let mut keys = Keys::new(Rebuild::new(bits), whole, prefix, writer);
                self.for_each_key(|key, _| keys.add(self.strip_timestamp(key)))?;
                Ok(Verdict::Filters(vec![keys.rebuild.finish(0)]))
            }
            SstFilter::Partitioned(partitions) => {
                self.check_partitions(partitions, whole, prefix, writer)
            }
        }
    }

    /// Each partition rebuilt from its keys. Keys come in order, and so do
    /// partitions: under a comparator this crate knows, each key goes to the
    /// first partition whose separator is not below it (the last past them
    /// all). Under any other, partitions follow the file: one ends after
    /// the data block whose index entry is its separator (partitions cut
    /// with the index's), or after the last key that is its separator's
    /// user key (partitions cut on their own). A partition is checked once
    /// the keys move past it. RocksDB adds to a partition it cuts the
    /// prefix of the key that comes next, if not its last prefix
    /// (`PartitionedFilterBlockBuilder::MaybeCutAFilterBlock`).
    fn check_partitions(
        &self,
        partitions: &super::Partitions<'_>,
        whole: bool,
        prefix: Prefix,
        writer: Writer,
    ) -> Result<Verdict, Error> {
        let count = partitions.len();
        if let Some(report) = out_of_order(partitions) {
            return Ok(Verdict::Filters(vec![report]));
        }
        let known = self.key_order().is_some();
        let block_ends = match known {
            true => Default::default(),
            false => self.blocks_ending_partitions(partitions)?,
        };
        let mut index = partitions.walk();
        fn start<'f>(at: Option<(BlockHandle, Result<&'f FilterBits<'f>, &Error>)>) -> Rebuild<'f> {
            match at {
                Some((_, Ok(bits))) => Rebuild::new(bits),
                Some((_, Err(e))) => Rebuild::unreadable(e),
                None => Rebuild::unreadable(&"no such partition"),
            }
        }
        let mut reports = Vec::with_capacity(count.min(1 << 16));
        let (mut at, mut keys) = (0, Keys::new(start(index.filter()), whole, prefix, writer));
        // The previous key and its data block, for partitions in file order.
        let (mut last_key, mut last_block) = (None::<Vec<u8>>, None::<u64>);
        self.for_each_key(|key, block| {
            while at + 1 < count {
                let ends = match known {
                    true => !index.holds(key),
                    false => {
                        let block_ended = last_block.is_some_and(|b| b != block)
                            && last_block
                                .and_then(|b| block_ends.get(&b))
                                .map(Vec::as_slice)
                                == index.separator();
                        let key_ended = last_key
                            .as_deref()
                            .is_some_and(|last| last != key && index.holds(last));
                        block_ended || key_ended
                    }
                };
                if !ends {
                    break;
                }
                if keys.rebuild.keys > 0 {
                    keys.cut_before(self.strip_timestamp(key));
                }
                index.advance();
                let done = std::mem::replace(&mut keys.rebuild, start(index.filter()));
                reports.push(done.finish(at));
                keys.reset();
                at += 1;
            }
            keys.add(self.strip_timestamp(key));
            if !known {
                let last = last_key.get_or_insert_with(Vec::new);
                last.clear();
                last.extend_from_slice(key);
                last_block = Some(block);
            }
        })?;
        if count > 0 {
            reports.push(keys.rebuild.finish(at));
        }
        for i in at + 1..count {
            index.advance();
            reports.push(start(index.filter()).finish(i));
        }
        Ok(Verdict::Filters(reports))
    }
}

impl Table<'_> {
    /// A block-based filter rebuilt as RocksDB 6.x's
    /// `BlockBasedFilterBlockBuilder` builds it: LevelDB's filter block (a
    /// filter per 2 KiB of data-block offsets), each filter of the entries
    /// of the blocks starting there (every entry's user key, and its prefix
    /// unless the entry before in that filter had the same), by RocksDB's
    /// legacy Bloom filter (its signed hash). Bits per key are those the
    /// first filter's probes allow (RocksDB rounds them to whole ones), or
    /// past 43 those its size gives: at most four are tried, in one pass.
    fn check_block_based(
        &self,
        block: &[u8],
        whole: bool,
        prefix: Prefix,
    ) -> Result<Verdict, Error> {
        let stored = match FilterBlock::parse(block) {
            Ok(stored) => stored,
            Err(e) => return Ok(Verdict::Filters(vec![Rebuild::unreadable(&e).finish(0)])),
        };
        // The first filter with keys: its probes, and its size in bytes.
        let first = stored.filters().enumerate().find(|(_, f)| f.len() > 1);
        let probes = first.map_or(6, |(_, f)| f[f.len() - 1]);
        let mut candidates: Vec<usize> = (1..=43usize)
            .filter(|&b| ((b as f64 * 0.69) as usize).clamp(1, 30) == usize::from(probes))
            .collect();
        if let (30, Some((index, filter))) = (probes, first) {
            // 44 bits per key and more all give 30 probes: the bits per
            // key are those that size that filter for its entries.
            let mut n = 0u64;
            self.block_filter_entries(whole, prefix, |offset, _| {
                n += u64::from(offset >> 11 == index as u64)
            })?;
            let bytes = (filter.len() - 1) as u64;
            candidates = (44..=1 << 16)
                .filter(|&b| (n.saturating_mul(b as u64).max(64)).div_ceil(8) == bytes)
                .take(4)
                .collect();
        }
        let mut builders: Vec<FilterBlockBuilder<BloomFilterPolicy>> = candidates
            .iter()
            .map(|&b| FilterBlockBuilder::new(BloomFilterPolicy::rocksdb_legacy(b)))
            .collect();
        let (mut block_at, mut entries) = (None, 0u64);
        self.block_filter_entries(whole, prefix, |offset, entry| {
            if block_at != Some(offset) {
                block_at = Some(offset);
                builders.iter_mut().for_each(|b| b.start_block(offset));
            }
            builders.iter_mut().for_each(|b| b.add_key(entry));
            entries += 1;
        })?;
        let report = |check| FilterReport {
            index: 0,
            keys: entries,
            bytes: block.len(),
            check,
        };
        for (bits, builder) in candidates.iter().zip(&mut builders) {
            if builder.finish() == block {
                let bits = *bits as f64;
                return Ok(Verdict::Filters(vec![report(FilterCheck::Built {
                    bits_per_key: (bits, bits),
                })]));
            }
        }
        let what = match builders.first_mut().map(|b| b.finish().to_vec()) {
            Some(built) => {
                let at = built.iter().zip(block).position(|(a, b)| a != b);
                format!(
                    "the block-based filter rebuilt from its {entries} entries ({} bytes, bits per key {}) differs from the stored one ({} bytes){}",
                    built.len(),
                    candidates[0],
                    block.len(),
                    at.map(|at| format!(" at byte {at}")).unwrap_or_default()
                )
            }
            None => format!("no bits per key gives the stored filter's {probes} probes"),
        };
        Ok(Verdict::Filters(vec![report(FilterCheck::Mismatch {
            what,
        })]))
    }
}

impl Table<'_> {
    /// Each entry RocksDB 6.x's `BlockBasedFilterBlockBuilder::Add` puts in
    /// a block-based filter, with the offset of its key's data block: the
    /// key's prefix unless the one before in that filter was the same (an
    /// empty one never counts as the one before), then the whole key.
    fn block_filter_entries(
        &self,
        whole: bool,
        prefix: Prefix,
        mut each: impl FnMut(u64, &[u8]),
    ) -> Result<(), Error> {
        let (mut generated, mut last_prefix) = (0u64, None::<Vec<u8>>);
        self.for_each_key(|key, offset| {
            // A filter generated: its entries, and the last prefix, go.
            if offset >> 11 > generated {
                generated = offset >> 11;
                last_prefix = None;
            }
            let key = self.strip_timestamp(key);
            if let Some(p) = prefix.of_key(key) {
                let repeated = last_prefix
                    .as_deref()
                    .is_some_and(|last| !last.is_empty() && last == p);
                if !repeated {
                    each(offset, p);
                    last_prefix = Some(p.to_vec());
                }
            }
            if whole {
                each(offset, key);
            }
        })?;
        Ok(())
    }
}

/// The first partition named out of the file's order (or twice), as a
/// mismatch: RocksDB writes each partition after the one before, so a
/// check rebuilds each once, in one pass over the keys.
fn out_of_order(partitions: &super::Partitions<'_>) -> Option<FilterReport> {
    let (mut walk, mut end) = (partitions.walk(), 0u64);
    let mut index = 0;
    while let Some((h, _)) = walk.filter() {
        if h.offset < end {
            return Some(FilterReport {
                index,
                keys: 0,
                bytes: 0,
                check: FilterCheck::Mismatch {
                    what: format!(
                        "partition {index} (offset {}) is named out of the file's order, or twice",
                        h.offset
                    ),
                },
            });
        }
        end = h.offset.saturating_add(h.size).saturating_add(5);
        walk.advance();
        index += 1;
    }
    None
}

/// The keys a filter gets, as RocksDB 7.8's `FullFilterBlockBuilder::Add`
/// gives them, quirks included: with a prefix extractor and no whole keys,
/// the "last prefix" it adds once per filter (for prefix `SeekForPrev`
/// across partitions) is an empty one, as that mode never records a
/// prefix; a partition gets the previous one's last prefix, and the prefix
/// of the key after it (`PartitionedFilterBlockBuilder::MaybeCutAFilterBlock`).
#[derive(Debug)]
struct Keys<'f> {
    rebuild: Rebuild<'f>,
    writer: Writer,
    whole: bool,
    prefix: Prefix,
    last_key_in_domain: bool,
    last_prefix_recorded: bool,
    last_prefix: Vec<u8>,
    last_whole_recorded: bool,
    last_whole: Vec<u8>,
}

impl<'f> Keys<'f> {
    fn new(rebuild: Rebuild<'f>, whole: bool, prefix: Prefix, writer: Writer) -> Self {
        Keys {
            rebuild,
            writer,
            whole,
            prefix,
            last_key_in_domain: false,
            last_prefix_recorded: false,
            last_prefix: Vec::new(),
            last_whole_recorded: false,
            last_whole: Vec::new(),
        }
    }

    /// `FullFilterBlockBuilder::Add` (9.6: `PartitionedFilterBlockBuilder::AddImpl`
    /// between cuts).
    fn add(&mut self, key: &[u8]) {
        let prefix = self.prefix.of_key(key);
        if self.writer == Writer::Since96 {
            match (self.whole, prefix) {
                (true, Some(prefix)) => self.rebuild.add_key_and_alt(key, prefix),
                (true, None) => self.rebuild.add(key),
                (false, Some(prefix)) => self.rebuild.add(prefix),
                (false, None) => {}
            }
            if let Some(prefix) = prefix {
                self.last_prefix.clear();
                self.last_prefix.extend_from_slice(prefix);
            }
            self.last_key_in_domain = prefix.is_some();
            return;
        }
        if !self.last_prefix_recorded && self.last_key_in_domain {
            self.rebuild.add(&self.last_prefix);
            self.last_prefix_recorded = true;
        }
        if self.whole {
            if prefix.is_none() {
                self.rebuild.add(key);
            } else if !self.last_whole_recorded || self.last_whole != key {
                self.rebuild.add(key);
                self.last_whole_recorded = true;
                self.last_whole = key.to_vec();
            }
        }
        self.last_key_in_domain = prefix.is_some();
        let Some(prefix) = prefix else { return };
        if !self.whole {
            self.rebuild.add(prefix);
        } else if !self.last_prefix_recorded || self.last_prefix != prefix {
            self.rebuild.add(prefix);
            self.last_prefix_recorded = true;
            self.last_prefix = prefix.to_vec();
        }
    }

    /// What a partition gets as it is cut before `next`: the next key's
    /// prefix (7.8: unless it is the last one recorded).
    fn cut_before(&mut self, next: &[u8]) {
        let Some(prefix) = self.prefix.of_key(next) else {
            return;
        };
        match self.writer {
            // `AddKeyAndAlt(prefix, prefix)`: counted unless it repeats the
            // last key or prefix.
            Writer::Since96 if self.whole => self.rebuild.add_key_and_alt(prefix, prefix),
            Writer::Since96 => self.rebuild.add(prefix),
            Writer::Before96 if prefix != self.last_prefix => self.rebuild.add(prefix),
            Writer::Before96 => {}
        }
    }

    /// After a partition is cut: 7.8's `FullFilterBlockBuilder::Reset`; 9.6
    /// starts the next partition with the previous key's prefix.
    fn reset(&mut self) {
        self.last_whole_recorded = false;
        self.last_prefix_recorded = false;
        if self.writer == Writer::Since96 && self.last_key_in_domain {
            self.rebuild.add(&self.last_prefix);
        }
    }
}

/// Which RocksDB's filter builders added a table's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writer {
    /// Up to 9.5, as 7.8.
    Before96,
    /// 9.6 and later (`AddKeyAndAlt`).
    Since96,
}

/// One filter rebuilt key by key: its bits set again (Bloom), or its
/// entries' hashes kept to solve again (Ribbon), or its keys probed (fixed
/// answers).
#[derive(Debug)]
struct Rebuild<'f> {
    /// The stored filter, or why it does not read.
    bits: Result<&'f FilterBits<'f>, String>,
    out: Vec<u8>,
    /// A Ribbon filter's entries as RocksDB's builder holds them, up to one
    /// more than its slots (past which it cannot be the filter's).
    hashes: Vec<u64>,
    keys: u64,
    /// Hashes as RocksDB's builder counts them: the same one in a row
    /// once; `last_hash` is the last counted, `last_alt` the last prefix
    /// `AddKeyAndAlt` was given.
    distinct: u64,
    last_hash: Option<u64>,
    last_alt: Option<u64>,
    /// The first key (by index) the filter does not match.
    unmatched: Option<u64>,
}

impl<'f> Rebuild<'f> {
    fn new(bits: &'f FilterBits<'f>) -> Self {
        Rebuild {
            out: vec![0; bits.bit_array().len()],
            ..Rebuild::with(Ok(bits))
        }
    }

    fn unreadable(e: &dyn std::fmt::Display) -> Self {
        Rebuild::with(Err(e.to_string()))
    }

    fn with(bits: Result<&'f FilterBits<'f>, String>) -> Self {
        Rebuild {
            bits,
            out: Vec::new(),
            hashes: Vec::new(),
            keys: 0,
            distinct: 0,
            last_hash: None,
            last_alt: None,
            unmatched: None,
        }
    }

    /// `AddKey`: a hash equal to the last one counted is not counted again.
    fn add(&mut self, key: &[u8]) {
        if let Some(h) = self.set(key) {
            if self.last_hash != Some(h) {
                self.count(h);
            }
        }
    }

    /// An entry of the filter, as RocksDB's builder counts (and for a
    /// Ribbon filter, holds) it.
    fn count(&mut self, h: u64) {
        self.distinct += 1;
        self.last_hash = Some(h);
        if let Ok(&FilterBits::Ribbon { blocks, .. }) = self.bits {
            if self.hashes.len() <= blocks as usize * 128 {
                self.hashes.push(h);
            }
        }
    }

    /// `AddKeyAndAlt` (RocksDB 9.6+, a key and its prefix): the prefix is
    /// counted unless it repeats the previous prefix, the key or the last
    /// hash counted; then the key, unless it repeats the last hash counted
    /// before or the previous prefix.
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        let (Some(k), Some(a)) = (self.set(key), self.set(alt)) else {
            return;
        };
        let (last, last_alt) = (self.last_hash, self.last_alt);
        if Some(a) != last_alt && a != k && Some(a) != last {
            self.count(a);
        }
        self.last_alt = Some(a);
        if Some(k) != last && Some(k) != last_alt {
            self.count(k);
        }
    }

    /// Sets `key`'s bits, or where the filter is not rebuilt checks that
    /// it matches; its hash (none where the filter does not read).
    fn set(&mut self, key: &[u8]) -> Option<u64> {
        let Ok(bits) = self.bits else { return None };
        let h = bits.set_key(&mut self.out, key).or_else(|| {
            if matches!(bits, FilterBits::Ribbon { .. }) {
                return bits.key_hash(key);
            }
            if self.unmatched.is_none() && !bits.may_match(key) {
                self.unmatched = Some(self.keys);
            }
            bits.key_hash(key)
        });
        self.keys += 1;
        h
    }

    fn finish(self, index: usize) -> FilterReport {
        let bits = match self.bits {
            Ok(bits) => bits,
            Err(e) => {
                return FilterReport {
                    index,
                    keys: self.keys,
                    bytes: 0,
                    check: FilterCheck::Mismatch {
                        what: format!("filter {index} does not read: {e}"),
                    },
                }
            }
        };
        let stored = bits.bit_array();
        // As the builder counts them, where its hash is known.
        let keys = match bits.key_hash(b"") {
            Some(_) => self.distinct,
            None => self.keys,
        };
        let report = |check| FilterReport {
            index,
            keys,
            bytes: stored_len(bits),
            check,
        };
        if let FilterBits::Ribbon { data, seed, blocks } = *bits {
            return report(ribbon_check(&self.hashes, data, seed, blocks));
        }
        if !bits.rebuilt() {
            return report(match self.unmatched {
                None => FilterCheck::EveryKeyMatches,
                Some(i) => FilterCheck::Mismatch {
                    what: format!("key {i} of the filter's keys does not match it"),
                },
            });
        }
        if let Some(at) = stored.iter().zip(&self.out).position(|(a, b)| a != b) {
            return report(FilterCheck::Mismatch {
                what: format!(
                    "the filter rebuilt from its {} keys differs from the stored one at byte {at} of {}",
                    self.keys,
                    stored.len()
                ),
            });
        }
        match built_by(bits, self.distinct) {
            Some(bits_per_key) => report(FilterCheck::Built { bits_per_key }),
            None => report(FilterCheck::Rebuilt),
        }
    }
}

fn stored_len(bits: &FilterBits<'_>) -> usize {
    match bits {
        FilterBits::Empty => 0,
        bits => bits.bit_array().len() + 5,
    }
}

/// The bits per key (smallest and largest) at which RocksDB 7.8's builder
/// sizes this filter as stored, for `n` keys (distinct hashes in a row) and
/// the stored probes: then its builder makes the bytes the rebuild made.
fn built_by(bits: &FilterBits<'_>, n: u64) -> Option<(f64, f64)> {
    let fits: Vec<f64> = match *bits {
        FilterBits::FastLocalBloom { probes, data } => {
            let len = data.len() as u64;
            // Only millibits in (len - 64, len] * 8000 / n round to `len`
            // (short of the 4 GiB cap): the exact test runs on those alone.
            let (lo, hi) = match n {
                0 => (500, 100_000),
                _ if len >= 0xffff_ffc0 => (500, 100_000),
                _ => (
                    (len.saturating_sub(64) * 8000 / n).clamp(500, 100_000) as u32,
                    (len * 8000 / n).clamp(500, 100_000) as u32,
                ),
            };
            (lo..=hi)
                .filter(|&m| fast_local_probes(m) == probes)
                .filter(|&m| fast_local_len(n, m) == len)
                .map(|m| f64::from(m) / 1000.0)
                .collect()
        }
        FilterBits::LegacyBloom { probes, lines, .. } => (1..=100u32)
            .filter(|&b| legacy_probes(b) == probes && legacy_lines(n as usize, b) == lines)
            .map(f64::from)
            .collect(),
        _ => Vec::new(),
    };
    Some((*fits.first()?, *fits.last()?))
}

/// A Ribbon filter solved again from its entries (`hashes`, in the order
/// RocksDB added them) at its stored size, and compared byte for byte; then
/// the bits per key at which RocksDB's sizing gives that size.
fn ribbon_check(hashes: &[u64], data: &[u8], seed: u8, blocks: u32) -> FilterCheck {
    let (len, slots) = (data.len() + 5, blocks as usize * 128);
    let mismatch = |what| FilterCheck::Mismatch { what };
    let n = hashes.len();
    if n > slots || num_slots(n as u32) != slots {
        return mismatch(format!(
            "{n} entries make a Ribbon filter of {} slots, the stored one has {slots}",
            if n > slots {
                "more".to_string()
            } else {
                num_slots(n as u32).to_string()
            }
        ));
    }
    let Some(rebuilt) = solve(hashes, slots, len) else {
        return mismatch(format!(
            "no seed solves the filter's {n} entries in {slots} slots (RocksDB builds Bloom then)"
        ));
    };
    if let Some(at) = data.iter().zip(&rebuilt).position(|(a, b)| a != b) {
        return mismatch(format!(
            "the filter solved again from its {n} entries differs from the stored one at byte {at} of {}",
            data.len()
        ));
    }
    if rebuilt[len - 4] != seed {
        return mismatch(format!(
            "the filter's entries are solved by seed {}, the stored one says {seed}",
            rebuilt[len - 4]
        ));
    }
    match sized_by(hashes[0], slots, len) {
        Some(bits_per_key) => FilterCheck::Built { bits_per_key },
        None => FilterCheck::Rebuilt,
    }
}
