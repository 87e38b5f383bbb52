//! Runtime CPU dispatch for the Bloom filter's batch work, with AVX-512F where
//! the CPU has it: 16 keys to a vector, two vectors at a time. Without
//! AVX-512, filters of keys of one length are made with AVX2 (`avx2`: eight
//! keys hashed at once from 16-byte chunks, positions from doubles, bits set
//! a group behind); the rest is the scalar code's.
//!
//! - Hashing: keys of one length are loaded 16 bytes at a time and
//!   transposed, two groups' chains of multiplies interleaved. In a window of
//!   keys of varying lengths, each key waits with others of its length until
//!   they are 16 (and hash as one length); keys of 64 bytes and more, and
//!   small batches, have their words gathered lane by lane.
//! - Probe positions: `h % bits` in doubles, exact (see `Reducer`).
//! - Creating: each group's rows of byte indexes and bit masks are stored,
//!   then set with scalar read-modify-writes (AVX-512 has no scatter that
//!   ORs); the next pair is hashed first so that the core overlaps the two.
//! - Many keys (2^15 and more): each pair's key bytes are prefetched two
//!   pairs ahead, and the keys' slices two pairs further.
//! - Looking up many keys: a window's hashes first, then a cascade of
//!   rounds, each testing one probe of the keys no earlier round has ruled
//!   out and keeping, compressed, the keys it does not rule out; an absent
//!   key costs about two probes instead of k. When the last window's keys
//!   were mostly present, pairs of groups instead, all k probes each (one
//!   group's words by a 16-lane gather, the other's by scalar loads: a
//!   gather keeps few of the core's load ports busy, so the two run side by
//!   side).
//! - One lookup: the key's probes (up to 8) in one vector, their words
//!   gathered at once, no branch on the bits: a run of single lookups then
//!   overlaps one key's probes with the next key's hash, and absent keys
//!   cost no misprediction.
//!
//! The scalar code in `bloom.rs` and `hash.rs` is the reference; the unit and
//! property tests pit this module against it and the LevelDB differential
//! tests against LevelDB. This is the crate's only module with `unsafe` code.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

use crate::HashVariant;

/// Keys handled together.
pub(crate) const LANES: usize = 16;

/// Below this many keys, a filter is created by the scalar code.
const FEW: usize = 9;

/// [`Kernel::detect`]'s answer: 0 until decided, then 1 (scalar), 2
/// (AVX-512) or 3 (AVX2).
static KERNEL: AtomicU8 = AtomicU8::new(0);

