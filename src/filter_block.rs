//! The filter block of LevelDB's table/filter_block.cc.
//!
//! A table has one filter block. Filter i covers the data blocks whose offset in
//! the file lies in `[i << base_lg, (i + 1) << base_lg)`; LevelDB writes
//! base_lg = 11, a filter per 2 KiB. Layout:
//!
//! ```text
//! filter 0 | filter 1 | ... | filter N-1          (concatenated, each may be empty)
//! offset of filter 0 .. offset of filter N-1      (fixed32 each)
//! offset of that array                            (fixed32)
//! base_lg                                         (1 byte)
//! ```
//!
//! Filter i spans `[offset[i], offset[i + 1])`, where the array offset stands in
//! for `offset[N]`.

use byteorder::{ByteOrder, LittleEndian};

use crate::arch::{Kernel, Modulus, Work};
use crate::{BloomFilterPolicy, FilterBlockError, FilterPolicy, KeyHash};

/// One filter per 2048 bytes of data-block offset.
const FILTER_BASE: u64 = 1 << FilterBlock::BASE_LG;

/// Builds a filter block as LevelDB's `FilterBlockBuilder` does.
///
/// Call order, as in LevelDB: `(start_block add_key*)* finish`. Call
/// [`start_block`](Self::start_block) with the file offset of each data block
/// before adding its keys; keys added before the first call belong to the first
/// filter. A filter is cut each time the offset crosses a 2 KiB boundary, and an
/// empty filter stands for every 2 KiB range that no data block starts in.
/// [`finish`](Self::finish) cuts the last filter and appends the offset array
/// and trailer. [`reset`](Self::reset) makes the builder ready for the next
/// table and keeps its buffers.
///
/// # Panics
/// Offsets must not go back across a 2 KiB boundary: an offset whose filter was
/// already cut is a caller bug, and `start_block` panics, as LevelDB's
/// `assert` does (Debian's LevelDB 1.23 keeps its asserts: it aborts). An offset
/// that goes back within the current 2 KiB range changes nothing, as in LevelDB.
/// `start_block` and `add_key` panic after `finish` until `reset` is called.
#[derive(Debug)]
pub struct FilterBlockBuilder<P> {
    policy: P,
    /// Keys of the filter being gathered, end to end, and where each
    /// starts (unused where the policy is a [`BloomFilterPolicy`]: see
    /// [`Hashed`]).
    keys: Vec<u8>,
    starts: Vec<usize>,
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
    /// The allocation of the key list handed to the policy, kept empty
    /// between filters so that building one allocates nothing.
    spare_keys: Vec<&'static [u8]>,
    /// A Bloom policy's filters, made from hashes (see [`Hashed`]).
    hashed: Option<Hashed>,
    finished: bool,
}

/// How a builder makes a [`BloomFilterPolicy`]'s filters: a filter's bits
/// depend on its keys' hashes and its size, and only the size waits for the
/// cut. So each key is hashed as it comes (while its bytes are in the
/// cache) and only its hash is kept; at the cut the kernel sets the bits
/// of the filter's hashes. (Hashing eight keys at a time in vector lanes
/// measured slower here: the keys must be copied and gathered for it.)
#[derive(Debug)]
struct Hashed {
    policy: BloomFilterPolicy,
    kernel: Kernel,
    /// Hashes of the keys added since the last cut.
    hashes: Vec<u32>,
}

