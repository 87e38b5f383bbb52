//! RocksDB's two cache-local Bloom layouts (util/bloom_impl.h): a key's
//! probes all fall in one line of the bit array.
//!
//! - FastLocalBloom: 64-byte blocks, the block by the XXPH3 hash's low half
//!   (`FastRange32`), 9-bit positions from its high half multiplied on by
//!   `0x9e3779b9`.
//! - LegacyBloom: lines by LevelDB's signed hash modulo their count, then
//!   LevelDB's double hashing within the line.
//!
//! Probes are tested with no branch on the bits (RocksDB's portable reader
//! stops at the first clear bit, a coin toss for an absent key whose
//! mispredictions cost more than the probes saved), and a batch hashes
//! every key and asks for its line before testing any.

use super::builders::legacy_hash;
use super::xxph3::hash64;
use crate::arch::prefetch;

/// Bytes in a FastLocalBloom block (and a LegacyBloom line as RocksDB
/// writes them).
pub(crate) const LINE: usize = 64;

/// Keys a batch hashes and prefetches before it tests them: as many lines
/// in flight as a core keeps, about.
const WINDOW: usize = 16;

/// Bytes of a bit array up to which a build asks for no line ahead: the
/// array stays in a core's own caches, where a prefetch is only its cost.
const CACHED: usize = 1 << 18;

/// FastLocalBloom's probe multipliers: the `i`-th probe's hash is the high
/// half times `0x9e3779b9^i`. RocksDB multiplies on, a chain of dependent
/// multiplies; with the powers each probe is one multiply of its own.
pub(crate) const FAST_POWERS: [u32; 32] = {
    let mut powers = [1u32; 32];
    let mut i = 1;
    while i < 32 {
        powers[i] = powers[i - 1].wrapping_mul(0x9e37_79b9);
        i += 1;
    }
    powers
};

/// The byte offset of the block a FastLocalBloom hash probes in an array
/// of `blocks` blocks.
#[inline(always)]
fn fast_block(blocks: u64, h: u64) -> usize {
    (((h & 0xffff_ffff) * blocks) >> 32) as usize * LINE
}

/// The 64-byte line of `data` at byte `at`, as an array (its probes'
/// bounds checks go); `None` past the end.
#[inline(always)]
fn line_at(data: &[u8], at: usize) -> Option<&[u8; LINE]> {
    data.get(at..at + LINE)?.try_into().ok()
}

/// The block of an array of whole blocks that a hash probes.
#[inline(always)]
pub(crate) fn fast_line(data: &[u8], h: u64) -> Option<&[u8; LINE]> {
    line_at(data, fast_block((data.len() / LINE) as u64, h))
}

/// The 64-byte line of `data` at byte `at`, to set bits in; `None` past
/// the end.
#[inline(always)]
fn line_at_mut(data: &mut [u8], at: usize) -> Option<&mut [u8; LINE]> {
    data.get_mut(at..at + LINE)?.try_into().ok()
}

/// The probes of a FastLocalBloom key in its block, each as the 32-bit
/// little-endian word (0..16) and the bit in it: its hash's top 4 bits,
/// then the next 5, as RocksDB's AVX2 reader reads a block (the same bits
/// as bytes). A 32-bit shift takes its count as is, a byte's needs it
/// masked.
#[inline(always)]
fn fast_probes(probes: u32, h: u64) -> impl Iterator<Item = (usize, u32)> {
    let high = (h >> 32) as u32;
    FAST_POWERS[..(probes as usize).min(FAST_POWERS.len())]
        .iter()
        .map(move |&m| {
            let product = high.wrapping_mul(m);
            ((product >> 28) as usize, product >> 23 & 31)
        })
}

/// Sets a key's probes in a FastLocalBloom bit array (whole 64-byte blocks).
#[inline]
pub(crate) fn fast_local_add(data: &mut [u8], probes: u32, h: u64) {
    let Some(line) = line_at_mut(data, fast_block((data.len() / LINE) as u64, h)) else {
        return;
    };
    let (words, _) = line.as_chunks_mut::<4>();
    for (word, bit) in fast_probes(probes, h) {
        words[word] = (u32::from_le_bytes(words[word]) | 1 << bit).to_le_bytes();
    }
}

/// Sets every hash's probes, each block asked for a few keys ahead (past
/// the caches, the blocks are where a build's time goes).
pub(crate) fn fast_local_add_all(data: &mut [u8], probes: u32, hashes: &[u64]) {
    if data.len() <= CACHED {
        for &h in hashes {
            fast_local_add(data, probes, h);
        }
        return;
    }
    let blocks = (data.len() / LINE) as u64;
    for (i, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(i + WINDOW) {
            prefetch(data, fast_block(blocks, ahead));
        }
        fast_local_add(data, probes, h);
    }
}

/// Whether every probe of a key hashed to `h` is set in a FastLocalBloom
/// bit array; "may match" for an array of no whole block.
#[inline]
pub(crate) fn fast_local_test(data: &[u8], probes: u32, h: u64) -> bool {
    let Some(line) = fast_line(data, h) else {
        return true;
    };
    let (words, _) = line.as_chunks::<4>();
    let mut clear = 0;
    for (word, bit) in fast_probes(probes, h) {
        clear |= !u32::from_le_bytes(words[word]) >> bit & 1;
    }
    clear == 0
}

