//! The Bloom filter of LevelDB's util/bloom.cc.
//!
//! A filter is `ceil(max(64, n * bits_per_key) / 8)` bytes of bit array followed
//! by one byte holding k, the number of probes. Each key is hashed once (seed
//! 0xbc9f1d34); probe j sets bit `(h + j * delta) % bits`, with `delta` the hash
//! rotated right by 17 bits and all arithmetic on 32 bits.

use crate::arch::{portable, Kernel, Modulus, Work};
use crate::hash::{hash, HashVariant, SEED};
use crate::FilterPolicy;

impl BloomFilterPolicy {
    /// The name LevelDB >= 1.18 stores in the metaindex (`filter.<name>`).
    pub const LEVELDB_NAME: &'static str = "leveldb.BuiltinBloomFilter2";
    /// The name of LevelDB <= 1.17 (signed hash on x86) and of goleveldb
    /// (unsigned).
    pub const LEVELDB_LEGACY_NAME: &'static str = "leveldb.BuiltinBloomFilter";
    /// The name of RocksDB's legacy block-based filter (signed hash).
    pub const ROCKSDB_LEGACY_NAME: &'static str = "rocksdb.BuiltinBloomFilter";
}

/// LevelDB's built-in Bloom filter policy, byte for byte.
///
/// [`BloomFilterPolicy::new`] is LevelDB >= 1.18's `NewBloomFilterPolicy`. The
/// other constructors build the filters that older writers left on disk; each
/// pairs a [`HashVariant`] with the policy name that writer used.
///
/// With AVX-512, `create_filter` and `key_may_match_batch` work on windows of
/// up to 4096 keys on the stack: about 42 KiB for creating, 70 KiB for a
/// batch of 256 keys or more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    k: usize,
    variant: HashVariant,
    name: &'static str,
}

impl BloomFilterPolicy {
    /// `leveldb.BuiltinBloomFilter2` with `bits_per_key` bits per key, as
    /// LevelDB's `NewBloomFilterPolicy(bits_per_key)`: k is
    /// `bits_per_key * 0.69` rounded down, clamped to `1..=30`.
    pub fn new(bits_per_key: usize) -> Self {
        let k = ((bits_per_key as f64 * 0.69) as usize).clamp(1, 30);
        BloomFilterPolicy {
            bits_per_key,
            k,
            variant: HashVariant::Unsigned,
            name: Self::LEVELDB_NAME,
        }
    }

    /// `leveldb.BuiltinBloomFilter` as LevelDB <= 1.17 wrote it on x86: signed hash.
    pub fn leveldb_legacy(bits_per_key: usize) -> Self {
        Self::new(bits_per_key)
            .with_hash(HashVariant::Signed)
            .with_name(Self::LEVELDB_LEGACY_NAME)
    }

    /// `leveldb.BuiltinBloomFilter` as goleveldb writes it: unsigned hash.
    pub fn goleveldb(bits_per_key: usize) -> Self {
        Self::new(bits_per_key).with_name(Self::LEVELDB_LEGACY_NAME)
    }

    /// `rocksdb.BuiltinBloomFilter`, RocksDB's legacy block-based filter: signed hash.
    pub fn rocksdb_legacy(bits_per_key: usize) -> Self {
        Self::new(bits_per_key)
            .with_hash(HashVariant::Signed)
            .with_name(Self::ROCKSDB_LEGACY_NAME)
    }

    /// The same policy with another hash variant; the name is unchanged.
    pub fn with_hash(mut self, variant: HashVariant) -> Self {
        self.variant = variant;
        self
    }

    /// The same policy under another name (what [`FilterPolicy::name`] returns,
    /// and so the metaindex key `filter.<name>` a table builder writes).
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Bits per key, as given.
    pub fn bits_per_key(&self) -> usize {
        self.bits_per_key
    }

    /// Number of probes per key that [`FilterPolicy::create_filter`] writes.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The hash variant.
    pub fn hash_variant(&self) -> HashVariant {
        self.variant
    }

