//! The AVX-512 kernel (F, VL and POPCNT): 16 keys to a vector, two vectors
//! at a time, by the algorithm of [`simd`](crate::arch::simd) over sixteen
//! 32-bit lanes ([`Lanes`](simd::Lanes) for `__m512i`). What is AVX-512's
//! own:
//!
//! - Hashing: keys of varying lengths in one group (of 64 bytes and more,
//!   and small batches) have their words gathered lane by lane
//!   ([`hash16`](hash::hash16)); the ends of keys are loaded by masked
//!   loads.
//! - Many keys: each pair's key bytes are prefetched two pairs ahead, and
//!   the keys' slices two pairs further.
//! - Looking up many keys, on AMD's cores: a window's hashes first, then a
//!   cascade of rounds, each testing one probe of the keys no earlier round
//!   has ruled out and keeping, compressed, the keys it does not rule out;
//!   an absent key costs about two probes instead of k. When the last
//!   window's keys were mostly present, pairs of groups instead, all k
//!   probes each (one group's words by a 16-lane gather, the other's by
//!   scalar loads: a gather keeps few of the core's load ports busy there,
//!   so the two run side by side). On Intel's, pairs of groups always, both
//!   gathered ([`Batching`]).
//! - One lookup, in a filter of up to 256 KiB: the key's probes (up to 8)
//!   reduced in one vector, their bytes read by scalar loads, no branch on
//!   the bits: fewer instructions than the portable probes, which a run of
//!   lookups of keys of mixed lengths (a misprediction or two each in the
//!   hash) shows. Larger filters, whose probes miss the caches, and kept
//!   hashes take the portable probes, whose loads start sooner.
//!
//! This file decides which way serves a filter or a batch; each way has
//! a file: the lanes ([`lanes`]), hashing by gathers ([`hash`]), the
//! cascade ([`cascade`]), pairs of groups ([`pairs`]), single lookups
//! ([`single`]), keys' prefetches ([`prefetch`]).
//!
//! Every `unsafe fn` in these files needs, besides the terms of its
//! `# Safety` section, a CPU with the features it enables: the kernel's
//! type is the proof of that, and only its methods call in from outside.

mod cascade;
mod hash;
mod lanes;
mod pairs;
mod prefetch;
mod single;

use std::arch::x86_64::*;

use cascade::{by_cascade, pairs_by_cascade};
use pairs::contains_pairs;
use prefetch::{keys_far, prefetch_keys, AHEAD};
use single::hash_may_match;

use crate::arch::simd::{self, hash_step, Reducer};
use crate::arch::{
    looks_one_length, vectorable, Vector, FEW_FOR_CASCADE, FEW_TO_GROUP, MAX_SINGLE_LANES_BYTES,
    MIN_PROBED_BYTES, PAIRS_FROM,
};
use crate::HashVariant;

/// Keys to a vector.
const LANES: usize = 16;

/// Proof that this CPU has AVX-512F, AVX-512VL and POPCNT: only
/// [`Avx512::detect`] makes one, so that every method may run this kernel's
/// code (which enables those features) safely. It proves AVX2 too (every
/// AVX-512 CPU has it; `detect` asks): work this kernel has no code of its
/// own for runs AVX2's ([`Avx2::from`](super::Avx2)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx512 {
    /// How this CPU answers batches best (by its vendor).
    batching: Batching,
}

impl Avx512 {
    /// The kernel, where the CPU has what it needs.
    pub(crate) fn detect() -> Option<Avx512> {
        let has = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("popcnt")
            && std::is_x86_feature_detected!("avx2");
        let batching = match super::intel() {
            true => Batching::Pairs,
            false => Batching::CascadeOrPairs,
        };
        has.then_some(Avx512 { batching })
    }

    /// This kernel with each way of answering batches, whatever the CPU's
    /// vendor (for the tests: each is tested on every AVX-512 CPU).
    #[cfg(test)]
    pub(crate) fn every_batching(self) -> [Avx512; 2] {
        [Batching::CascadeOrPairs, Batching::Pairs].map(|batching| Avx512 { batching })
    }
}

impl Vector for Avx512 {
    const NAME: &'static str = "avx512";

    /// Sets in `array` the `k` probe bits of every key; `false` (nothing
    /// written) for an array or a `k` this kernel does not take.
    fn insert(self, keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) -> bool {
        if !vectorable(array.len(), k) {
            return false;
        }
        // SAFETY: `self` proves the CPU has AVX-512F and VL; the array's
        // length and k were checked.
        unsafe { insert(keys, variant, k, array) };
        true
    }

