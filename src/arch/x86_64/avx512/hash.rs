//! LevelDB's `Hash` of keys of varying lengths in one group of 16: words
//! gathered lane by lane, the ends of keys by masked loads or one key at a
//! time. (Keys of one length go to [`simd::hash_same`].)

use std::arch::x86_64::*;

use super::LANES;
use crate::arch::simd;
use crate::hash::{tail, M, SEED};
use crate::HashVariant;

/// LevelDB's `Hash` of 16 keys, in 16 lanes: each key's whole words in
/// rounds (a lane sits out the rounds past its length), then its tail.
/// Keys of one length go to [`simd::hash_same`].
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn hash16(keys: &[&[u8]; LANES], variant: HashVariant) -> __m512i {
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
pub(super) fn tails16(keys: &[&[u8]; LANES]) -> __m512i {
    let mut tails = [0u32; LANES];
    for (t, key) in tails.iter_mut().zip(keys) {
        *t = tail(key, HashVariant::Unsigned);
    }
    // SAFETY: `tails` is 16 u32s, 64 bytes.
    unsafe { _mm512_loadu_si512(tails.as_ptr().cast()) }
}

/// [`tails16`] of 16 keys of one length `len`, not a multiple of 4: each
/// key's last 4 bytes, all shifted alike.
///
/// # Safety
/// Every key is `len >= 4` bytes long.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) unsafe fn tails_same(keys: &[&[u8]; LANES], len: usize) -> __m512i {
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

/// The hashes of up to 16 keys, one at a time, in the first lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn hash_each(keys: &[&[u8]], variant: HashVariant) -> __m512i {
    // Each hash into its lane by a masked broadcast: a vector loaded from
    // the hashes stored to memory would wait for those stores.
    let mut hashes = _mm512_setzero_si512();
    for (lane, key) in keys.iter().take(LANES).enumerate() {
        let h = crate::hash(key, SEED, variant) as i32;
        hashes = _mm512_mask_set1_epi32(hashes, 1 << lane, h);
    }
    hashes
}