    /// The expected false-positive rate of this policy's filter of `keys`
    /// keys: `(1 - e^(-k n / m))^k` for its `m` bits (LevelDB's sizing: at
    /// least 64, rounded up to whole bytes) and `k` probes: the standard
    /// estimate for independent probes. Measured on random 16-byte keys it
    /// holds within 10% up to 12 bits per key; at 15, LevelDB's double
    /// hashing (both hashes from one 32-bit value) lets through about 1.4
    /// times this rate; and keys that differ in a few bytes (sequential
    /// numbers) collide more under LevelDB's weak hash (`ldbfilter inspect`
    /// measures the rate on a table's own keys).
    ///
    /// ```
    /// use leveldb_filter::BloomFilterPolicy;
    /// let rate = BloomFilterPolicy::new(10).expected_fpr(10_000);
    /// assert!((0.008..0.0085).contains(&rate)); // k = 6: about 0.82%
    /// ```
    pub fn expected_fpr(&self, keys: usize) -> f64 {
        if keys == 0 {
            return 0.0;
        }
        let bits = (keys.saturating_mul(self.bits_per_key).max(64).div_ceil(8) * 8) as f64;
        let k = self.k as f64;
        (1.0 - (-k * keys as f64 / bits).exp()).powf(k)
    }

    /// The fewest bits per key whose filters, with LevelDB's choice of k
    /// (`bits_per_key * 0.69`, rounded down) and many keys, have an
    /// expected false-positive rate of at most `rate` (see
    /// [`expected_fpr`](Self::expected_fpr)); `None` for a rate no filter of
    /// up to 100 bits per key reaches (or one not in `(0, 1)`).
    ///
    /// ```
    /// use leveldb_filter::BloomFilterPolicy;
    /// assert_eq!(BloomFilterPolicy::bits_per_key_for_fpr(0.01), Some(10));
    /// assert_eq!(BloomFilterPolicy::bits_per_key_for_fpr(0.001), Some(15));
    /// let policy = BloomFilterPolicy::new(BloomFilterPolicy::bits_per_key_for_fpr(0.001).unwrap());
    /// assert!(policy.expected_fpr(1_000_000) <= 0.001);
    /// ```
    pub fn bits_per_key_for_fpr(rate: f64) -> Option<usize> {
        if !(rate > 0.0 && rate < 1.0) {
            return None;
        }
        // Per key, with many keys: m / n = bits per key exactly.
        (1..=100).find(|&bits| BloomFilterPolicy::new(bits).expected_fpr(1 << 20) <= rate)
    }

    /// The name, for APIs that want it `'static` (what
    /// [`FilterPolicy::name`] returns).
    pub fn static_name(&self) -> &'static str {
        self.name
    }

    /// `key`'s hash, computed once for any number of filters this policy's
    /// hash variant wrote: an engine's `Get` probes one table per level with
    /// the same key. [`KeyHash::may_match`] and
    /// [`FilterBlockReader::hash_may_match`](crate::FilterBlockReader::hash_may_match)
    /// answer as [`key_may_match`](FilterPolicy::key_may_match) does for the key.
    ///
    /// ```
    /// use leveldb_filter::{BloomFilterPolicy, FilterPolicy};
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let levels: Vec<Vec<u8>> = [&[&b"a"[..], b"b"][..], &[b"c"], &[b"b", b"d"]]
    ///     .iter()
    ///     .map(|keys| {
    ///         let mut filter = Vec::new();
    ///         policy.create_filter(keys, &mut filter);
    ///         filter
    ///     })
    ///     .collect();
    /// let hash = policy.key_hash(b"b");
    /// let found: Vec<bool> = levels.iter().map(|f| hash.may_match(f)).collect();
    /// assert_eq!(found[0], true);
    /// assert_eq!(found[2], true);
    /// for filter in &levels {
    ///     assert_eq!(hash.may_match(filter), policy.key_may_match(b"b", filter));
    /// }
    /// ```
    #[inline]
    pub fn key_hash(&self, key: &[u8]) -> KeyHash {
        KeyHash {
            value: hash(key, SEED, self.variant),
            variant: self.variant,
        }
    }

    /// [`key_may_match`](FilterPolicy::key_may_match) for the key `hash`
    /// was made from. A hash of another variant than this policy's says
    /// nothing of its filters: "may match", never a false "absent".
    #[inline]
    pub fn hash_may_match(&self, hash: KeyHash, filter: &[u8]) -> bool {
        hash.variant != self.variant || hash.may_match(filter)
    }
}

