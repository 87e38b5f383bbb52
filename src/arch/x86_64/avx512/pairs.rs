//! Batches by pairs of groups, all k probes of each key, one probe of 16
//! keys at a time ([`probe16`], which the cascade's rounds take too):
//! what answers a window whose keys are mostly present, and every window
//! on Intel's cores.

use std::arch::x86_64::*;

use super::LANES;
use crate::arch::simd::Reducer;

/// Which lanes have the bit of their probe `h` set in `array`: the 4
/// bytes from the probe's byte on (or the array's last 4), by a 16-lane
/// gather (`GATHER`) or by scalar loads (a gather keeps few of the
/// core's load ports busy).
///
/// # Safety
/// `4 <= array.len()`; every lane of `last_word` is `array.len() - 4`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) unsafe fn probe16<const GATHER: bool>(
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
/// see [`Batching`](super::Batching)).
///
/// # Safety
/// `4 <= array.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) unsafe fn contains_pairs<const GATHER_BOTH: bool>(
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
