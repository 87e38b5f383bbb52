//! Kernels: the code that hashes keys and sets and tests their probe bits,
//! one kernel per instruction set, and which kernel serves which work on
//! which CPU.
//!
//! | kernel | runs on | serves |
//! |---|---|---|
//! | [`portable`] | every CPU | all work the others leave; the reference; the default on aarch64 |
//! | `x86_64::avx512` | AVX-512F, VL, POPCNT and AVX2 (default; on Intel's cores, for batches and filters of many keys) | filters, batches and single lookups |
//! | `x86_64::avx2` | AVX2 (default without AVX-512; on Intel's AVX-512 cores, for single lookups and filters of few keys) | filters and batches: of keys of one length, and of mixed lengths from [`FEW_TO_GROUP`] keys (batches by gathers where a timing at start-up finds them faster); the bits of a filter block's filters from their hashes (on AVX-512 CPUs too) |
//! | `aarch64::neon` | NEON (aarch64), only with `LEVELDB_FILTER_KERNEL=neon` | as AVX2, batches without gathers |
//!
//! The vector kernels run one algorithm, [`simd`]'s, written over a lane
//! trait ([`simd::Lanes`]) that each instruction set implements: hashing
//! keys transposed, the reduction and probe positions, rows of indexes and
//! masks, grouping by length, batches. Each kernel's file (AVX-512's, a
//! directory of them) holds its lanes and what only it does (AVX-512's
//! cascade, single lookups and prefetching; AVX2's gathers and their
//! timing).
//!
//! Why Intel's cores take AVX2 for some work even with AVX-512: see
//! [`Kernel::for_work`]
//! (512-bit vectors slow the engine code around them there). Why NEON is
//! not the default on aarch64: it has not been measured on aarch64
//! hardware yet (only tested, under QEMU).
//!
//! Why each leaves what it leaves:
//! - LevelDB's single lookups on AVX2 and NEON are the portable kernel's
//!   (RocksDB's FastLocalBloom and Ribbon lookups take AVX2's): an AVX2
//!   lookup must gather its probes' words, and gathers are slow on many
//!   AVX2 cores (AMD Zen 2 and 3; Intel Skylake to Tiger Lake since the
//!   2023 "Downfall" microcode), where it lost to the portable early exit.
//!   AVX-512 cores gather fast enough to win. (NEON has no gathers.)
//! - A few keys of mixed lengths on AVX2 and NEON are the portable
//!   kernel's: they hash a group at once only from chunks of one length
//!   (no gathers), so mixed lengths wait with others of their length
//!   until two groups, which pays from [`FEW_TO_GROUP`] keys on (below,
//!   the classes left part-full at the end, padded, cost more than they
//!   save); mixed lengths placed in vectors one key at a time lost to the
//!   portable code. (AVX-512 does the same, and has masked loads and
//!   gathers for the groups of mixed lengths.)
//! - Few keys (the thresholds below): a vector kernel's setup and latency
//!   cost more than it saves.
//! - Bit arrays past 2^28 bytes: the vector kernels' reduction (`h % bits`
//!   from doubles) is exact for `bits <= 2^31` only.
//! - A filter block's filters from hashes on AVX-512 CPUs are AVX2's: the
//!   AVX-512 kernel has no code of its own for them (a builder's filters
//!   hold a few dozen keys each; sixteen lanes were not tried there).
//!
//! A vector kernel is a value only detection makes (`Avx2`, `Avx512`,
//! `Neon`): its [`Vector`] methods are safe to call because the value
//! proves the CPU has what they enable. Adding a kernel is a file that
//! implements [`simd::Lanes`] for its vectors and [`Vector`] for its type
//! (with the entry points that instantiate [`simd`]'s code), an arm in
//! [`Kernel`] and in the `vector!` match, and its detection in
//! `Kernel::asked_for` and `Kernel::all`. The tests in `tests/` run every
//! kernel the CPU has against the portable one and LevelDB's formula.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod lengths;
pub(crate) mod portable;
pub(crate) mod resolved;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod simd;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86_64;

use std::sync::OnceLock;

#[cfg(target_arch = "x86_64")]
pub(crate) use x86_64::prefetch;

#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::prefetch;

/// Where there is no prefetch instruction taken: nothing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
pub(crate) fn prefetch<T>(_slice: &[T], _index: usize) {}

pub(crate) use lengths::{groups_by_length, looks_one_length};
pub(crate) use portable::Modulus;

use crate::hash::SEED;
use crate::HashVariant;

