//! The portable kernel: plain Rust, on every CPU, and the reference the
//! vector kernels are tested against. Probe `j` of a key hashed to `h` is bit
//! `(h + j * delta) % bits`, `delta` the hash rotated right by 17 bits, sums
//! on 32 bits (LevelDB's util/bloom.cc).

use super::{groups_by_length, looks_one_length, FEW_TO_GROUP};
use crate::hash::SEED;
use crate::hash::{hash, tail, HashVariant, M};

/// Sets in `array` the `k` probe bits of every key.
pub(crate) fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    let modulus = Modulus::new(array.len() * 8);
    // Eight hashes first, then their bits: eight independent chains of
    // multiplies in a row keep the core busier than one at a time.
    let mut hashes = [0u32; 8];
    if keys.len() >= FEW_TO_GROUP && !looks_one_length(keys) {
        // Keys of mixed lengths in groups of one length, so that the
        // hash's loop and tail branch alike key after key (in the keys'
        // order, a misprediction or two a key), two chains side by side.
        groups_by_length::<8>(keys, |group, _, n, _| {
            hash_group(group[..n].iter().copied(), &mut hashes, variant);
            for &h in &hashes[..n] {
                set_bits(array, modulus, k, h);
            }
        });
        return;
    }
    for keys in keys.chunks(8) {
        hash_group(keys.iter().copied(), &mut hashes, variant);
        for &h in &hashes[..keys.len()] {
            set_bits(array, modulus, k, h);
        }
    }
}

/// Sets in `array` the `k` probe bits of every key hashed to `hashes`.
pub(crate) fn insert_hashes(hashes: &[u32], k: usize, array: &mut [u8]) {
    let modulus = Modulus::new(array.len() * 8);
    for &h in hashes {
        set_bits(array, modulus, k, h);
    }
}

/// LevelDB's `Hash` of up to eight keys into `hashes`, two at a time where
/// two keys in a row have one length: their chains of multiplies side by
/// side in one loop, which the core runs in parallel.
#[inline]
fn hash_group<'k>(
    keys: impl Iterator<Item = &'k [u8]>,
    hashes: &mut [u32; 8],
    variant: HashVariant,
) {
    let mut keys = keys.peekable();
    let mut at = 0;
    while let Some(a) = keys.next() {
        match keys.next_if(|b| b.len() == a.len()) {
            Some(b) => {
                (hashes[at], hashes[at + 1]) = hash2(a, b, variant);
                at += 2;
            }
            None => {
                hashes[at] = hash(a, SEED, variant);
                at += 1;
            }
        }
    }
}

/// LevelDB's `Hash` of two keys of one length (as [`hash`] computes each;
/// its steps are written out again here: shared through small functions in
/// hash.rs, batches of short keys measured slower).
#[inline]
fn hash2(a: &[u8], b: &[u8], variant: HashVariant) -> (u32, u32) {
    let init = SEED ^ (a.len() as u32).wrapping_mul(M);
    let (mut x, mut y) = (init, init);
    for (wa, wb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let word = |w: &[u8]| u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        x = x.wrapping_add(word(wa)).wrapping_mul(M);
        y = y.wrapping_add(word(wb)).wrapping_mul(M);
        x ^= x >> 16;
        y ^= y >> 16;
    }
    if a.len().is_multiple_of(4) {
        return (x, y);
    }
    let x = x.wrapping_add(tail(a, variant)).wrapping_mul(M);
    let y = y.wrapping_add(tail(b, variant)).wrapping_mul(M);
    (x ^ (x >> 24), y ^ (y >> 24))
}

/// Sets the `k` bits of a key hashed to `h`.
#[inline]
pub(crate) fn set_bits(array: &mut [u8], modulus: Modulus, k: usize, h: u32) {
    let (mut h, delta) = (h, h.rotate_right(17));
    for _ in 0..k {
        let pos = modulus.reduce(h);
        array[pos / 8] |= BIT[pos % 8];
        h = h.wrapping_add(delta);
    }
}

/// Whether all `k` probe bits of a key hashed to `h` are set in `array`,
/// as LevelDB's `KeyMayMatch` answers, but every probe tested with no branch on the
/// bits: LevelDB stops at the first bit not set, a coin toss for absent
/// keys whose mispredictions cost more than the probes it saves.
#[inline]
pub(crate) fn contains_hash(h: u32, k: usize, array: &[u8]) -> bool {
    all_set(array, Modulus::new(array.len() * 8), k, h)
}

/// Whether the `k` bits of a key hashed to `h` are all set (`true` for
/// `k == 0`: no probe fails, as in LevelDB).
#[inline]
fn all_set(array: &[u8], modulus: Modulus, k: usize, h: u32) -> bool {
    let (mut h, delta) = (h, h.rotate_right(17));
    let mut all = true;
    for _ in 0..k {
        all &= bit(array, modulus.reduce(h));
        h = h.wrapping_add(delta);
    }
    all
}

/// [`contains_hash`] for each of `keys`, into `out`: eight hashes first, as in
/// [`insert`], then every probe of every key, as [`contains_hash`] probes them, so
/// that the loads of several keys are in flight at once.
pub(crate) fn contains_batch(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    let modulus = Modulus::new(array.len() * 8);
    let mut hashes = [0u32; 8];
    if keys.len() >= FEW_TO_GROUP && !looks_one_length(keys) {
        // In groups of one length, as `insert` takes them.
        groups_by_length::<8>(keys, |group, at, n, _| {
            hash_group(group[..n].iter().copied(), &mut hashes, variant);
            for (&h, &i) in hashes[..n].iter().zip(at) {
                out[i] = all_set(array, modulus, k, h);
            }
        });
        return;
    }
    for (keys, out) in keys.chunks(8).zip(out.chunks_mut(8)) {
        hash_group(keys.iter().copied(), &mut hashes, variant);
        for (&h, answer) in hashes.iter().zip(out) {
            *answer = all_set(array, modulus, k, h);
        }
    }
}

/// The mask of bit `i` of a byte, by `i`, for setting bits: one load, where
/// `1 << i` is a shift by a register (several micro-ops on x86 without
/// BMI2, which the portable code does not assume). Lookups keep the shift:
/// with the table's load beside the array's, they ran slower.
const BIT: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

#[inline]
fn bit(array: &[u8], pos: usize) -> bool {
    array[pos / 8] & (1 << (pos % 8)) != 0
}

/// `h % bits` as LevelDB computes it, with `h` widened to `size_t`: from 2^32
/// bits on, the position is `h` itself. Below, Lemire's fastmod: with
/// `m = u64::MAX / bits + 1`, `h % bits` is the high 64 bits of
/// `(m * h mod 2^64) * bits`, exactly, for every 32-bit `h` and `bits`; one
/// division per filter instead of one per probe.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modulus {
    /// The number of bits, or 0 for 2^32 bits and more.
    bits: u64,
    m: u64,
}

impl Modulus {
    /// For a bit array of `bits` bits (more than 0).
    #[inline]
    pub(crate) fn new(bits: usize) -> Self {
        match u32::try_from(bits) {
            Ok(bits) => Modulus {
                bits: u64::from(bits),
                m: (u64::MAX / u64::from(bits)).wrapping_add(1),
            },
            Err(_) => Modulus { bits: 0, m: 0 },
        }
    }

    /// `h % bits`, or `h` from 2^32 bits on.
    #[inline]
    pub(crate) fn reduce(&self, h: u32) -> usize {
        if self.bits == 0 {
            return h as usize;
        }
        let low = self.m.wrapping_mul(u64::from(h));
        ((u128::from(low) * u128::from(self.bits)) >> 64) as usize
    }
}
