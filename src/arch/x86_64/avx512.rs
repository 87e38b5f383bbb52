//! The AVX-512 kernel (F, VL and POPCNT): 16 keys to a vector, two vectors
//! at a time, by the algorithm of [`simd`](crate::arch::simd) over sixteen
//! 32-bit lanes ([`Lanes`] for `__m512i`). What is AVX-512's own:
//!
//! - Hashing: keys of varying lengths in one group (of 64 bytes and more,
//!   and small batches) have their words gathered lane by lane
//!   ([`hash16`]); the ends of keys are loaded by masked loads.
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
//! Every `unsafe fn` here needs, besides the terms of its `# Safety`
//! section, a CPU with the features it enables: the kernel's type is the
//! proof of that, and only its methods call in from outside.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use crate::arch::simd::{self, hash_step, one_intrinsic, Lanes, Reducer};
use crate::arch::{
    looks_one_length, vectorable, Vector, FEW_FOR_CASCADE, FEW_TO_GROUP, MANY_KEYS,
    MAX_SINGLE_LANES_BYTES, MIN_PROBED_BYTES, PAIRS_FROM,
};
use crate::hash::{tail, M, SEED};
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

/// See [`Avx512::contains_batch`]. A window of keys is answered by [`Cascade`]
/// when few keys of the last window may match (it costs an absent key
/// about two probes instead of k, but a present key more than
/// `contains_pairs` does), by `contains_pairs` when more than the share
/// [`PAIRS_FROM`] of them may; on Intel's cores always by `contains_pairs`
/// ([`Batching`]).
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

/// [`Cascade::answer`] for keys hashed to `hashes`, in a stack frame of
/// its own: a batch answered by `contains_pairs` does not touch the
/// cascade's 48 KiB (the pages of so big a frame are probed on every
/// call, which small batches pay for).
///
/// # Safety
/// `4 <= array.len()`.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl,popcnt")]
unsafe fn by_cascade(
    hashes: &[u32],
    reducer: &Reducer<__m512i, LANES>,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    // SAFETY: the caller vouches for the array's length.
    let mut cascade = unsafe { Cascade::new(array, reducer, k) };
    cascade.answer(hashes, out);
}

/// [`by_cascade`] for keys given by pairs of groups' hashes, one answer
/// in `out` for each.
///
/// # Safety
/// `4 <= array.len()`.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl,popcnt")]
unsafe fn pairs_by_cascade(
    pairs: impl Iterator<Item = [__m512i; 2]>,
    reducer: &Reducer<__m512i, LANES>,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    // SAFETY: the caller vouches for the array's length.
    let mut cascade = unsafe { Cascade::new(array, reducer, k) };
    // The hashes go where the cascade keeps its probes.
    let mut len = 0;
    for (to, h) in cascade.h.chunks_exact_mut(2 * LANES).zip(pairs) {
        // SAFETY: `to` is 32 u32s, 128 bytes.
        unsafe {
            _mm512_storeu_si512(to.as_mut_ptr().cast(), h[0]);
            _mm512_storeu_si512(to[LANES..].as_mut_ptr().cast(), h[1]);
        }
        len += 2 * LANES;
    }
    assert!(len >= out.len());
    // SAFETY: the pairs' stores wrote the first `len` entries of `h`.
    unsafe { cascade.answer_from(None, out) };
}

/// The mask of the first `min(n, 16)` lanes.
#[inline]
fn first_lanes(n: usize) -> __mmask16 {
    (1u32 << n.min(LANES)).wrapping_sub(1) as __mmask16
}

/// Whether more than the share `n / d` of the answers are "may match".
fn more_than(out: &[bool], (n, d): (usize, usize)) -> bool {
    out.iter().filter(|&&hit| hit).count() * d > out.len() * n
}

/// Answers keys given by their hashes probe by probe: each round tests
/// one probe of the keys the earlier rounds have not ruled out, and
/// keeps those it does not rule out on its lists (as LevelDB's loop
/// exits at a key's first clear bit, but with no branch on the bits).
/// (The lists take 48 KiB of stack, left uninitialized until written: a
/// batch of a few keys would otherwise spend more on zeroing them than
/// on its probes.)
struct Cascade<'a> {
    array: &'a [u8],
    reducer: &'a Reducer<__m512i, LANES>,
    k: usize,
    /// The keys left: their indexes in the window, next probes and
    /// deltas. (Two vectors past a window: `keep` stores whole vectors,
    /// and `h` takes the hashes of a window's last pair of groups.)
    at: [MaybeUninit<u32>; WINDOW + 2 * LANES],
    h: [MaybeUninit<u32>; WINDOW + 2 * LANES],
    delta: [MaybeUninit<u32>; WINDOW + 2 * LANES],
}

