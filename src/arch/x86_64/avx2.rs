//! The AVX2 kernel: filters and batches, eight keys at a time, by the
//! algorithm of [`simd`](crate::arch::simd) over eight 32-bit lanes
//! ([`Lanes`] for `__m256i`). What is AVX2's own: its lanes' operations,
//! the quotient of the reduction from signed conversions (AVX2 has no
//! unsigned ones), the byte shuffles that load the end of keys, and
//! batches by gathers, taken only where a timing at start-up finds them
//! faster ([`gathers_pay`]): gathers are slow on many AVX2 cores, and
//! nothing the CPU reports says which.
//!
//! Every `unsafe fn` here needs, besides the terms of its `# Safety`
//! section, a CPU with AVX2: the kernel's type is the proof of that, and
//! only its methods call in from outside.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use crate::arch::simd::{self, hash_step, one_intrinsic, Lanes, Probes, Reducer};
use crate::arch::{grouped, vectorable, Vector, MIN_PROBED_BYTES};
use crate::HashVariant;

/// Proof that this CPU has AVX2: only [`Avx2::detect`] makes one, so that
/// every method may run this kernel's code (which enables AVX2) safely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2 {
    /// Whether batches read their probes' words by gathers rather than
    /// by scalar loads ([`gathers_pay`]).
    gather: bool,
}

impl From<super::Avx512> for Avx2 {
    /// An AVX-512 kernel proves AVX2 as well: [`Avx512::detect`](super::Avx512::detect)
    /// asks for it. (For the bits of filters from hashes: no batches.)
    fn from(_: super::Avx512) -> Avx2 {
        Avx2 { gather: false }
    }
}

impl Avx2 {
    /// The kernel, where the CPU has AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        // (POPCNT too, which every AVX2 CPU has: `with_popcnt` relies on it.)
        if !std::is_x86_feature_detected!("avx2") || !std::is_x86_feature_detected!("popcnt") {
            return None;
        }
        static GATHER: OnceLock<bool> = OnceLock::new();
        let gather = *GATHER.get_or_init(|| {
            // `LEVELDB_FILTER_GATHER=yes` or `no` settles it without the
            // timing (to measure either way, or rule gathers out).
            match std::env::var("LEVELDB_FILTER_GATHER").as_deref() {
                Ok("yes") => true,
                Ok("no") => false,
                // SAFETY: the CPU has AVX2.
                _ => unsafe { gathers_pay() },
            }
        });
        Some(Avx2 { gather })
    }

    /// This kernel with each way of reading a batch's probes, whatever
    /// the CPU (for the tests: each is tested on every AVX2 CPU).
    #[cfg(test)]
    pub(crate) fn every_probing(self) -> [Avx2; 2] {
        [false, true].map(|gather| Avx2 { gather })
    }
}

impl Vector for Avx2 {
    const NAME: &'static str = "avx2";

    /// Sets in `array` the `k` probe bits of every key; `false` (nothing
    /// written) for an array or a `k` this kernel does not take.
    fn insert(self, keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) -> bool {
        let Some(by_length) = grouped(keys, array.len(), k) else {
            return false;
        };
        // SAFETY: `self` proves the CPU has AVX2; the array's length and k
        // were checked.
        unsafe { insert(keys, variant, k, array, by_length) };
        true
    }

    /// For each key, whether all `k` of its probe bits are set in `array`,
    /// into `out` (as long as `keys`); `false` (nothing written) for an
    /// array or a `k` this kernel does not take.
    fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) -> bool {
        let Some(by_length) = grouped(keys, array.len(), k) else {
            return false;
        };
        if keys.len() != out.len() {
            return false;
        }
        // Gathers read 4 bytes a probe.
        let gather = self.gather && array.len() >= MIN_PROBED_BYTES;
        // SAFETY: `self` proves the CPU has AVX2; the array's length, k and
        // `out` were checked, and `gather` only for arrays of 4 bytes or more.
        unsafe { contains(keys, variant, k, array, out, by_length, gather) };
        true
    }

    /// Sets in `array` the `k` probe bits of every key hashed to `hashes`;
    /// `false` (nothing written) for an array or a `k` this kernel does not
    /// take.
    fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) -> bool {
        if !vectorable(array.len(), k) {
            return false;
        }
        // SAFETY: `self` proves the CPU has AVX2; the array's length and k
        // were checked.
        unsafe { insert_hashes(hashes, k, array) };
        true
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        // SAFETY: `self` proves the CPU has AVX2.
        unsafe { hashes(keys, variant) }
    }

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        // SAFETY: `self` proves the CPU has AVX2.
        unsafe { positions(hashes, bits) }
    }
}

