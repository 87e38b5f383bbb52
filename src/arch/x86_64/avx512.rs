//! The AVX-512 kernel (F, VL and POPCNT): 16 keys to a vector, two vectors
//! at a time.
//!
//! - Hashing: keys of one length are loaded 16 bytes at a time and
//!   transposed, two groups' chains of multiplies interleaved. Keys of
//!   varying lengths wait with others of their length until they are 32
//!   (and hash as two groups of one length); keys of 64 bytes and more, and
//!   small batches, have their words gathered lane by lane.
//! - Probe positions: `h % bits` in doubles, exact (see `Reducer`).
//! - Creating: each group's rows of byte indexes and bit masks are stored,
//!   then set with scalar read-modify-writes (AVX-512 has no scatter that
//!   ORs); the next pair is hashed first so that the core overlaps the two.
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
//! - One lookup: the key's probes (up to 8) in one vector, their words
//!   gathered at once, no branch on the bits: a run of single lookups then
//!   overlaps one key's probes with the next key's hash, and absent keys
//!   cost no misprediction.
//!
//! Every `unsafe fn` here needs, besides the terms of its `# Safety`
//! section, a CPU with the features it enables: the kernel's type is the
//! proof of that, and only its methods call in from outside.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::M;
use crate::arch::{
    groups_by_length, vectorable, CLASSES, FEW_FOR_CASCADE, FEW_TO_GROUP, MANY_KEYS,
    MAX_VECTOR_BYTES, MIN_PROBED_BYTES, PAIRS_FROM,
};
use crate::hash::tail;
use crate::hash::SEED;
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

    /// Sets in `array` the `k` probe bits of every key; `false` (nothing
    /// written) for an array or a `k` this kernel does not take.
    pub(crate) fn insert(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &mut [u8],
    ) -> bool {
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
    pub(crate) fn contains_batch(
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

    /// Whether all `k <= 30` probe bits of a key hashed to `h` are set in
    /// `array`; `None` for an array this kernel does not take.
    #[inline]
    pub(crate) fn contains(self, h: u32, k: usize, array: &[u8]) -> Option<bool> {
        if !(MIN_PROBED_BYTES..=MAX_VECTOR_BYTES).contains(&array.len()) || k > 30 {
            return None;
        }
        // SAFETY: `self` proves the CPU has AVX-512F and VL; the array's
        // length was checked.
        Some(unsafe { hash_may_match(h, k, array) })
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    pub(crate) fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        let mut hashes = Vec::new();
        for group in keys.chunks(LANES) {
            // SAFETY: `self` proves the CPU has AVX-512F and VL.
            let h = unsafe { hash16_array(group, SEED, variant) };
            hashes.extend_from_slice(&h[..group.len()]);
        }
        hashes
    }

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    pub(crate) fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        assert!(bits > 0 && bits <= 1 << 31);
        let mut positions = Vec::new();
        for group in hashes.chunks(LANES) {
            let mut lanes = [0u32; LANES];
            lanes[..group.len()].copy_from_slice(group);
            let mut rows = [[0u32; LANES]; 30];
            // SAFETY: `self` proves the CPU has AVX-512F and VL; bits was checked.
            unsafe { positions_array(&lanes, bits, &mut rows) };
            positions.extend((0..group.len()).map(|lane| rows.map(|row| row[lane])));
        }
        positions
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
        reducer: &Reducer,
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

/// See [`Avx512::insert`].
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < array.len() <= 2^28`, `k > 0`.
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    let reducer = Reducer::new(array.len() as u64 * 8);
    let far = keys_far(keys);
    if by_length(keys) {
        // Into a buffer in the order they are hashed (bits are set in any
        // order), whose bits are set each time it is full. (16 lanes more,
        // for the last group's whole vector.)
        let mut hashes = [0u32; WINDOW + LANES];
        let mut len = 0;
        let mut set = |hashes: &[u32]| {
            let pairs = hashes.chunks(2 * LANES).map(|pair| load_pair(pair));
            // SAFETY: `reducer` was made for `array`.
            unsafe { insert_pairs(pairs, &reducer, k, array) };
        };
        hash_by_length(keys, variant, |h, _, n| {
            let to = &mut hashes[len..len + LANES];
            // SAFETY: `to` is 16 u32s, 64 bytes.
            unsafe { _mm512_storeu_si512(to.as_mut_ptr().cast(), h) };
            len += n;
            if len >= WINDOW {
                set(&hashes[..len]);
                len = 0;
            }
        });
        set(&hashes[..len]);
        return;
    }
    for window in keys.chunks(WINDOW) {
        let pairs = window.chunks(2 * LANES);
        if far {
            let pairs = pairs.enumerate().map(|(i, pair)| {
                prefetch_keys(window, (i + AHEAD) * 2 * LANES);
                hash_pair(pair, variant)
            });
            // SAFETY (here and below): `reducer` was made for `array`.
            unsafe { insert_pairs(pairs, &reducer, k, array) };
        } else {
            // A partial pair first: bits can be set in any order, and its
            // one-key-at-a-time hashes then overlap with the next pair's,
            // instead of ending the filter with their latency (see
            // benches/record/ for the measurement).
            let (partial, whole) = window.split_at(window.len() % (2 * LANES));
            let pairs = (!partial.is_empty()).then_some(partial).into_iter();
            let pairs = pairs.chain(whole.chunks(2 * LANES));
            let pairs = pairs.map(|pair| hash_pair(pair, variant));
            unsafe { insert_pairs(pairs, &reducer, k, array) };
        }
    }
}

/// Sets the bits of pairs of groups given by their hashes and sizes.
///
/// # Safety
/// `reducer` was made for `array`: `Reducer::new(8 * array.len())` (the
/// bytes it clamps indexes below are the array's, unchecked).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn insert_pairs(
    mut pairs: impl Iterator<Item = ([__m512i; 2], [usize; 2])>,
    reducer: &Reducer,
    k: usize,
    array: &mut [u8],
) {
    let (mut first, mut second) = (Probes::new(), Probes::new());
    let mut buffers = [&mut first, &mut second];
    let mut next = pairs.next();
    while let Some((hashes, lens)) = next {
        for ((probes, h), len) in buffers.iter_mut().zip(hashes).zip(lens) {
            if len > 0 {
                probes.fill(reducer, h, k, len);
            }
        }
        // Hashing the next pair first lets the core overlap it with
        // this pair's stores.
        next = pairs.next();
        for (probes, len) in buffers.iter().zip(lens) {
            for (indexes, bits) in probes.rows() {
                let mut set = |lane: usize| {
                    // SAFETY: `Probes::fill`'s indexes are below the
                    // reducer's byte count, `array.len()` by the caller.
                    unsafe { *array.get_unchecked_mut(indexes[lane] as usize) |= bits[lane] as u8 };
                };
                if len == LANES {
                    (0..LANES).for_each(&mut set);
                } else {
                    (0..len).for_each(&mut set);
                }
            }
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
    let reducer = Reducer::new(array.len() as u64 * 8);
    let far = keys_far(keys);
    // Whether more than `PAIRS_FROM` of the last window may be present.
    let mut present = false;
    for (window, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
        let by_pairs = batching == Batching::Pairs || present || window.len() < FEW_FOR_CASCADE;
        if by_length(window) {
            let mut hashes = [0u32; WINDOW];
            let hashes = &mut hashes[..window.len()];
            hash_by_length(window, variant, |h, at, n| {
                let mut out = [0u32; LANES];
                // SAFETY: `out` is 64 bytes.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
                for (&i, h) in at[..n].iter().zip(out) {
                    hashes[i] = h;
                }
            });
            if by_pairs {
                let pairs = hashes.chunks(2 * LANES).map(|pair| load_pair(pair).0);
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
                hash_pair(pair, variant).0
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
unsafe fn by_cascade(hashes: &[u32], reducer: &Reducer, k: usize, array: &[u8], out: &mut [bool]) {
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
    reducer: &Reducer,
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
    reducer: &'a Reducer,
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
    unsafe fn new(array: &'a [u8], reducer: &'a Reducer, k: usize) -> Cascade<'a> {
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
    reducer: &Reducer,
    last_word: __m512i,
    array: &[u8],
    h: __m512i,
) -> __mmask16 {
    let pos = reducer.rem16(h);
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
    reducer: &Reducer,
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

/// See [`Avx512::contains`]: eight probes to a vector.
///
/// # Safety
/// The CPU must have AVX-512F and VL; `4 <= array.len() <= 2^28`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hash_may_match(h: u32, k: usize, array: &[u8]) -> bool {
    let reducer = Reducer::new(array.len() as u64 * 8);
    let last_word = _mm256_set1_epi32((array.len() - 4) as i32);
    by_eights(h, k, |h: __m256i, probes: usize| {
        let active = (1u32 << probes).wrapping_sub(1) as __mmask8;
        let pos = reducer.rem8(h);
        let at = _mm256_min_epu32(_mm256_srli_epi32::<3>(pos), last_word);
        let bit = _mm256_sub_epi32(pos, _mm256_slli_epi32::<3>(at));
        // SAFETY: every active lane reads 4 bytes from `at <=
        // array.len() - 4`; the others read nothing.
        let word = unsafe {
            _mm256_mmask_i32gather_epi32::<1>(
                _mm256_setzero_si256(),
                active,
                at,
                array.as_ptr().cast(),
            )
        };
        let one = _mm256_set1_epi32(1);
        _mm256_mask_test_epi32_mask(active, word, _mm256_sllv_epi32(one, bit)) == active
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
/// [`hash_by_length`]: enough keys to fill groups of one length, and more
/// than one length among [`SAMPLED`] keys spread over them. (Reading every
/// key's length first is a pass over the slices. Keys the sample takes for
/// one length that have a few keys of others are still hashed right: a
/// group of a pair with several lengths goes to [`hash16`].)
fn by_length(keys: &[&[u8]]) -> bool {
    let Some(first) = keys.first() else {
        return false;
    };
    keys.len() >= FEW_TO_GROUP
        && keys
            .iter()
            .step_by(keys.len() / SAMPLED)
            .any(|key| key.len() != first.len())
}

/// Keys whose lengths [`by_length`] compares.
const SAMPLED: usize = 64;

/// The hashes of keys of varying lengths, thirty-two of one length at a
/// time ([`groups_by_length`]), as two groups of sixteen whose chains of
/// multiplies run side by side ([`hash_same`]). `emit(hashes, at, n)`
/// takes each group's hashes as they come, the first `n` lanes those of
/// the keys at indexes `at`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash_by_length(
    keys: &[&[u8]],
    variant: HashVariant,
    mut emit: impl FnMut(__m512i, &[usize; LANES], usize),
) {
    groups_by_length::<{ 2 * LANES }>(keys, |group, at, n, class| {
        let (groups, ats) = (halves(group), halves(at));
        if class < CLASSES - 1 && n > LANES {
            // SAFETY: `groups_by_length` vouches that below the last
            // class, every key of the group is `class` bytes long.
            let h = unsafe { hash_same(groups, class, SEED, variant) };
            emit(h[0], ats[0], LANES);
            emit(h[1], ats[1], n - LANES);
            return;
        }
        let counts = [n.min(LANES), n.saturating_sub(LANES)];
        for ((group, at), n) in groups.into_iter().zip(ats).zip(counts) {
            let h = match n {
                0 => break,
                // A few keys left: one at a time costs less than a group.
                1..FEW_WAITING => hash_each(&group[..n], variant),
                // SAFETY: as above.
                _ => unsafe { hash_waiting(group, class, variant) },
            };
            emit(h, at, n);
        }
    });
}

/// The two halves of a group of [`hash_by_length`].
#[inline]
fn halves<T>(group: &[T; 2 * LANES]) -> [&[T; LANES]; 2] {
    let (halves, _) = group.as_chunks::<LANES>();
    [&halves[0], &halves[1]]
}

/// Keys left in a class at the end of [`hash_by_length`] below which
/// they are hashed one at a time.
const FEW_WAITING: usize = 6;

/// The hashes of a group of [`hash_by_length`] of length class `class`.
///
/// # Safety
/// Below the last class, every key of `group` is `class` bytes long.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hash_waiting(group: &[&[u8]; LANES], class: usize, variant: HashVariant) -> __m512i {
    if class < CLASSES - 1 {
        // SAFETY: the caller vouches that the keys are `class` bytes long.
        let [h] = unsafe { hash_same([group], class, SEED, variant) };
        h
    } else {
        hash16(group, SEED, variant)
    }
}

