//! One lookup, in a filter of up to 256 KiB: the key's probes reduced in
//! a vector, their bytes read by scalar loads, no branch on the bits
//! (fewer instructions than the portable probes).

use std::arch::x86_64::*;

use super::lanes::quotient8;
use crate::arch::simd;

/// See [`Avx512::contains`](crate::arch::Vector::contains): eight probes
/// to a vector, reduced in one vector of doubles; each probe's byte by a
/// scalar load from indexes stored to the stack (gathers cost more, and
/// the load ports take a probe each), or-ed with the mask of its other
/// bits.
///
/// # Safety
/// The CPU must have AVX-512F and VL; `0 < array.len() <= 2^28`.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) unsafe fn hash_may_match(h: u32, k: usize, array: &[u8]) -> bool {
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