/// The portable code's `MayMatch` of `key` against a FastLocalBloom bit
/// array (the single lookups' kernel's is `arch::resolved::fast_local`).
pub(crate) fn fast_local_portable(data: &[u8], probes: u32, key: &[u8]) -> bool {
    fast_local_test(data, probes, hash64(key))
}

/// The byte offset of the line a LegacyBloom hash probes, and the mask of
/// a bit's position in a line of `1 << log2_line_bytes` bytes.
#[inline(always)]
fn legacy_line(lines: u32, log2_line_bytes: u32, h: u32) -> (usize, u32) {
    let line = h.checked_rem(lines).unwrap_or(0) as usize;
    (line << log2_line_bytes, (1u32 << (log2_line_bytes + 3)) - 1)
}

/// Bit positions in its line of a LegacyBloom key's probes: LevelDB's
/// double hashing (the hash, then on by the hash rotated 17 bits).
#[inline(always)]
fn legacy_positions(probes: u32, mask: u32, h: u32) -> impl Iterator<Item = usize> {
    let delta = h.rotate_right(17);
    std::iter::successors(Some(h), move |h| Some(h.wrapping_add(delta)))
        .take(probes as usize)
        .map(move |h| (h & mask) as usize)
}

/// Sets a key's probes in a LegacyBloom bit array of `lines` 64-byte lines.
#[inline]
pub(crate) fn legacy_add(data: &mut [u8], lines: u32, probes: u32, h: u32) {
    let (at, mask) = legacy_line(lines, 6, h);
    if let Some(line) = data.get_mut(at..at + LINE) {
        for bit in legacy_positions(probes, mask, h) {
            line[bit / 8] |= 1 << (bit % 8);
        }
    }
}

/// Sets every hash's probes, each line asked for a few keys ahead.
pub(crate) fn legacy_add_all(data: &mut [u8], lines: u32, probes: u32, hashes: &[u32]) {
    for (i, &h) in hashes.iter().enumerate() {
        if let Some(&ahead) = hashes.get(i + WINDOW) {
            prefetch(data, legacy_line(lines, 6, ahead).0);
        }
        legacy_add(data, lines, probes, h);
    }
}

/// Whether every probe of a key hashed to `h` is set in a LegacyBloom bit
/// array of `lines` lines of `1 << log2_line_bytes` bytes; "may match"
/// where the array is shorter than its lines (which the reader refuses).
#[inline]
pub(crate) fn legacy_test(
    data: &[u8],
    lines: u32,
    log2_line_bytes: u32,
    probes: u32,
    h: u32,
) -> bool {
    let (at, mask) = legacy_line(lines, log2_line_bytes, h);
    if log2_line_bytes == 6 {
        let Some(line) = line_at(data, at) else {
            return true;
        };
        let mut clear = 0;
        for bit in legacy_positions(probes, mask, h) {
            clear |= !line[bit / 8] >> (bit % 8) & 1;
        }
        return clear == 0;
    }
    let Some(line) = data.get(at..at + (1 << log2_line_bytes)) else {
        return true;
    };
    legacy_positions(probes, mask, h)
        .all(|bit| line.get(bit / 8).is_some_and(|b| b >> (bit % 8) & 1 != 0))
}

/// RocksDB's `MayMatch` of `key` against a LegacyBloom bit array.
pub(crate) fn legacy_may_match(
    data: &[u8],
    lines: u32,
    log2_line_bytes: u32,
    probes: u32,
    key: &[u8],
) -> bool {
    legacy_test(data, lines, log2_line_bytes, probes, legacy_hash(key))
}

/// Answers `keys` into `out` a window at a time: every key of the window
/// hashed and its line (the byte offset `line_of` gives) asked for, then
/// each tested. Always inlined: a kernel's `test` is compiled for its
/// features only where this is too, and is a call per key otherwise.
#[inline(always)]
pub(crate) fn batch<H: Copy + Default>(
    data: &[u8],
    keys: &[&[u8]],
    out: &mut [bool],
    hash: impl Fn(&[u8]) -> H,
    line_of: impl Fn(H) -> usize,
    test: impl Fn(H) -> bool,
) {
    let mut hashes = [H::default(); WINDOW];
    for (keys, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
        for (h, key) in hashes.iter_mut().zip(keys) {
            *h = hash(key);
            prefetch(data, line_of(*h));
        }
        for (answer, &h) in out.iter_mut().zip(&hashes) {
            *answer = test(h);
        }
    }
}

/// The byte offset of a FastLocalBloom hash's block, for [`batch`].
#[inline(always)]
pub(crate) fn fast_local_line(data: &[u8], h: u64) -> usize {
    fast_block((data.len() / LINE) as u64, h)
}

/// The byte offset of a LegacyBloom hash's line, for [`batch`].
#[inline(always)]
pub(crate) fn legacy_line_at(lines: u32, log2_line_bytes: u32, h: u32) -> usize {
    legacy_line(lines, log2_line_bytes, h).0
}