/// Below this many keys, a filter is made by the portable kernel: a vector
/// kernel's groups of 8 or 16 cost about as much for a few keys as for a
/// group, and their latency is all there is to overlap.
pub(crate) const FEW_TO_CREATE: usize = 9;

/// Below this many keys, a batch is answered one lookup at a time.
pub(crate) const FEW_FOR_BATCH: usize = 16;

/// Keys in an AVX-512 window below which it is answered by pairs of groups
/// (all k probes of each key) rather than by the cascade of rounds: the
/// rounds cost more than they save for a few keys.
#[cfg(target_arch = "x86_64")]
pub(crate) const FEW_FOR_CASCADE: usize = 256;

/// The share `n / d` of "may match" answers in an AVX-512 window above
/// which the next window is answered by pairs of groups (all k probes of
/// each key) rather than by the cascade (about two probes for an absent
/// key, but more work than pairs for a present one): about where the two
/// cost the same on AMD's Zen 5. (On Intel's cores pairs cost less at
/// every share: see `x86_64::avx512::Batching`.)
#[cfg(target_arch = "x86_64")]
pub(crate) const PAIRS_FROM: (usize, usize) = (5, 8);

/// Keys of mixed lengths below which the kernels do not group them by
/// length ([`groups_by_length`]): too few to fill groups of one length,
/// and the classes left part-full at the end cost more than the groups
/// save (measured from 64 to 255 keys, each kernel); AVX2 leaves them to
/// the portable kernel.
pub(crate) const FEW_TO_GROUP: usize = 256;

/// Keys from which the kernels prefetch keys ahead: so many that their
/// bytes are likely out of the cache (for keys in the cache the
/// prefetches cost a few percent).
pub(crate) const MANY_KEYS: usize = 1 << 15;

/// The largest bit array the vector kernels take, in bytes: their reduction
/// is exact for `bits <= 2^31`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) const MAX_VECTOR_BYTES: usize = 1 << 28;

/// The smallest bit array the vector lookups take, in bytes: they read each
/// probe's bit from a 4-byte word.
#[cfg(target_arch = "x86_64")]
pub(crate) const MIN_PROBED_BYTES: usize = 4;

/// The largest bit array whose single lookups the AVX-512 kernel takes,
/// in bytes. On a Zen 5 the lanes gained a tenth on keys of mixed lengths
/// at 12 and 125 KiB and lost a twentieth on keys of one length at 125
/// KiB; at 1.25 MiB the portable probes answered sooner for both, their
/// loads starting a few cycles after the hash, the lanes' some thirty
/// later.
#[cfg(target_arch = "x86_64")]
pub(crate) const MAX_SINGLE_LANES_BYTES: usize = 256 << 10;

// Within the arrays the vector kernels take.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(MAX_SINGLE_LANES_BYTES <= MAX_VECTOR_BYTES);

/// What this CPU runs, decided once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Plain Rust ([`portable`]).
    Portable,
    /// AVX2 (x86-64).
    #[cfg(target_arch = "x86_64")]
    Avx2(x86_64::Avx2),
    /// AVX-512F, VL and POPCNT (x86-64).
    #[cfg(target_arch = "x86_64")]
    Avx512(x86_64::Avx512),
    /// NEON (aarch64).
    #[cfg(target_arch = "aarch64")]
    Neon(aarch64::Neon),
}

/// `$vector` with `$cpu` bound to the kernel's [`Vector`] for a vector
/// kernel, `$portable` for the portable one: the one match of the vector
/// kernels that the operations below share.
macro_rules! vector {
    ($kernel:expr, $cpu:ident => $vector:expr, portable => $portable:expr) => {
        match $kernel {
            Kernel::Portable => $portable,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2($cpu) => $vector,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512($cpu) => $vector,
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon($cpu) => $vector,
        }
    };
}

/// What a vector kernel does: each method answers `false` (or `None`),
/// having written nothing, for work it leaves to the portable kernel.
/// Only the kernel's detection makes a value of its type, which proves
/// that the CPU has what its code enables.
pub(crate) trait Vector: Copy {
    /// The kernel's name, as `LEVELDB_FILTER_KERNEL` takes it.
    const NAME: &'static str;

    /// Sets in `array` the `k` probe bits of every key.
    fn insert(self, keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) -> bool;

