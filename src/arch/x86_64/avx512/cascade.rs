//! The cascade of rounds that answers a window of keys on AMD's cores
//! while few of them may match: each round tests one probe of the keys no
//! earlier round has ruled out, and keeps, compressed, those it does not
//! rule out, so that an absent key costs about two probes instead of k.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::lanes::first_lanes;
use super::pairs::probe16;
use super::{LANES, WINDOW};
use crate::arch::simd::Reducer;

/// [`Cascade::answer`] for keys hashed to `hashes`, in a stack frame of
/// its own: a batch answered by `contains_pairs` does not touch the
/// cascade's 48 KiB (the pages of so big a frame are probed on every
/// call, which small batches pay for).
///
/// # Safety
/// `4 <= array.len()`.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl,popcnt")]
pub(super) unsafe fn by_cascade(
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
pub(super) unsafe fn pairs_by_cascade(
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