/// Up to 32 hashes as two vectors, and how many each holds.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn load_pair(hashes: &[u32]) -> ([__m512i; 2], [usize; 2]) {
    let (a, b) = hashes.split_at(hashes.len().min(LANES));
    let load = |h: &[u32]| {
        // SAFETY: the first `h.len()` lanes are the slice's; the others
        // are neither read nor able to fault.
        unsafe { _mm512_maskz_loadu_epi32(first_lanes(h.len()), h.as_ptr().cast()) }
    };
    ([load(a), load(b)], [a.len(), b.len()])
}

/// The hashes of a group of up to 16 keys: a whole group by [`hash16`]
/// in place (a copy would stall the vector loads of its lengths on the
/// copy's stores), fewer keys one at a time (vectors for them would cost
/// as much as for a whole group, at the end of a batch, where nothing
/// overlaps their latency).
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash_group(group: &[&[u8]], variant: HashVariant) -> __m512i {
    match group.try_into() {
        Ok(whole) => hash16(whole, SEED, variant),
        Err(_) => hash_each(group, variant),
    }
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

/// The hashes of up to 32 keys, as two groups of 16, and how many keys
/// each group has (the second may have none). Two whole groups of one
/// length are hashed together.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash_pair(keys: &[&[u8]], variant: HashVariant) -> ([__m512i; 2], [usize; 2]) {
    let (a, b) = keys.split_at(keys.len().min(LANES));
    let lens = [a.len(), b.len()];
    if let (Ok(a), Ok(b)) = (
        <&[&[u8]; LANES]>::try_from(a),
        <&[&[u8]; LANES]>::try_from(b),
    ) {
        if let (Some(len), Some(other)) = (one_length(a), one_length(b)) {
            if len == other {
                // SAFETY: every key of both groups is `len` bytes long.
                return (unsafe { hash_same([a, b], len, SEED, variant) }, lens);
            }
        }
    }
    let b = if b.is_empty() {
        _mm512_setzero_si512()
    } else {
        hash_group(b, variant)
    };
    ([hash_group(a, variant), b], lens)
}

