//! rusty-leveldb on this crate: a database written through `RustyPolicy`
//! (tens of thousands of keys, flushed and compacted) reads back in full,
//! and every table's filter block verifies as LevelDB's, in the library and
//! through `ldbfilter verify`. (The oracle's differential tests open the
//! same kind of database with LevelDB 1.23 itself.)
#![cfg(feature = "rusty-leveldb")]

use crate::run;

use std::rc::Rc;

use leveldb_filter::rusty::RustyPolicy;
use leveldb_filter::table::Table;
use leveldb_filter::verify::{verify_filter, KeyFormat, Verdict, VerifyOptions};
use leveldb_filter::BloomFilterPolicy;

fn key(i: u32) -> Vec<u8> {
    // Keys of varying lengths, tails with bytes >= 0x80 among them.
    let mut key = format!("user{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes();
    key.extend(std::iter::repeat_n(
        0x80 | (i % 128) as u8,
        (i % 7) as usize,
    ));
    key
}

#[test]
fn a_rusty_database_on_this_crate_verifies_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let keys: Vec<Vec<u8>> = (0..40_000).map(key).collect();
    {
        let options = rusty_leveldb::Options {
            filter_policy: Rc::new(Box::new(RustyPolicy::new(BloomFilterPolicy::new(10)))),
            write_buffer_size: 256 << 10,
            ..Default::default()
        };
        let mut db = rusty_leveldb::DB::open(&path, options).unwrap();
        for (i, k) in keys.iter().enumerate() {
            db.put(k, format!("value{i}").as_bytes()).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(b"", b"\xff\xff\xff\xff").unwrap();
        for k in &keys {
            assert!(db.get(k).is_some(), "{k:02x?}");
        }
        db.close().unwrap();
    }
    let tables: Vec<_> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    assert!(!tables.is_empty(), "the database wrote no table");
    for table in &tables {
        let bytes = std::fs::read(table).unwrap();
        let table_ = Table::new(&bytes).unwrap();
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
    let mut args = vec![std::ffi::OsString::from("verify")];
    args.extend(tables.iter().map(|t| t.clone().into_os_string()));
    let out = run::ldbfilter(&args, "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches(": OK leveldb.BuiltinBloomFilter2").count(),
        tables.len(),
        "{stdout}"
    );
}