impl<'a> Cascade<'a> {
    /// # Safety
    /// `4 <= array.len()`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn new(array: &'a [u8], reducer: &'a Reducer<__m512i, LANES>, k: usize) -> Cascade<'a> {
        let none = [MaybeUninit::uninit(); WINDOW + 2 * LANES];
        Cascade {
            array,
            reducer,
            k,
            at: none,
            h: none,
            delta: none,
        }
    }

    /// The answers for up to [`WINDOW`] keys hashed to `hashes`.
    #[target_feature(enable = "avx512f,avx512vl,popcnt")]
    fn answer(&mut self, hashes: &[u32], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len());
        // SAFETY: `hashes` has `out.len()` entries.
        unsafe { self.answer_from(Some(hashes), out) };
    }

    /// The answers for the `out.len() <= WINDOW` keys hashed to `hashes`,
    /// or, for `None`, to the first `out.len()` entries of `self.h`.
    ///
    /// # Safety
    /// `hashes` has `out.len()` entries; for `None`, the first
    /// `out.len()` entries of `self.h` are written.
    #[target_feature(enable = "avx512f,avx512vl,popcnt")]
    unsafe fn answer_from(&mut self, hashes: Option<&[u32]>, out: &mut [bool]) {
        assert!(out.len() <= WINDOW);
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let mut left = 0;
        for from in (0..out.len()).step_by(LANES) {
            let active = first_lanes(out.len() - from);
            let hashes: *const u32 = match hashes {
                Some(hashes) => hashes.as_ptr(),
                None => self.h.as_ptr().cast(),
            };
            // SAFETY: the lanes of `active` are among the `out.len()`
            // hashes the caller vouches for; the others are neither read
            // nor able to fault. (When they are `self.h`'s, `keep` writes
            // from `left <= from` on: entries read already.)
            let h = unsafe { _mm512_maskz_loadu_epi32(active, hashes.add(from).cast()) };
            let at = _mm512_add_epi32(lanes, _mm512_set1_epi32(from as i32));
            let delta = _mm512_ror_epi32::<17>(h);
            left = self.keep(left, self.probe(h, active), at, h, delta);
        }
        for _ in 1..self.k {
            let listed = left;
            left = 0;
            for from in (0..listed).step_by(LANES) {
                let active = first_lanes(listed - from);
                let lists = [&self.at, &self.h, &self.delta];
                // SAFETY: the entries below `listed` were written by the
                // last round's `keep`. A whole vector of them by a plain
                // load (masked loads are slower); in the last, partial
                // vector, the inactive lanes are neither read nor able to
                // fault. (This round's `keep` writes from `left <= from`
                // on: entries read already.)
                let [at, h, delta] = unsafe {
                    if active == 0xffff {
                        lists.map(|list| _mm512_loadu_si512(list[from..].as_ptr().cast()))
                    } else {
                        lists.map(|list| {
                            _mm512_maskz_loadu_epi32(active, list[from..].as_ptr().cast())
                        })
                    }
                };
                left = self.keep(left, self.probe(h, active), at, h, delta);
            }
        }
        out.fill(false);
        for at in &self.at[..left] {
            // SAFETY: the last round's `keep` wrote the first `left` entries.
            out[unsafe { at.assume_init() } as usize] = true;
        }
    }

    /// Lists from entry `left` on the `kept` lanes of the keys at `at`
    /// with probes `h`, each with its next probe; the entry after them.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl,popcnt")]
    fn keep(
        &mut self,
        left: usize,
        kept: __mmask16,
        at: __m512i,
        h: __m512i,
        delta: __m512i,
    ) -> usize {
        let next = _mm512_add_epi32(h, delta);
        for (list, v) in [
            (&mut self.at, at),
            (&mut self.h, next),
            (&mut self.delta, delta),
        ] {
            let to = &mut list[left..left + LANES];
            // SAFETY: `to` is 16 u32s, 64 bytes.
            unsafe {
                _mm512_storeu_si512(to.as_mut_ptr().cast(), _mm512_maskz_compress_epi32(kept, v))
            };
        }
        left + kept.count_ones() as usize
    }

    /// Which of the `active` lanes have the bit of their probe `h` set.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn probe(&self, h: __m512i, active: __mmask16) -> __mmask16 {
        let last_word = _mm512_set1_epi32((self.array.len() - 4) as i32);
        // SAFETY: `last_word` is `array.len() - 4`, and `new`'s caller
        // vouches for `4 <= array.len()`.
        active & unsafe { probe16::<false>(self.reducer, last_word, self.array, h) }
    }
}