/// See [`Avx2::insert`]: eight keys at a time ([`simd::insert_steps`]);
/// keys of mixed lengths (`by_length`) by [`insert_by_length`].
///
/// # Safety
/// The CPU must have AVX2; `0 < array.len() <= 2^28`, `k <= 30`.
#[target_feature(enable = "avx2")]
unsafe fn insert(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &mut [u8],
    by_length: bool,
) {
    if by_length {
        // SAFETY: as for this function.
        return unsafe { insert_by_length(keys, variant, k, array) };
    }
    // SAFETY: as for this function; the reducer is made for `array`.
    unsafe {
        let reducer = Reducer::<__m256i, 8>::new(array.len() as u64 * 8);
        let steps = keys
            .chunks(8)
            .map(|group| hash_step::<__m256i, 8, 1>(group, variant));
        simd::insert_steps(steps, &reducer, k, array);
    }
}

/// [`insert`] for keys of mixed lengths: their hashes by length, a
/// buffer at a time ([`simd::buffered_hashes`]), each buffer's bits set
/// from them. Out of line: most filters have keys of one length.
///
/// # Safety
/// As for [`insert`].
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn insert_by_length(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    // SAFETY: as for this function; the reducer is made for `array`.
    unsafe {
        let reducer = Reducer::<__m256i, 8>::new(array.len() as u64 * 8);
        simd::buffered_hashes::<__m256i, 8, 16>(keys, variant, |hashes| {
            let groups = simd::Loaded::<__m256i, 8, 1>::new(hashes);
            simd::insert_steps(groups, &reducer, k, array);
        });
    }
}

/// [`insert`] for keys already hashed.
///
/// # Safety
/// As for [`insert`].
#[target_feature(enable = "avx2")]
unsafe fn insert_hashes(hashes: &[u32], k: usize, array: &mut [u8]) {
    // SAFETY: as for this function.
    unsafe { simd::insert_hashes::<__m256i, 8>(hashes, k, array) };
}

/// Keys of mixed lengths hashed (by length) before they are answered.
const WINDOW: usize = 4096;

/// See [`Avx2::contains_batch`]: as `insert`, eight keys at a time, all
/// k probes of each key, with no branch on the bits: their words by
/// gathers (`gather`), or from rows of positions stored a group ahead of
/// the scalar loads that test them ([`simd::contains_steps`]). Keys of
/// mixed lengths (`by_length`): a window's hashes by length first.
///
/// # Safety
/// The CPU must have AVX2; `0 < array.len() <= 2^28`, `4 <= array.len()`
/// where `gather`; `k <= 30`; `out.len() == keys.len()`.
#[target_feature(enable = "avx2")]
unsafe fn contains(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
    by_length: bool,
    gather: bool,
) {
    // SAFETY: as for this function; the reducer is made for `array`.
    unsafe {
        let reducer = Reducer::<__m256i, 8>::new(array.len() as u64 * 8);
        if by_length {
            let mut hashes = [0u32; WINDOW];
            for (window, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
                let hashes = &mut hashes[..window.len()];
                simd::hashes_in_order::<__m256i, 8, 16>(window, variant, hashes);
                contains_hashes(&reducer, hashes, k, array, out, gather);
            }
            return;
        }
        let steps = keys
            .chunks(8)
            .map(|group| hash_step::<__m256i, 8, 1>(group, variant));
        if gather {
            gather_steps(steps, &reducer, k, array, out);
        } else {
            simd::contains_steps(steps, &reducer, k, array, out);
        }
    }
}

/// The answers for keys hashed to `hashes`, into `out` (as long), eight at
/// a time, by gathers (`gather`) or from rows of positions.
///
/// # Safety
/// The CPU must have AVX2; `reducer` was made for `array`, `0 <
/// array.len() <= 2^28`, and `4 <= array.len()` where `gather`; `k <= 30`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn contains_hashes(
    reducer: &Reducer<__m256i, 8>,
    hashes: &[u32],
    k: usize,
    array: &[u8],
    out: &mut [bool],
    gather: bool,
) {
    // SAFETY: as for this function.
    unsafe {
        let steps = simd::Loaded::<__m256i, 8, 1>::new(hashes);
        if gather {
            gather_steps(steps, reducer, k, array, out);
        } else {
            simd::contains_steps(steps, reducer, k, array, out);
        }
    }
}