/// What this CPU can run, decided once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Plain Rust.
    Scalar,
    /// AVX2 (x86-64): filters of keys of one length. Single lookups and
    /// batches take the scalar code (see `decide`).
    Avx2,
    /// AVX-512F and VL (x86-64).
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs, unless the environment variable
    /// `LEVELDB_FILTER_KERNEL` asks for `scalar` or `avx2` (to measure or
    /// rule out the SIMD code; `avx2` is taken only where the CPU has it).
    /// Decided once per process; inlined, as every single lookup asks.
    ///
    /// With AVX2 and not AVX-512, only the making of filters is vectorized:
    /// keys of one length hashed eight at a time with no gathers, which are
    /// slow on many such cores (AMD Zen 2 and 3; Intel Skylake to Tiger Lake
    /// since the 2023 "Downfall" microcode). A single lookup whose probes'
    /// words were gathered lost there to the scalar lookup's early exit (20
    /// ns a lookup against 16, LevelDB 18, on a Zen 3 EPYC of family 25,
    /// model 1), and keys of mixed lengths hash no faster eight at a time.
    #[inline]
    pub(crate) fn detect() -> Kernel {
        match KERNEL.load(Ordering::Relaxed) {
            1 => Kernel::Scalar,
            2 => Kernel::Avx512,
            3 => Kernel::Avx2,
            _ => Kernel::decide(),
        }
    }

    /// What `detect` returns from now on.
    #[cold]
    fn decide() -> Kernel {
        let asked = std::env::var("LEVELDB_FILTER_KERNEL").unwrap_or_default();
        let kernel = match asked.as_str() {
            "scalar" => Kernel::Scalar,
            "avx2" if avx2_available() => Kernel::Avx2,
            "avx2" => Kernel::Scalar,
            _ if avx512_available() => Kernel::Avx512,
            _ if avx2_available() => Kernel::Avx2,
            _ => Kernel::Scalar,
        };
        let code = match kernel {
            Kernel::Scalar => 1,
            Kernel::Avx512 => 2,
            Kernel::Avx2 => 3,
        };
        KERNEL.store(code, Ordering::Relaxed);
        kernel
    }

    /// The kernel's name, as `LEVELDB_FILTER_KERNEL` takes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// The SIMD kernels this CPU runs, for the tests that pit them against
    /// the scalar code.
    #[cfg(test)]
    pub(crate) fn all_simd() -> Vec<Kernel> {
        let mut kernels = Vec::new();
        if avx512_available() {
            kernels.push(Kernel::Avx512);
        }
        if avx2_available() {
            kernels.push(Kernel::Avx2);
        }
        kernels
    }

    /// Whether this kernel handles a bit array of `bytes` bytes probed `k`
    /// times per key: the SIMD reduction needs `0 < bits <= 2^31`.
    #[inline]
    fn handles(self, bytes: usize, k: usize) -> bool {
        self != Kernel::Scalar && bytes > 0 && bytes <= 1 << 28 && k > 0
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

#[cfg(target_arch = "x86_64")]
fn avx2_available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn avx2_available() -> bool {
    false
}

/// Just under `1 / bits`: four ulps less than the nearest double, so that
/// `h * inv` truncated is `h / bits` rounded down or one less, for every
/// 32-bit `h` and `bits <= 2^31` (see `Reducer::rem16`).
fn inverse(bits: u64) -> f64 {
    // 1 / bits is within half an ulp; four ulps less is below it by a
    // relative 2^-52 or more, and by at most 2^-49.
    f64::from_bits((1.0 / bits as f64).to_bits() - 4)
}

/// LevelDB's seed for the Bloom hash.
const SEED: u32 = 0xbc9f1d34;

/// The bit array and k of a filter the SIMD kernels' single lookups probe:
/// LevelDB probes k <= 30 only (the scalar path answers the others), the
/// kernels' reduction takes bits <= 2^31, and their probes read 4 bytes.
#[cfg(target_arch = "x86_64")]
#[inline]
fn probed(filter: &[u8]) -> Option<(&[u8], usize)> {
    let (&k, array) = filter.split_last()?;
    (k <= 30 && (4..=1 << 28).contains(&array.len())).then_some((array, usize::from(k)))
}

/// The `k` probes of a key hashed to `h`, in vectors of eight: `probe(h, n)`
/// is a kernel's test of the first `n` lanes of eight probes `h`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn by_eights(h: u32, k: usize, probe: impl Fn(std::arch::x86_64::__m256i, usize) -> bool) -> bool {
    use std::arch::x86_64::*;
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

/// Sets in `array` the `k` probe bits of every key, as LevelDB's
/// `CreateFilter` does; `false` (nothing written) when this kernel cannot.
pub(crate) fn insert(
    kernel: Kernel,
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &mut [u8],
) -> bool {
    // A filter of a few keys is made faster one key at a time: the vectors'
    // latency is all there is to overlap.
    if !kernel.handles(array.len(), k) || keys.len() < FEW {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and VL,
        // Avx2 only when it has AVX2; `handles` checked 0 < array.len() <=
        // 2^28 and k > 0.
        match kernel {
            Kernel::Avx512 => unsafe { avx512::insert(keys, variant, k, array) },
            _ if !avx2::one_length(keys) => return false,
            _ => unsafe { avx2::insert(keys, variant, k, array) },
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, variant);
        false
    }
}

/// For each key, whether all `k` of its probe bits are set in `array`, as
/// LevelDB's `KeyMayMatch` answers; `false` (nothing written) when this
/// kernel cannot. `out` holds one answer per key.
pub(crate) fn contains(
    kernel: Kernel,
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) -> bool {
    if !kernel.handles(array.len(), k) || array.len() < 4 || keys.len() != out.len() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: as in `insert`, and 4 <= array.len(), out.len() ==
        // keys.len().
        match kernel {
            Kernel::Avx512 => unsafe { avx512::contains(keys, variant, k, array, out) },
            _ if !avx2::one_length(keys) => return false,
            _ => unsafe { avx2::contains(keys, variant, k, array, out) },
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (keys, variant);
        false
    }
}

/// LevelDB's `KeyMayMatch` for one key against `filter` (the bit array and
/// its k byte), its probes gathered at once; `scalar()` when this kernel
/// leaves the filter to the scalar path (which also gives LevelDB's answers
/// for filters it does not probe). There is no branch on the bits, so that a
/// run of lookups overlaps one key's probes with the next key's hash, and no
/// misprediction on keys that are absent. Everything past the kernel check
/// happens in the kernel's function: the caller's loop stays small.
#[inline]
pub(crate) fn key_may_match(
    kernel: Kernel,
    key: &[u8],
    variant: HashVariant,
    filter: &[u8],
    scalar: impl FnOnce() -> bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if kernel != Kernel::Avx512 {
            return scalar();
        }
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and VL.
        unsafe { avx512::key_may_match(key, variant, filter, scalar) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kernel, key, variant, filter);
        scalar()
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

/// LevelDB's `Hash` of up to 16 keys at once; `None` when this kernel
/// cannot. The pieces of `insert` and `contains`, for the tests.
#[cfg(test)]
pub(crate) fn hash16(
    kernel: Kernel,
    keys: &[&[u8]],
    seed: u32,
    variant: HashVariant,
) -> Option<[u32; LANES]> {
    if kernel != Kernel::Avx512 || keys.is_empty() || keys.len() > LANES {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and VL.
        Some(unsafe { avx512::hash16_array(keys, seed, variant) })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (seed, variant);
        None
    }
}

/// Writes `rows[j][lane] = (hashes[lane] + j * delta) % bits` for each probe
/// j (delta the hash rotated right by 17, sums on 32 bits); `false` when this
/// kernel cannot (it needs `0 < bits <= 2^31`).
#[cfg(test)]
pub(crate) fn positions(
    kernel: Kernel,
    hashes: &[u32; LANES],
    bits: u64,
    rows: &mut [[u32; LANES]],
) -> bool {
    if kernel != Kernel::Avx512 || bits > 1 << 31 || bits == 0 {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the kernel is Avx512 only when the CPU has AVX-512F and
        // VL; 0 < bits <= 2^31.
        unsafe { avx512::positions_array(hashes, bits, rows) };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = rows;
        false
    }
}

/// The single lookup of `super::key_may_match` on AVX2: as the AVX-512
/// one, without its unsigned conversions and masked instructions.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::SEED;
    use crate::HashVariant;

    /// `h % bits` for one filter's `0 < bits <= 2^31`, eight lanes at a
    /// time, the quotient from doubles (AVX2 has no unsigned conversions).
    struct Reducer {
        /// Just under `1 / bits`, so that quotients are never too large.
        inv: __m256d,
        bits: __m256i,
    }

    impl Reducer {
        #[inline]
        #[target_feature(enable = "avx2")]
        fn new(bits: u64) -> Reducer {
            Reducer {
                inv: _mm256_set1_pd(super::inverse(bits)),
                bits: _mm256_set1_epi32(bits as u32 as i32),
            }
        }

        /// As the AVX-512 `Reducer::rem16`: `h - q * bits` is in
        /// `[0, 2 * bits)`, and one unsigned minimum ends it.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn rem8(&self, h: __m256i) -> __m256i {
            // h as a double: its top bit flipped, converted as signed, plus
            // 2^31 (exact). The quotient is below 2^26: it fits the signed
            // conversion back.
            let flipped = _mm256_xor_si256(h, _mm256_set1_epi32(i32::MIN));
            let q = _mm256_set_m128i(
                self.quotient4(_mm256_extracti128_si256::<1>(flipped)),
                self.quotient4(_mm256_castsi256_si128(flipped)),
            );
            let r = _mm256_sub_epi32(h, _mm256_mullo_epi32(q, self.bits));
            _mm256_min_epu32(r, _mm256_sub_epi32(r, self.bits))
        }

        /// `floor(h * inv)` for four lanes of `h` with its top bit flipped.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn quotient4(&self, flipped: __m128i) -> __m128i {
            let x = _mm256_add_pd(_mm256_cvtepi32_pd(flipped), _mm256_set1_pd(2147483648.0));
            _mm256_cvttpd_epi32(_mm256_mul_pd(x, self.inv))
        }
    }

    const M: i32 = 0xc6a4a793_u32 as i32;

    /// See `super::insert`: eight keys at a time. Eight keys of one length
    /// hash together, their 16-byte chunks loaded and transposed (no
    /// gathers, which are slow on many AVX2 cores); others one by one. The
    /// eight keys' probe positions come a probe at a time from doubles and
    /// their bits are set by scalar read-modify-writes.
    ///
    /// # Safety
    /// The CPU must have AVX2; `0 < array.len() <= 2^28`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
        let reducer = Reducer::new(array.len() as u64 * 8);
        // Rows of byte indexes and bit masks are stored a group ahead of the
        // bits they set: a row read at once after its store waits on it.
        // Each group's rows are written before they are read: left
        // uninitialized, as zeroing them cost more than setting the bits of
        // a filter of 34 keys.
        let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 60]; 2];
        let mut ready = 0;
        for (g, group) in keys.chunks(8).enumerate() {
            masks(&reducer, hash8(group, variant), &mut rows[g % 2][..2 * k]);
            // SAFETY (here and below): the rows read were written by
            // `masks` for the last group, from positions of `reducer`, made
            // for `array`: indexes below array.len().
            if g > 0 {
                unsafe { set_rows(array, &rows[(g + 1) % 2][..2 * k], 8) };
            }
            ready = group.len();
        }
        let groups = keys.len().div_ceil(8);
        if groups > 0 {
            unsafe { set_rows(array, &rows[(groups + 1) % 2][..2 * k], ready) };
        }
    }

    /// See `super::contains`: as `insert`, eight keys at a time, each key's
    /// bits tested a group after its rows of positions were stored, all k
    /// of them, with no branch on the bits.
    ///
    /// # Safety
    /// The CPU must have AVX2; `0 < array.len() <= 2^28`;
    /// `out.len() == keys.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) {
        let reducer = Reducer::new(array.len() as u64 * 8);
        // Written before read, as in `insert`.
        let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 30]; 2];
        for (g, group) in keys.chunks(8).enumerate() {
            positions(&reducer, hash8(group, variant), &mut rows[g % 2][..k]);
            // SAFETY (here and below): the rows read were written by
            // `positions` for the last group, with positions of `reducer`,
            // made for `array`: below 8 * array.len().
            if g > 0 {
                let out = &mut out[8 * (g - 1)..8 * g];
                unsafe { test_rows(array, &rows[(g + 1) % 2][..k], out) };
            }
        }
        let groups = keys.len().div_ceil(8);
        if groups > 0 {
            let last = &mut out[8 * (groups - 1)..];
            unsafe { test_rows(array, &rows[(groups + 1) % 2][..k], last) };
        }
    }

    /// Stores the positions of the probes of eight keys hashed to `h`, a row
    /// per probe.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn positions(reducer: &Reducer, h: __m256i, rows: &mut [MaybeUninit<[u32; 8]>]) {
        let delta = _mm256_or_si256(_mm256_srli_epi32::<17>(h), _mm256_slli_epi32::<15>(h));
        let mut h = h;
        for row in rows {
            // SAFETY: `row` is 32 bytes.
            unsafe { _mm256_storeu_si256(row.as_mut_ptr().cast(), reducer.rem8(h)) };
            h = _mm256_add_epi32(h, delta);
        }
    }

    /// For each of the `out.len()` first lanes, whether every row's bit is
    /// set.
    ///
    /// # Safety
    /// The rows are initialized, and those lanes of every row are below
    /// `8 * array.len()`: positions of the `Reducer` made for `array`.
    #[inline]
    unsafe fn test_rows(array: &[u8], rows: &[MaybeUninit<[u32; 8]>], out: &mut [bool]) {
        for (lane, answer) in out.iter_mut().enumerate() {
            let mut all = true;
            for row in rows {
                // SAFETY: initialized, by the caller.
                let pos = unsafe { row.assume_init_ref() }[lane];
                // SAFETY: pos < 8 * array.len(), by the caller.
                let byte = unsafe { *array.get_unchecked((pos / 8) as usize) };
                all &= byte & (1 << (pos % 8)) != 0;
            }
            *answer = all;
        }
    }

    /// Stores, for the probes of eight keys hashed to `h`, a row of byte
    /// indexes and a row of bit masks per probe.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn masks(reducer: &Reducer, h: __m256i, rows: &mut [MaybeUninit<[u32; 8]>]) {
        let delta = _mm256_or_si256(_mm256_srli_epi32::<17>(h), _mm256_slli_epi32::<15>(h));
        let (seven, one) = (_mm256_set1_epi32(7), _mm256_set1_epi32(1));
        let mut h = h;
        for pair in rows.chunks_exact_mut(2) {
            let pos = reducer.rem8(h);
            let mask = _mm256_sllv_epi32(one, _mm256_and_si256(pos, seven));
            // SAFETY: each row is 32 bytes.
            unsafe {
                _mm256_storeu_si256(pair[0].as_mut_ptr().cast(), _mm256_srli_epi32::<3>(pos));
                _mm256_storeu_si256(pair[1].as_mut_ptr().cast(), mask);
            }
            h = _mm256_add_epi32(h, delta);
        }
    }

    /// Sets the bits of the first `lanes` lanes of each pair of rows (byte
    /// indexes, then bit masks).
    ///
    /// # Safety
    /// The rows are initialized, and those indexes are below `array.len()`:
    /// positions of the `Reducer` made for `array`, divided by 8.
    #[inline]
    unsafe fn set_rows(array: &mut [u8], rows: &[MaybeUninit<[u32; 8]>], lanes: usize) {
        for pair in rows.chunks_exact(2) {
            // SAFETY: initialized, by the caller.
            let (at, mask) = unsafe { (pair[0].assume_init_ref(), pair[1].assume_init_ref()) };
            for (&at, &mask) in at[..lanes].iter().zip(&mask[..lanes]) {
                // SAFETY: at < array.len(), by the caller.
                unsafe { *array.get_unchecked_mut(at as usize) |= mask as u8 };
            }
        }
    }

    /// Whether `keys` (at least one) look like keys of one length, from a
    /// sample of 64 spread over them. Hashing eight at once pays only for
    /// keys of one length: keys of mixed lengths, hashed one by one and
    /// placed in vectors, made filters 4-7% slower than the scalar code on a
    /// Zen 3. A key the sample misses is still hashed right (`hash8`).
    pub(super) fn one_length(keys: &[&[u8]]) -> bool {
        let len = keys[0].len();
        keys.iter()
            .step_by((keys.len() / 64).max(1))
            .all(|key| key.len() == len)
    }

    /// LevelDB's `Hash` of up to eight keys, in lanes; lanes past the keys
    /// hold no hash.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn hash8(keys: &[&[u8]], variant: HashVariant) -> __m256i {
        if let [first, ..] = keys {
            if keys.len() == 8 && keys.iter().all(|key| key.len() == first.len()) {
                return hash_same8(keys, first.len(), variant);
            }
        }
        let mut hashes = [0u32; 8];
        for (h, key) in hashes.iter_mut().zip(keys) {
            *h = crate::hash(key, SEED, variant);
        }
        // SAFETY: `hashes` is 32 bytes.
        unsafe { _mm256_loadu_si256(hashes.as_ptr().cast()) }
    }

    /// LevelDB's `Hash` of eight keys of `len` bytes each.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn hash_same8(keys: &[&[u8]], len: usize, variant: HashVariant) -> __m256i {
        let mut h = _mm256_set1_epi32((SEED ^ (len as u32).wrapping_mul(M as u32)) as i32);
        // Whole 16-byte chunks: key j's chunk in lane half j / 4 of a[j % 4],
        // then a 4x4 transpose in each half gives word t of every key.
        let mut at = 0;
        while at + 16 <= len {
            let a = [
                _mm256_set_m128i(load16(keys[4], at), load16(keys[0], at)),
                _mm256_set_m128i(load16(keys[5], at), load16(keys[1], at)),
                _mm256_set_m128i(load16(keys[6], at), load16(keys[2], at)),
                _mm256_set_m128i(load16(keys[7], at), load16(keys[3], at)),
            ];
            let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
            let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
            let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
            let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
            h = round(h, _mm256_unpacklo_epi64(t0, t2));
            h = round(h, _mm256_unpackhi_epi64(t0, t2));
            h = round(h, _mm256_unpacklo_epi64(t1, t3));
            h = round(h, _mm256_unpackhi_epi64(t1, t3));
            at += 16;
        }
        // Whole words left, then the tail.
        let mut words = [0u32; 8];
        while at + 4 <= len {
            for (word, key) in words.iter_mut().zip(keys) {
                *word = u32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
            }
            h = round(h, load8(&words));
            at += 4;
        }
        if at == len {
            return h;
        }
        for (word, key) in words.iter_mut().zip(keys) {
            *word = crate::hash::tail(key, variant);
        }
        let h = _mm256_mullo_epi32(_mm256_add_epi32(h, load8(&words)), _mm256_set1_epi32(M));
        _mm256_xor_si256(h, _mm256_srli_epi32::<24>(h))
    }

    /// One round of LevelDB's `Hash` in eight lanes: `h = (h + w) * m`,
    /// then `h ^= h >> 16`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn round(h: __m256i, w: __m256i) -> __m256i {
        let h = _mm256_mullo_epi32(_mm256_add_epi32(h, w), _mm256_set1_epi32(M));
        _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h))
    }

    /// Bytes `at..at + 16` of `key`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load16(key: &[u8], at: usize) -> __m128i {
        let bytes: &[u8; 16] = key[at..at + 16].try_into().expect("16 bytes");
        // SAFETY: `bytes` is 16 bytes.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    /// Eight words as a vector.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load8(words: &[u32; 8]) -> __m256i {
        // SAFETY: `words` is 32 bytes.
        unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::LANES;
    use crate::hash::tail;
    use crate::HashVariant;

    const M: i32 = 0xc6a4a793_u32 as i32;
    use super::SEED;

    /// See `super::insert`.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL; `0 < array.len() <= 2^28`, `k > 0`.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn insert(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
        let reducer = Reducer::new(array.len() as u64 * 8);
        let far = keys_far(keys);
        for window in keys.chunks(WINDOW) {
            if by_length(window) {
                // In the order they are hashed: bits are set in any order.
                // (16 lanes more, for the last group's whole vector.)
                let mut hashes = [0u32; WINDOW + LANES];
                let mut len = 0;
                hash_by_length(window, variant, |h, _, n| {
                    // (In bounds: the groups hold each key once, so `len`
                    // stays at most `window.len()`.)
                    let to = &mut hashes[len..len + LANES];
                    // SAFETY: `to` is 16 u32s, 64 bytes.
                    unsafe { _mm512_storeu_si512(to.as_mut_ptr().cast(), h) };
                    len += n;
                });
                let hashes = &hashes[..len];
                insert_pairs(
                    hashes.chunks(2 * LANES).map(|pair| load_pair(pair)),
                    &reducer,
                    k,
                    array,
                );
            } else {
                let pairs = window.chunks(2 * LANES);
                if far {
                    let pairs = pairs.enumerate().map(|(i, pair)| {
                        prefetch_keys(window, (i + AHEAD) * 2 * LANES);
                        hash_pair(pair, variant)
                    });
                    insert_pairs(pairs, &reducer, k, array);
                } else {
                    // A partial pair first: bits can be set in any order,
                    // and its one-key-at-a-time hashes then overlap with the
                    // next pair's, instead of ending the filter with their
                    // latency (a filter of 34 keys, a filter block's usual:
                    // 151 -> 143 ns).
                    let (partial, whole) = window.split_at(window.len() % (2 * LANES));
                    let pairs = (!partial.is_empty()).then_some(partial).into_iter();
                    let pairs = pairs.chain(whole.chunks(2 * LANES));
                    insert_pairs(
                        pairs.map(|pair| hash_pair(pair, variant)),
                        &reducer,
                        k,
                        array,
                    );
                }
            }
        }
    }

    /// Sets the bits of pairs of groups given by their hashes and sizes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn insert_pairs(
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
                        // SAFETY: `Probes::fill` clamps every index below `array.len()`.
                        unsafe {
                            *array.get_unchecked_mut(indexes[lane] as usize) |= bits[lane] as u8
                        };
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

    /// See `super::contains`. A window of keys is answered by [`Cascade`]
    /// when the keys of the last window were mostly absent (it costs an
    /// absent key about two probes instead of k, but a present key more
    /// than `contains_pairs` does), by `contains_pairs` when they were mostly
    /// present. Batches of 16-byte keys of which half are present: 9-13%
    /// faster by the cascade; none present: 36-38% faster; all present:
    /// 20-30% slower (hence `contains_pairs` then).
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL; `4 <= array.len() <= 2^28`, `k > 0`,
    /// `out.len() == keys.len()`.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn contains(
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) {
        let reducer = Reducer::new(array.len() as u64 * 8);
        let far = keys_far(keys);
        // Whether most keys of the last window may be present.
        let mut present = false;
        for (window, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
            let by_pairs = present || window.len() < FEW_FOR_CASCADE;
            if by_length(window) {
                let mut hashes = [0u32; WINDOW];
                let hashes = &mut hashes[..window.len()];
                hash_by_length(window, variant, |h, at, n| {
                    let mut out = [0u32; LANES];
                    // SAFETY: `out` is 64 bytes.
                    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), h) };
                    for (&i, h) in at[..n].iter().zip(out) {
                        hashes[usize::from(i)] = h;
                    }
                });
                if by_pairs {
                    let pairs = hashes.chunks(2 * LANES).map(|pair| load_pair(pair).0);
                    // SAFETY: the caller vouches for the array's length.
                    unsafe { contains_pairs(pairs, &reducer, k, array, out) };
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
                    unsafe { contains_pairs(pairs, &reducer, k, array, out) };
                } else {
                    // SAFETY: the caller vouches for the array's length.
                    unsafe { pairs_by_cascade(pairs, &reducer, k, array, out) };
                }
            }
            // (Only a whole window has a window after it.)
            if window.len() == WINDOW {
                present = mostly(out);
            }
        }
    }

    /// [`Cascade::answer`] for keys hashed to `hashes`, in a stack frame of
    /// its own: a batch answered by `contains_pairs` does not touch the
    /// cascade's 48 KiB (the pages of so big a frame are probed on every
    /// call: a batch of 16 keys took 40% longer).
    ///
    /// # Safety
    /// `4 <= array.len()`.
    #[inline(never)]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn by_cascade(
        hashes: &[u32],
        reducer: &Reducer,
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
    #[target_feature(enable = "avx512f,avx512vl")]
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

    /// Keys in a window below which the window is answered by
    /// `contains_pairs`: the cascade's rounds cost more than they save for a
    /// few keys (64 keys: 25% slower, 200: 6% faster).
    const FEW_FOR_CASCADE: usize = 256;

    /// The mask of the first `min(n, 16)` lanes.
    #[inline]
    fn first_lanes(n: usize) -> __mmask16 {
        (1u32 << n.min(LANES)).wrapping_sub(1) as __mmask16
    }

    /// Whether more than 5/8 of the answers are "may match": about where the
    /// cascade stops paying.
    fn mostly(out: &[bool]) -> bool {
        out.iter().filter(|&&hit| hit).count() * 8 > out.len() * 5
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
                    _mm512_storeu_si512(
                        to.as_mut_ptr().cast(),
                        _mm512_maskz_compress_epi32(kept, v),
                    )
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

    /// Answers for pairs of groups given by their hashes, 32 to a chunk of `out`.
    ///
    /// # Safety
    /// `4 <= array.len()`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    unsafe fn contains_pairs(
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
                    // One group's words by a gather, the other's by scalar
                    // loads, so that the two groups' loads run side by side.
                    // SAFETY: the caller vouches for `4 <= array.len()`;
                    // `last_word` is `array.len() - 4`.
                    all[g] &= unsafe {
                        if g == 0 {
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

    /// See `super::key_may_match`: eight probes to a vector.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn key_may_match(
        key: &[u8],
        variant: HashVariant,
        filter: &[u8],
        scalar: impl FnOnce() -> bool,
    ) -> bool {
        let Some((array, k)) = super::probed(filter) else {
            return scalar();
        };
        let h = crate::hash(key, SEED, variant);
        let reducer = Reducer::new(array.len() as u64 * 8);
        let last_word = _mm256_set1_epi32((array.len() - 4) as i32);
        super::by_eights(h, k, |h: __m256i, probes: usize| {
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

    /// Keys hashed together by length: enough for most lengths to fill whole
    /// groups (the waiting keys take 18 KiB of stack, the window's hashes
    /// 16 KiB).
    const WINDOW: usize = 4096;

    /// Whether a window of keys is hashed by [`hash_by_length`]: enough keys
    /// to fill groups of one length, and more than one length among
    /// [`SAMPLED`] keys spread over the window. (Reading every key's length
    /// first cost a batch of 16-byte keys 8%. A window the sample takes for
    /// one length that has a few keys of others is still hashed right: a
    /// group of a pair with several lengths goes to [`hash16`].)
    fn by_length(keys: &[&[u8]]) -> bool {
        let Some(first) = keys.first() else {
            return false;
        };
        keys.len() >= 256
            && keys
                .iter()
                .step_by(keys.len() / SAMPLED)
                .any(|key| key.len() != first.len())
    }

    /// Keys whose lengths [`by_length`] compares.
    const SAMPLED: usize = 64;

    /// The hashes of keys of varying lengths: each key waits with others of
    /// its length (up to 63; longer keys together) until they are 16, which
    /// hash as one group. `emit(hashes, at, n)` takes each group's hashes as
    /// they come, the first `n` lanes those of the keys at indexes `at`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn hash_by_length(
        keys: &[&[u8]],
        variant: HashVariant,
        mut emit: impl FnMut(__m512i, &[u16; LANES], usize),
    ) {
        let Some(&first) = keys.first() else { return };
        // `waiting[c]` holds keys of class `c` only: its first `count[c]`
        // entries are this round's, the others an earlier round's (or `first`
        // before any, never read: a round is hashed when it has 16 keys, or
        // at the end padded with its own first key).
        let mut waiting = [[first; LANES]; CLASSES];
        let mut at = [[0u16; LANES]; CLASSES];
        let mut count = [0u8; CLASSES];
        for (i, &key) in keys.iter().enumerate() {
            let c = key.len().min(CLASSES - 1);
            let n = usize::from(count[c]);
            waiting[c][n] = key;
            at[c][n] = i as u16;
            if n + 1 == LANES {
                // SAFETY: 16 keys of class `c`; below the last, `c` is their length.
                let h = unsafe { hash_waiting(&waiting[c], c, variant) };
                emit(h, &at[c], LANES);
                count[c] = 0;
            } else {
                count[c] = n as u8 + 1;
            }
        }
        for (c, ((waiting, at), &n)) in waiting.iter_mut().zip(&at).zip(&count).enumerate() {
            let n = usize::from(n);
            if n > 0 && n < FEW_WAITING {
                // A few keys left: one at a time costs less than a group.
                emit(hash_each(&waiting[..n], variant), at, n);
            } else if n > 0 {
                // Lanes past the keys repeat the first: the same length.
                let first = waiting[0];
                waiting[n..].fill(first);
                // SAFETY: `n` keys of class `c`, then copies of the first.
                let h = unsafe { hash_waiting(waiting, c, variant) };
                emit(h, at, n);
            }
        }
    }

    /// Keys left in a class at the end of [`hash_by_length`] below which
    /// they are hashed one at a time.
    const FEW_WAITING: usize = 6;

    /// Length classes of [`hash_by_length`]: 0 to 63 bytes, and longer.
    const CLASSES: usize = 65;

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
        let mut hashes = [0u32; LANES];
        for (h, key) in hashes.iter_mut().zip(keys) {
            *h = crate::hash(key, SEED, variant);
        }
        // SAFETY: `hashes` is 64 bytes.
        unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) }
    }

    /// Whether there are so many keys (2^15 and more) that their bytes are
    /// likely out of the cache: then each pair's keys are prefetched two
    /// pairs ahead (a 1 M-key batch twice as fast; for keys in the cache the
    /// prefetches would cost a few percent).
    fn keys_far(keys: &[&[u8]]) -> bool {
        keys.len() >= 1 << 15
    }

    /// Pairs of groups ahead whose key bytes [`prefetch_keys`] asks for.
    const AHEAD: usize = 2;

    /// Asks for the first bytes of the 32 keys from `keys[from]` on (if
    /// any), so that keys far apart in memory are in the cache by the time
    /// they are hashed. Non-temporal: a key is read once, and the outer
    /// caches are better left to the filter (1 M keys: create 3%, batch 1-3%
    /// faster than with the default hint). Then the slices of the 32 keys
    /// after those (1 M keys: create 15%, batch 5% faster).
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn prefetch_keys(keys: &[&[u8]], from: usize) {
        for key in keys.iter().skip(from).take(2 * LANES) {
            _mm_prefetch::<_MM_HINT_NTA>(key.as_ptr().cast());
        }
        // And the slices of the keys two pairs later, a cache line (four
        // slices) at a time: without them, the key prefetches above wait
        // for the slices' loads from memory.
        let later = keys.iter().skip(from + 2 * 2 * LANES);
        for key in later.step_by(4).take(2 * LANES / 4) {
            _mm_prefetch::<_MM_HINT_T0>((key as *const &[u8]).cast());
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
        /// masks). Indexes are clamped below the array's length: a no-op for
        /// exact positions, and what makes unchecked access sound.
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl")]
        fn fill(&mut self, r: &Reducer, mut h: __m512i, k: usize, keys: usize) {
            let active = first_lanes(keys);
            let delta = _mm512_ror_epi32::<17>(h);
            let (one, seven) = (_mm512_set1_epi32(1), _mm512_set1_epi32(7));
            self.rows = k.min(30);
            for (indexes, bits) in self.indexes.iter_mut().zip(&mut self.bits).take(k) {
                let pos = r.rem16(h);
                let index = _mm512_min_epu32(_mm512_srli_epi32::<3>(pos), r.last_byte);
                let bit = _mm512_maskz_sllv_epi32(active, one, _mm512_and_si512(pos, seven));
                // SAFETY: a row is 64 bytes. (Masks stay 32-bit: narrowing
                // stores, VPMOVDB, are slow on AMD's cores.)
                unsafe {
                    _mm512_storeu_si512(indexes.as_mut_ptr().cast(), index);
                    _mm512_storeu_si512(bits.as_mut_ptr().cast(), bit);
                }
                h = _mm512_add_epi32(h, delta);
            }
        }

        /// The rows the last `fill` wrote.
        #[inline]
        fn rows(&self) -> impl Iterator<Item = (&[u32; LANES], &[u32; LANES])> {
            let rows = self.indexes[..self.rows]
                .iter()
                .zip(&self.bits[..self.rows]);
            // SAFETY: `fill` wrote the first `self.rows` rows of both.
            rows.map(|(indexes, bits)| unsafe {
                (indexes.assume_init_ref(), bits.assume_init_ref())
            })
        }
    }

    /// [`hash16`] of up to 16 keys, as an array.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL.
    #[cfg(test)]
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn hash16_array(
        keys: &[&[u8]],
        seed: u32,
        variant: HashVariant,
    ) -> [u32; LANES] {
        let mut out = [0u32; LANES];
        // SAFETY: `out` is 64 bytes.
        unsafe {
            _mm512_storeu_si512(
                out.as_mut_ptr().cast(),
                hash16(&super::lanes(keys), seed, variant),
            )
        };
        out
    }

    /// The probe positions `(h + j * delta) % bits`, as rows.
    ///
    /// # Safety
    /// The CPU must have AVX-512F and VL; `0 < bits <= 2^31`.
    #[cfg(test)]
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn positions_array(
        hashes: &[u32; LANES],
        bits: u64,
        rows: &mut [[u32; LANES]],
    ) {
        let reducer = Reducer::new(bits);
        // SAFETY: `hashes` is 64 bytes.
        let mut h = unsafe { _mm512_loadu_si512(hashes.as_ptr().cast()) };
        let delta = _mm512_ror_epi32::<17>(h);
        for row in rows {
            // SAFETY: a row is 64 bytes.
            unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), reducer.rem16(h)) };
            h = _mm512_add_epi32(h, delta);
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
            let word =
                unsafe { gather16(active, _mm512_add_epi64(lo, at), _mm512_add_epi64(hi, at)) };
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
        last_byte: __m512i,
    }

    impl Reducer {
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl")]
        fn new(bits: u64) -> Reducer {
            Reducer {
                inv: _mm512_set1_pd(super::inverse(bits)),
                bits: _mm512_set1_epi32(bits as u32 as i32),
                last_byte: _mm512_set1_epi32((bits.div_ceil(8) - 1) as u32 as i32),
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
}