impl<P: FilterPolicy> FilterBlockBuilder<P> {
    /// An empty builder whose filters `policy` creates.
    pub fn new(policy: P) -> Self {
        let hashed = policy.as_bloom().map(|bloom| Hashed {
            policy: bloom.clone(),
            // A block's filter holds a few dozen keys.
            kernel: Kernel::for_work(Work::Create(0)),
            hashes: Vec::new(),
        });
        FilterBlockBuilder {
            policy,
            keys: Vec::new(),
            starts: Vec::new(),
            result: Vec::new(),
            filter_offsets: Vec::new(),
            spare_keys: Vec::new(),
            hashed,
            finished: false,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Announces a data block starting at `block_offset` in the file: the keys
    /// added next belong to it.
    pub fn start_block(&mut self, block_offset: u64) {
        assert!(
            !self.finished,
            "FilterBlockBuilder::start_block after finish"
        );
        let index = block_offset / FILTER_BASE;
        let cut = self.filter_offsets.len() as u64;
        assert!(
            index >= cut,
            "FilterBlockBuilder::start_block({block_offset}): offsets went backwards, \
             filter {index} was already cut"
        );
        for _ in cut..index {
            self.generate_filter();
        }
    }

    /// Adds a key of the current data block.
    #[inline]
    pub fn add_key(&mut self, key: &[u8]) {
        assert!(!self.finished, "FilterBlockBuilder::add_key after finish");
        if let Some(hashed) = &mut self.hashed {
            hashed.hashes.push(hashed.policy.key_hash(key).value());
            return;
        }
        self.add_key_bytes(key);
    }

    /// [`add_key`](Self::add_key) for a policy that takes the keys' bytes:
    /// kept.
    fn add_key_bytes(&mut self, key: &[u8]) {
        self.starts.push(self.keys.len());
        // In 16-byte blocks of fixed size, which compile to plain moves; a
        // copy of unknown size is a call to memcpy (even of no bytes), a
        // large part of the cost of a key as short as most keys are.
        let (blocks, rest) = key.as_chunks::<16>();
        for block in blocks {
            self.keys.extend_from_slice(block);
        }
        if !rest.is_empty() {
            self.keys.extend_from_slice(rest);
        }
    }

    /// Cuts the last filter and returns the whole block. Calling it again
    /// returns the same bytes.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            let keys_in_filter = match &self.hashed {
                Some(hashed) => hashed.hashes.len(),
                None => self.starts.len(),
            };
            if keys_in_filter > 0 {
                self.generate_filter();
            }
            let array_offset = self.result.len() as u32;
            for &offset in &self.filter_offsets {
                push_fixed32(&mut self.result, offset);
            }
            push_fixed32(&mut self.result, array_offset);
            self.result.push(FilterBlock::BASE_LG);
            self.finished = true;
        }
        &self.result
    }

    /// Forgets everything added, keeping the buffers, to build another block.
    pub fn reset(&mut self) {
        self.keys.clear();
        self.starts.clear();
        self.result.clear();
        self.filter_offsets.clear();
        if let Some(hashed) = &mut self.hashed {
            hashed.hashes.clear();
        }
        self.finished = false;
    }

    fn generate_filter(&mut self) {
        // Offsets are fixed32 on disk: LevelDB truncates likewise.
        self.filter_offsets.push(self.result.len() as u32);
        if let Some(hashed) = &mut self.hashed {
            let n = hashed.hashes.len();
            if n > 0 {
                let (policy, result) = (&hashed.policy, &mut self.result);
                let array = policy.start_filter(n, result);
                let array = &mut result[array];
                hashed
                    .kernel
                    .insert_hashes(&hashed.hashes, policy.k(), array);
                hashed.hashes.clear();
            }
            return;
        }
        if self.starts.is_empty() {
            return;
        }
        let mut keys = recycle(std::mem::take(&mut self.spare_keys));
        // Each key ends where the next starts.
        let (bytes, starts): (&[u8], &[usize]) = (&self.keys, &self.starts);
        keys.extend(starts.windows(2).map(|w| &bytes[w[0]..w[1]]));
        keys.extend(starts.last().map(|&start| &bytes[start..]));
        self.policy.create_filter(&keys, &mut self.result);
        self.spare_keys = recycle(keys);
        self.keys.clear();
        self.starts.clear();
    }
}

/// An empty key list with another lifetime, in `keys`' allocation: collecting
/// a Vec's iterator into a Vec of the same element layout reuses it in place.
#[allow(clippy::unnecessary_filter_map)] // the point is the type change
pub(crate) fn recycle<'a>(mut keys: Vec<&[u8]>) -> Vec<&'a [u8]> {
    keys.clear();
    keys.into_iter().filter_map(|_| None).collect()
}

fn push_fixed32(dst: &mut Vec<u8>, value: u32) {
    dst.extend_from_slice(&value.to_le_bytes());
}

/// The parts of a filter block as LevelDB's reader finds them, from any bytes.
#[derive(Clone, Copy, Debug)]
struct Layout<'a> {
    /// Bytes before the offset array: the filters.
    data: &'a [u8],
    /// From the offset array to the base_lg byte (excluded): N offsets, then the
    /// array offset, which doubles as the end of the last filter.
    offsets: &'a [u8],
    num: usize,
    base_lg: u8,
}

