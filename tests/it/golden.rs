//! The golden vectors in `testdata/vectors/`, made by LevelDB 1.23 itself
//! (`gen-vectors` in `oracle/leveldb-1.23/`), read back through the library: every filter
//! and block byte for byte, every answer as LevelDB gave it. No LevelDB needed.

use crate::vectors;

use std::path::Path;

use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};
use vectors::{read_cases, unhex, Case};

/// The checksum lists' (`CHECKSUMS`) CRC-32 (IEEE, an integrity check of
/// the files, not LevelDB's CRC-32C) and size of each golden file: a file
/// mangled in transit fails here.
#[test]
fn manifests_match_files() {
    for dir in [
        "vectors",
        "tables",
        "rocksdb",
        "rocksdb/crafted",
        "rocksdb9",
        "rocksdb11",
        "pebble",
        "damaged",
        "db",
        "deployed",
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(dir);
        let manifest = std::fs::read_to_string(dir.join("CHECKSUMS")).unwrap();
        let mut checked = 0;
        for line in manifest.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split(' ').collect();
            let bytes = std::fs::read(dir.join(fields[2])).unwrap();
            assert_eq!(
                format!("{:08x}", crc32fast::hash(&bytes)),
                fields[0],
                "{} crc32",
                fields[2]
            );
            assert_eq!(bytes.len().to_string(), fields[1], "{} size", fields[2]);
            checked += 1;
        }
        // Every golden file is in the checksum list (in `db/`, every file of
        // each database directory).
        let files = match dir.ends_with("db") || dir.ends_with("deployed") {
            true => files_under(&dir) - 2,
            false => std::fs::read_dir(&dir)
                .unwrap()
                .filter(|e| {
                    let name = e.as_ref().unwrap().file_name().into_string().unwrap();
                    [".vec", ".ldb", ".probe", ".sst", ".answers", ".json"]
                        .iter()
                        .any(|x| name.ends_with(x))
                })
                .count(),
        };
        assert_eq!(checked, files, "{}", dir.display());
    }
}

/// The files under `dir`, in every directory below it.
fn files_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

#[test]
fn bloom_filters_and_answers() {
    let cases = read_cases("bloom.vec");
    assert!(cases.len() >= 150);
    for case in &cases {
        let policy = BloomFilterPolicy::new(case.bits_per_key());
        let keys = case.hex_lines("keys");
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut filter = Vec::new();
        policy.create_filter(&slices, &mut filter);
        assert_eq!(
            Some(&filter),
            case.single_hex("filter").as_ref(),
            "{}",
            case.name
        );
        probe_bloom(case, &policy, &filter);
    }
}

/// LevelDB's answers for the case's probes, one at a time and in a batch.
fn probe_bloom(case: &Case, policy: &BloomFilterPolicy, filter: &[u8]) {
    let probes = case.hex_lines("probes");
    let answers: Vec<bool> = probes
        .iter()
        .map(|p| policy.key_may_match(p, filter))
        .collect();
    assert_eq!(answers, case.answers(), "{}", case.name);
    let refs: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
    let mut batch = vec![false; refs.len()];
    policy.key_may_match_batch(&refs, filter, &mut batch);
    assert_eq!(batch, case.answers(), "{} (batch)", case.name);
}

#[test]
fn malformed_bloom_answers() {
    let cases = read_cases("bloom-malformed.vec");
    assert!(cases.len() >= 1000);
    let policy = BloomFilterPolicy::new(10);
    for case in &cases {
        probe_bloom(case, &policy, &case.single_hex("filter").unwrap());
    }
}

fn probe_block(case: &Case, block: &[u8]) {
    let reader = FilterBlockReader::new(BloomFilterPolicy::new(10), block);
    let answers: Vec<bool> = case
        .section("probes")
        .unwrap()
        .iter()
        .map(|line| {
            let (offset, key) = line.split_once(' ').unwrap();
            reader.key_may_match(offset.parse().unwrap(), &unhex(key))
        })
        .collect();
    assert_eq!(answers, case.answers(), "{}", case.name);
}

#[test]
fn filter_blocks_and_answers() {
    let cases = read_cases("block.vec");
    assert!(cases.len() >= 50);
    for case in &cases {
        let mut builder = FilterBlockBuilder::new(BloomFilterPolicy::new(case.bits_per_key()));
        for call in case.section("calls").unwrap() {
            match call.split_once(' ').unwrap() {
                ("start", offset) => builder.start_block(offset.parse().unwrap()),
                ("key", key) => builder.add_key(&unhex(key)),
                other => panic!("{}: bad call {other:?}", case.name),
            }
        }
        assert_eq!(
            Some(builder.finish()),
            case.single_hex("block").as_deref(),
            "{}",
            case.name
        );
        probe_block(case, builder.finish());
    }
}

#[test]
fn malformed_block_answers() {
    let cases = read_cases("block-malformed.vec");
    assert!(cases.len() >= 1000);
    for case in &cases {
        probe_block(case, &case.single_hex("block").unwrap());
    }
}