/// The probes of 16 keys, as byte indexes and masks of the bit in that
/// byte, a row per probe. Rows are left uninitialized until filled: a
/// filter of a few keys would otherwise spend more on zeroing them than
/// on its bits.
struct Probes {
    /// How many rows the last `fill` wrote.
    rows: usize,
    indexes: [MaybeUninit<[u32; LANES]>; 30],
    bits: [MaybeUninit<[u32; LANES]>; 30],
}

impl Probes {
    fn new() -> Probes {
        Probes {
            rows: 0,
            indexes: [MaybeUninit::uninit(); 30],
            bits: [MaybeUninit::uninit(); 30],
        }
    }

    /// Writes the first `min(k, 30)` rows for the keys hashed to `h`, of
    /// which the first `keys` lanes are keys (the others get empty
    /// masks). Indexes are below the array's length, as [`Probes16`]'s
    /// positions are below its bits: what makes unchecked access sound.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn fill(&mut self, r: &Reducer, h: __m512i, k: usize, keys: usize) {
        let active = first_lanes(keys);
        let mut probes = Probes16::new(r, h);
        let (one, seven) = (_mm512_set1_epi32(1), _mm512_set1_epi32(7));
        self.rows = k.min(30);
        for (indexes, bits) in self.indexes.iter_mut().zip(&mut self.bits).take(k) {
            let pos = probes.next();
            let index = _mm512_srli_epi32::<3>(pos);
            let bit = _mm512_maskz_sllv_epi32(active, one, _mm512_and_si512(pos, seven));
            // SAFETY: a row is 64 bytes. (Masks stay 32-bit: narrowing
            // stores, VPMOVDB, are slow on AMD's cores.)
            unsafe {
                _mm512_storeu_si512(indexes.as_mut_ptr().cast(), index);
                _mm512_storeu_si512(bits.as_mut_ptr().cast(), bit);
            }
        }
    }

    /// The rows the last `fill` wrote.
    #[inline]
    fn rows(&self) -> impl Iterator<Item = (&[u32; LANES], &[u32; LANES])> {
        let rows = self.indexes[..self.rows]
            .iter()
            .zip(&self.bits[..self.rows]);
        // SAFETY: `fill` wrote the first `self.rows` rows of both.
        rows.map(|(indexes, bits)| unsafe { (indexes.assume_init_ref(), bits.assume_init_ref()) })
    }
}

