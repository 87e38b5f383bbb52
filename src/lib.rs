//! LevelDB's table filters, byte for byte.
//!
//! This crate builds and reads the filter blocks of LevelDB's sorted tables
//! (`.ldb`, `.sst`) exactly as LevelDB does: the same bytes out of the
//! builders, the same answers out of the readers, on every input, damaged ones
//! included. It is checked against the real LevelDB (golden vectors in
//! `testdata/` and differential tests against Debian's `libleveldb-dev`).
//!
//! # The pieces
//!
//! - [`FilterPolicy`]: LevelDB's `FilterPolicy` interface, object safe, so an
//!   engine can hold an `Arc<dyn FilterPolicy>`.
//! - [`BloomFilterPolicy`]: `leveldb.BuiltinBloomFilter2`, and the older
//!   filters found on disk: [`HashVariant`] says how their hash read bytes >= 0x80.
//! - [`FilterBlockBuilder`] and [`FilterBlockReader`]: a table's filter block,
//!   one filter per 2 KiB of data-block offset.
//! - [`FilterBlock`]: the strict reader, which says what is wrong with a block
//!   ([`FilterBlockError`]); [`Error`] is a table file's.
//! - [`InternalKeyPolicy`]: a database's tables filter user keys; wrap the
//!   policy in it for them, as LevelDB's `InternalFilterPolicy`.
//! - [`KeyHash`]: a key hashed once for the filters of every level.
//!
//! Beyond the core, a module per table format on one shared layer:
//! [`format`](mod@format) is what LevelDB's and RocksDB's files share (the
//! footer, block handles, trailers and checksums, codecs, the block cursor,
//! internal keys, what can be wrong); [`leveldb`] reads LevelDB's table
//! files and checks a table's filter against its keys, probes and measures
//! it; [`rocksdb`] does the same for RocksDB's, and builds its filters;
//! [`TableFormat`] tells them apart from a file's footer, and [`AnyTable`]
//! opens any of them; [`db`] reads a database directory; `rusty` (feature
//! `rusty-leveldb`) plugs the Bloom policy into rusty-leveldb.
//!
//! # A Bloom filter
//!
//! ```
//! use leveldb_filter::{BloomFilterPolicy, FilterPolicy};
//!
//! let policy = BloomFilterPolicy::new(10);
//! let mut filter = Vec::new();
//! policy.create_filter(&[b"hello", b"world"], &mut filter);
//! // max(64, 2 * 10) bits = 8 bytes, then k = 6.
//! assert_eq!(filter.len(), 9);
//! assert_eq!(filter[8], 6);
//! assert!(policy.key_may_match(b"hello", &filter));
//! assert!(policy.key_may_match(b"world", &filter));
//! assert!(!policy.key_may_match(b"x", &filter));
//! ```
//!
//! # Many keys against one filter
//!
//! [`FilterPolicy::key_may_match_batch`] answers many keys at once, with the
//! same answers as one at a time. The Bloom policy hashes them 16 at a time
//! with AVX-512 where the CPU has it, else eight at a time with AVX2, and
//! probes without branching on the bits (on AMD's AVX-512 cores, while most
//! keys are absent, an absent key costs about two probes instead of k).
//! The kernel is chosen at run time; the portable code is the reference the
//! SIMD code is tested against, and `LEVELDB_FILTER_KERNEL=portable` in the
//! environment selects it, `avx2`, `avx512` or `neon` a vector kernel
//! ([`kernel`]):
//!
//! ```
//! use leveldb_filter::{BloomFilterPolicy, FilterPolicy};
//!
//! let policy = BloomFilterPolicy::new(10);
//! let keys: Vec<Vec<u8>> = (0u32..1000).map(|i| i.to_le_bytes().to_vec()).collect();
//! let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
//! let mut filter = Vec::new();
//! policy.create_filter(&keys, &mut filter);
//! let mut answers = vec![false; keys.len()];
//! policy.key_may_match_batch(&keys, &filter, &mut answers);
//! assert!(answers.iter().all(|&a| a)); // no false negatives
//! ```
//!
//! # A filter block in an engine's table builder
//!
//! The table builder owns a [`FilterBlockBuilder`]; it announces each data block
//! by its offset in the file, then adds the block's keys. The reader answers for
//! a key and the offset of the data block that the index points to.
//!
//! ```
//! use std::sync::Arc;
//! use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};
//!
//! let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
//! let mut builder = FilterBlockBuilder::new(Arc::clone(&policy));
//! // Data block 0 at offset 0, holding two keys; data block 1 at offset 4100.
//! builder.start_block(0);
//! builder.add_key(b"apple");
//! builder.add_key(b"banana");
//! builder.start_block(4100);
//! builder.add_key(b"cherry");
//! let block = builder.finish().to_vec();
//! // The metaindex entry that points to this block is named after the policy.
//! assert_eq!(format!("filter.{}", policy.name()), "filter.leveldb.BuiltinBloomFilter2");
//!
//! let reader = FilterBlockReader::new(&*policy, &block);
//! assert!(reader.key_may_match(0, b"apple"));
//! assert!(reader.key_may_match(4100, b"cherry"));
//! // A key that is absent is usually answered `false`, but may be a false
//! // positive: about 1% of them at 10 bits per key.
//! // [2048, 4096) holds no data block: its filter is empty and matches nothing.
//! assert!(!reader.key_may_match(2048, b"apple"));
//! ```
//!
//! # Filters written by older software
//!
//! LevelDB <= 1.17 hashed the key's last one to three bytes as signed `char`s
//! (on x86), and RocksDB's legacy block-based filter still does on every
//! platform; goleveldb hashes them unsigned but keeps the old name. Pick the
//! policy that matches the writer:
//!
//! | writer | policy name | constructor |
//! |---|---|---|
//! | LevelDB >= 1.18 | `leveldb.BuiltinBloomFilter2` | [`BloomFilterPolicy::new`] |
//! | LevelDB <= 1.17 (x86) | `leveldb.BuiltinBloomFilter` | [`BloomFilterPolicy::leveldb_legacy`] |
//! | goleveldb | `leveldb.BuiltinBloomFilter` | [`BloomFilterPolicy::goleveldb`] |
//! | RocksDB, block-based filter | `rocksdb.BuiltinBloomFilter` | [`BloomFilterPolicy::rocksdb_legacy`] |
//!
//! ```
//! use leveldb_filter::{BloomFilterPolicy, FilterPolicy, HashVariant};
//!
//! let old = BloomFilterPolicy::leveldb_legacy(10);
//! assert_eq!(old.name(), "leveldb.BuiltinBloomFilter");
//! assert_eq!(old.hash_variant(), HashVariant::Signed);
//!
//! // Keys without a byte >= 0x80 in their last (len % 4) bytes hash the same
//! // both ways; others do not.
//! let (mut a, mut b) = (Vec::new(), Vec::new());
//! old.create_filter(&[b"key\xff"], &mut a);
//! BloomFilterPolicy::new(10).create_filter(&[b"key\xff"], &mut b);
//! assert_eq!(a, b); // length 4: no tail
//! let (mut a, mut b) = (Vec::new(), Vec::new());
//! old.create_filter(&[b"k\xff"], &mut a);
//! BloomFilterPolicy::new(10).create_filter(&[b"k\xff"], &mut b);
//! assert_ne!(a, b);
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]
// allowed in the kernels alone: `arch/simd/`, `arch/x86_64`, `arch/aarch64`, `arch/portable.rs` (unchecked probe bytes), and `arch/resolved.rs` (pointers to the kernels' functions)
#![deny(unsafe_op_in_unsafe_fn)]