    /// For each key, whether all `k` of its probe bits are set in `array`,
    /// into `out` (as long as `keys`); `false` (nothing written) for an
    /// array or a `k` this kernel does not take.
    fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) -> bool {
        if !vectorable(array.len(), k) || array.len() < MIN_PROBED_BYTES || keys.len() != out.len()
        {
            return false;
        }
        // SAFETY: `self` proves the CPU has AVX-512F, VL and POPCNT; the
        // array's length, k and `out` were checked.
        unsafe { contains(keys, variant, k, array, out, self.batching) };
        true
    }

    /// AVX2's code ([`Avx2::from`](super::Avx2)): this kernel has none of
    /// its own for the bits of a filter block's filters (a builder's
    /// filters hold a few dozen keys each; sixteen lanes were not tried
    /// there).
    fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) -> bool {
        super::Avx2::from(self).insert_hashes(hashes, k, array)
    }

    /// Whether all `k <= 30` probe bits of a key hashed to `h` are set in
    /// `array`; `None` for an array this kernel does not take.
    #[inline]
    fn contains(self, h: u32, k: usize, array: &[u8]) -> Option<bool> {
        if !self.takes_single(array.len(), k) {
            return None;
        }
        // SAFETY: `self` proves the CPU has AVX-512F and VL; the array's
        // length was checked.
        Some(unsafe { hash_may_match(h, k, array) })
    }

    /// Arrays up to [`MAX_SINGLE_LANES_BYTES`] and `k <= 30`.
    #[inline]
    fn takes_single(self, bytes: usize, k: usize) -> bool {
        (1..=MAX_SINGLE_LANES_BYTES).contains(&bytes) && k <= 30
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        // SAFETY: `self` proves the CPU has AVX-512F and VL.
        unsafe { hashes(keys, variant) }
    }

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        // SAFETY: `self` proves the CPU has AVX-512F and VL.
        unsafe { positions(hashes, bits) }
    }
}

/// How a CPU answers batches best, measured on each vendor's cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Batching {
    /// AMD's (measured on Zen 5): a window by the cascade while at most
    /// [`PAIRS_FROM`] of the last window's keys may match, else by pairs
    /// of groups, one group's words gathered and the other's by scalar
    /// loads (a gather keeps few of the core's load ports busy there, so
    /// the two groups' loads run side by side).
    CascadeOrPairs,
    /// Intel's (measured on a Xeon, family 6 model 167): always by pairs,
    /// both groups' words gathered. There pairs cost less than the cascade
    /// whatever the share of present keys (0 to 100% measured, filters of
    /// 12 KiB to 1.2 MiB), and a second gather less than sixteen lanes
    /// moved to and from general registers (benches/record/).
    Pairs,
}

impl Batching {
    /// [`contains_pairs`] as this batching takes pairs: both groups
    /// gathered for [`Batching::Pairs`], one by scalar loads otherwise.
    ///
    /// # Safety
    /// As for [`contains_pairs`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn contains_pairs(
        self,
        pairs: impl Iterator<Item = [__m512i; 2]>,
        reducer: &Reducer<__m512i, LANES>,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) {
        // SAFETY: as for this function.
        unsafe {
            match self {
                Batching::Pairs => contains_pairs::<true>(pairs, reducer, k, array, out),
                Batching::CascadeOrPairs => contains_pairs::<false>(pairs, reducer, k, array, out),
            }
        }
    }
}