/// Which lanes have the bit of their probe `h` set in `array`: the 4
/// bytes from the probe's byte on (or the array's last 4), by a 16-lane
/// gather (`GATHER`) or by scalar loads (a gather keeps few of the
/// core's load ports busy).
///
/// # Safety
/// `4 <= array.len()`; every lane of `last_word` is `array.len() - 4`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn probe16<const GATHER: bool>(
    reducer: &Reducer<__m512i, LANES>,
    last_word: __m512i,
    array: &[u8],
    h: __m512i,
) -> __mmask16 {
    // SAFETY: the CPU has AVX-512F and VL.
    let pos = unsafe { reducer.rem(h) };
    let at = _mm512_min_epu32(_mm512_srli_epi32::<3>(pos), last_word);
    let bit = _mm512_sub_epi32(pos, _mm512_slli_epi32::<3>(at));
    let word = if GATHER {
        // SAFETY: every lane reads 4 bytes from `at <= array.len() - 4`.
        unsafe { _mm512_i32gather_epi32::<1>(at, array.as_ptr().cast()) }
    } else {
        let (mut ats, mut words) = ([0u32; LANES], [0u32; LANES]);
        // SAFETY: each array is 64 bytes.
        unsafe { _mm512_storeu_si512(ats.as_mut_ptr().cast(), at) };
        for (word, &at) in words.iter_mut().zip(&ats) {
            // SAFETY: `at <= array.len() - 4`.
            *word = unsafe {
                array
                    .as_ptr()
                    .add(at as usize)
                    .cast::<u32>()
                    .read_unaligned()
            };
        }
        // SAFETY: `words` is 64 bytes.
        unsafe { _mm512_loadu_si512(words.as_ptr().cast()) }
    };
    _mm512_test_epi32_mask(word, _mm512_sllv_epi32(_mm512_set1_epi32(1), bit))
}

/// Answers for pairs of groups given by their hashes, 32 to a chunk of
/// `out`: the first group's words by a gather; the second's by a gather
/// too where `GATHER_BOTH` (Intel's cores), by scalar loads elsewhere (on
/// AMD's Zen 5 a gather keeps few of the core's load ports busy, and the
/// two groups' loads then run side by side; on Intel's a second gather
/// costs less than sixteen lanes moved to and from general registers:
/// see [`Batching`]).
///
/// # Safety
/// `4 <= array.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn contains_pairs<const GATHER_BOTH: bool>(
    mut pairs: impl Iterator<Item = [__m512i; 2]>,
    reducer: &Reducer<__m512i, LANES>,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    let last_word = _mm512_set1_epi32((array.len() - 4) as i32);
    let mut next = pairs.next();
    for out in out.chunks_mut(2 * LANES) {
        let Some(mut h) = next else { break };
        // Hashing the next pair first lets the core overlap it with
        // this pair's loads.
        next = pairs.next();
        let delta = [_mm512_ror_epi32::<17>(h[0]), _mm512_ror_epi32::<17>(h[1])];
        let mut all: [__mmask16; 2] = [0xffff; 2];
        for _ in 0..k {
            for g in 0..2 {
                // SAFETY: the caller vouches for `4 <= array.len()`;
                // `last_word` is `array.len() - 4`.
                all[g] &= unsafe {
                    if g == 0 || GATHER_BOTH {
                        probe16::<true>(reducer, last_word, array, h[g])
                    } else {
                        probe16::<false>(reducer, last_word, array, h[g])
                    }
                };
                h[g] = _mm512_add_epi32(h[g], delta[g]);
            }
        }
        let all = u32::from(all[0]) | u32::from(all[1]) << LANES;
        for (lane, answer) in out.iter_mut().enumerate() {
            *answer = all >> lane & 1 != 0;
        }
    }
}