    /// Sets in `array` the `k` probe bits of every key hashed to `hashes`.
    fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) -> bool;

    /// For each key, whether all `k` of its probe bits are set in `array`,
    /// into `out` (as long as `keys`).
    fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) -> bool;

    /// Whether all `k <= 30` probe bits of a key hashed to `h` are set in
    /// `array` (single lookups: by default the portable kernel's).
    #[inline]
    fn contains(self, h: u32, k: usize, array: &[u8]) -> Option<bool> {
        let _ = (h, k, array);
        None
    }

    /// Whether [`contains`](Vector::contains) answers for an array of
    /// `bytes` bytes probed `k` times.
    #[inline]
    fn takes_single(self, bytes: usize, k: usize) -> bool {
        let _ = (bytes, k);
        false
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32>;

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]>;
}

static KERNELS: OnceLock<Kernels> = OnceLock::new();

impl Kernel {
    /// The kernel for this CPU, unless the environment variable
    /// `LEVELDB_FILTER_KERNEL` asks for `portable`, `avx2`, `avx512` or
    /// `neon` (to measure or rule out the vector code; a kernel is taken
    /// only where the CPU has it). Decided once per process. (`scalar`,
    /// the portable kernel's old name, still asks for it.) The kernel of
    /// batches and of large filters; [`for_work`](Kernel::for_work) gives
    /// each work's.
    ///
    /// On aarch64 the portable kernel is the default: NEON's is taken only
    /// when asked for, until it is measured faster on aarch64 hardware.
    #[inline]
    pub(crate) fn detect() -> Kernel {
        KERNELS.get_or_init(Kernels::decide).default
    }

    /// The kernel for `work`: [`detect`](Kernel::detect)'s, but AVX2's on
    /// Intel's AVX-512 cores for single lookups and for filters of fewer
    /// than [`FEW_FOR_512_ON_INTEL`] keys, unless `LEVELDB_FILTER_KERNEL`
    /// asked for a kernel. There 512-bit vectors slow the code around
    /// them (Intel's 512-bit license lowers the core's clock for some time
    /// after such code), which long work earns back and short work does
    /// not. Measured on an Intel Xeon: on family 6 model 207, AVX-512
    /// built 10,000-key filters at 4.72x LevelDB against AVX2's 3.95x and
    /// answered batches at 6.29x against 4.48x, but single lookups at 1.19x
    /// against 1.72x; on family 6 model 167, 34-key filters made between
    /// stretches of plain integer code cost that code 11% more time with
    /// AVX-512 and nothing with AVX2 (benches/record/). Decided once per
    /// process, for every work.
    #[inline]
    pub(crate) fn for_work(work: Work) -> Kernel {
        let kernels = KERNELS.get_or_init(Kernels::decide);
        match work {
            Work::Single => kernels.single,
            Work::Create(keys) if keys < FEW_FOR_512_ON_INTEL => kernels.few,
            Work::Batch | Work::Create(_) => kernels.default,
        }
    }
}

/// The kernel of each work, decided once per process.
#[derive(Clone, Copy, Debug)]
struct Kernels {
    /// Batches and filters of many keys.
    default: Kernel,
    /// Single lookups.
    single: Kernel,
    /// Filters of few keys.
    few: Kernel,
}

impl Kernels {
    #[cold]
    fn decide() -> Kernels {
        let name = std::env::var("LEVELDB_FILTER_KERNEL").unwrap_or_default();
        let asked = matches!(
            name.as_str(),
            "portable" | "scalar" | "avx2" | "avx512" | "neon"
        );
        let default = Kernel::asked_for(&name);
        let narrow = |work: Work| match default {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(cpu) if narrowed(work, x86_64::intel(), asked) => {
                Kernel::Avx2(cpu.into())
            }
            _ => {
                let _ = (work, asked);
                default
            }
        };
        Kernels {
            default,
            single: narrow(Work::Single),
            few: narrow(Work::Create(0)),
        }
    }
}

