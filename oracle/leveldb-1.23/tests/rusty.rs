//! rusty-leveldb on this crate, read by LevelDB 1.23: a database that
//! rusty-leveldb writes through `RustyPolicy` (tens of thousands of keys,
//! flushed and compacted into tables with this crate's filters) opens in
//! the real LevelDB, which finds every key, its filters consulted.

use std::rc::Rc;

use leveldb_filter::rusty::RustyPolicy;
use leveldb_filter::BloomFilterPolicy;

#[test]
fn leveldb_reads_a_database_rusty_leveldb_wrote_through_this_crate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..30_000u32)
        .map(|i| {
            let mut key =
                format!("k{:07}", i.wrapping_mul(2_654_435_761) % 10_000_000).into_bytes();
            key.extend(std::iter::repeat_n(
                0x80 | (i % 128) as u8,
                (i % 5) as usize,
            ));
            (key, format!("v{i}").into_bytes())
        })
        .collect();
    {
        let options = rusty_leveldb::Options {
            filter_policy: Rc::new(Box::new(RustyPolicy::new(BloomFilterPolicy::new(10)))),
            write_buffer_size: 256 << 10,
            ..Default::default()
        };
        let mut db = rusty_leveldb::DB::open(&path, options).unwrap();
        for (k, v) in &entries {
            db.put(k, v).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(b"", b"\xff\xff\xff\xff").unwrap();
        db.close().unwrap();
    }
    let tables = std::fs::read_dir(&path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "ldb")
        })
        .count();
    assert!(tables > 0);
    let found = leveldb_filter_oracle::db_count_found(&path, 10, &entries).unwrap();
    assert_eq!(
        found,
        entries.len(),
        "LevelDB found {found} of {} keys",
        entries.len()
    );
    // Keys never written are not found.
    let absent: Vec<(Vec<u8>, Vec<u8>)> = (0..1000u32)
        .map(|i| (format!("absent{i}").into_bytes(), Vec::new()))
        .collect();
    assert_eq!(
        leveldb_filter_oracle::db_count_found(&path, 10, &absent).unwrap(),
        0
    );
}
