//! LevelDB's 32-bit `Hash` (util/hash.cc), in both of the byte interpretations
//! found on disk.

/// How the hash adds the one to three bytes left over after the last whole
/// 32-bit word.
///
/// The difference only shows for keys whose tail holds a byte >= 0x80: every
/// other key hashes the same under both variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HashVariant {
    /// Tail bytes added as `uint8_t`: LevelDB >= 1.18 (`leveldb.BuiltinBloomFilter2`)
    /// and goleveldb (which writes it under the old name `leveldb.BuiltinBloomFilter`).
    #[default]
    Unsigned,
    /// Tail bytes added as a sign-extended `char`: LevelDB <= 1.17 on x86
    /// (`leveldb.BuiltinBloomFilter`) and RocksDB's legacy block-based filter
    /// (`rocksdb.BuiltinBloomFilter`) on every platform.
    Signed,
}

impl HashVariant {
    /// LevelDB's `Hash(data, n, seed)`, with the tail bytes read as this
    /// variant says (a Bloom filter's seed is `0xbc9f1d34`).
    ///
    /// ```
    /// use leveldb_filter::HashVariant;
    /// // Values from LevelDB's util/hash_test.cc and RocksDB's util/hash_test.cc.
    /// assert_eq!(HashVariant::Unsigned.hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
    /// assert_eq!(HashVariant::Signed.hash(b"\x9a", 0xbc9f1d34), 3195034349);
    /// ```
    #[inline]
    pub fn hash(self, data: &[u8], seed: u32) -> u32 {
        hash(data, seed, self)
    }
}

impl std::fmt::Display for HashVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HashVariant::Unsigned => "unsigned",
            HashVariant::Signed => "signed",
        })
    }
}

/// The seed of every Bloom filter's hash: LevelDB's and RocksDB's legacy
/// Bloom filters alike.
pub(crate) const SEED: u32 = 0xbc9f1d34;

/// The hash's multiplier.
pub(crate) const M: u32 = 0xc6a4a793;

/// LevelDB's `Hash(data, n, seed)`, with the tail bytes read as `variant` says.
#[inline]
pub(crate) fn hash(data: &[u8], seed: u32, variant: HashVariant) -> u32 {
    // The length is a size_t in C++, multiplied and then truncated to 32 bits.
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let round = |h: u32, w: &[u8; 4]| {
        let h = h.wrapping_add(u32::from_le_bytes(*w)).wrapping_mul(M);
        h ^ (h >> 16)
    };
    // Four words at a time, then the words left: a loop's overhead once per
    // 16 bytes (most keys are short: for 16 bytes, one pass, no loop).
    let (chunks, rest) = data.as_chunks::<16>();
    for chunk in chunks {
        for w in chunk.as_chunks::<4>().0 {
            h = round(h, w);
        }
    }
    let (words, tail_bytes) = rest.as_chunks::<4>();
    for w in words {
        h = round(h, w);
    }
    if tail_bytes.is_empty() {
        return h;
    }
    let h = h.wrapping_add(tail(data, variant)).wrapping_mul(M);
    h ^ (h >> 24)
}

/// The tail of a key (its last `len % 4` bytes) as LevelDB's `Hash` adds it,
/// with no branch on the tail's length for keys of 4 bytes or more (a jump
/// on it is mispredicted when key lengths vary).
#[inline]
pub(crate) fn tail(key: &[u8], variant: HashVariant) -> u32 {
    let unsigned = match key.last_chunk::<4>() {
        // The top `len % 4` bytes of the last 4; none when the key is whole
        // words (a shift by 32 of a 64-bit value).
        Some(last) => (u64::from(u32::from_le_bytes(*last)) >> (32 - 8 * (key.len() % 4))) as u32,
        None => key.iter().rev().fold(0, |acc, &b| acc << 8 | u32::from(b)),
    };
    match variant {
        HashVariant::Unsigned => unsigned,
        // Each byte >= 0x80 sign-extended: byte j adds -2^(8j+8) more.
        HashVariant::Signed => unsigned.wrapping_sub((unsigned & 0x0080_8080) << 1),
    }
}