impl Kernel {
    /// The kernel for this CPU where `LEVELDB_FILTER_KERNEL` is `name`.
    fn asked_for(name: &str) -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            // Detected only when they may be chosen: AVX2's detection
            // times the CPU's gathers (`Avx2::detect`).
            let avx512 = || x86_64::Avx512::detect().map(Kernel::Avx512);
            let avx2 = || x86_64::Avx2::detect().map(Kernel::Avx2);
            let chosen = match name {
                // (`scalar`: the portable kernel's old name.)
                "portable" | "scalar" => None,
                "avx2" => avx2(),
                "avx512" => avx512(),
                _ => avx512().or_else(avx2),
            };
            chosen.unwrap_or(Kernel::Portable)
        }
        #[cfg(target_arch = "aarch64")]
        {
            let chosen = match name {
                "neon" => aarch64::Neon::detect().map(Kernel::Neon),
                _ => None,
            };
            chosen.unwrap_or(Kernel::Portable)
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            let _ = name;
            Kernel::Portable
        }
    }

    /// Every kernel this CPU runs, the portable one first.
    #[cfg(test)]
    pub(crate) fn all() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut kernels = vec![Kernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            // AVX2 reads a batch's probes by gathers or not, depending on
            // what the CPU does faster: both are tested on any.
            let avx2 = x86_64::Avx2::detect().into_iter();
            kernels.extend(avx2.flat_map(|cpu| cpu.every_probing()).map(Kernel::Avx2));
            // AVX-512 answers batches by the cascade or by pairs of groups
            // depending on the CPU's vendor: both are tested on any.
            let avx512 = x86_64::Avx512::detect().into_iter();
            kernels.extend(
                avx512
                    .flat_map(|cpu| cpu.every_batching())
                    .map(Kernel::Avx512),
            );
        }
        #[cfg(target_arch = "aarch64")]
        kernels.extend(aarch64::Neon::detect().map(Kernel::Neon));
        kernels
    }

    /// The kernel's name, as `LEVELDB_FILTER_KERNEL` takes it.
    pub(crate) fn name(self) -> &'static str {
        fn name<V: Vector>(_: V) -> &'static str {
            V::NAME
        }
        vector!(self, cpu => name(cpu), portable => "portable")
    }

    /// Sets in `array` the `k` probe bits of every key, as LevelDB's
    /// `CreateFilter` does.
    pub(crate) fn insert(self, keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
        let done = keys.len() >= FEW_TO_CREATE
            && vector!(self, cpu => cpu.insert(keys, variant, k, array), portable => false);
        if !done {
            portable::insert(keys, variant, k, array);
        }
    }

    /// Sets in `array` the `k` probe bits of every key hashed to `hashes`:
    /// [`insert`](Kernel::insert) for a builder that hashes keys as they
    /// come. (AVX-512 CPUs run AVX2's code for it: see the module's
    /// notes.)
    pub(crate) fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) {
        let done = hashes.len() >= FEW_TO_CREATE
            && vector!(self, cpu => cpu.insert_hashes(hashes, k, array), portable => false);
        if !done {
            portable::insert_hashes(hashes, k, array);
        }
    }

    /// LevelDB's `KeyMayMatch` for one key against a filter's bit array and
    /// `k <= 30`.
    #[inline]
    pub(crate) fn contains(self, key: &[u8], variant: HashVariant, k: usize, array: &[u8]) -> bool {
        self.contains_hash(crate::hash(key, SEED, variant), k, array)
    }

    /// [`contains`](Kernel::contains) for a key hashed to `h`.
    #[inline]
    pub(crate) fn contains_hash(self, h: u32, k: usize, array: &[u8]) -> bool {
        match vector!(self, cpu => cpu.contains(h, k, array), portable => None) {
            Some(answer) => answer,
            None => portable::contains_hash(h, k, array),
        }
    }

    /// Whether [`contains_hash`](Kernel::contains_hash) takes this
    /// kernel's own single lookup for an array of `bytes` bytes probed `k`
    /// times (else the portable probes).
    #[inline]
    pub(crate) fn takes_single(self, bytes: usize, k: usize) -> bool {
        vector!(self, cpu => cpu.takes_single(bytes, k), portable => false)
    }

    /// [`contains`](Kernel::contains) for each of `keys`, into `out` (as
    /// long as `keys`).
    pub(crate) fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        if keys.len() < FEW_FOR_BATCH {
            for (key, answer) in keys.iter().zip(out) {
                *answer = self.contains(key, variant, k, array);
            }
            return;
        }
        let done = vector!(
            self, cpu => cpu.contains_batch(keys, variant, k, array, out), portable => false
        );
        if !done {
            portable::contains_batch(keys, variant, k, array, out);
        }
    }

    /// The kernel's RocksDB `MayMatch` of a key against a FastLocalBloom bit
    /// array of whole blocks (`rocksdb::local`), `None` where the portable
    /// code answers: it may be called only where this kernel's CPU is.
    pub(crate) fn fast_local_single_fn(self) -> Option<resolved::FastLocalSingle> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) | Kernel::Avx512(_) => Some(x86_64::local_bloom::single),
            _ => None,
        }
    }

    /// The kernel's Standard128Ribbon lookup (`rocksdb::ribbon::single`
    /// compiled with POPCNT), `None` where the portable code answers: it
    /// may be called only where this kernel's CPU is.
    pub(crate) fn ribbon_single_fn(self) -> Option<resolved::RibbonSingle> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(_) | Kernel::Avx512(_) => Some(x86_64::ribbon_single),
            _ => None,
        }
    }

    /// `work`, compiled with the population count instruction where the
    /// kernel proves the CPU has it (x86-64's AVX2 and AVX-512 kernels),
    /// else as it is: for Ribbon's parities. The closure and what it
    /// inlines take the instruction.
    #[inline]
    pub(crate) fn with_popcnt<R>(self, work: impl FnOnce() -> R) -> R {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(cpu) => x86_64::with_popcnt(cpu, work),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(cpu) => x86_64::with_popcnt(cpu.into(), work),
            _ => work(),
        }
    }

    /// RocksDB's batch `MayMatch` of `keys` against a FastLocalBloom bit
    /// array of `probes` probes a key, into `out`; `false` (nothing
    /// written) where the portable code answers.
    pub(crate) fn fast_local_batch(
        self,
        data: &[u8],
        probes: u32,
        keys: &[&[u8]],
        out: &mut [bool],
    ) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2(cpu) => x86_64::local_bloom::batch_on(cpu, data, probes, keys, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512(cpu) => {
                x86_64::local_bloom::batch_on(cpu.into(), data, probes, keys, out)
            }
            _ => {
                let _ = (data, probes, keys, out);
                false
            }
        }
    }

    /// LevelDB's `Hash` of each key, as this kernel computes it (by its
    /// groups and its paths for keys of one length and of several).
    #[cfg(test)]
    pub(crate) fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        vector!(
            self, cpu => cpu.hashes(keys, variant),
            portable => keys.iter().map(|key| crate::hash(key, SEED, variant)).collect()
        )
    }

    /// The positions of 30 probes of each hash in a filter of `bits <= 2^31`
    /// bits, as this kernel reduces them.
    #[cfg(test)]
    pub(crate) fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        vector!(
            self, cpu => cpu.positions(hashes, bits),
            portable => {
                let modulus = portable::Modulus::new((bits / 8) as usize);
                let probes = |h: u32| {
                    let delta = h.rotate_right(17);
                    std::array::from_fn(|j| {
                        modulus.position(h.wrapping_add((j as u32).wrapping_mul(delta))) as u32
                    })
                };
                hashes.iter().map(|&h| probes(h)).collect()
            }
        )
    }
}