mod arch;
mod bloom;
pub mod db;
mod error;
mod filter_block;
pub mod format;
mod hash;
mod internal_key;
pub mod leveldb;
pub mod pebble;
pub mod rocksdb;
#[cfg(feature = "rusty-leveldb")]
pub mod rusty;
mod table;

use std::sync::Arc;

pub use bloom::{BloomFilter, BloomFilterPolicy, KeyHash};
pub use error::FilterBlockError;
pub use filter_block::{FilterBlock, FilterBlockBuilder, FilterBlockReader};
pub use format::Error;
pub(crate) use hash::hash;
pub use hash::HashVariant;
pub use internal_key::InternalKeyPolicy;
pub use table::{AnyTable, TableFormat};

/// The kernel this process runs Bloom filters on: `"avx512"`, `"avx2"`
/// (x86-64), `"neon"` (aarch64) or `"portable"` (every CPU), decided once
/// from the CPU and the environment variable `LEVELDB_FILTER_KERNEL`
/// (`portable`, `avx2`, `avx512` or `neon` to ask for one, taken only where
/// the CPU has it), for logs and benchmarks. The variable also takes
/// `scalar`, the portable kernel's old name, for older scripts.
/// This is the kernel of batches and of filters of many keys: on Intel's
/// AVX-512 cores, single lookups and filters of few keys take AVX2's, where
/// 512-bit vectors would slow the code around them (unless the variable
/// asks for a kernel). RocksDB's FastLocalBloom filters take the same
/// choice. Every kernel gives the same bytes and answers. (The AVX2 kernel reads a
/// batch's probes by gathers where a timing at start-up finds them faster;
/// `LEVELDB_FILTER_GATHER=yes` or `no` decides instead.)
pub fn kernel() -> &'static str {
    arch::Kernel::detect().name()
}

