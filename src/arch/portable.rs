//! The portable kernel: plain Rust, on every CPU, and the reference the
//! vector kernels are tested against. Probe `j` of a key hashed to `h` is bit
//! `(h + j * delta) % bits`, `delta` the hash rotated right by 17 bits, sums
//! on 32 bits (LevelDB's util/bloom.cc).
//!
//! Its `unsafe` is the unchecked access to a probe's byte: every index
//! comes from [`Modulus::byte`], below the array's length by construction
//! (a bounds check a probe cost a tenth of a lookup).
#![allow(unsafe_code)]

use super::{groups_by_length, looks_one_length, prefetch, FEW_TO_GROUP, MANY_KEYS};
use crate::hash::SEED;
use crate::hash::{hash, tail, HashVariant, M};

/// `$body` with `$count` bound to a [`Count`] of `k` probes: a constant
/// for the k of 6 to 12 bits per key (4 to 8), where the loops over a
/// key's probes unroll (a fifth less time a lookup), else `k` itself.
macro_rules! with_count {
    ($k:expr, $count:ident => $body:expr) => {
        with_count!(@arms $k, $count, $body, 4 5 6 7 8)
    };
    (@arms $k:expr, $count:ident, $body:expr, $($n:literal)*) => {
        match $k {
            $($n => {
                let $count = Const::<$n>;
                $body
            })*
            k => {
                let $count: usize = k;
                $body
            }
        }
    };
}

/// Keys hashed together: eight chains of multiplies in a row keep the
/// core busier than one at a time.
const GROUP: usize = 8;

/// Sets in `array` the `k` probe bits of every key.
pub(crate) fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    if array.is_empty() {
        return;
    }
    let modulus = Modulus::new(array.len());
    with_count!(k, count => {
        by_groups(keys, variant, |hashes, _| {
            for &h in hashes {
                set_bits(array, modulus, count, h);
            }
        });
    })
}

/// Sets in `array` the `k` probe bits of every key hashed to `hashes`.
pub(crate) fn insert_hashes(hashes: &[u32], k: usize, array: &mut [u8]) {
    if array.is_empty() {
        return;
    }
    let modulus = Modulus::new(array.len());
    with_count!(k, count => {
        for &h in hashes {
            set_bits(array, modulus, count, h);
        }
    })
}

/// Whether all `k` probe bits of a key hashed to `h` are set in `array`,
/// as LevelDB's `KeyMayMatch` answers, but every probe tested with no
/// branch on the bits: LevelDB stops at the first bit not set, a coin toss
/// for absent keys whose mispredictions cost more than the probes it saves.
#[inline]
pub(crate) fn contains_hash(h: u32, k: usize, array: &[u8]) -> bool {
    contains_with(Modulus::new(array.len()), h, k, array)
}

/// [`contains_hash`] with the array's [`Modulus`] computed before
/// (`Modulus::new(array.len())`; another is a wrong answer, never an
/// access out of bounds). An empty array, which no filter has, "may match".
#[inline]
pub(crate) fn contains_with(modulus: Modulus, h: u32, k: usize, array: &[u8]) -> bool {
    if modulus.len > array.len() as u64 {
        return array.is_empty() || contains_hash(h, k, array);
    }
    with_count!(k, count => all_set(array, modulus, count, h))
}

/// [`contains_hash`] for each of `keys`, into `out`: hashed in groups, as
/// [`insert`] hashes them, then every probe of every key, so that the
/// loads of several keys are in flight at once. (Probes computed a group
/// ahead and their bytes prefetched, then set or tested from a buffer,
/// cost more than they saved at every size, to 1.25 MiB.)
pub(crate) fn contains_batch(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    if array.is_empty() {
        return out.fill(true);
    }
    let modulus = Modulus::new(array.len());
    with_count!(k, count => {
        by_groups(keys, variant, |hashes, at| {
            for (&h, &i) in hashes.iter().zip(at) {
                out[i] = all_set(array, modulus, count, h);
            }
        });
    })
}

