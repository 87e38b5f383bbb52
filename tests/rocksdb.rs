//! RocksDB's SST filters against RocksDB 7.8 itself: the tables in
//! testdata/rocksdb/ were written by RocksDB (oracle/rocksdb/gen-rocksdb.cc),
//! and beside each is RocksDB's own decision for every key, written and
//! unwritten (its `Get`, and the `BLOOM_FILTER_USEFUL` ticker). Also its
//! 64-bit key hash on inputs of every length. `ROCKSDB_TABLES=DIR` reads
//! another such directory (CI makes a fresh one from another seed).

use std::path::PathBuf;

mod vectors;
use vectors::unhex;

use leveldb_filter::rocksdb::{
    ChecksumType, FastLocalBloomBuilder, FilterBits, FilterCheck, LegacyBloomBuilder, SstFile,
    SstFilter, TableCheck,
};
use leveldb_filter::Error;

fn dir() -> PathBuf {
    std::env::var_os("ROCKSDB_TABLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/rocksdb"))
}

/// A key, whether the table holds it, and whether RocksDB's filter may match it.
type Answer = (Vec<u8>, bool, bool);

/// Each table's name and bytes, and its keys with RocksDB's answers.
fn tables() -> Vec<(String, Vec<u8>, Vec<Answer>)> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("the RocksDB tables")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    names.sort();
    for path in names {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).expect("table");
        let answers = std::fs::read_to_string(path.with_extension("answers")).expect("answers");
        let keys = answers
            .lines()
            .map(|line| {
                let mut words = line.split(' ');
                let key = unhex(words.next().expect("key"));
                let written = words.next() == Some("written");
                let may_match = words.next() == Some("may-match");
                (key, written, may_match)
            })
            .collect();
        out.push((name, bytes, keys));
    }
    assert!(out.len() >= 10, "the golden RocksDB tables are missing");
    out
}

#[test]
fn every_key_answers_as_rocksdb() {
    let mut kinds = std::collections::BTreeSet::new();
    for (name, bytes, keys) in tables() {
        let sst = SstFile::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let filter = sst.filter().unwrap_or_else(|e| panic!("{name}: {e}"));
        let kind = match filter {
            Some(SstFilter::Full(bits)) => format!("full {}", bits_kind(bits)),
            Some(SstFilter::Partitioned(p)) => {
                let first = p.partition(0).expect("a partition");
                format!("partitioned {}", bits_kind(first.expect("readable")))
            }
            other => panic!("{name}: filter {other:?}"),
        };
        kinds.insert(kind.clone());
        let (mut absent, mut wrong) = (0, Vec::new());
        for (key, written, may_match) in &keys {
            assert!(
                !written || *may_match,
                "{name}: RocksDB ruled out a written key"
            );
            let ours = sst.key_may_match(key);
            absent += usize::from(!ours);
            if ours != *may_match {
                wrong.push(key.clone());
            }
        }
        assert!(
            wrong.is_empty(),
            "{name} ({kind}): {} of {} keys differ from RocksDB",
            wrong.len(),
            keys.len()
        );
        assert!(
            absent > keys.len() / 4,
            "{name}: the filter ruled out too few keys to test"
        );
    }
    for want in [
        "full LegacyBloom",
        "full FastLocalBloom",
        "full Ribbon",
        "partitioned LegacyBloom",
        "partitioned FastLocalBloom",
        "partitioned Ribbon",
    ] {
        assert!(
            kinds.contains(want),
            "no golden table has a {want} filter: {kinds:?}"
        );
    }
}

fn bits_kind(bits: &FilterBits) -> &'static str {
    match bits {
        FilterBits::LegacyBloom { .. } => "LegacyBloom",
        FilterBits::FastLocalBloom { .. } => "FastLocalBloom",
        FilterBits::Ribbon { .. } => "Ribbon",
        _ => "other",
    }
}

#[test]
fn footers_name_each_checksum_type_and_format_version() {
    for (name, bytes, _) in tables() {
        let footer = *SstFile::open(&bytes).expect("opens").footer();
        let want = if name.contains("crc32c") {
            ChecksumType::Crc32c
        } else if name.contains("xxhash64") {
            ChecksumType::XxHash64
        } else if name.contains("xxhash") {
            ChecksumType::XxHash32
        } else if name.contains("none") {
            ChecksumType::None
        } else {
            ChecksumType::Xxh3
        };
        assert_eq!(footer.checksum, want, "{name}");
        let fv: u32 = name
            .split("-fv")
            .nth(1)
            .and_then(|s| s[..1].parse().ok())
            .expect("fvN in the name");
        assert_eq!(footer.format_version, fv, "{name}");
    }
}

