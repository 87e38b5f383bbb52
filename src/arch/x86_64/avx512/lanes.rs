//! [`Lanes`] for `__m512i`: sixteen 32-bit lanes, keys' words loaded
//! four keys to a vector and transposed, the reduction's quotient by
//! unsigned conversions.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::hash::{hash16, hash_each, tails16, tails_same};
use super::LANES;
use crate::arch::simd::{one_intrinsic, Lanes};
use crate::HashVariant;

/// The mask of the first `min(n, 16)` lanes.
#[inline]
pub(super) fn first_lanes(n: usize) -> __mmask16 {
    (1u32 << n.min(LANES)).wrapping_sub(1) as __mmask16
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

/// `floor(h * inv)` for 8 lanes: with `inv` from
/// [`simd::inverse`](crate::arch::simd::inverse), `h / bits` or one less,
/// which [`simd::rem_by_quotient`](crate::arch::simd::rem_by_quotient)
/// takes.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn quotient8(h: __m256i, inv: __m512d) -> __m256i {
    _mm512_cvttpd_epu32(_mm512_mul_pd(_mm512_cvtepu32_pd(h), inv))
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