/// LevelDB's `FilterPolicy`: how a table's filters are made and read.
///
/// The name is stored in the table (metaindex key `filter.<name>`); a reader
/// uses a table's filter only when the names agree. Implementations must be
/// deterministic: the same keys always give the same filter bytes.
pub trait FilterPolicy: Send + Sync {
    /// The name stored in tables. Changing what a policy writes means changing
    /// its name.
    fn name(&self) -> &str;

    /// Appends to `dst` a filter for `keys`, which may hold duplicates, and
    /// leaves what `dst` held before untouched.
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>);

    /// `true` if `key` was in the list given to [`create_filter`](Self::create_filter)
    /// for `filter`; may also be `true` for a key that was not (a false
    /// positive), and must be `true` when `filter` was not made by this policy
    /// and cannot be read. Never panics, whatever the bytes of `filter`.
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool;

    /// [`key_may_match`](Self::key_may_match) for each of `keys` against one
    /// filter, into `out` (which must be as long as `keys`). Policies may
    /// answer many keys faster than one at a time; the answers are the same.
    ///
    /// # Panics
    /// If `out` and `keys` differ in length.
    fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        for (key, answer) in keys.iter().zip(out) {
            *answer = self.key_may_match(key, filter);
        }
    }

    /// This policy as a [`BloomFilterPolicy`], where it makes exactly that
    /// policy's filters from the same keys (`None`, the default, for any
    /// other). A [`FilterBlockBuilder`] then keeps each key's hash rather
    /// than its bytes until its filter is cut. A
    /// wrapper that hands keys on unchanged may forward it; one that changes
    /// keys must not.
    fn as_bloom(&self) -> Option<&BloomFilterPolicy> {
        None
    }

    /// The Bloom policy that hashes keys as this policy's filters hold
    /// them, for lookups by [`KeyHash`]: the policy itself for a Bloom
    /// policy (the default: [`as_bloom`](Self::as_bloom)); the inner one
    /// for an [`InternalKeyPolicy`], whose filters hold user keys, so that
    /// the hash is of the user key; `None` where filters cannot be probed
    /// by a hash. An engine holding `Arc<dyn FilterPolicy>` hashes a key
    /// once through it:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use leveldb_filter::{BloomFilterPolicy, FilterPolicy, InternalKeyPolicy};
    ///
    /// let policy: Arc<dyn FilterPolicy> = Arc::new(InternalKeyPolicy(BloomFilterPolicy::new(10)));
    /// let mut filter = Vec::new();
    /// // The filter of a table holding the internal key of user key "k".
    /// policy.create_filter(&[&b"k\x01\x01\0\0\0\0\0\0"[..]], &mut filter);
    /// let hash = policy.key_hasher().map(|bloom| bloom.key_hash(b"k")).unwrap();
    /// assert!(policy.key_hasher().unwrap().hash_may_match(hash, &filter));
    /// ```
    fn key_hasher(&self) -> Option<&BloomFilterPolicy> {
        self.as_bloom()
    }
}

macro_rules! forward_policy {
    ($($ptr:ty),*) => {$(
        impl<T: FilterPolicy + ?Sized> FilterPolicy for $ptr {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
                (**self).create_filter(keys, dst)
            }
            fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
                (**self).key_may_match(key, filter)
            }
            fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
                (**self).key_may_match_batch(keys, filter, out)
            }
            fn as_bloom(&self) -> Option<&BloomFilterPolicy> {
                (**self).as_bloom()
            }
            fn key_hasher(&self) -> Option<&BloomFilterPolicy> {
                (**self).key_hasher()
            }
        }
    )*};
}

forward_policy!(&T, Box<T>, Arc<T>);

/// The README's examples, compiled and run by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// docs/tables.md's examples, compiled by `cargo test`.
#[cfg(doctest)]
#[doc = include_str!("../docs/tables.md")]
pub struct TablesDoctests;
