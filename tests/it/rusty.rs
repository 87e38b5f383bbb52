//! rusty-leveldb on this crate: a database written through `RustyPolicy`
//! (tens of thousands of keys, flushed and compacted) reads back in full,
//! and every table's filter block verifies as LevelDB's, in the library
//! (and through `ldbfilter verify` in the command line's tests). (The
//! oracle's differential tests open the same kind of database with LevelDB
//! 1.23 itself.)
#![cfg(feature = "rusty-leveldb")]

use leveldb_filter_testkit::rusty_database as database;

use leveldb_filter::leveldb::Table;
use leveldb_filter::leveldb::{verify_filter, KeyFormat, Verdict, VerifyOptions};
use leveldb_filter::rusty::RustyPolicy;
use leveldb_filter::BloomFilterPolicy;

#[test]
fn a_rusty_database_on_this_crate_verifies_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let policy = RustyPolicy::new(BloomFilterPolicy::new(10));
    let tables = database::write(dir.path(), policy);
    for table in &tables {
        let bytes = std::fs::read(table).unwrap();
        let table_ = Table::open(&bytes).unwrap();
        let stats = table_.key_stats().unwrap();
        match verify_filter(&table_, &stats, VerifyOptions::default()).unwrap() {
            Verdict::Match {
                name, key_format, ..
            } => {
                assert_eq!(name, "leveldb.BuiltinBloomFilter2");
                assert_eq!(key_format, KeyFormat::Internal);
            }
            other => panic!("{}: {other:?}", table.display()),
        }
    }
}