/// LevelDB's `Hash` of `keys` in groups of up to [`GROUP`]:
/// `each(hashes, at)` takes each group's hashes and the keys' indexes.
/// Keys of mixed lengths go in groups of one length, so that the hash's
/// loop and tail branch alike key after key (in the keys' order, a
/// misprediction or two a key).
#[inline(always)]
fn by_groups(keys: &[&[u8]], variant: HashVariant, mut each: impl FnMut(&[u32], &[usize])) {
    let mut hashes = [0u32; GROUP];
    if keys.len() >= FEW_TO_GROUP && !looks_one_length(keys) {
        groups_by_length::<GROUP>(keys, |group, at, n, _| {
            hash_group(&group[..n], &mut hashes, variant);
            each(&hashes[..n], &at[..n]);
        });
        return;
    }
    let mut at = [0usize; GROUP];
    let far = keys.len() >= MANY_KEYS;
    for (g, group) in keys.chunks(GROUP).enumerate() {
        if far {
            // The bytes of the keys two groups on, and the slices of
            // those two groups later (four a cache line), so that keys
            // far apart in memory are in the cache when they are hashed.
            for key in keys.iter().skip((g + 2) * GROUP).take(GROUP) {
                prefetch(key, 0);
            }
            for i in (0..GROUP).step_by(4) {
                prefetch(keys, (g + 4) * GROUP + i);
            }
        }
        let keys = group;
        hash_group(keys, &mut hashes, variant);
        for (j, at) in at.iter_mut().enumerate() {
            *at = g * GROUP + j;
        }
        each(&hashes[..keys.len()], &at[..keys.len()]);
    }
}

/// LevelDB's `Hash` of up to eight keys into `hashes`: four or two at a
/// time where as many keys in a row have one length, their chains of
/// multiplies side by side (a key's chain is a multiply and three other
/// operations a word long; four keep the core busy where one leaves it
/// idle most of the time).
#[inline]
fn hash_group(keys: &[&[u8]], hashes: &mut [u32; GROUP], variant: HashVariant) {
    let mut at = 0;
    while let Some(&first) = keys.get(at) {
        let same = keys[at..]
            .iter()
            .take(4)
            .take_while(|key| key.len() == first.len())
            .count();
        let n = match same {
            4 => {
                hash_alike::<4>(&keys[at..at + 4], &mut hashes[at..at + 4], variant);
                4
            }
            2 | 3 => {
                hash_alike::<2>(&keys[at..at + 2], &mut hashes[at..at + 2], variant);
                2
            }
            _ => {
                hashes[at] = hash(first, SEED, variant);
                1
            }
        };
        at += n;
    }
}

