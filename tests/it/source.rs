//! Tables read by block from their file ([`TableFile`]) answer exactly as
//! tables read whole, hold one data block at a time, and turn a file that
//! changes under them into an error.

use std::io::Write;
use std::path::Path;

use leveldb_filter::format::TableFile;
use leveldb_filter::leveldb::{self, KeyFormat, VerifyOptions};
use leveldb_filter::{rocksdb, AnyTable, Error, TableFormat};

use crate::crafted;
use crate::peak::peak_during;
use crate::vectors::{leveldb_dir, leveldb_probes, leveldb_tables, rocksdb_tables_in, testdata};

/// Everything the library says of a LevelDB table: key statistics, the
/// filter's verdict, and the probes of LevelDB's golden keys.
fn leveldb_says(table: &leveldb::Table<'_>, name: &str) -> String {
    let stats = table.key_stats();
    let verdict = stats
        .as_ref()
        .map(|s| leveldb::verify_filter(table, s, VerifyOptions::default()));
    let probes: Vec<_> = leveldb_probes(name)
        .iter()
        .map(|(key, _)| leveldb::probe(table, None, KeyFormat::Internal, key))
        .collect();
    format!("{stats:?} {verdict:?} {probes:?}")
}

#[test]
fn leveldb_tables_read_by_block_answer_as_read_whole() {
    for (name, bytes) in leveldb_tables() {
        let file = TableFile::open(leveldb_dir().join(format!("{name}.ldb"))).unwrap();
        assert_eq!(file.len(), bytes.len() as u64);
        let whole = leveldb::Table::open(&bytes).unwrap();
        let by_block = leveldb::Table::open(&file).unwrap();
        assert_eq!(
            leveldb_says(&by_block, &name),
            leveldb_says(&whole, &name),
            "{name}"
        );
        // Opened again, the file's kept blocks are not read again.
        let kept = file.kept_bytes();
        assert!(kept > 0, "{name}: the index and filter are kept");
        leveldb::Table::open(&file).unwrap();
        assert_eq!(file.kept_bytes(), kept, "{name}");
    }
}

/// Everything the library says of a RocksDB table: its keys, the filters'
/// verdict, and the lookups of RocksDB's golden keys.
fn rocksdb_says(table: &rocksdb::Table<'_>, keys: &[Vec<u8>]) -> String {
    let mut seen = Vec::new();
    let stats = table.for_each_key(|key, _| seen.push(key.to_vec()));
    let verdict = table.check_filter();
    let lookups: Vec<_> = keys
        .iter()
        .map(|key| (table.key_may_match(key), table.lookup(key)))
        .collect();
    format!("{seen:?} {stats:?} {verdict:?} {lookups:?}")
}

#[test]
fn rocksdb_tables_read_by_block_answer_as_read_whole() {
    let mut tables = 0;
    for dir in ["rocksdb", "rocksdb9", "rocksdb11"] {
        let dir = testdata().join(dir);
        for (name, bytes, answers) in rocksdb_tables_in(&dir) {
            let file = TableFile::open(dir.join(format!("{name}.sst"))).unwrap();
            let keys: Vec<Vec<u8>> = answers.into_iter().map(|(key, ..)| key).collect();
            let whole = rocksdb::Table::open(&bytes).unwrap();
            let by_block = rocksdb::Table::open(&file).unwrap();
            assert_eq!(
                rocksdb_says(&by_block, &keys),
                rocksdb_says(&whole, &keys),
                "{name}"
            );
            let format = TableFormat::of(&file).unwrap();
            assert!(matches!(format, TableFormat::RocksDb { .. }), "{name}");
            assert_eq!(TableFormat::of(&bytes).unwrap(), format, "{name}");
            tables += 1;
        }
    }
    assert!(tables >= 30, "the golden RocksDB tables are there");
}

/// A file of `bytes` in a temporary directory.
fn written(dir: &Path, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join("table");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .unwrap();
    path
}