/// The answers for groups given by their hashes, eight to a chunk of
/// `out`, by [`gather8`]; each group hashed a group ahead of its probes.
///
/// # Safety
/// `reducer` was made for `array`; `4 <= array.len()`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather_steps(
    mut steps: impl Iterator<Item = ([__m256i; 1], [usize; 1])>,
    reducer: &Reducer<__m256i, 8>,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    let mut next = steps.next();
    for out in out.chunks_mut(8) {
        let Some(([h], _)) = next else { break };
        next = steps.next();
        // SAFETY: the caller vouches for `4 <= array.len()`.
        let all = unsafe { gather8(reducer, h, k, array) };
        for (lane, answer) in out.iter_mut().enumerate() {
            *answer = all >> lane & 1 != 0;
        }
    }
}

/// Which of eight keys hashed to `h` have all `k` probe bits set, as bits
/// of the result: each probe's 4 bytes from its byte on (or the array's
/// last 4) by a gather.
///
/// # Safety
/// `reducer` was made for `array`; `4 <= array.len()`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather8(reducer: &Reducer<__m256i, 8>, h: __m256i, k: usize, array: &[u8]) -> u32 {
    // SAFETY: the CPU has AVX2.
    let mut probes = unsafe { Probes::new(reducer, h) };
    let last_word = _mm256_set1_epi32((array.len() - 4) as i32);
    let (one, zero) = (_mm256_set1_epi32(1), _mm256_setzero_si256());
    let mut all = _mm256_set1_epi32(-1);
    for _ in 0..k {
        // SAFETY: the CPU has AVX2.
        let pos = unsafe { probes.next() };
        let at = _mm256_min_epu32(_mm256_srli_epi32::<3>(pos), last_word);
        let bit = _mm256_sub_epi32(pos, _mm256_slli_epi32::<3>(at));
        // SAFETY: every lane reads 4 bytes from `at <= array.len() - 4`.
        let word = unsafe { _mm256_i32gather_epi32::<1>(array.as_ptr().cast(), at) };
        let hit = _mm256_and_si256(word, _mm256_sllv_epi32(one, bit));
        all = _mm256_andnot_si256(_mm256_cmpeq_epi32(hit, zero), all);
    }
    _mm256_movemask_ps(_mm256_castsi256_ps(all)) as u32
}

/// Whether this CPU answers batches faster by gathers than from rows of
/// positions: timed once per process, each way in turn on a batch of
/// 4,096 keys of 16 bytes against a filter of 5 KiB (hashes and probes,
/// as a batch runs: the probes alone favour the rows, whose scalar loads
/// then have the core to themselves), the fastest of three runs each,
/// gathers taken only where they win by a tenth. Gathers are fast on some
/// cores and slow on others (AMD Zen 2 and 3; Intel Skylake to Tiger Lake
/// since the 2023 "Downfall" microcode), and nothing the CPU reports says
/// which. (About 0.3 ms, once; the environment variable
/// `LEVELDB_FILTER_GATHER=yes` or `no` decides instead.)
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn gathers_pay() -> bool {
    const KEYS: usize = 4096;
    // A filter of ten bits a key, about half its bits set; keys' bytes
    // spread by a multiplicative step (the answers are not what is timed).
    let array: Vec<u8> = (0..KEYS * 10 / 8)
        .map(|i| (i as u8).wrapping_mul(0x9d))
        .collect();
    let bytes: Vec<u8> = (0..KEYS as u32 * 16)
        .map(|i| (i.wrapping_mul(0x9e37_79b9) >> 24) as u8)
        .collect();
    let keys: Vec<&[u8]> = bytes.chunks(16).collect();
    let mut out = vec![false; KEYS];
    let mut best = [std::time::Duration::MAX; 2];
    for _ in 0..3 {
        for (gather, best) in [false, true].into_iter().zip(&mut best) {
            let start = std::time::Instant::now();
            let variant = HashVariant::Unsigned;
            // SAFETY: the CPU has AVX2; the array is 5,120 bytes, k 7, and
            // `out` as long as `keys`.
            unsafe { contains(&keys, variant, 7, &array, &mut out, false, gather) };
            *best = (*best).min(start.elapsed());
        }
    }
    std::hint::black_box(&out);
    best[1] * 10 < best[0] * 9
}