/// See [`Avx512::contains`]: eight probes to a vector, reduced in one
/// vector of doubles; each probe's byte by a scalar load from indexes
/// stored to the stack (gathers cost more, and the load ports take a
/// probe each), or-ed with the mask of its other bits.
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < array.len() <= 2^28`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hash_may_match(h: u32, k: usize, array: &[u8]) -> bool {
    let bits = array.len() as u64 * 8;
    let (inv, bits) = (
        _mm512_set1_pd(simd::inverse(bits)),
        _mm256_set1_epi32(bits as i32),
    );
    let last = _mm256_set1_epi32((array.len() - 1) as i32);
    by_eights(h, k, |h: __m256i, probes: usize| {
        // SAFETY: the CPU has AVX-512F, which implies the AVX2 that
        // `Lanes<8> for __m256i` needs.
        let pos = unsafe { simd::rem_by_quotient(h, quotient8(h, inv), bits) };
        let (mut bytes, mut others) = ([0u32; 8], [0u32; 8]);
        let one = _mm256_set1_epi32(1);
        let bit = _mm256_sllv_epi32(one, _mm256_and_si256(pos, _mm256_set1_epi32(7)));
        // SAFETY: each store writes its array's 32 bytes.
        unsafe {
            let at = _mm256_min_epu32(_mm256_srli_epi32::<3>(pos), last);
            _mm256_storeu_si256(bytes.as_mut_ptr().cast(), at);
            let other = _mm256_xor_si256(bit, _mm256_set1_epi32(-1));
            _mm256_storeu_si256(others.as_mut_ptr().cast(), other);
        }
        let mut all = u32::MAX;
        for j in 0..probes {
            // SAFETY: every index was clamped below the array's length.
            all &= u32::from(unsafe { *array.get_unchecked(bytes[j] as usize) }) | others[j];
        }
        all == u32::MAX
    })
}

/// The `k` probes of a key hashed to `h`, in vectors of eight: `probe(h, n)`
/// tests the first `n` lanes of eight probes `h`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn by_eights(h: u32, k: usize, probe: impl Fn(__m256i, usize) -> bool) -> bool {
    let delta = h.rotate_right(17);
    // Probe j of a vector is h + j * delta, then 8 * delta more per vector.
    let steps = _mm256_mullo_epi32(
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        _mm256_set1_epi32(delta as i32),
    );
    let mut h = _mm256_add_epi32(_mm256_set1_epi32(h as i32), steps);
    // One vector for k <= 8 (LevelDB's k up to 12 bits per key), with no
    // loop around it: a few instructions less per lookup show.
    if k <= 8 {
        return probe(h, k);
    }
    let (mut all, mut left) = (true, k);
    let next = _mm256_set1_epi32(delta.wrapping_mul(8) as i32);
    while left > 0 {
        all &= probe(h, left.min(8));
        left = left.saturating_sub(8);
        h = _mm256_add_epi32(h, next);
    }
    all
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
/// [`hash16`].)
fn by_length(keys: &[&[u8]]) -> bool {
    keys.len() >= FEW_TO_GROUP && !looks_one_length(keys)
}

/// The hashes of up to 16 keys, one at a time, in the first lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash_each(keys: &[&[u8]], variant: HashVariant) -> __m512i {
    // Each hash into its lane by a masked broadcast: a vector loaded from
    // the hashes stored to memory would wait for those stores.
    let mut hashes = _mm512_setzero_si512();
    for (lane, key) in keys.iter().take(LANES).enumerate() {
        let h = crate::hash(key, SEED, variant) as i32;
        hashes = _mm512_mask_set1_epi32(hashes, 1 << lane, h);
    }
    hashes
}

/// Whether there are so many keys (2^15 and more) that their bytes are
/// likely out of the cache: then each pair's keys are prefetched two
/// pairs ahead (for keys in the cache the prefetches would cost more than
/// they save).
fn keys_far(keys: &[&[u8]]) -> bool {
    keys.len() >= MANY_KEYS
}

/// Pairs of groups ahead whose key bytes [`prefetch_keys`] asks for.
const AHEAD: usize = 2;

/// Asks for the first bytes of the 32 keys from `keys[from]` on (if
/// any), so that keys far apart in memory are in the cache by the time
/// they are hashed. Into every level (T0), not non-temporally: on Intel
/// cores a non-temporal prefetch made creating a filter of a million keys
/// slower than no prefetch at all (see benches/record/). Then the slices
/// of the 32 keys after those, whose loads the key prefetches would
/// otherwise wait on.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn prefetch_keys(keys: &[&[u8]], from: usize) {
    // SAFETY: a prefetch reads nothing and faults on no address; the
    // block is for Rust before 1.93, where `_mm_prefetch` is an unsafe fn.
    #[allow(unused_unsafe)]
    for key in keys.iter().skip(from).take(2 * LANES) {
        unsafe { _mm_prefetch::<_MM_HINT_T0>(key.as_ptr().cast()) };
    }
    // And the slices of the keys two pairs later, a cache line (four
    // slices) at a time: without them, the key prefetches above wait
    // for the slices' loads from memory.
    let later = keys.iter().skip(from + 2 * 2 * LANES);
    // SAFETY: as above.
    #[allow(unused_unsafe)]
    for key in later.step_by(4).take(2 * LANES / 4) {
        unsafe { _mm_prefetch::<_MM_HINT_T0>((key as *const &[u8]).cast()) };
    }
}

/// [`tails16`] of 16 keys of one length `len`, not a multiple of 4: each
/// key's last 4 bytes, all shifted alike.
///
/// # Safety
/// Every key is `len >= 4` bytes long.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn tails_same(keys: &[&[u8]; LANES], len: usize) -> __m512i {
    let mut last = [0u32; LANES];
    for (word, key) in last.iter_mut().zip(keys) {
        debug_assert!(key.len() == len && len >= 4);
        // SAFETY: the caller vouches for the key's `len >= 4` bytes.
        *word = unsafe { key.as_ptr().add(len - 4).cast::<u32>().read_unaligned() };
    }
    // SAFETY: `last` is 64 bytes.
    let last = unsafe { _mm512_loadu_si512(last.as_ptr().cast()) };
    // The top `len % 4` bytes.
    let shift = _mm_cvtsi32_si128(32 - 8 * (len % 4) as i32);
    _mm512_srl_epi32(last, shift)
}

/// LevelDB's `Hash` of 16 keys, in 16 lanes: each key's whole words in
/// rounds (a lane sits out the rounds past its length), then its tail.
/// Keys of one length go to [`simd::hash_same`].
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash16(keys: &[&[u8]; LANES], variant: HashVariant) -> __m512i {
    if keys.iter().any(|k| u32::try_from(k.len()).is_err()) {
        // Lengths past 32 bits (4 GiB keys): one at a time.
        let hashes = keys.map(|key| crate::hash(key, SEED, variant));
        // SAFETY: `hashes` is 64 bytes.
        return unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) };
    }
    if let Some(len) = simd::one_length(keys) {
        // SAFETY: the CPU has AVX-512F and VL; every key is `len` bytes long.
        let [h] = unsafe { simd::hash_same([keys], len, variant) };
        return h;
    }
    // Lengths vary: each word is gathered from the keys that have it.
    let m = _mm512_set1_epi32(M as i32);
    let (mut lens, mut starts) = ([0u32; LANES], [0u64; LANES]);
    for ((len, start), key) in lens.iter_mut().zip(&mut starts).zip(keys) {
        *len = key.len() as u32;
        *start = key.as_ptr() as u64;
    }
    let most = lens.iter().copied().max().unwrap_or(0) as usize / 4;
    // SAFETY: `lens` is 64 bytes, `starts` 128.
    let (lens, lo, hi) = unsafe {
        (
            _mm512_loadu_si512(lens.as_ptr().cast()),
            _mm512_loadu_si512(starts.as_ptr().cast()),
            _mm512_loadu_si512(starts[8..].as_ptr().cast()),
        )
    };
    let words = _mm512_srli_epi32::<2>(lens);
    let mut h = _mm512_xor_si512(_mm512_set1_epi32(SEED as i32), _mm512_mullo_epi32(lens, m));
    for w in 0..most {
        // Lanes whose key has a word `w`.
        let active = _mm512_cmpgt_epu32_mask(words, _mm512_set1_epi32(w as i32));
        let at = _mm512_set1_epi64(4 * w as i64);
        // SAFETY: an active lane reads word `w` of its key, which
        // the key has; the other lanes read nothing.
        let word = unsafe { gather16(active, _mm512_add_epi64(lo, at), _mm512_add_epi64(hi, at)) };
        // SAFETY: the CPU has AVX-512F and VL.
        h = _mm512_mask_mov_epi32(h, active, unsafe { simd::round(h, word) });
    }
    let has_tail = _mm512_test_epi32_mask(lens, _mm512_set1_epi32(3));
    let short = _mm512_cmplt_epu32_mask(lens, _mm512_set1_epi32(4));
    if has_tail == 0 {
        return h;
    }
    if short == 0 {
        // The tail is the top `len % 4` bytes of each key's last 4.
        let back = _mm512_set1_epi64(4);
        let len_lo = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(lens));
        let len_hi = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(lens));
        // SAFETY: every key has 4 bytes or more; a lane with a tail
        // reads its key's last 4.
        let last = unsafe {
            gather16(
                has_tail,
                _mm512_sub_epi64(_mm512_add_epi64(lo, len_lo), back),
                _mm512_sub_epi64(_mm512_add_epi64(hi, len_hi), back),
            )
        };
        let rest = _mm512_and_si512(lens, _mm512_set1_epi32(3));
        let shift = _mm512_sub_epi32(_mm512_set1_epi32(32), _mm512_slli_epi32::<3>(rest));
        return add_tails(h, _mm512_srlv_epi32(last, shift), has_tail, variant);
    }
    // Some keys under 4 bytes: the tails one at a time.
    add_tails(h, tails16(keys), has_tail, variant)
}

/// The tails of 16 keys read as unsigned bytes, one at a time.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn tails16(keys: &[&[u8]; LANES]) -> __m512i {
    let mut tails = [0u32; LANES];
    for (t, key) in tails.iter_mut().zip(keys) {
        *t = tail(key, HashVariant::Unsigned);
    }
    // SAFETY: `tails` is 16 u32s, 64 bytes.
    unsafe { _mm512_loadu_si512(tails.as_ptr().cast()) }
}

/// The hash's last step ([`simd::finish`]), for tails read as unsigned
/// bytes, in the lanes of `has_tail`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn add_tails(h: __m512i, tails: __m512i, has_tail: __mmask16, variant: HashVariant) -> __m512i {
    // SAFETY: the CPU has AVX-512F and VL.
    let last = unsafe { simd::finish(h, tails, variant) };
    _mm512_mask_mov_epi32(h, has_tail, last)
}

/// The 32-bit words at 16 addresses (8 in `lo`, 8 in `hi`), in the
/// lanes of `mask`; 0 in the others, which read nothing.
///
/// # Safety
/// The 4 bytes at each address in `mask` must be readable.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn gather16(mask: __mmask16, lo: __m512i, hi: __m512i) -> __m512i {
    let none = _mm256_setzero_si256();
    // SAFETY: the addresses are absolute (base 0, scale 1); the caller
    // vouches for those in `mask`.
    let (a, b) = unsafe {
        (
            _mm512_mask_i64gather_epi32::<1>(none, mask as u8, lo, std::ptr::null()),
            _mm512_mask_i64gather_epi32::<1>(none, (mask >> 8) as u8, hi, std::ptr::null()),
        )
    };
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(a), b)
}

/// Words `chunk .. chunk + 4` of keys `i .. i + 4`, a key per 128 bits.
///
/// # Safety
/// Those keys have `4 * chunk + 16` bytes or more.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn whole4(keys: &[&[u8]; LANES], chunk: usize, i: usize) -> __m512i {
    // SAFETY: the caller vouches for the keys' lengths.
    unsafe {
        let x = _mm512_castsi128_si512(load16(keys[i], chunk));
        let x = _mm512_inserti32x4::<1>(x, load16(keys[i + 1], chunk));
        let x = _mm512_inserti32x4::<2>(x, load16(keys[i + 2], chunk));
        _mm512_inserti32x4::<3>(x, load16(keys[i + 3], chunk))
    }
}

/// Words `chunk .. chunk + 4` of a key that has them. (Unchecked: a
/// bounds check per key and chunk cost a tenth of the time of creating a
/// filter.)
///
/// # Safety
/// `key.len() >= 4 * chunk + 16`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn load16(key: &[u8], chunk: usize) -> __m128i {
    debug_assert!(key.len() >= 4 * chunk + 16);
    // SAFETY: the caller vouches for these 16 bytes of the key.
    unsafe { _mm_loadu_si128(key.as_ptr().add(4 * chunk).cast()) }
}

/// Words `chunk .. chunk + 4` of keys `i .. i + 4`, a key per 128 bits,
/// 0 past a key's `words[key]` whole words.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn part4(keys: &[&[u8]; LANES], words: &[u32; LANES], chunk: usize, i: usize) -> __m512i {
    let x = _mm512_castsi128_si512(load4(keys[i], words[i], chunk));
    let x = _mm512_inserti32x4::<1>(x, load4(keys[i + 1], words[i + 1], chunk));
    let x = _mm512_inserti32x4::<2>(x, load4(keys[i + 2], words[i + 2], chunk));
    _mm512_inserti32x4::<3>(x, load4(keys[i + 3], words[i + 3], chunk))
}

/// Four vectors of four keys' four words (a key per 128 bits) as four
/// vectors of one word of 16 keys.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn transpose([a, b, c, d]: [__m512i; 4]) -> [__m512i; 4] {
    // Within each register, word-major: [k0w0 k1w0 k2w0 k3w0 | k0w1 ...].
    let by_word = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    let a = _mm512_permutexvar_epi32(by_word, a);
    let b = _mm512_permutexvar_epi32(by_word, b);
    let c = _mm512_permutexvar_epi32(by_word, c);
    let d = _mm512_permutexvar_epi32(by_word, d);
    // Gather lane i of a, b, c, d into result i.
    let ab01 = _mm512_shuffle_i32x4::<0b01_00_01_00>(a, b);
    let ab23 = _mm512_shuffle_i32x4::<0b11_10_11_10>(a, b);
    let cd01 = _mm512_shuffle_i32x4::<0b01_00_01_00>(c, d);
    let cd23 = _mm512_shuffle_i32x4::<0b11_10_11_10>(c, d);
    [
        _mm512_shuffle_i32x4::<0b10_00_10_00>(ab01, cd01),
        _mm512_shuffle_i32x4::<0b11_01_11_01>(ab01, cd01),
        _mm512_shuffle_i32x4::<0b10_00_10_00>(ab23, cd23),
        _mm512_shuffle_i32x4::<0b11_01_11_01>(ab23, cd23),
    ]
}

/// Words `chunk .. chunk + 4` of a key of `words` whole words, 0 past them.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn load4(key: &[u8], words: u32, chunk: usize) -> __m128i {
    // What a key with no words left loads from, under an empty mask.
    static NOTHING: [u32; 4] = [0; 4];
    let count = (words as usize).saturating_sub(chunk).min(4);
    let mask: __mmask8 = (1u8 << count) - 1;
    // A key's own address only when it has words left (a masked load
    // from past an empty key's dangling address is slow on some CPUs).
    let at = if count == 0 {
        NOTHING.as_ptr().cast()
    } else {
        key.as_ptr().wrapping_add(4 * chunk)
    };
    // SAFETY: the `count` words read are whole words of the key (or
    // none), and masked-off words are neither read nor able to fault.
    unsafe { _mm_maskz_loadu_epi32(mask, at.cast()) }
}

/// `floor(h * inv)` for 8 lanes: with `inv` from [`simd::inverse`], `h /
/// bits` or one less, which [`simd::rem_by_quotient`] takes.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn quotient8(h: __m256i, inv: __m512d) -> __m256i {
    _mm512_cvttpd_epu32(_mm512_mul_pd(_mm512_cvtepu32_pd(h), inv))
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