/// 1 to 16 keys, padded to 16 lanes with copies of the first (whose hashes
/// are not used): keys of one length stay keys of one length.
#[cfg(test)]
fn lanes<'a>(keys: &[&'a [u8]]) -> [&'a [u8]; LANES] {
    let mut lanes: [&[u8]; LANES] = [keys[0]; LANES];
    lanes[..keys.len()].copy_from_slice(keys);
    lanes
}

/// [`hash16`] of up to 16 keys, as an array.
///
/// # Safety
/// The CPU must have AVX-512F and VL.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hash16_array(keys: &[&[u8]], seed: u32, variant: HashVariant) -> [u32; LANES] {
    let mut out = [0u32; LANES];
    // SAFETY: `out` is 64 bytes.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), hash16(&lanes(keys), seed, variant)) };
    out
}

/// The probe positions `(h + j * delta) % bits`, as rows.
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < bits <= 2^31`.
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn positions_array(hashes: &[u32; LANES], bits: u64, rows: &mut [[u32; LANES]]) {
    let reducer = Reducer::new(bits);
    // SAFETY: `hashes` is 64 bytes.
    let h = unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) };
    let mut probes = Probes16::new(&reducer, h);
    for row in rows {
        // SAFETY: a row is 64 bytes.
        unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), probes.next()) };
    }
}

/// The probe positions of 16 keys hashed to `h`, in order: `h % bits` and
/// `delta % bits` from [`Reducer::rem16`], then each next position by adds
/// (the last plus the step, brought below `bits`; the step less `2^32 %
/// bits` where the 32-bit sum `h + delta` wrapped). `bits <= 2^31` keeps
/// every sum below 2^32. (As the AVX2 kernel's `Probes8`.)
///
/// Every position is below `bits` by construction, whatever the
/// reductions return: the start and both steps are clamped below `bits`
/// once, and a position below `bits` plus a step below `bits` is below
/// `2 * bits`, which one subtraction of `bits` brings back below it.
struct Probes16 {
    pos: __m512i,
    h: __m512i,
    delta: __m512i,
    step: __m512i,
    step_wrapped: __m512i,
    bits: __m512i,
}

