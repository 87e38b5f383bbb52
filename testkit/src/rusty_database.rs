//! A database written by rusty-leveldb through `RustyPolicy`: tens of
//! thousands of keys, flushed and compacted, each read back. Shared by the
//! library's tests and the command line's.

use std::path::{Path, PathBuf};
use std::rc::Rc;

fn key(i: u32) -> Vec<u8> {
    // Keys of varying lengths, tails with bytes >= 0x80 among them.
    let mut key = format!("user{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000).into_bytes();
    key.extend(std::iter::repeat_n(
        0x80 | (i % 128) as u8,
        (i % 7) as usize,
    ));
    key
}

/// Writes the database in `dir` with the filter `policy` (this crate's
/// `RustyPolicy`, which the caller builds: the library's feature
/// `rusty-leveldb`), reads every key back, and returns its table files.
pub fn write(dir: &Path, policy: impl rusty_leveldb::FilterPolicy + 'static) -> Vec<PathBuf> {
    let path = dir.join("db");
    let keys: Vec<Vec<u8>> = (0..40_000).map(key).collect();
    {
        let options = rusty_leveldb::Options {
            filter_policy: Rc::new(Box::new(policy)),
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
    tables
}