impl<'a> Layout<'a> {
    /// What LevelDB's `FilterBlockReader` constructor finds; an error where it
    /// finds no filters (then every lookup may match).
    fn read(contents: &'a [u8]) -> Result<Self, FilterBlockError> {
        let n = contents.len();
        if n < 5 {
            return Err(FilterBlockError::BlockTooShort { len: n });
        }
        let base_lg = contents[n - 1];
        let array_offset = LittleEndian::read_u32(&contents[n - 5..n - 1]);
        if array_offset as usize > n - 5 {
            return Err(FilterBlockError::ArrayOffsetPastEnd {
                array_offset,
                max: n - 5,
            });
        }
        let (data, rest) = contents.split_at(array_offset as usize);
        let offsets = &rest[..rest.len() - 1];
        Ok(Layout {
            data,
            offsets,
            num: (offsets.len() - 4) / 4,
            base_lg,
        })
    }

    /// `(start, limit)` of filter `index < num`.
    fn bounds(&self, index: usize) -> (u32, u32) {
        let at = &self.offsets[index * 4..index * 4 + 8];
        (LittleEndian::read_u32(at), LittleEndian::read_u32(&at[4..]))
    }

    /// The filter LevelDB's `FilterBlockReader::KeyMayMatch` asks for a data
    /// block at `block_offset`, or its answer without one.
    #[inline]
    fn filter_for(&self, block_offset: u64) -> Result<&'a [u8], bool> {
        // LevelDB shifts by the base_lg byte as read; a count >= 64 is undefined
        // in C++ and the x86-64 and AArch64 shift instructions take it modulo 64,
        // which wrapping_shr does too.
        let index = block_offset.wrapping_shr(u32::from(self.base_lg));
        if index < self.num as u64 {
            let index = index as usize;
            if let Some(filter) = self.filter(index) {
                return Ok(filter);
            }
            let (start, limit) = self.bounds(index);
            if start == limit {
                return Err(false);
            }
        }
        Err(true)
    }

    /// Filter `index`'s bytes (`index < num`), where its bounds lie in
    /// order inside the filters' data.
    #[inline]
    fn filter(&self, index: usize) -> Option<&'a [u8]> {
        let (start, limit) = self.bounds(index);
        (start <= limit && limit as usize <= self.data.len())
            .then(|| &self.data[start as usize..limit as usize])
    }
}

/// Reads a filter block as LevelDB's `FilterBlockReader` does: it never fails,
/// and answers every lookup exactly as LevelDB would on the same bytes.
///
/// LevelDB's answers on damaged blocks, kept here: a block shorter than 5 bytes,
/// or whose array offset points past its end, has no filters and every lookup
/// may match (`true`); so does a block offset past the last filter, or a filter
/// whose bounds are out of order or run into the offset array; an empty filter
/// matches nothing (`false`). A base_lg byte of 64 or more is used modulo 64, as
/// LevelDB's shift does on x86-64 and AArch64, so a block offset maps to filter
/// `block_offset >> (base_lg % 64)`.
///
/// The reader borrows the block; lookups do not allocate.
#[derive(Clone, Debug)]
pub struct FilterBlockReader<'a, P> {
    policy: P,
    layout: Option<Layout<'a>>,
    moduli: Moduli,
}

impl<'a, P: FilterPolicy> FilterBlockReader<'a, P> {
    /// A reader over `contents`, the filter block's bytes without the block
    /// trailer. For a policy whose filters are probed by hash
    /// ([`key_hasher`](FilterPolicy::key_hasher)), it computes once what
    /// lookups need of each filter size (see [`BloomFilter`](crate::BloomFilter)),
    /// up to 8 KiB for sizes to 512 bytes: a pass over the filters' offsets.
    pub fn new(policy: P, contents: &'a [u8]) -> Self {
        Self::with_layout(policy, Layout::read(contents).ok(), true)
    }

    /// A reader for a lookup or two (LevelDB's probe of a table for one
    /// key): no moduli kept, whose pass over the offsets would cost more
    /// than the lookups save.
    pub(crate) fn for_few_lookups(policy: P, contents: &'a [u8]) -> Self {
        Self::with_layout(policy, Layout::read(contents).ok(), false)
    }

    /// A reader of the filters `layout` finds (none: every lookup may
    /// match), with their moduli kept (`keep`) or computed per lookup.
    fn with_layout(policy: P, layout: Option<Layout<'a>>, keep: bool) -> Self {
        let moduli = match (&layout, policy.key_hasher()) {
            (Some(layout), Some(_)) if keep => Moduli::of(layout),
            _ => Moduli::default(),
        };
        FilterBlockReader {
            policy,
            layout,
            moduli,
        }
    }

