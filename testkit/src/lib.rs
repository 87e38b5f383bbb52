//! What the tests of `leveldb-filter` share, in one place: the library's
//! integration tests, the command line's, the oracle's differential tests,
//! the benches and the fuzz targets depend on it (none publishes it).
//!
//! - [`vectors`]: the golden files of `testdata/`, read;
//! - [`crafted`]: LevelDB tables written byte by byte, and RocksDB tables
//!   crafted from golden ones ([`crafted::rocksdb`]; `craft-rocksdb`, its
//!   binary, writes them with RocksDB's answers beside);
//! - [`arbitrary`] and [`seed`]: quickcheck generators, drawn from a fixed
//!   seed;
//! - [`reference`](mod@reference): a naive Bloom filter and filter block, the property
//!   tests' reference;
//! - [`peak`]: an allocator that counts what each thread holds at its peak;
//! - [`rusty_database`]: a database rusty-leveldb writes through a filter
//!   policy (the library's `RustyPolicy`).

pub mod arbitrary;
pub mod crafted;
pub mod peak;
pub mod reference;
pub mod rusty_database;
// The library's own unit tests draw from it too, and the published package
// holds `src/` alone: the file stays there, and is shared from there.
#[path = "../../src/arch/seed.rs"]
pub mod seed;
pub mod vectors;