/// A flipped byte in a meta block is a checksum mismatch naming the block
/// and its offset, for every checksum type; in the filter block it leaves
/// the table readable and the filter unread (RocksDB then reads without it).
#[test]
fn damaged_blocks_fail_their_checksums() {
    for (name, bytes, keys) in tables() {
        let sst = SstFile::open(&bytes).expect("opens");
        if sst.footer().checksum == ChecksumType::None {
            continue;
        }
        let meta = sst.footer().metaindex;
        let mut bad = bytes.clone();
        bad[meta.offset as usize] ^= 1;
        match SstFile::open(&bad) {
            Err(Error::ChecksumMismatch { offset, .. }) => {
                assert_eq!(offset, meta.offset, "{name}")
            }
            other => panic!("{name}: {other:?}"),
        }
        if let Ok(Some(SstFilter::Full(
            FilterBits::FastLocalBloom { data, .. }
            | FilterBits::LegacyBloom { data, .. }
            | FilterBits::Ribbon { data, .. },
        ))) = sst.filter()
        {
            let at = data.as_ptr() as usize - bytes.as_ptr() as usize;
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            let damaged = SstFile::open(&bad).expect("a bad filter leaves the table readable");
            assert!(
                matches!(damaged.filter(), Err(Error::ChecksumMismatch { .. })),
                "{name}"
            );
            assert!(
                keys.iter().all(|(k, _, _)| damaged.key_may_match(k)),
                "{name}"
            );
        }
    }
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let (_, bytes, _) = tables().remove(0);
    for len in (0..bytes.len()).rev().step_by(97).chain(0..60) {
        let _ = SstFile::open(&bytes[..len]).map(|sst| sst.key_may_match(b"key"));
    }
}

#[test]
fn hash64_is_rocksdbs_on_every_length() {
    let vec = std::fs::read_to_string(dir().join("hash64.vec")).expect("hash64.vec");
    let mut lengths = 0;
    for line in vec.lines() {
        let (input, want) = line.split_once(' ').expect("two fields");
        let input = unhex(input);
        let want = u64::from_str_radix(want, 16).expect("hex");
        assert_eq!(
            leveldb_filter::rocksdb::hash64(&input),
            want,
            "length {}",
            input.len()
        );
        lengths += 1;
    }
    assert!(lengths > 300);
}

/// Bits per key the oracle wrote a table with, from its name (`bpk6.5`),
/// else its filter's default (10; 8 for `ribbon-fv5-xxhash`).
fn bits_per_key(name: &str) -> f64 {
    if let Some(rest) = name.split('-').find_map(|part| part.strip_prefix("bpk")) {
        return rest.parse().expect("bits per key");
    }
    10.0
}

/// Every filter of every table rebuilds from the table's keys (Bloom) or
/// matches every key (Ribbon); the keys walked are the keys RocksDB wrote.
#[test]
fn every_filter_checks_against_the_tables_keys() {
    for (name, bytes, keys) in tables() {
        let sst = SstFile::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut walked = Vec::new();
        let walk = sst
            .for_each_key(|key, _| walked.push(key.to_vec()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let written: Vec<Vec<u8>> = keys.iter().filter(|k| k.1).map(|k| k.0.clone()).collect();
        assert_eq!(walked, written, "{name}: the keys walked");
        assert_eq!(walk.keys as usize, written.len(), "{name}");
        let check = sst.check_filter().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(check.ok(), "{name}: {check:?}");
        let TableCheck::Filters(filters) = &check else {
            panic!("{name}: not checked: {check:?}")
        };
        // Each key in one filter; with a prefix extractor, its prefix too.
        let keys_in_filters: u64 = filters.iter().map(|f| f.keys).sum();
        let prefixes = match sst.prefix_extractor() {
            Some(_) => keys_in_filters as usize - written.len(),
            None => 0,
        };
        assert_eq!(keys_in_filters as usize, written.len() + prefixes, "{name}: keys per filter");
        if name.contains("prefix") {
            assert!(prefixes > 0 && prefixes < written.len(), "{name}: {prefixes} prefixes");
        }
        for f in filters {
            // (A Ribbon policy makes small filters FastLocalBloom.)
            match (&f.check, name.starts_with("ribbon")) {
                (FilterCheck::EveryKeyMatches, true) => {}
                (FilterCheck::Built { bits_per_key: (lo, hi) }, _) => {
                    let bpk = bits_per_key(&name);
                    assert!(*lo <= bpk && bpk <= *hi, "{name}: {bpk} not in {lo}..={hi}");
                }
                (check, _) => panic!("{name}: filter {}: {check:?}", f.index),
            }
        }
    }
}

/// RocksDB's builders, given the table's keys and the bits per key the
/// oracle used, make the table's full filter byte for byte.
#[test]
fn builders_make_rocksdbs_bytes() {
    let mut built = 0;
    for (name, bytes, keys) in tables() {
        let sst = SstFile::open(&bytes).unwrap();
        let Ok(Some(SstFilter::Full(bits))) = sst.filter() else {
            continue;
        };
        if sst.prefix_extractor().is_some() {
            continue; // its filter holds prefixes too: checked above
        }
        let written: Vec<&[u8]> = keys.iter().filter(|k| k.1).map(|k| k.0.as_slice()).collect();
        let bpk = bits_per_key(&name);
        let filter = match bits {
            FilterBits::FastLocalBloom { .. } => FastLocalBloomBuilder::new(bpk).build(written),
            FilterBits::LegacyBloom { .. } => LegacyBloomBuilder::new(bpk).build(written),
            _ => continue,
        };
        // The stored payload's bit array and its metadata, as parsed: equal
        // parses of payloads of equal length are equal bytes.
        let (FilterBits::FastLocalBloom { data, .. } | FilterBits::LegacyBloom { data, .. }) = bits
        else {
            unreachable!()
        };
        assert_eq!(filter.len(), data.len() + 5, "{name}: size");
        assert!(FilterBits::parse(&filter) == *bits, "{name}: bytes differ");
        built += 1;
    }
    assert!(built >= 4, "too few full Bloom filters among the golden tables");
}