/// A key's hash, from [`BloomFilterPolicy::key_hash`]: LevelDB's 32-bit
/// hash, all a Bloom filter lookup needs of the key, and the
/// [`HashVariant`] it was made with, which lookups through a policy or a
/// filter block reader check against theirs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHash {
    value: u32,
    variant: HashVariant,
}

impl KeyHash {
    /// A hash kept from an earlier [`value`](Self::value) (an engine that
    /// stores its keys' hashes), under the variant it was made with.
    pub fn from_value(value: u32, variant: HashVariant) -> Self {
        KeyHash { value, variant }
    }

    /// Whether the key may be in `filter`, as [`FilterPolicy::key_may_match`]
    /// answers for it, on any bytes. `filter` must be one a policy of this
    /// hash's variant wrote: [`BloomFilterPolicy::hash_may_match`] and
    /// [`FilterBlockReader::hash_may_match`](crate::FilterBlockReader::hash_may_match)
    /// check that.
    #[inline]
    pub fn may_match(self, filter: &[u8]) -> bool {
        match parse(filter) {
            // A kept hash: the portable probes, as `BloomFilter::hash_may_match`.
            Ok((array, k)) => portable::contains_hash(self.value, k, array),
            Err(answer) => answer,
        }
    }

    /// The hash: LevelDB's `Hash(key, n, 0xbc9f1d34)`.
    pub fn value(self) -> u32 {
        self.value
    }

    /// The hash variant it was made with.
    pub fn variant(self) -> HashVariant {
        self.variant
    }
}

/// A filter of a [`BloomFilterPolicy`], parsed once, with what its lookups
/// need of its size computed once: for an engine that keeps a table's
/// filter and probes it many times (a `Get` or a multi-get per lookup).
///
/// [`FilterPolicy::key_may_match`] reads the k byte and divides to reduce
/// probes by the filter's size on every call; a `BloomFilter` does both
/// when made (where the AVX-512 kernel answers its lookups, filters up to
/// 256 KiB, that kernel takes a reciprocal of the size a lookup, in the
/// shadow of the key's hash). Its answers are
/// [`key_may_match`](FilterPolicy::key_may_match)'s on any bytes,
/// LevelDB's fixed answers included (a filter under 2 bytes matches
/// nothing, a k byte above 30 everything). It holds its bytes as
/// any `D: AsRef<[u8]>` (a slice, a `Vec<u8>`, an `Arc<[u8]>` of a block
/// cache) that gives the same bytes on every call (bytes that change after
/// `new` are never read out of bounds, but may be answered for as the old).
///
/// ```
/// use leveldb_filter::{BloomFilter, BloomFilterPolicy, FilterPolicy};
///
/// let policy = BloomFilterPolicy::new(10);
/// let mut bytes = Vec::new();
/// policy.create_filter(&[b"apple", b"banana"], &mut bytes);
/// let filter = BloomFilter::new(&policy, bytes);
/// assert!(filter.may_match(b"apple"));
/// let hash = policy.key_hash(b"cherry");
/// assert_eq!(filter.hash_may_match(hash), policy.key_may_match(b"cherry", filter.as_bytes()));
/// ```
#[derive(Clone, Debug)]
pub struct BloomFilter<D> {
    data: D,
    /// The probes a key, or LevelDB's answer for a filter it does not probe.
    probes: Result<usize, bool>,
    modulus: Modulus,
    /// Whether `may_match` takes the kernel's single lookup (else the
    /// portable probes, with `modulus`).
    kernel_single: bool,
    variant: HashVariant,
}