/// See [`Avx512::insert`]: pairs of groups ([`simd::insert_steps`]).
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < array.len() <= 2^28`, `k <= 30`.
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    // SAFETY: as for this function.
    let reducer = unsafe { Reducer::<__m512i, LANES>::new(array.len() as u64 * 8) };
    if by_length(keys) {
        // Hashes into a buffer in the order they are hashed (bits are set
        // in any order), whose bits are set each time it is full.
        // SAFETY: as for this function; `reducer` was made for `array`.
        unsafe {
            simd::buffered_hashes::<__m512i, LANES, 32>(keys, variant, |hashes| {
                let pairs = simd::Loaded::<__m512i, LANES, 2>::new(hashes);
                simd::insert_steps(pairs, &reducer, k, array);
            });
        }
        return;
    }
    let far = keys_far(keys);
    for window in keys.chunks(WINDOW) {
        let pairs = window.chunks(2 * LANES);
        if far {
            let pairs = pairs.enumerate().map(|(i, pair)| {
                prefetch_keys(window, (i + AHEAD) * 2 * LANES);
                // SAFETY: the CPU has AVX-512F and VL.
                unsafe { hash_step::<__m512i, LANES, 2>(pair, variant) }
            });
            // SAFETY (here and below): `reducer` was made for `array`.
            unsafe { simd::insert_steps(pairs, &reducer, k, array) };
        } else {
            // A partial pair first: bits can be set in any order, and its
            // one-key-at-a-time hashes then overlap with the next pair's,
            // instead of ending the filter with their latency (see
            // benches/record/ for the measurement).
            let (partial, whole) = window.split_at(window.len() % (2 * LANES));
            let pairs = (!partial.is_empty()).then_some(partial).into_iter();
            let pairs = pairs.chain(whole.chunks(2 * LANES));
            // SAFETY: the CPU has AVX-512F and VL.
            let pairs = pairs.map(|pair| unsafe { hash_step::<__m512i, LANES, 2>(pair, variant) });
            unsafe { simd::insert_steps(pairs, &reducer, k, array) };
        }
    }
}

/// See [`Avx512::contains_batch`]. A window of keys is answered by the
/// cascade ([`cascade`]) when few keys of the last window may match (it
/// costs an absent key about two probes instead of k, but a present key
/// more than `contains_pairs` does), by `contains_pairs` when more than
/// the share [`PAIRS_FROM`] of them may; on Intel's cores always by
/// `contains_pairs` ([`Batching`]).
///
/// # Safety
/// The CPU must have AVX-512F, VL and POPCNT; `4 <= array.len() <= 2^28`,
/// `k > 0`, `out.len() == keys.len()`.
#[target_feature(enable = "avx512f,avx512vl,popcnt")]
unsafe fn contains(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
    batching: Batching,
) {
    // SAFETY: the CPU has AVX-512F and VL.
    let reducer = unsafe { Reducer::<__m512i, LANES>::new(array.len() as u64 * 8) };
    let far = keys_far(keys);
    // Whether more than `PAIRS_FROM` of the last window may be present.
    let mut present = false;
    for (window, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
        let by_pairs = batching == Batching::Pairs || present || window.len() < FEW_FOR_CASCADE;
        if by_length(window) {
            let mut hashes = [0u32; WINDOW];
            let hashes = &mut hashes[..window.len()];
            // SAFETY: the CPU has AVX-512F and VL.
            unsafe { simd::hashes_in_order::<__m512i, LANES, 32>(window, variant, hashes) };
            if by_pairs {
                let pairs = hashes.chunks(2 * LANES).map(|pair| {
                    // SAFETY: the CPU has AVX-512F and VL.
                    unsafe { simd::load_step::<__m512i, LANES, 2>(pair).0 }
                });
                // SAFETY: the caller vouches for the array's length.
                unsafe { batching.contains_pairs(pairs, &reducer, k, array, out) };
            } else {
                // SAFETY: the caller vouches for the array's length.
                unsafe { by_cascade(hashes, &reducer, k, array, out) };
            }
        } else {
            let pairs = window.chunks(2 * LANES).enumerate().map(|(i, pair)| {
                if far {
                    prefetch_keys(window, (i + AHEAD) * 2 * LANES);
                }
                // SAFETY: the CPU has AVX-512F and VL.
                unsafe { hash_step::<__m512i, LANES, 2>(pair, variant).0 }
            });
            if by_pairs {
                // SAFETY: the caller vouches for the array's length.
                unsafe { batching.contains_pairs(pairs, &reducer, k, array, out) };
            } else {
                // SAFETY: the caller vouches for the array's length.
                unsafe { pairs_by_cascade(pairs, &reducer, k, array, out) };
            }
        }
        // (Only a whole window has a window after it.)
        if window.len() == WINDOW {
            present = more_than(out, PAIRS_FROM);
        }
    }
}

/// Whether more than the share `n / d` of the answers are "may match".
fn more_than(out: &[bool], (n, d): (usize, usize)) -> bool {
    out.iter().filter(|&&hit| hit).count() * d > out.len() * n
}

/// Keys of a batch answered together (hashed by length, then probed), and
/// hashes of a filter's keys gathered before their bits are set: enough
/// for most lengths to fill whole groups in a window (the waiting keys
/// take 50 KiB of stack, the hashes 16 KiB).
const WINDOW: usize = 4096;

/// Whether keys (a filter's, or a batch's window) are hashed by
/// [`simd::hash_by_length`]: enough keys to fill groups of one length, and
/// more than one length among those [`looks_one_length`] samples. (Keys
/// the sample takes for one length that have a few keys of others are
/// still hashed right: a group of a pair with several lengths goes to
/// [`hash16`](hash::hash16).)
fn by_length(keys: &[&[u8]]) -> bool {
    keys.len() >= FEW_TO_GROUP && !looks_one_length(keys)
}

/// LevelDB's `Hash` of each key, sixteen at a time (for the tests).
///
/// # Safety
/// The CPU must have AVX-512F and VL.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hashes(keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
    // SAFETY: as for this function.
    unsafe { simd::hashes::<__m512i, LANES>(keys, variant) }
}

/// The probe positions of [`Avx512::positions`].
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < bits <= 2^31`.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn positions(hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
    // SAFETY: as for this function.
    unsafe { simd::positions::<__m512i, LANES>(hashes, bits) }
}

#[cfg(test)]
mod tests {
    /// Which windows go to `hash_by_length`; the kernels' agreement on
    /// the others is `bloom`'s test of windows the sample misses.
    #[test]
    fn windows_are_sorted_by_length_when_the_sample_has_several() {
        let (short, long) = ([7u8; 16], [7u8; 17]);
        let mut keys = vec![&short[..]; 4096];
        assert!(!super::by_length(&keys), "one length");
        // Off the sample (every 64th key): taken for one length.
        keys[1] = &long;
        keys[4000] = &long;
        assert!(!super::by_length(&keys));
        keys[64] = &long;
        assert!(super::by_length(&keys), "a sampled key of another length");
        assert!(!super::by_length(&keys[..255]), "too few to sort");
    }
}