/// LevelDB's `Hash` of each key, eight at a time (for the tests).
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(test)]
#[target_feature(enable = "avx2")]
unsafe fn hashes(keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
    // SAFETY: as for this function.
    unsafe { simd::hashes::<__m256i, 8>(keys, variant) }
}

/// The probe positions of [`Avx2::positions`].
///
/// # Safety
/// The CPU must have AVX2; `0 < bits <= 2^31`.
#[cfg(test)]
#[target_feature(enable = "avx2")]
unsafe fn positions(hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
    // SAFETY: as for this function.
    unsafe { simd::positions::<__m256i, 8>(hashes, bits) }
}

/// Eight keys' 16 bytes each (key j's in `c[j]`) as words: word t of
/// every key in vector t (key j's 16 bytes in lane half j / 4 of a[j % 4],
/// then a 4x4 transpose in each half).
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn transpose(c: [__m128i; 8]) -> [__m256i; 4] {
    // SAFETY: as for this function.
    unsafe {
        let a = [
            _mm256_set_m128i(c[4], c[0]),
            _mm256_set_m128i(c[5], c[1]),
            _mm256_set_m128i(c[6], c[2]),
            _mm256_set_m128i(c[7], c[3]),
        ];
        let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
        let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
        let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
        let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
        [
            _mm256_unpacklo_epi64(t0, t2),
            _mm256_unpackhi_epi64(t0, t2),
            _mm256_unpacklo_epi64(t1, t3),
            _mm256_unpackhi_epi64(t1, t3),
        ]
    }
}

/// Bytes `at..at + 16` of `key`.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn load16(key: &[u8], at: usize) -> __m128i {
    let bytes: &[u8; 16] = key[at..at + 16].try_into().expect("16 bytes");
    // SAFETY: `bytes` is 16 bytes.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// The first and last eight bytes of `key` (at least 8 bytes long).
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn first_last8(key: &[u8]) -> __m128i {
    let first: [u8; 8] = key[..8].try_into().expect("8 bytes");
    let last: [u8; 8] = key[key.len() - 8..].try_into().expect("8 bytes");
    // SAFETY: as for this function.
    unsafe { _mm_set_epi64x(i64::from_le_bytes(last), i64::from_le_bytes(first)) }
}

/// `floor(h * inv)` for four lanes of `h` with its top bit flipped: `h`
/// as a double is the flipped lane converted as signed, plus 2^31
/// (exact); the quotient is below 2^26 and fits the signed conversion
/// back.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn quotient4(flipped: __m128i, inv: __m256d) -> __m128i {
    // SAFETY: as for this function.
    unsafe {
        let x = _mm256_add_pd(_mm256_cvtepi32_pd(flipped), _mm256_set1_pd(2147483648.0));
        _mm256_cvttpd_epi32(_mm256_mul_pd(x, inv))
    }
}

// SAFETY (every block in this impl): the trait's contract is a CPU with
// AVX2, which these intrinsics need; the memory each reads or writes is
// said beside it.
impl Lanes<8> for __m256i {
    type Inverse = __m256d;
    const ROWS_AHEAD: bool = true;