impl Probes16 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn new(r: &Reducer, h: __m512i) -> Probes16 {
        let delta = _mm512_ror_epi32::<17>(h);
        let step = _mm512_min_epu32(r.rem16(delta), r.last);
        let less = _mm512_sub_epi32(step, r.wrap);
        Probes16 {
            pos: _mm512_min_epu32(r.rem16(h), r.last),
            h,
            delta,
            step,
            step_wrapped: _mm512_min_epu32(less, _mm512_add_epi32(less, r.bits)),
            bits: r.bits,
        }
    }

    /// This probe's positions, and moves to the next.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn next(&mut self) -> __m512i {
        let at = self.pos;
        let h = _mm512_add_epi32(self.h, self.delta);
        let wrapped = _mm512_cmplt_epu32_mask(h, self.delta);
        let step = _mm512_mask_blend_epi32(wrapped, self.step, self.step_wrapped);
        let pos = _mm512_add_epi32(at, step);
        self.pos = _mm512_min_epu32(pos, _mm512_sub_epi32(pos, self.bits));
        self.h = h;
        at
    }
}

/// The length of every key, if they have one (and it fits 32 bits).
#[inline]
fn one_length(keys: &[&[u8]]) -> Option<usize> {
    let len = keys.first()?.len();
    (keys.iter().all(|k| k.len() == len) && u32::try_from(len).is_ok()).then_some(len)
}

