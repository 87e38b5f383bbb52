//! RocksDB's FastLocalBloom probes of one 64-byte block
//! ([`rocksdb::local`](crate::rocksdb::local)) on AVX2, as RocksDB's own
//! AVX2 reader tests them: eight probes' positions by one multiply of the
//! hash's high half by the multiplier's powers, each probe's 32-bit word
//! of the block by a permute of either half, and every bit tested at once.
//! AVX-512 CPUs run it too (they have AVX2).

use std::arch::asm;
use std::arch::x86_64::*;

use super::Avx2;
use crate::rocksdb::hash64;
use crate::rocksdb::local::{batch, fast_line, fast_local_line, FAST_POWERS, LINE};

/// Whether every one of `probes` probes of a key whose hash's high half is
/// `high` is set in `line`.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn test(line: &[u8; LINE], high: u32, probes: u32) -> bool {
    // SAFETY: the two loads read the 64 bytes of `line`; the rest are
    // AVX2's operations on registers, which the caller's CPU has.
    #[allow(unused_unsafe)]
    unsafe {
        let halves = line.as_ptr().cast::<__m256i>();
        let (low, high_half) = (
            _mm256_loadu_si256(halves),
            _mm256_loadu_si256(halves.add(1)),
        );
        let powers = _mm256_loadu_si256(FAST_POWERS.as_ptr().cast::<__m256i>());
        let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let mut hashes = _mm256_mullo_epi32(_mm256_set1_epi32(high as i32), powers);
        let mut left = probes.min(FAST_POWERS.len() as u32) as i32;
        loop {
            // A probe's position is its hash's top 9 bits: the top 4 the
            // 32-bit word, the next 5 the bit in it.
            let words = _mm256_srli_epi32::<28>(hashes);
            // A word of the low half or the high by bit 3 of its index, the
            // hash's sign bit, which the blend reads.
            let word = _mm256_castps_si256(_mm256_blendv_ps(
                _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, words)),
                _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high_half, words)),
                _mm256_castsi256_ps(hashes),
            ));
            // A probe's bit in its word, where the probe is one of the
            // `left` still to test (lane minus `left` negative): the lane's
            // sign bit shifted left to the bit.
            let used = _mm256_srli_epi32::<31>(_mm256_sub_epi32(lanes, _mm256_set1_epi32(left)));
            let wanted = _mm256_sllv_epi32(
                used,
                _mm256_srli_epi32::<27>(_mm256_slli_epi32::<4>(hashes)),
            );
            // The answer is returned from the test itself (a branch on the
            // probe count, the same for every key of a filter): folded
            // across passes, it would lengthen each key's chain of latencies.
            let all = all_set(word, wanted);
            if left <= 8 || !all {
                return all;
            }
            left -= 8;
            // The next eight probes: the hash times the multiplier's
            // eighth power, eight times as far along.
            hashes = _mm256_mullo_epi32(hashes, _mm256_set1_epi32(FAST_POWERS[8] as i32));
        }
    }
}

/// Whether every bit of `wanted` is set in `words`: `vptest`'s carry flag.
/// Written out, because `_mm256_testc_si256` compiles to a fold of the
/// vector's halves into a general register, a chain of five latencies
/// where `vptest` has one, and a single lookup is that chain.
///
/// # Safety
/// The CPU must have AVX (which AVX2 implies).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn all_set(words: __m256i, wanted: __m256i) -> bool {
    let carry: u8;
    // SAFETY: `vptest` reads two registers and writes the flags, which
    // `setc` reads; the caller's CPU has AVX.
    unsafe {
        asm!(
            "vptest {words}, {wanted}",
            "setc {carry}",
            words = in(ymm_reg) words,
            wanted = in(ymm_reg) wanted,
            carry = out(reg_byte) carry,
            options(pure, nomem, nostack),
        );
    }
    carry != 0
}

/// Whether every probe of a key hashed to `h` is set in a FastLocalBloom
/// bit array of whole blocks.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn test_hash(data: &[u8], probes: u32, h: u64) -> bool {
    match fast_line(data, h) {
        // SAFETY: the caller's CPU has AVX2.
        Some(line) => unsafe { test(line, (h >> 32) as u32, probes) },
        None => true,
    }
}

/// RocksDB's `MayMatch` of a key, hashed and tested in one function.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn single(data: &[u8], probes: u32, key: &[u8]) -> bool {
    // SAFETY: the caller's CPU has AVX2.
    unsafe { test_hash(data, probes, hash64(key)) }
}

/// RocksDB's batch `MayMatch` of a FastLocalBloom bit array of whole
/// blocks, with [`test`] inlined.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn batch_test(data: &[u8], probes: u32, keys: &[&[u8]], out: &mut [bool]) {
    batch(
        data,
        keys,
        out,
        hash64,
        |h| fast_local_line(data, h),
        |h| {
            // SAFETY: the caller's CPU has AVX2.
            unsafe { test_hash(data, probes, h) }
        },
    )
}

/// [`batch_test`] on a CPU that `_cpu` proves has AVX2; always answers.
pub(crate) fn batch_on(
    _cpu: Avx2,
    data: &[u8],
    probes: u32,
    keys: &[&[u8]],
    out: &mut [bool],
) -> bool {
    // SAFETY: an `Avx2` is made only where the CPU has AVX2.
    unsafe { batch_test(data, probes, keys, out) };
    true
}