/// The work a kernel is chosen for ([`Kernel::for_work`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// Lookups one key at a time.
    Single,
    /// Lookups of many keys at once.
    Batch,
    /// A filter of this many keys.
    Create(usize),
}

/// Keys below which a filter is made on AVX2 rather than AVX-512 on
/// Intel's cores: the filters of a table's blocks (a few dozen keys
/// each), made between the table builder's other work.
pub(crate) const FEW_FOR_512_ON_INTEL: usize = 1024;

/// Whether `work` leaves the AVX-512 kernel for AVX2's: on Intel's cores,
/// unless the environment asked for a kernel, single lookups and filters of
/// few keys. (Only x86-64 has such cores.)
#[cfg(any(target_arch = "x86_64", test))]
fn narrowed(work: Work, intel: bool, asked: bool) -> bool {
    intel
        && !asked
        && match work {
            Work::Single => true,
            Work::Batch => false,
            Work::Create(keys) => keys < FEW_FOR_512_ON_INTEL,
        }
}

/// Whether a vector kernel takes a bit array of `bytes` bytes probed `k`
/// times per key (`k == 0` is LevelDB's "no probes": the portable kernel's).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline]
fn vectorable(bytes: usize, k: usize) -> bool {
    (1..=MAX_VECTOR_BYTES).contains(&bytes) && (1..=30).contains(&k)
}

/// Whether a kernel that hashes keys of mixed lengths only by length
/// takes `keys` against an array of `bytes` bytes probed `k` times:
/// `Some(by_length)`, whether they are of mixed lengths (taken from
/// [`FEW_TO_GROUP`] keys: fewer are the portable kernel's), or `None`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn grouped(keys: &[&[u8]], bytes: usize, k: usize) -> Option<bool> {
    if !vectorable(bytes, k) {
        return None;
    }
    let by_length = !looks_one_length(keys);
    (!by_length || keys.len() >= FEW_TO_GROUP).then_some(by_length)
}