// SAFETY (every block in this impl): the trait's contract is a CPU with
// AVX-512F and VL, which these intrinsics and functions need; the memory
// each reads or writes is said beside it.
impl Lanes<LANES> for __m512i {
    type Inverse = __m512d;
    const ROWS_AHEAD: bool = false;

    #[inline(always)]
    unsafe fn load_up_to(words: &[u32]) -> Self {
        // SAFETY: see the impl; the first `words.len()` lanes are the
        // slice's, the others neither read nor able to fault.
        unsafe { _mm512_maskz_loadu_epi32(first_lanes(words.len()), words.as_ptr().cast()) }
    }
    #[rustfmt::skip]
    one_intrinsic!(binary: add = _mm512_add_epi32, sub = _mm512_sub_epi32, mul = _mm512_mullo_epi32, xor = _mm512_xor_si512,
        and = _mm512_and_si512, min = _mm512_min_epu32, shl_by = _mm512_sllv_epi32;
        unary: shl1 = _mm512_slli_epi32::<1>, shr3 = _mm512_srli_epi32::<3>,
        shr16 = _mm512_srli_epi32::<16>, shr24 = _mm512_srli_epi32::<24>, rotr17 = _mm512_ror_epi32::<17>);
    one_intrinsic! {
        fn splat(x: u32) -> Self => _mm512_set1_epi32(x as i32);
        fn load(words: &[u32; LANES]) -> Self => _mm512_loadu_si512(words.as_ptr().cast());
        fn store(self: Self, to: &mut [u32; LANES]) =>
            _mm512_storeu_si512(to.as_mut_ptr().cast(), self);
        // (Masks stay 32-bit: narrowing stores, VPMOVDB, are slow on AMD's
        // cores.)
        fn store_uninit(self: Self, to: &mut MaybeUninit<[u32; LANES]>) =>
            _mm512_storeu_si512(to.as_mut_ptr().cast(), self);
        fn inverse(inv: f64) -> __m512d => _mm512_set1_pd(inv);
        fn select_wrapped(sum: Self, addend: Self, wrapped: Self, kept: Self) -> Self =>
            _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(sum, addend), kept, wrapped);
    }
    /// Eight lanes at a time, by unsigned conversions.
    #[inline(always)]
    unsafe fn quotient(self, inv: __m512d) -> Self {
        // SAFETY: see the impl.
        unsafe {
            let lo = quotient8(_mm512_castsi512_si256(self), inv);
            let hi = quotient8(_mm512_extracti64x4_epi64::<1>(self), inv);
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        }
    }
    #[inline(always)]
    unsafe fn chunk(keys: &[&[u8]; LANES], at: usize) -> [Self; 4] {
        let chunk = at / 4;
        // SAFETY: see the impl; the caller vouches for the keys' bytes.
        unsafe {
            transpose([
                whole4(keys, chunk, 0),
                whole4(keys, chunk, 4),
                whole4(keys, chunk, 8),
                whole4(keys, chunk, 12),
            ])
        }
    }
    /// The whole words by masked loads, the tail from each key's last 4
    /// bytes, all shifted alike.
    #[inline(always)]
    unsafe fn rest(keys: &[&[u8]; LANES], at: usize, len: usize) -> ([Self; 4], Self) {
        let (chunk, words) = (at / 4, len / 4);
        let counts = [words as u32; LANES];
        // SAFETY: see the impl; every key is `len` bytes long, by the caller.
        unsafe {
            // No whole words left: the tail alone, no loads for them.
            let mut w = [_mm512_setzero_si512(); 4];
            if words > chunk {
                w = transpose([
                    part4(keys, &counts, chunk, 0),
                    part4(keys, &counts, chunk, 4),
                    part4(keys, &counts, chunk, 8),
                    part4(keys, &counts, chunk, 12),
                ]);
            }
            let tail = match len.is_multiple_of(4) {
                true => _mm512_setzero_si512(),
                false if len >= 4 => tails_same(keys, len),
                false => tails16(keys),
            };
            (w, tail)
        }
    }
    /// A whole group by gathers ([`hash16`]) in place (a copy would stall
    /// the vector loads of its lengths on the copy's stores), fewer keys
    /// one at a time ([`hash_each`]: vectors for them would cost as much
    /// as for a whole group, at the end of a batch, where nothing overlaps
    /// their latency).
    #[inline(always)]
    unsafe fn hash_apart(keys: &[&[u8]], variant: HashVariant) -> Self {
        // SAFETY: see the impl.
        unsafe {
            match keys.try_into() {
                Ok(whole) => hash16(whole, variant),
                Err(_) => hash_each(keys, variant),
            }
        }
    }
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