    /// Whether a key of the data block at `block_offset` may be in the table:
    /// `false` means it is certainly not.
    #[inline]
    pub fn key_may_match(&self, block_offset: u64, key: &[u8]) -> bool {
        match (self.filter_for(block_offset), self.policy.as_bloom()) {
            // The portable probes with the kept moduli (the AVX-512
            // kernel's lanes were measured on whole filters only).
            (Ok(filter), Some(bloom)) => {
                bloom.probe_with(bloom.key_hash(key), filter, |len| self.moduli.get(len))
            }
            (Ok(filter), None) => self.policy.key_may_match(key, filter),
            (Err(answer), _) => answer,
        }
    }

    /// [`key_may_match`](Self::key_may_match) for each of `keys` (a
    /// multi-get's keys that the index sends to one data block), into `out`,
    /// through the policy's batch lookup.
    ///
    /// # Panics
    /// If `out` and `keys` differ in length.
    pub fn key_may_match_batch(&self, block_offset: u64, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match self.filter_for(block_offset) {
            Ok(filter) => self.policy.key_may_match_batch(keys, filter, out),
            Err(answer) => out.fill(answer),
        }
    }

    /// The filter for a data block at `block_offset`, or LevelDB's answer
    /// without one (`true` for a block with no filters).
    #[inline]
    fn filter_for(&self, block_offset: u64) -> Result<&'a [u8], bool> {
        match &self.layout {
            Some(layout) => layout.filter_for(block_offset),
            None => Err(true),
        }
    }

    /// [`key_may_match`](Self::key_may_match) for a key hashed once by the
    /// policy's [`key_hasher`](FilterPolicy::key_hasher) (for a database's
    /// tables, read through an [`InternalKeyPolicy`](crate::InternalKeyPolicy),
    /// the user key's hash: the filters hold user keys). A policy without
    /// a hasher, or a hash of another variant, answers "may match", never a
    /// false "absent".
    #[inline]
    pub fn hash_may_match(&self, block_offset: u64, hash: KeyHash) -> bool {
        match (self.filter_for(block_offset), self.policy.key_hasher()) {
            (Ok(filter), Some(bloom)) => bloom.probe_with(hash, filter, |len| self.moduli.get(len)),
            (Ok(_), None) => true,
            (Err(answer), _) => answer,
        }
    }
}

/// The [`Modulus`] of every bit-array length from 0 to that of the
/// longest filter of a block, at most [`Moduli::MAX_LEN`] bytes: a block's
/// filters (one per 2 KiB of data) hold a few dozen keys each, tens of
/// bytes; a longer one's is computed at each lookup.
#[derive(Clone, Debug, Default)]
struct Moduli(Box<[Modulus]>);

impl Moduli {
    /// The longest array whose modulus is kept.
    const MAX_LEN: usize = 511;

    /// For the filters of `layout` (their bounds as lookups take them).
    fn of(layout: &Layout<'_>) -> Self {
        let longest = (0..layout.num)
            .filter_map(|i| layout.filter(i))
            .map(<[u8]>::len)
            .filter(|&len| len <= Self::MAX_LEN + 1)
            .max()
            .unwrap_or(0);
        Moduli((0..longest).map(Modulus::new).collect())
    }

    /// The modulus of an array of `len` bytes.
    #[inline]
    fn get(&self, len: usize) -> Modulus {
        match self.0.get(len) {
            Some(&modulus) => modulus,
            None => Modulus::new(len),
        }
    }
}

/// A filter block checked strictly: every filter's bounds in order and inside
/// the block, the offset array whole, no unused bytes, base_lg below 64.
///
/// For tools and tests that want to know what is wrong with a block; an engine
/// reads with [`FilterBlockReader`], which gives LevelDB's answers on any bytes.
///
/// ```
/// use leveldb_filter::{BloomFilterPolicy, FilterBlock, FilterBlockBuilder, FilterBlockError};
///
/// let mut builder = FilterBlockBuilder::new(BloomFilterPolicy::new(10));
/// builder.start_block(0);
/// builder.add_key(b"hello");
/// builder.start_block(5000);
/// builder.add_key(b"world");
/// let block = FilterBlock::parse(builder.finish())?;
/// assert_eq!(block.len(), 3); // [0, 2K), [2K, 4K) is empty, [4K, 6K)
/// assert_eq!(block.filter(1), Some(&[][..]));
/// assert_eq!(block.filter_index(5000), 2);
///
/// assert_eq!(
///     FilterBlock::parse(&[0, 0, 0]).unwrap_err(),
///     FilterBlockError::BlockTooShort { len: 3 }
/// );
/// # Ok::<(), FilterBlockError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FilterBlock<'a> {
    layout: Layout<'a>,
}

impl<'a> FilterBlock<'a> {
    /// The base_lg LevelDB writes: one filter per 2^11 = 2048 bytes of
    /// data-block offset.
    pub const BASE_LG: u8 = 11;

