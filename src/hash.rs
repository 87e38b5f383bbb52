//! LevelDB's 32-bit `Hash` (util/hash.cc), in both of the byte interpretations
//! found on disk.

use byteorder::{ByteOrder, LittleEndian};

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

const M: u32 = 0xc6a4a793;

/// LevelDB's `Hash(data, n, seed)`, with the tail bytes read as `variant` says.
///
/// ```
/// use leveldb_filter::{hash, HashVariant};
/// // Values from LevelDB's util/hash_test.cc and RocksDB's util/hash_test.cc.
/// assert_eq!(hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34, HashVariant::Unsigned), 0x323c078f);
/// assert_eq!(hash(b"\x9a", 0xbc9f1d34, HashVariant::Signed), 3195034349);
/// ```
#[inline]
pub fn hash(data: &[u8], seed: u32, variant: HashVariant) -> u32 {
    // The length is a size_t in C++, multiplied and then truncated to 32 bits.
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        h = h.wrapping_add(LittleEndian::read_u32(w)).wrapping_mul(M);
        h ^= h >> 16;
    }
    let byte = |b: u8| match variant {
        HashVariant::Unsigned => u32::from(b),
        HashVariant::Signed => b as i8 as i32 as u32,
    };
    let tail = match *words.remainder() {
        [] => return h,
        [a] => byte(a),
        [a, b] => byte(a).wrapping_add(byte(b) << 8),
        [a, b, c, ..] => byte(a)
            .wrapping_add(byte(b) << 8)
            .wrapping_add(byte(c) << 16),
    };
    h = h.wrapping_add(tail).wrapping_mul(M);
    h ^ (h >> 24)
}
