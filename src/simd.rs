//! Runtime CPU dispatch for the Bloom filter's batch work: hashing 16 keys of
//! one length at once and computing their probe positions, with AVX-512F where
//! the CPU has it. The scalar code in `bloom.rs` and `hash.rs` is the
//! reference; the property tests pit this module against it.
//!
//! This is the crate's only module with `unsafe` code.
#![allow(unsafe_code)]

use crate::HashVariant;

/// Keys handled together.
pub(crate) const LANES: usize = 16;

/// What this CPU can run, decided once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Plain Rust.
    Scalar,
    /// AVX-512F and VL (x86-64).
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub(crate) fn detect() -> Kernel {
        use std::sync::atomic::{AtomicU8, Ordering};
        static KERNEL: AtomicU8 = AtomicU8::new(0);
        match KERNEL.load(Ordering::Relaxed) {
            1 => Kernel::Scalar,
            2 => Kernel::Avx512,
            _ => {
                let kernel = if avx512_available() { Kernel::Avx512 } else { Kernel::Scalar };
                KERNEL.store(if kernel == Kernel::Avx512 { 2 } else { 1 }, Ordering::Relaxed);
                kernel
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn avx512_available() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx512_available() -> bool {
    false
}

/// Hashes 16 keys that all have the same length, at least 4 bytes, with
/// LevelDB's `Hash`; `None` when this kernel cannot (the caller then hashes
/// them one by one).
#[inline]
pub(crate) fn hash16(kernel: Kernel, keys: &[&[u8]], seed: u32, variant: HashVariant) -> Option<[u32; LANES]> {
    let len = keys.first()?.len();
    if kernel != Kernel::Avx512 || keys.len() != LANES || len < 4 || keys.iter().any(|k| k.len() != len) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and VL; the
        // keys are 16 slices of `len >= 4` bytes, as `avx512::hash16` needs.
        Some(unsafe { avx512::hash16(keys, len, seed, variant) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (seed, variant);
        None
    }
}

/// For each group g of 16 hashes, writes `rows[g * k + j][lane] =
/// (hashes[g][lane] + j * delta) % bits` for each probe j < k (delta the hash
/// rotated right by 17, sums on 32 bits), for filters of `bits <= 2^31`;
/// `false` when this kernel cannot. `rows` holds `k` rows per group.
#[inline]
pub(crate) fn positions(kernel: Kernel, hashes: &[[u32; LANES]], bits: u64, rows: &mut [[u32; LANES]]) -> bool {
    if kernel != Kernel::Avx512 || bits > 1 << 31 || bits == 0 || hashes.is_empty() {
        return false;
    }
    let k = rows.len() / hashes.len();
    #[cfg(target_arch = "x86_64")]
    {
        for (group, rows) in hashes.iter().zip(rows.chunks_mut(k)) {
            // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F;
            // 0 < bits <= 2^31.
            unsafe { avx512::positions16(group, bits, rows) };
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::LANES;
    use crate::HashVariant;

    const M: i32 = 0xc6a4a793_u32 as i32;

    /// LevelDB's `Hash` of 16 keys of `len >= 4` bytes each, in 16 lanes.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL; `keys` must hold 16 slices of `len` bytes.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn hash16(keys: &[&[u8]], len: usize, seed: u32, variant: HashVariant) -> [u32; LANES] {
        // Gather addresses as offsets from the first key's start.
        let base = keys[0].as_ptr();
        let mut offsets = [0i64; LANES];
        for (o, k) in offsets.iter_mut().zip(keys) {
            *o = (k.as_ptr() as i64).wrapping_sub(base as i64);
        }
        // SAFETY: `offsets` is 16 i64s: two unaligned 64-byte loads.
        let (lo, hi) = unsafe {
            (
                _mm512_loadu_si512(offsets.as_ptr().cast()),
                _mm512_loadu_si512(offsets.as_ptr().add(8).cast()),
            )
        };
        // SAFETY (for each call below): `at + 4 <= len`, so every 4-byte read
        // lies inside its key.
        let word = |at: usize| unsafe { gather(base, lo, hi, at) };
        let m = _mm512_set1_epi32(M);
        let mut h = _mm512_set1_epi32((seed ^ (len as u32).wrapping_mul(M as u32)) as i32);
        let words = len / 4;
        let round = |h: __m512i, w: __m512i| {
            let h = _mm512_mullo_epi32(_mm512_add_epi32(h, w), m);
            _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
        };
        // Whole words, 16 bytes of each key at a time, transposed so that a
        // register holds one word of every key.
        for chunk in (0..words).step_by(4) {
            let count = (words - chunk).min(4);
            // SAFETY: each key has `count` whole words at byte 4 * chunk.
            let [w0, w1, w2, w3] = unsafe { transpose16(keys, 4 * chunk, count) };
            for w in [w0, w1, w2, w3].into_iter().take(count) {
                h = round(h, w);
            }
        }
        let tail = len % 4;
        if tail > 0 {
            // The last 4 bytes of each key hold its tail in their top `tail` bytes.
            let last = _mm512_srlv_epi32(word(len - 4), _mm512_set1_epi32(8 * (4 - tail) as i32));
            let add = match variant {
                HashVariant::Unsigned => last,
                HashVariant::Signed => {
                    // Each tail byte sign-extended, then shifted into place.
                    let mut sum = _mm512_setzero_si512();
                    for j in 0..tail {
                        let byte = _mm512_and_si512(_mm512_srlv_epi32(last, _mm512_set1_epi32(8 * j as i32)), _mm512_set1_epi32(0xff));
                        let signed = _mm512_sub_epi32(_mm512_xor_si512(byte, _mm512_set1_epi32(0x80)), _mm512_set1_epi32(0x80));
                        sum = _mm512_add_epi32(sum, _mm512_sllv_epi32(signed, _mm512_set1_epi32(8 * j as i32)));
                    }
                    sum
                }
            };
            h = _mm512_add_epi32(h, add);
            h = _mm512_mullo_epi32(h, m);
            h = _mm512_xor_si512(h, _mm512_srli_epi32::<24>(h));
        }
        let mut out = [0u32; LANES];
        // SAFETY: `out` is 64 bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
        out
    }

    /// Words `at/4 .. at/4 + count` (count <= 4) of 16 keys: the 16 bytes of
    /// each key from byte `at` (masked to `count` words), four keys to a
    /// register, then transposed: result i holds word i of every key.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL; each key must have `4 * count`
    /// readable bytes at `at`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn transpose16(keys: &[&[u8]], at: usize, count: usize) -> [__m512i; 4] {
        let mask: __mmask8 = (1u8 << count) - 1;
        let load = |key: &[u8]| -> __m128i {
            // SAFETY: masked-off words are not read (no fault); the `count`
            // words read lie inside the key (caller's guarantee).
            unsafe { _mm_maskz_loadu_epi32(mask, key.as_ptr().add(at).cast()) }
        };
        let four = |i: usize| -> __m512i {
            let v = _mm512_castsi128_si512(load(keys[i]));
            let v = _mm512_inserti32x4::<1>(v, load(keys[i + 1]));
            let v = _mm512_inserti32x4::<2>(v, load(keys[i + 2]));
            _mm512_inserti32x4::<3>(v, load(keys[i + 3]))
        };
        // Within each register, word-major: [k0w0 k1w0 k2w0 k3w0 | k0w1 ...].
        let by_word = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
        let a = _mm512_permutexvar_epi32(by_word, four(0));
        let b = _mm512_permutexvar_epi32(by_word, four(4));
        let c = _mm512_permutexvar_epi32(by_word, four(8));
        let d = _mm512_permutexvar_epi32(by_word, four(12));
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

    /// The 32-bit word at byte `at` of 16 keys, whose starts are `base` plus
    /// the offsets in `lo` (keys 0..8) and `hi` (keys 8..16).
    ///
    /// # Safety
    /// The CPU must have AVX-512F; each key must have 4 readable bytes at `at`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn gather(base: *const u8, lo: __m512i, hi: __m512i, at: usize) -> __m512i {
        let at = _mm512_set1_epi64(at as i64);
        // SAFETY: the caller guarantees every address is readable for 4 bytes.
        let (a, b) = unsafe {
            (
                _mm512_i64gather_epi32::<1>(_mm512_add_epi64(lo, at), base.cast()),
                _mm512_i64gather_epi32::<1>(_mm512_add_epi64(hi, at), base.cast()),
            )
        };
        _mm512_inserti64x4::<1>(_mm512_castsi256_si512(a), b)
    }

    /// `h % d` for 8 lanes of 32-bit `h`, in doubles: the quotient from the
    /// reciprocal is off by at most one (h / d < 2^32, relative error < 2^-51),
    /// and `h - q * d` is exact under a fused multiply-add.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn rem8(h: __m256i, d: __m512d, inv: __m512d) -> __m256i {
        let hd = _mm512_cvtepu32_pd(h);
        let q = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(_mm512_mul_pd(hd, inv));
        let mut r = _mm512_fnmadd_pd(q, d, hd);
        let negative = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(r, _mm512_setzero_pd());
        r = _mm512_mask_add_pd(r, negative, r, d);
        let too_big = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r, d);
        r = _mm512_mask_sub_pd(r, too_big, r, d);
        _mm512_cvttpd_epu32(r)
    }

    /// Probe positions of 16 keys: the remainders of h and delta from
    /// doubles, then each next position as the previous plus delta's, less
    /// `2^32 % bits` where the 32-bit sum `h + delta` wraps, all kept in
    /// `[0, bits)` (sums stay below 2^32 as `bits <= 2^31`).
    ///
    /// # Safety
    /// The CPU must have AVX-512F; `0 < bits <= 2^31`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn positions16(hashes: &[u32; LANES], bits: u64, positions: &mut [[u32; LANES]]) {
        // SAFETY: `hashes` is 64 bytes.
        let mut h = unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) };
        let delta = _mm512_ror_epi32::<17>(h);
        let d = _mm512_set1_pd(bits as f64);
        let inv = _mm512_set1_pd(1.0 / bits as f64);
        let rem16 = |v: __m512i| -> __m512i {
            let lo = rem8(_mm512_castsi512_si256(v), d, inv);
            let hi = rem8(_mm512_extracti64x4_epi64::<1>(v), d, inv);
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
        };
        let mut pos = rem16(h);
        let step = rem16(delta);
        let bits32 = _mm512_set1_epi32(bits as u32 as i32);
        let wrap = _mm512_set1_epi32(((1u64 << 32) % bits) as u32 as i32);
        let unwrap = _mm512_sub_epi32(bits32, wrap);
        for row in positions.iter_mut() {
            // SAFETY: a row is 16 u32s, 64 bytes.
            unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), pos) };
            let mut next = _mm512_add_epi32(pos, step);
            next = _mm512_mask_sub_epi32(next, _mm512_cmpge_epu32_mask(next, bits32), next, bits32);
            let moved = _mm512_add_epi32(h, delta);
            let wrapped = _mm512_cmplt_epu32_mask(moved, h);
            let above = _mm512_cmpge_epu32_mask(next, wrap);
            next = _mm512_mask_sub_epi32(next, wrapped & above, next, wrap);
            next = _mm512_mask_add_epi32(next, wrapped & !above, next, unwrap);
            pos = next;
            h = moved;
        }
    }
}