impl<D: AsRef<[u8]>> BloomFilter<D> {
    /// `data`, a filter `policy` wrote, ready for lookups.
    pub fn new(policy: &BloomFilterPolicy, data: D) -> Self {
        let (probes, len) = match parse(data.as_ref()) {
            Ok((array, k)) => (Ok(k), array.len()),
            Err(answer) => (Err(answer), 1),
        };
        let kernel_single =
            probes.is_ok_and(|k| Kernel::for_work(Work::Single).takes_single(len, k));
        BloomFilter {
            data,
            probes,
            modulus: Modulus::new(len),
            kernel_single,
            variant: policy.variant,
        }
    }

    /// Whether `key` may be in the filter: [`FilterPolicy::key_may_match`]'s
    /// answer.
    #[inline]
    pub fn may_match(&self, key: &[u8]) -> bool {
        match self.probes {
            // The kernel's single lookup where `key_may_match` takes it,
            // else the portable probes with the kept modulus.
            Ok(k) => {
                let h = hash(key, SEED, self.variant);
                match self.kernel_single {
                    true => Kernel::for_work(Work::Single).contains_hash(h, k, self.array()),
                    false => portable::contains_with(self.modulus, h, k, self.array()),
                }
            }
            Err(answer) => answer,
        }
    }

    /// Whether the key hashed to `hash` may be in the filter: "may match"
    /// for a hash of another variant than the policy's, as
    /// [`BloomFilterPolicy::hash_may_match`] answers.
    #[inline]
    pub fn hash_may_match(&self, hash: KeyHash) -> bool {
        hash.variant != self.variant || self.probe(hash.value)
    }

    /// [`may_match`](Self::may_match) for each of `keys`, into `out`.
    ///
    /// # Panics
    /// If `out` and `keys` differ in length.
    pub fn may_match_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match self.probes {
            Ok(k) => Kernel::for_work(Work::Batch).contains_batch(
                keys,
                self.variant,
                k,
                self.array(),
                out,
            ),
            Err(answer) => out.fill(answer),
        }
    }

    /// The filter's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// The filter's bytes, as given to [`new`](Self::new).
    pub fn into_inner(self) -> D {
        self.data
    }

    /// The bit array: all but the last byte, the k byte (a `data` whose
    /// length changed since `new` is probed within its bytes:
    /// `contains_with` checks the modulus).
    #[inline]
    fn array(&self) -> &[u8] {
        let bytes = self.data.as_ref();
        &bytes[..bytes.len().saturating_sub(1)]
    }

    #[inline]
    fn probe(&self, h: u32) -> bool {
        match self.probes {
            // The portable probes on every CPU for a kept hash: with no
            // hash in the same call, their probes answer sooner than any
            // vector kernel's.
            Ok(k) => portable::contains_with(self.modulus, h, k, self.array()),
            Err(answer) => answer,
        }
    }
}

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        self.name
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        self.create_with(Kernel::for_work(Work::Create(keys.len())), keys, dst);
    }

    #[inline]
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.single_with(Kernel::for_work(Work::Single), key, filter)
    }

    fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        self.batch_with(Kernel::for_work(Work::Batch), keys, filter, out);
    }

    fn as_bloom(&self) -> Option<&BloomFilterPolicy> {
        Some(self)
    }
}

impl BloomFilterPolicy {
    /// [`create_filter`](FilterPolicy::create_filter) for keys stored end to
    /// end in `keys`, key i starting at `offsets[i]` and ending where the
    /// next starts (the last at the end), as rusty-leveldb and LevelDB's own
    /// builder hold them: no list of slices is built (keys are taken a few
    /// hundred at a time from the stack).
    ///
    /// ```
    /// use leveldb_filter::{BloomFilterPolicy, FilterPolicy};
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let (mut a, mut b) = (Vec::new(), Vec::new());
    /// policy.create_filter_from_offsets(b"applebananacherry", &[0, 5, 11], &mut a);
    /// policy.create_filter(&[b"apple", b"banana", b"cherry"], &mut b);
    /// assert_eq!(a, b);
    /// ```
    ///
    /// # Panics
    /// If an offset is past `keys` or below the one before it (as slicing
    /// `keys` would).
    pub fn create_filter_from_offsets(&self, keys: &[u8], offsets: &[usize], dst: &mut Vec<u8>) {
        let array = self.start_filter(offsets.len(), dst);
        let array = &mut dst[array];
        // A filter of a data block's keys (a few dozen) takes a list of 64
        // slices: making one of 256 (4 KiB) cost more than its keys' bits.
        match offsets.len() <= 64 {
            true => self.insert_from_offsets::<64>(keys, offsets, array),
            false => self.insert_from_offsets::<256>(keys, offsets, array),
        }
    }