    /// One load, masked for fewer than eight (a copy to the stack and a
    /// load of it waits for the copy's stores).
    #[inline(always)]
    unsafe fn load_up_to(words: &[u32]) -> Self {
        if let Ok(words) = <&[u32; 8]>::try_from(words) {
            // SAFETY: see the impl.
            return unsafe { Self::load(words) };
        }
        let n = words.len().min(8) as i32;
        // SAFETY: see the impl; the mask reads lanes below `words.len()`
        // only, and a masked load touches no memory in the lanes it
        // leaves out.
        unsafe {
            let mask = _mm256_cmpgt_epi32(
                _mm256_set1_epi32(n),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            );
            _mm256_maskload_epi32(words.as_ptr().cast(), mask)
        }
    }
    #[rustfmt::skip]
    one_intrinsic!(binary: add = _mm256_add_epi32, sub = _mm256_sub_epi32, mul = _mm256_mullo_epi32,
        xor = _mm256_xor_si256, and = _mm256_and_si256, min = _mm256_min_epu32, shl_by = _mm256_sllv_epi32;
        unary: shl1 = _mm256_slli_epi32::<1>, shr3 = _mm256_srli_epi32::<3>, shr16 = _mm256_srli_epi32::<16>,
        shr24 = _mm256_srli_epi32::<24>,
        rotr17 = |h| _mm256_or_si256(_mm256_srli_epi32::<17>(h), _mm256_slli_epi32::<15>(h)));
    one_intrinsic! {
        fn splat(x: u32) -> Self => _mm256_set1_epi32(x as i32);
        fn load(words: &[u32; 8]) -> Self => _mm256_loadu_si256(words.as_ptr().cast());
        fn store(self: Self, to: &mut [u32; 8]) => _mm256_storeu_si256(to.as_mut_ptr().cast(), self);
        fn store_uninit(self: Self, to: &mut MaybeUninit<[u32; 8]>) =>
            _mm256_storeu_si256(to.as_mut_ptr().cast(), self);
        fn inverse(inv: f64) -> __m256d => _mm256_set1_pd(inv);
    }
    #[inline(always)]
    unsafe fn select_wrapped(sum: Self, addend: Self, wrapped: Self, kept: Self) -> Self {
        // SAFETY: see the impl.
        unsafe {
            // Not wrapped where the sum is the larger (no unsigned compare).
            let not_wrapped = _mm256_cmpeq_epi32(_mm256_max_epu32(sum, addend), sum);
            _mm256_blendv_epi8(wrapped, kept, not_wrapped)
        }
    }
    #[inline(always)]
    unsafe fn quotient(self, inv: __m256d) -> Self {
        // SAFETY: see the impl.
        unsafe {
            let flipped = _mm256_xor_si256(self, _mm256_set1_epi32(i32::MIN));
            _mm256_set_m128i(
                quotient4(_mm256_extracti128_si256::<1>(flipped), inv),
                quotient4(_mm256_castsi256_si128(flipped), inv),
            )
        }
    }
    #[inline(always)]
    unsafe fn chunk(keys: &[&[u8]; 8], at: usize) -> [Self; 4] {
        // SAFETY: see the impl; `load16` checks the keys' bytes.
        unsafe {
            let mut c = [_mm_setzero_si128(); 8];
            for (c, key) in c.iter_mut().zip(keys) {
                *c = load16(key, at);
            }
            transpose(c)
        }
    }
    /// Keys of 8 bytes or more: each key's bytes from one 16-byte load
    /// ending at its end (or, for keys under 16 bytes, its first and last
    /// eight), moved into place by one byte shuffle (no scalar work per
    /// key, and no store to the stack read back as a vector). Shorter
    /// keys: a word and the tail, key by key.
    #[inline(always)]
    unsafe fn rest(keys: &[&[u8]; 8], at: usize, len: usize) -> ([Self; 4], Self) {
        if len < 8 {
            let (mut first, mut tails) = ([0u32; 8], [0u32; 8]);
            for ((first, tail), key) in first.iter_mut().zip(&mut tails).zip(keys) {
                if let Some(word) = key.first_chunk::<4>() {
                    *first = u32::from_le_bytes(*word);
                }
                *tail = crate::hash::tail(key, HashVariant::Unsigned);
            }
            // SAFETY: see the impl.
            return unsafe {
                let zero = Self::splat(0);
                ([Self::load(&first), zero, zero, zero], Self::load(&tails))
            };
        }
        let r = (len - at) as i8;
        // SAFETY: see the impl; the loads check the keys' bytes.
        unsafe {
            let index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
            // Byte i of the rest, for i < r: byte 16 - r + i of the last 16
            // bytes; of a shorter key (at == 0, r == len), byte i of its
            // first eight for i < 8, else byte 16 - len + i of first and
            // last eight.
            let shift = match len >= 16 {
                true => _mm_set1_epi8(16 - r),
                false => _mm_and_si128(
                    _mm_cmpgt_epi8(index, _mm_set1_epi8(7)),
                    _mm_set1_epi8(16 - r),
                ),
            };
            // Bytes from r on: 0x80, which the shuffle makes zero.
            let past =
                _mm_andnot_si128(_mm_cmpgt_epi8(_mm_set1_epi8(r), index), _mm_set1_epi8(-128));
            let mask = _mm_or_si128(_mm_add_epi8(index, shift), past);
            let mut c = [_mm_setzero_si128(); 8];
            for (c, key) in c.iter_mut().zip(keys) {
                let piece = match len >= 16 {
                    true => load16(key, len - 16),
                    false => first_last8(key),
                };
                *c = _mm_shuffle_epi8(piece, mask);
            }
            let w = transpose(c);
            (w, simd::word(w, r as usize / 4))
        }
    }
}