/// LevelDB's `Hash` of `N` groups of 16 keys all of length `len`, the
/// groups' rounds interleaved: each group's hash is a chain of dependent
/// multiplies, and two chains fill the gaps of one.
///
/// # Safety
/// Every key of every group is `len` bytes long.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn hash_same<const N: usize>(
    groups: [&[&[u8]; LANES]; N],
    len: usize,
    seed: u32,
    variant: HashVariant,
) -> [__m512i; N] {
    let m = _mm512_set1_epi32(M);
    let h = [_mm512_set1_epi32((seed ^ (len as u32).wrapping_mul(M as u32)) as i32); N];
    // SAFETY: every key has `len >= 4 * (len / 4)` bytes.
    let mut h = unsafe { rounds(groups, len / 4, h) };
    if !len.is_multiple_of(4) {
        for (h, keys) in h.iter_mut().zip(groups) {
            let tails = if len >= 4 {
                // SAFETY: every key is `len >= 4` bytes long.
                unsafe { tails_same(keys, len, variant) }
            } else {
                tails16(keys, variant)
            };
            *h = add_tails(*h, tails, 0xffff, m);
        }
    }
    h
}

/// [`tails16`] of 16 keys of one length `len`, not a multiple of 4: each
/// key's last 4 bytes, all shifted alike.
///
/// # Safety
/// Every key is `len >= 4` bytes long.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn tails_same(keys: &[&[u8]; LANES], len: usize, variant: HashVariant) -> __m512i {
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
    let tails = _mm512_srl_epi32(last, shift);
    signed_tails(tails, variant)
}

/// Tails read as unsigned bytes, as `variant` adds them.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn signed_tails(tails: __m512i, variant: HashVariant) -> __m512i {
    match variant {
        HashVariant::Unsigned => tails,
        // Each byte >= 0x80 sign-extended: byte j adds -2^(8j+8) more.
        HashVariant::Signed => {
            let high = _mm512_and_si512(tails, _mm512_set1_epi32(0x0080_8080));
            _mm512_sub_epi32(tails, _mm512_slli_epi32::<1>(high))
        }
    }
}

/// The rounds of LevelDB's `Hash` over the `words` whole words that
/// every key of `N` groups has, the groups' rounds interleaved.
///
/// # Safety
/// Every key of every group has `4 * words` bytes or more.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn rounds<const N: usize>(
    groups: [&[&[u8]; LANES]; N],
    words: usize,
    mut h: [__m512i; N],
) -> [__m512i; N] {
    let m = _mm512_set1_epi32(M);
    let mut chunk = 0;
    while chunk + 4 <= words {
        let mut w = [[_mm512_setzero_si512(); 4]; N];
        for (w, keys) in w.iter_mut().zip(groups) {
            // SAFETY: every key has `4 * words >= 4 * chunk + 16` bytes.
            *w = transpose(unsafe {
                [
                    whole4(keys, chunk, 0),
                    whole4(keys, chunk, 4),
                    whole4(keys, chunk, 8),
                    whole4(keys, chunk, 12),
                ]
            });
        }
        for i in 0..4 {
            for (h, w) in h.iter_mut().zip(&w) {
                *h = round(*h, w[i], m);
            }
        }
        chunk += 4;
    }
    if chunk < words {
        let counts = [words as u32; LANES];
        for (h, keys) in h.iter_mut().zip(groups) {
            let ws = transpose([
                part4(keys, &counts, chunk, 0),
                part4(keys, &counts, chunk, 4),
                part4(keys, &counts, chunk, 8),
                part4(keys, &counts, chunk, 12),
            ]);
            for w in ws.into_iter().take(words - chunk) {
                *h = round(*h, w, m);
            }
        }
    }
    h
}

/// LevelDB's `Hash` of 16 keys, in 16 lanes: each key's whole words in
/// rounds (a lane sits out the rounds past its length), then its tail.
/// Keys of one length go to [`hash_same`].
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn hash16(keys: &[&[u8]; LANES], seed: u32, variant: HashVariant) -> __m512i {
    if keys.iter().any(|k| u32::try_from(k.len()).is_err()) {
        // Lengths past 32 bits (4 GiB keys): one at a time.
        let hashes = keys.map(|key| crate::hash(key, seed, variant));
        // SAFETY: `hashes` is 64 bytes.
        return unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) };
    }
    if let Some(len) = one_length(keys) {
        // SAFETY: every key is `len` bytes long.
        let [h] = unsafe { hash_same([keys], len, seed, variant) };
        return h;
    }
    // Lengths vary: each word is gathered from the keys that have it.
    let m = _mm512_set1_epi32(M);
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
    let mut h = _mm512_xor_si512(_mm512_set1_epi32(seed as i32), _mm512_mullo_epi32(lens, m));
    for w in 0..most {
        // Lanes whose key has a word `w`.
        let active = _mm512_cmpgt_epu32_mask(words, _mm512_set1_epi32(w as i32));
        let at = _mm512_set1_epi64(4 * w as i64);
        // SAFETY: an active lane reads word `w` of its key, which
        // the key has; the other lanes read nothing.
        let word = unsafe { gather16(active, _mm512_add_epi64(lo, at), _mm512_add_epi64(hi, at)) };
        h = _mm512_mask_mov_epi32(h, active, round(h, word, m));
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
        let tails = signed_tails(_mm512_srlv_epi32(last, shift), variant);
        return add_tails(h, tails, has_tail, m);
    }
    // Some keys under 4 bytes: the tails one at a time.
    add_tails(h, tails16(keys, variant), has_tail, m)
}