    /// Sets the bits of the keys of `create_filter_from_offsets`, `CHUNK`
    /// at a time from a list of slices on the stack.
    fn insert_from_offsets<const CHUNK: usize>(
        &self,
        keys: &[u8],
        offsets: &[usize],
        array: &mut [u8],
    ) {
        let kernel = Kernel::for_work(Work::Create(offsets.len()));
        let mut slices: [&[u8]; CHUNK] = [&[]; CHUNK];
        for (c, chunk) in offsets.chunks(CHUNK).enumerate() {
            for (i, (slice, &from)) in slices.iter_mut().zip(chunk).enumerate() {
                let to = offsets
                    .get(c * CHUNK + i + 1)
                    .copied()
                    .unwrap_or(keys.len());
                *slice = &keys[from..to];
            }
            kernel.insert(&slices[..chunk.len()], self.variant, self.k, array);
        }
    }

    /// The bit array's length in bytes for `n` keys.
    pub(crate) fn array_len(&self, n: usize) -> usize {
        n.saturating_mul(self.bits_per_key).max(64).div_ceil(8)
    }

    /// Appends to `dst` a zeroed bit array for `n` keys and the k byte;
    /// returns where the array lies in `dst`.
    pub(crate) fn start_filter(&self, n: usize, dst: &mut Vec<u8>) -> std::ops::Range<usize> {
        let bytes = self.array_len(n);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        start..start + bytes
    }

    /// `create_filter` on a given kernel.
    pub(crate) fn create_with(&self, kernel: Kernel, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let array = self.start_filter(keys.len(), dst);
        kernel.insert(keys, self.variant, self.k, &mut dst[array]);
    }

    /// [`hash_may_match`](Self::hash_may_match), the array's [`Modulus`]
    /// given by `modulus(array length)`.
    #[inline]
    pub(crate) fn probe_with(
        &self,
        hash: KeyHash,
        filter: &[u8],
        modulus: impl FnOnce(usize) -> Modulus,
    ) -> bool {
        hash.variant != self.variant
            || match parse(filter) {
                Ok((array, k)) => {
                    portable::contains_with(modulus(array.len()), hash.value, k, array)
                }
                Err(answer) => answer,
            }
    }

    /// `key_may_match` on a given kernel.
    #[inline]
    pub(crate) fn single_with(&self, kernel: Kernel, key: &[u8], filter: &[u8]) -> bool {
        match parse(filter) {
            Ok((array, k)) => kernel.contains(key, self.variant, k, array),
            Err(answer) => answer,
        }
    }

    /// `key_may_match_batch` on a given kernel.
    pub(crate) fn batch_with(
        &self,
        kernel: Kernel,
        keys: &[&[u8]],
        filter: &[u8],
        out: &mut [bool],
    ) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match parse(filter) {
            Ok((array, k)) => kernel.contains_batch(keys, self.variant, k, array, out),
            Err(answer) => out.fill(answer),
        }
    }
}

/// A filter's bit array and k, or LevelDB's fixed answer for filters it does
/// not probe: shorter than 2 bytes, `false`; a k byte above 30, `true`.
/// (LevelDB reads k as a `char`: bytes >= 0x80 become huge as `size_t`, so
/// every k byte above 30 is reserved for other encodings.)
#[inline]
fn parse(filter: &[u8]) -> Result<(&[u8], usize), bool> {
    match filter.split_last() {
        Some((&k, array)) if !array.is_empty() => {
            if k > 30 {
                return Err(true);
            }
            Ok((array, usize::from(k)))
        }
        _ => Err(false),
    }
}