/// LevelDB's `Hash` of the `N` keys of one length `keys` into `hashes`
/// (as [`hash`] computes each; its steps are written out again here:
/// shared through small functions in hash.rs, batches of short keys
/// measured slower).
#[inline(always)]
fn hash_alike<const N: usize>(keys: &[&[u8]], hashes: &mut [u32], variant: HashVariant) {
    let len = keys[0].len();
    debug_assert!(keys[..N].iter().all(|key| key.len() == len));
    // Every key cut to the first's length (all have it), so that the
    // words' indexes are checked once.
    let keys: [&[u8]; N] = std::array::from_fn(|j| &keys[j][..len]);
    let mut h = [SEED ^ (len as u32).wrapping_mul(M); N];
    for i in 0..len / 4 {
        for (h, key) in h.iter_mut().zip(&keys) {
            let w = &key[4 * i..4 * i + 4];
            let x = h.wrapping_add(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            let x = x.wrapping_mul(M);
            *h = x ^ (x >> 16);
        }
    }
    if !len.is_multiple_of(4) {
        for (h, key) in h.iter_mut().zip(&keys) {
            let x = h.wrapping_add(tail(key, variant)).wrapping_mul(M);
            *h = x ^ (x >> 24);
        }
    }
    hashes[..N].copy_from_slice(&h);
}

/// Sets the `k` bits of a key hashed to `h`.
#[inline(always)]
fn set_bits(array: &mut [u8], modulus: Modulus, count: impl Count, h: u32) {
    probes(modulus, count, h, |byte, bit| {
        // SAFETY: `byte` comes from `modulus`, made for `array`:
        // `Modulus::byte` is below its length.
        unsafe { *array.get_unchecked_mut(byte) |= BIT[bit as usize] };
    });
}

/// Whether the `k` bits of a key hashed to `h` are all set (`true` for
/// `k == 0`: no probe fails, as in LevelDB): the bytes shifted so that
/// each one's bit is the lowest, and-ed together.
#[inline(always)]
fn all_set(array: &[u8], modulus: Modulus, count: impl Count, h: u32) -> bool {
    let mut all = 1u8;
    probes(modulus, count, h, |byte, bit| {
        // SAFETY: as for `set_bits`.
        all &= unsafe { *array.get_unchecked(byte) } >> bit;
    });
    all & 1 != 0
}

/// `each(byte, bit)` for the `k` probes of a key hashed to `h`: probe `j`
/// is bit `bit` (below 8) of byte `byte` (below the array's length).
#[inline(always)]
fn probes(modulus: Modulus, count: impl Count, h: u32, mut each: impl FnMut(usize, u32)) {
    let delta = h.rotate_right(17);
    let mut h = h;
    for _ in 0..count.get() {
        each(modulus.byte(h), h & 7);
        h = h.wrapping_add(delta);
    }
}

/// The mask of bit `i` of a byte, by `i`, for setting bits: one load, where
/// `1 << i` is a shift by a register (several micro-ops on x86 without
/// BMI2, which the portable code does not assume). Lookups shift the byte
/// instead, by the same register.
const BIT: [u8; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// A number of probes a key: [`Const`], for loops that unroll, or `usize`.
pub(crate) trait Count: Copy {
    /// The number.
    fn get(self) -> usize;
}

/// `K` probes a key, known when compiling.
#[derive(Clone, Copy)]
pub(crate) struct Const<const K: usize>;

impl<const K: usize> Count for Const<K> {
    #[inline(always)]
    fn get(self) -> usize {
        K
    }
}

impl Count for usize {
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

/// A bit array's size as its probes need it, computed once per array.
///
/// The bits are 8 times the bytes, so `h % bits` is `8 * ((h >> 3) % len)
/// + (h & 7)`: the byte is `(h >> 3) % len`, the bit `h & 7`. The byte is
/// reduced by Lemire's fastmod: with `m = u64::MAX / len + 1`, `x % len` is
/// the high 64 bits of `(m * x mod 2^64) * len`, exactly, for every 32-bit
/// `x` and `len`, and below `len` whatever `m` (a 64-bit value times `len`,
/// shifted right by 64): one division per array instead of one a probe.
/// From 2^29 bytes (2^32 bits) on, LevelDB's position is `h` itself, its
/// byte `h >> 3`, below 2^29: reduced by 2^29, it is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modulus {
    /// The array's length in bytes, at most 2^29.
    len: u64,
    m: u64,
}

impl Modulus {
    /// For a bit array of `len` bytes (at least one).
    #[inline]
    pub(crate) fn new(len: usize) -> Self {
        let len = (len as u64).clamp(1, 1 << 29);
        Modulus {
            len,
            m: (u64::MAX / len).wrapping_add(1),
        }
    }

    /// The byte of the bit `h % bits` (or of bit `h` from 2^32 bits on):
    /// below the array's length.
    #[inline(always)]
    pub(crate) fn byte(self, h: u32) -> usize {
        let low = self.m.wrapping_mul(u64::from(h >> 3));
        ((u128::from(low) * u128::from(self.len)) >> 64) as usize
    }

    /// LevelDB's position of a probe at `h`: `h % bits`, or `h` from 2^32
    /// bits on.
    #[cfg(test)]
    pub(crate) fn position(self, h: u32) -> u64 {
        (self.byte(h) as u64) << 3 | u64::from(h & 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys hashed in groups (runs of four, two or three, and one of a
    /// length, keys of one length and of mixed ones, few and many) get
    /// LevelDB's hash of each, at its own index.
    #[test]
    fn groups_hash_each_key_as_leveldb_does() {
        let lengths: Vec<usize> = [5, 5, 5, 5, 5, 3, 3, 7, 7, 7, 9, 0, 0, 0, 0, 16, 16, 1]
            .into_iter()
            .chain((0..600).map(|i| (i * 7) % 70))
            .chain([4; 300])
            .collect();
        let keys: Vec<Vec<u8>> = lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| (0..len).map(|j| (i * 31 + j * 97) as u8 | 0x40).collect())
            .collect();
        for variant in [HashVariant::Unsigned, HashVariant::Signed] {
            for n in [1, 5, 18, 300, keys.len()] {
                for keys in [&keys[..n], &keys[keys.len() - n..]] {
                    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                    let mut got = vec![None; refs.len()];
                    by_groups(&refs, variant, |hashes, at| {
                        for (&h, &i) in hashes.iter().zip(at) {
                            assert_eq!(got[i].replace(h), None, "key {i} hashed twice");
                        }
                    });
                    let want: Vec<_> = refs.iter().map(|k| Some(hash(k, SEED, variant))).collect();
                    assert_eq!(got, want, "{n} keys, {variant:?}");
                }
            }
        }
    }
}