/// The tails of 16 keys as LevelDB's `Hash` adds them, one at a time.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn tails16(keys: &[&[u8]; LANES], variant: HashVariant) -> __m512i {
    let mut tails = [0u32; LANES];
    for (t, key) in tails.iter_mut().zip(keys) {
        *t = tail(key, variant);
    }
    // SAFETY: `tails` is 16 u32s, 64 bytes.
    unsafe { _mm512_loadu_si512(tails.as_ptr().cast()) }
}

/// The hash's last step, in the lanes of `has_tail`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn add_tails(h: __m512i, tails: __m512i, has_tail: __mmask16, m: __m512i) -> __m512i {
    let last = _mm512_mullo_epi32(_mm512_add_epi32(h, tails), m);
    let last = _mm512_xor_si512(last, _mm512_srli_epi32::<24>(last));
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

/// One word of the hash: `h = (h + w) * m; h ^= h >> 16`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
fn round(h: __m512i, w: __m512i, m: __m512i) -> __m512i {
    let h = _mm512_mullo_epi32(_mm512_add_epi32(h, w), m);
    _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
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

/// `h % bits` for one filter's `0 < bits <= 2^31`, the quotient from
/// doubles.
struct Reducer {
    /// Just under `1 / bits`, so that quotients are never too large.
    inv: __m512d,
    bits: __m512i,
    /// `bits - 1`, that [`Probes16`] clamps its start to.
    last: __m512i,
    /// `2^32 % bits`: what a wrap of the 32-bit sum takes off a position.
    wrap: __m512i,
}

impl Reducer {
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn new(bits: u64) -> Reducer {
        Reducer {
            inv: _mm512_set1_pd(super::inverse(bits)),
            bits: _mm512_set1_epi32(bits as u32 as i32),
            last: _mm512_set1_epi32((bits - 1) as u32 as i32),
            wrap: _mm512_set1_epi32(super::wrap(bits) as i32),
        }
    }

    /// `h % bits` for 16 lanes of 32-bit `h`: `q = floor(h * inv)`
    /// (truncated, the product being positive) is `h / bits` rounded
    /// down or one less (the product is below `h / bits`, by less than
    /// `2^32 * 2^-49`), so `h - q * bits` lies in `[0, 2 * bits)`, below
    /// 2^32: exact in 32-bit arithmetic. One unsigned minimum with itself
    /// less `bits` ends it.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn rem16(&self, h: __m512i) -> __m512i {
        let lo = self.quotient8(_mm512_castsi512_si256(h));
        let hi = self.quotient8(_mm512_extracti64x4_epi64::<1>(h));
        let q = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi);
        let r = _mm512_sub_epi32(h, _mm512_mullo_epi32(q, self.bits));
        _mm512_min_epu32(r, _mm512_sub_epi32(r, self.bits))
    }

    /// `h % bits` for 8 lanes, as [`Reducer::rem16`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn rem8(&self, h: __m256i) -> __m256i {
        let bits = _mm512_castsi512_si256(self.bits);
        let r = _mm256_sub_epi32(h, _mm256_mullo_epi32(self.quotient8(h), bits));
        _mm256_min_epu32(r, _mm256_sub_epi32(r, bits))
    }

    /// `floor(h * inv)` for 8 lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn quotient8(&self, h: __m256i) -> __m256i {
        _mm512_cvttpd_epu32(_mm512_mul_pd(_mm512_cvtepu32_pd(h), self.inv))
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