#[test]
fn a_table_read_by_block_holds_one_data_block_at_a_time() {
    // 32 data blocks of 512 KiB (keys of 1 KiB): a 16 MiB file.
    let blocks: Vec<(usize, Vec<Vec<u8>>)> = (0..32u64)
        .map(|b| {
            let keys = crafted::keys(b * 512, 512)
                .into_iter()
                .map(|key| [key, vec![b'v'; 1016]].concat())
                .collect();
            (0, keys)
        })
        .collect();
    let bytes = crafted::table(&blocks, None);
    let dir = tempfile::tempdir().unwrap();
    let path = written(dir.path(), &bytes);
    drop(bytes);

    let (stats, peak) = peak_during(|| {
        let file = TableFile::open(&path).unwrap();
        let table = leveldb::Table::open(&file).unwrap();
        table.key_stats().unwrap()
    });
    assert_eq!((stats.data_blocks, stats.keys), (32, 32 * 512));
    let file_len = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(file_len > 16 << 20);
    // One block (512 KiB), its keys rebuilt one at a time, and the index.
    assert!(
        peak < 2 << 20,
        "{peak} bytes held at once for a file of {file_len}"
    );
}

#[test]
fn a_file_that_shrinks_after_opening_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let leveldb_bytes = std::fs::read(leveldb_dir().join("db-snappy-0.ldb")).unwrap();
    let rocksdb_dir = testdata().join("rocksdb");
    let (name, rocksdb_bytes, _) = rocksdb_tables_in(&rocksdb_dir).remove(0);
    for (bytes, rocks) in [(leveldb_bytes, false), (rocksdb_bytes, true)] {
        let path = written(dir.path(), &bytes);
        let file = TableFile::open(&path).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(bytes.len() as u64 / 2))
            .unwrap();
        let error = match rocks {
            false => leveldb::Table::open(&file).err(),
            true => rocksdb::Table::open(&file).err(),
        };
        let Some(Error::Read { offset, len, what }) = error else {
            panic!("{name}: {error:?}");
        };
        assert!(offset + len > bytes.len() as u64 / 2);
        assert!(what.contains("shorter"), "{what}");
    }
}

/// Both engines' tables, any table and a table file can be shared by
/// threads: an engine opens a table once and reads it from every thread.
#[test]
fn tables_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<leveldb::Table<'static>>();
    shared::<rocksdb::Table<'static>>();
    shared::<AnyTable<'static>>();
    shared::<TableFile>();
}

/// A RocksDB table opened once and read from four threads at once answers
/// every lookup as a table read from one thread does.
#[test]
fn a_rocksdb_table_read_from_threads_answers_as_from_one() {
    let mut tables = 0;
    for dir in ["rocksdb", "rocksdb9", "rocksdb11"] {
        let dir = testdata().join(dir);
        for (name, _, answers) in rocksdb_tables_in(&dir) {
            let keys: Vec<Vec<u8>> = answers.into_iter().map(|(key, ..)| key).collect();
            let file = TableFile::open(dir.join(format!("{name}.sst"))).unwrap();
            let alone = rocksdb::Table::open(&file).unwrap();
            let expected: Vec<_> = keys.iter().map(|key| alone.lookup(key)).collect();
            let table = rocksdb::Table::open(&file).unwrap();
            std::thread::scope(|scope| {
                let threads: Vec<_> = (0..4)
                    .map(|t| {
                        let (table, keys) = (&table, &keys);
                        // Each thread starts at another key.
                        scope.spawn(move || {
                            let n = keys.len();
                            (0..n)
                                .map(|i| (i + t * n / 4) % n)
                                .map(|i| (i, table.lookup(&keys[i])))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                for thread in threads {
                    for (i, lookup) in thread.join().unwrap() {
                        assert_eq!(lookup, expected[i], "{name}: key {i}");
                    }
                }
            });
            tables += 1;
        }
    }
    assert!(tables >= 30, "the golden RocksDB tables are there");
}