    /// Checks `contents` (without the block trailer) and borrows it.
    pub fn parse(contents: &'a [u8]) -> Result<Self, FilterBlockError> {
        let layout = Layout::read(contents)?;
        if layout.base_lg >= 64 {
            return Err(FilterBlockError::BaseLgTooLarge {
                base_lg: layout.base_lg,
            });
        }
        let array_len = layout.offsets.len() - 4;
        if !array_len.is_multiple_of(4) {
            return Err(FilterBlockError::RaggedOffsetArray { len: array_len });
        }
        let array_offset = layout.data.len() as u32;
        let first = if layout.num == 0 {
            array_offset
        } else {
            layout.bounds(0).0
        };
        if first != 0 {
            return Err(FilterBlockError::UnusedBytes {
                len: first as usize,
            });
        }
        for index in 0..layout.num {
            let (start, limit) = layout.bounds(index);
            if start > limit {
                return Err(FilterBlockError::FilterOutOfOrder {
                    index,
                    start,
                    limit,
                });
            }
            if limit > array_offset {
                return Err(FilterBlockError::FilterPastArray {
                    index,
                    limit,
                    array_offset,
                });
            }
        }
        Ok(FilterBlock { layout })
    }

    /// Number of filters.
    pub fn len(&self) -> usize {
        self.layout.num
    }

    /// Whether the block holds no filter at all.
    pub fn is_empty(&self) -> bool {
        self.layout.num == 0
    }

    /// The base_lg byte: filter i covers block offsets `[i << base_lg, (i + 1) << base_lg)`.
    pub fn base_lg(&self) -> u8 {
        self.layout.base_lg
    }

    /// Filter `index`, or `None` past the last one.
    pub fn filter(&self, index: usize) -> Option<&'a [u8]> {
        if index >= self.layout.num {
            return None;
        }
        let (start, limit) = self.layout.bounds(index);
        Some(&self.layout.data[start as usize..limit as usize])
    }

    /// The filters, in order.
    pub fn filters(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let block = *self;
        (0..block.layout.num).map(move |i| block.filter(i).unwrap_or_default())
    }

    /// The index of the filter that covers a data block at `block_offset`
    /// (possibly past the last filter).
    pub fn filter_index(&self, block_offset: u64) -> u64 {
        block_offset >> self.layout.base_lg
    }

    /// A lookup reader over the same bytes.
    pub fn reader<P: FilterPolicy>(&self, policy: P) -> FilterBlockReader<'a, P> {
        FilterBlockReader::with_layout(policy, Some(self.layout), true)
    }
}

#[cfg(test)]
mod tests {
    use super::{FilterBlockBuilder, FilterBlockReader};
    use crate::{BloomFilterPolicy, HashVariant};

    /// A reader without kept moduli answers as one with them: on a block
    /// of filters short and long (past the 511 bytes kept), whole and with
    /// bytes changed, for keys held and not.
    #[test]
    fn few_lookups_answer_as_kept_moduli() {
        let policy = BloomFilterPolicy::new(10);
        let key = |i: u32| format!("key{i:06}").into_bytes();
        let mut builder = FilterBlockBuilder::new(&policy);
        let mut next = 0;
        for (block, keys) in [3u32, 40, 0, 700, 1].into_iter().enumerate() {
            builder.start_block(block as u64 * 4096);
            for _ in 0..keys {
                builder.add_key(&key(next));
                next += 1;
            }
        }
        let block = builder.finish().to_vec();
        let damaged = (0..block.len()).step_by(97).map(|at| {
            let mut bytes = block.clone();
            bytes[at] ^= 0x5a;
            bytes
        });
        for bytes in std::iter::once(block.clone()).chain(damaged) {
            for variant in [HashVariant::Unsigned, HashVariant::Signed] {
                let policy = BloomFilterPolicy::new(10).with_hash(variant);
                let kept = FilterBlockReader::new(&policy, &bytes);
                let few = FilterBlockReader::for_few_lookups(&policy, &bytes);
                for offset in (0..6 * 4096).step_by(2048) {
                    for i in 0..next + 50 {
                        let k = key(i);
                        assert_eq!(
                            kept.key_may_match(offset, &k),
                            few.key_may_match(offset, &k),
                            "{offset} {i}"
                        );
                        let h = policy.key_hash(&k);
                        assert_eq!(
                            kept.hash_may_match(offset, h),
                            few.hash_may_match(offset, h)
                        );
                    }
                }
            }
        }
    }
}
