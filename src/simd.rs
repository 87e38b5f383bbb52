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
    /// The fastest kernel this CPU runs, unless the environment variable
    /// `LEVELDB_FILTER_KERNEL=scalar` asks for the scalar one (to measure or
    /// rule out the SIMD code). Decided once per process.
    pub(crate) fn detect() -> Kernel {
        use std::sync::atomic::{AtomicU8, Ordering};
        static KERNEL: AtomicU8 = AtomicU8::new(0);
        match KERNEL.load(Ordering::Relaxed) {
            1 => Kernel::Scalar,
            2 => Kernel::Avx512,
            _ => {
                let scalar =
                    std::env::var_os("LEVELDB_FILTER_KERNEL").is_some_and(|k| k == "scalar");
                let kernel = if avx512_available() && !scalar {
                    Kernel::Avx512
                } else {
                    Kernel::Scalar
                };
                KERNEL.store(
                    if kernel == Kernel::Avx512 { 2 } else { 1 },
                    Ordering::Relaxed,
                );
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

/// LevelDB's `Hash` of up to 16 keys of any lengths at once; `None` when
/// this kernel cannot (the caller then hashes them one by one).
#[inline]
pub(crate) fn hash16(
    kernel: Kernel,
    keys: &[&[u8]],
    seed: u32,
    variant: HashVariant,
) -> Option<[u32; LANES]> {
    if kernel != Kernel::Avx512 || keys.is_empty() || keys.len() > LANES {
        return None;
    }
    // Missing lanes hash an empty key; their results are not used.
    let mut lanes: [&[u8]; LANES] = [&[]; LANES];
    lanes[..keys.len()].copy_from_slice(keys);
    // The tail (the last len % 4 bytes) of each key as LevelDB adds it.
    let mut tails = [0u32; LANES];
    for (tail, key) in tails.iter_mut().zip(&lanes) {
        let bytes = &key[key.len() / 4 * 4..];
        let unsigned = bytes
            .iter()
            .rev()
            .fold(0u32, |acc, &b| acc << 8 | u32::from(b));
        *tail = match variant {
            HashVariant::Unsigned => unsigned,
            // Each byte >= 0x80 sign-extended: byte j adds -2^(8j+8) more.
            HashVariant::Signed => unsigned.wrapping_sub((unsigned & 0x0080_8080) << 1),
        };
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and VL.
        Some(unsafe { avx512::hash16(&lanes, &tails, seed) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = seed;
        None
    }
}

/// For each group g of 16 hashes, writes `rows[g * k + j][lane] =
/// (hashes[g][lane] + j * delta) % bits` for each probe j < k (delta the hash
/// rotated right by 17, sums on 32 bits), for filters of `bits <= 2^31`;
/// `false` when this kernel cannot. `rows` holds `k` rows per group.
#[inline]
pub(crate) fn positions(
    kernel: Kernel,
    hashes: &[[u32; LANES]],
    bits: u64,
    rows: &mut [[u32; LANES]],
) -> bool {
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

    const M: i32 = 0xc6a4a793_u32 as i32;

    /// LevelDB's `Hash` of 16 keys, in 16 lanes: each key's whole words in
    /// rounds (a lane sits out the rounds past its length), then its tail,
    /// given in `tails` as LevelDB adds it.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn hash16(
        keys: &[&[u8]; LANES],
        tails: &[u32; LANES],
        seed: u32,
    ) -> [u32; LANES] {
        let m = _mm512_set1_epi32(M);
        let round = |h: __m512i, w: __m512i| {
            let h = _mm512_mullo_epi32(_mm512_add_epi32(h, w), m);
            _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
        };
        let len = keys[0].len();
        let (mut h, has_tail) = if keys.iter().all(|k| k.len() == len) {
            // One length: every lane runs every round.
            let words = [(len / 4) as u32; LANES];
            let mut h = _mm512_set1_epi32((seed ^ (len as u32).wrapping_mul(M as u32)) as i32);
            for chunk in (0..len / 4).step_by(4) {
                // SAFETY: `transpose16` reads only the words each key has.
                let ws = unsafe { transpose16(keys, &words, chunk) };
                for w in ws.into_iter().take(len / 4 - chunk) {
                    h = round(h, w);
                }
            }
            (h, if len.is_multiple_of(4) { 0 } else { 0xffff })
        } else {
            let lens = keys.map(|k| k.len() as u32);
            let words = lens.map(|len| len / 4);
            let most = words.iter().copied().max().unwrap_or(0) as usize;
            // SAFETY: the arrays are 16 u32s, 64 bytes.
            let (lens, words_v) = unsafe {
                (
                    _mm512_loadu_si512(lens.as_ptr().cast()),
                    _mm512_loadu_si512(words.as_ptr().cast()),
                )
            };
            let mut h =
                _mm512_xor_si512(_mm512_set1_epi32(seed as i32), _mm512_mullo_epi32(lens, m));
            for chunk in (0..most).step_by(4) {
                // SAFETY: `transpose16` reads only the words each key has.
                let ws = unsafe { transpose16(keys, &words, chunk) };
                for (i, w) in ws.into_iter().enumerate().take(most - chunk) {
                    // Lanes whose key has a word `chunk + i`.
                    let active =
                        _mm512_cmpgt_epu32_mask(words_v, _mm512_set1_epi32((chunk + i) as i32));
                    h = _mm512_mask_mov_epi32(h, active, round(h, w));
                }
            }
            (h, _mm512_test_epi32_mask(lens, _mm512_set1_epi32(3)))
        };
        if has_tail != 0 {
            // SAFETY: `tails` is 16 u32s, 64 bytes.
            let tails = unsafe { _mm512_loadu_si512(tails.as_ptr().cast()) };
            let last = _mm512_mullo_epi32(_mm512_add_epi32(h, tails), m);
            let last = _mm512_xor_si512(last, _mm512_srli_epi32::<24>(last));
            h = _mm512_mask_mov_epi32(h, has_tail, last);
        }
        let mut out = [0u32; LANES];
        // SAFETY: `out` is 64 bytes.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
        out
    }

    /// Words `chunk .. chunk + 4` of 16 keys, four keys to a register, then
    /// transposed: result i holds word `chunk + i` of every key (0 past a
    /// key's `words[key]` whole words).
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn transpose16(
        keys: &[&[u8]; LANES],
        words: &[u32; LANES],
        chunk: usize,
    ) -> [__m512i; 4] {
        let load = |i: usize| -> __m128i {
            let count = (words[i] as usize).saturating_sub(chunk).min(4);
            if count == 0 {
                // No load at all: a fully masked load from an address that
                // may be dangling (an empty key's) is slow on some CPUs.
                return _mm_setzero_si128();
            }
            let mask: __mmask8 = (1u8 << count) - 1;
            // SAFETY: the `count` words read are whole words of the key, and
            // masked-off words are neither read nor able to fault.
            unsafe { _mm_maskz_loadu_epi32(mask, keys[i].as_ptr().wrapping_add(4 * chunk).cast()) }
        };
        let four = |i: usize| -> __m512i {
            let v = _mm512_castsi128_si512(load(i));
            let v = _mm512_inserti32x4::<1>(v, load(i + 1));
            let v = _mm512_inserti32x4::<2>(v, load(i + 2));
            _mm512_inserti32x4::<3>(v, load(i + 3))
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

    /// `h % d` for 8 lanes of 32-bit `h`, in doubles: the quotient from the
    /// reciprocal is off by at most one (h / d < 2^32, relative error < 2^-51),
    /// and `h - q * d` is exact under a fused multiply-add.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn rem8(h: __m256i, d: __m512d, inv: __m512d) -> __m256i {
        let hd = _mm512_cvtepu32_pd(h);
        let q = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_mul_pd(hd, inv),
        );
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
    pub(super) unsafe fn positions16(
        hashes: &[u32; LANES],
        bits: u64,
        positions: &mut [[u32; LANES]],
    ) {
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
