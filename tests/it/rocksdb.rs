//! RocksDB's SST filters against RocksDB 7.8 itself: the tables in
//! testdata/rocksdb/ were written by RocksDB (oracle/rocksdb-7.8/gen-rocksdb.cc),
//! and beside each is RocksDB's own decision for every key, written and
//! unwritten (its `Get`, and the `BLOOM_FILTER_USEFUL` ticker). Also its
//! 64-bit key hash on inputs of every length. `ROCKSDB_TABLES=DIR` reads
//! another such directory (CI makes a fresh one from another seed).

use std::path::PathBuf;

use crate::vectors;
use vectors::{rocksdb_dir, rocksdb_tables, rocksdb_tables_in, unhex, Answer};

use leveldb_filter::format::{BlockKind, Compression, Corruption, FooterProblem};
use leveldb_filter::rocksdb::{
    ChecksumType, FastLocalBloomBuilder, FilterBits, FilterCheck, LegacyBloomBuilder,
    RibbonBuilder, SstFilter, Table, Verdict,
};
use leveldb_filter::Error;

#[test]
fn every_key_answers_as_rocksdb() {
    let mut kinds = std::collections::BTreeSet::new();
    for (name, bytes, keys) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let filter = sst.filter().unwrap_or_else(|e| panic!("{name}: {e}"));
        let kind = match filter {
            Some(SstFilter::Full(bits)) => format!("full {}", bits_kind(bits)),
            Some(SstFilter::Partitioned(p)) => {
                let first = p.filters().into_iter().next().expect("a partition").1;
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

/// The checksum type a golden table is named for (XXH3 where none is named).
fn checksum_named(name: &str) -> ChecksumType {
    if name.contains("crc32c") {
        ChecksumType::Crc32c
    } else if name.contains("xxhash64") {
        ChecksumType::XxHash64
    } else if name.contains("xxhash") {
        ChecksumType::XxHash32
    } else if name.contains("none") {
        ChecksumType::None
    } else {
        ChecksumType::Xxh3
    }
}

#[test]
fn footers_name_each_checksum_type_and_format_version() {
    for (name, bytes, _) in rocksdb_tables() {
        let footer = *Table::open(&bytes).expect("opens").footer();
        assert_eq!(footer.checksum, checksum_named(&name), "{name}");
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
    for (name, bytes, keys) in rocksdb_tables() {
        let sst = Table::open(&bytes).expect("opens");
        if sst.footer().checksum == ChecksumType::None {
            continue;
        }
        let meta = sst.footer().metaindex;
        let mut bad = bytes.clone();
        bad[meta.offset as usize] ^= 1;
        match Table::open(&bad) {
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
            let damaged = Table::open(&bad).expect("a bad filter leaves the table readable");
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

/// A file cut short has no footer: the error says so. A file whose body
/// is cut, its footer kept, fails to open or to walk its keys: an error,
/// never a panic.
#[test]
fn truncations_through_the_footer_and_the_body_are_errors() {
    let (name, bytes, _) = rocksdb_tables().remove(0);
    // format_version 1 to 5: a 53-byte footer. Every length through the
    // footer, and every 97th byte of the body, footer kept.
    let footer_at = bytes.len() - 53;
    for len in (0..bytes.len())
        .rev()
        .step_by(97)
        .chain(0..60)
        .chain(footer_at..bytes.len())
    {
        match Table::open(&bytes[..len]) {
            Err(Error::TruncatedFooter { len: got, .. }) => assert_eq!(got, len as u64),
            Err(Error::BadMagic { .. }) => {}
            other => panic!("{name} cut to {len}: {:?}", other.map(|_| "opens")),
        }
        if len < footer_at {
            let mut cut = bytes[..len].to_vec();
            cut.extend_from_slice(&bytes[footer_at..]);
            let walked = Table::open(&cut).and_then(|sst| sst.for_each_key(|_, _| {}));
            assert!(walked.is_err(), "{name}: body cut to {len} reads");
        }
    }
}

#[test]
fn hash64_is_rocksdbs_on_every_length() {
    let vec = std::fs::read_to_string(rocksdb_dir().join("hash64.vec")).expect("hash64.vec");
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
    // The one table gen-rocksdb.cc writes at 8 (README.md beside them).
    match name {
        "ribbon-fv5-xxhash" => 8.0,
        _ => 10.0,
    }
}

/// Every filter of every table (Bloom and Ribbon) rebuilds from the table's
/// keys at the bits per key it was written with; the keys walked are the
/// keys RocksDB wrote.
#[test]
fn every_filter_checks_against_the_tables_keys() {
    for (name, bytes, keys) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut walked = Vec::new();
        let walk = sst
            .for_each_key(|key, _| walked.push(key.to_vec()))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let written: Vec<Vec<u8>> = keys.iter().filter(|k| k.1).map(|k| k.0.clone()).collect();
        assert_eq!(walked, written, "{name}: the keys walked");
        assert_eq!(walk.keys as usize, written.len(), "{name}");
        let check = sst.check_filter().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(check.ok(), "{name}: {check:?}");
        let Verdict::Filters(filters) = &check else {
            panic!("{name}: not checked: {check:?}")
        };
        // Each key in one filter; with a prefix extractor, its prefix too.
        let keys_in_filters: u64 = filters.iter().map(|f| f.keys).sum();
        let prefixes = match sst.prefix_extractor() {
            Some(_) => keys_in_filters as usize - written.len(),
            None => 0,
        };
        assert_eq!(
            keys_in_filters as usize,
            written.len() + prefixes,
            "{name}: keys per filter"
        );
        if name.contains("prefix") {
            assert!(
                prefixes > 0 && prefixes < written.len(),
                "{name}: {prefixes} prefixes"
            );
        }
        for f in filters {
            match &f.check {
                FilterCheck::Built {
                    bits_per_key: (lo, hi),
                } => {
                    // LegacyBloom takes whole bits per key, as RocksDB rounds.
                    let bpk = match name.starts_with("legacybloom") {
                        true => {
                            f64::from(LegacyBloomBuilder::new(bits_per_key(&name)).bits_per_key())
                        }
                        false => bits_per_key(&name),
                    };
                    assert!(*lo <= bpk && bpk <= *hi, "{name}: {bpk} not in {lo}..={hi}");
                }
                check => panic!("{name}: filter {}: {check:?}", f.index),
            }
        }
    }
}

/// The false-positive rate measured on a table's neighbours, counted again
/// the plain way: each distinct key's neighbour (its last byte one
/// higher) that the table does not hold and that lies below its last key
/// (a `Get` past it does not ask), each probed on its own.
#[test]
fn measured_fpr_counts_neighbours_inside_the_key_range() {
    let mut measured_some = 0;
    for (name, bytes, _) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut keys = std::collections::BTreeSet::new();
        sst.for_each_key(|key, _| {
            keys.insert(key.to_vec());
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let m = sst.measure_fpr().unwrap_or_else(|e| panic!("{name}: {e}"));
        let last = keys.last().cloned().unwrap_or_default();
        let (mut probed, mut passed) = (0, 0);
        for key in &keys {
            let Some((&end, rest)) = key.split_last().filter(|(&end, _)| end < 0xff) else {
                continue;
            };
            let neighbour = [rest, &[end + 1]].concat();
            if keys.contains(&neighbour) || neighbour > last {
                continue;
            }
            probed += 1;
            passed += u64::from(sst.key_may_match(&neighbour));
        }
        assert_eq!((m.probed, m.passed), (probed, passed), "{name}");
        measured_some += usize::from(probed > 0);
    }
    assert!(
        measured_some >= 10,
        "{measured_some} tables with neighbours"
    );
}

/// RocksDB's builders, given the table's keys and the bits per key the
/// oracle used, make the table's full filter byte for byte.
#[test]
fn builders_make_rocksdbs_bytes() {
    let mut built = 0;
    for (name, bytes, keys) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap();
        let Ok(Some(SstFilter::Full(bits))) = sst.filter() else {
            continue;
        };
        if sst.prefix_extractor().is_some() {
            continue; // its filter holds prefixes too: checked above
        }
        let written: Vec<&[u8]> = keys
            .iter()
            .filter(|k| k.1)
            .map(|k| k.0.as_slice())
            .collect();
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
    assert!(
        built >= 4,
        "too few full Bloom filters among the golden tables"
    );
}

/// The index points every written key to the data block that holds it, and
/// an unwritten one to the block of the written key before or after it
/// (index keys are separators between blocks, not their last keys).
#[test]
fn the_index_finds_each_keys_data_block() {
    for (name, bytes, keys) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap();
        let mut block_of = Vec::new();
        sst.for_each_key(|key, offset| block_of.push((key.to_vec(), offset)))
            .unwrap();
        for (key, written, _) in &keys {
            let at = block_of.partition_point(|(k, _)| k < key);
            let got = sst.data_block_for(key).unwrap().map(|h| h.offset);
            let after = block_of.get(at).map(|&(_, offset)| offset);
            if *written {
                assert_eq!(got, after, "{name}: written key {key:?}");
            } else {
                let before = at.checked_sub(1).map(|i| block_of[i].1);
                assert!(
                    got.is_some() && (got == after || got == before),
                    "{name}: key {key:?} in {got:?}, between {before:?} and {after:?}"
                );
            }
        }
        let past = [keys.last().unwrap().0.as_slice(), b"\xff"].concat();
        assert_eq!(sst.data_block_for(&past).unwrap(), None, "{name}");
    }
}

/// A table with one data block's bytes changed and its checksum made to
/// match again, so that what fails is the codec's own check or the block's
/// parse: an error naming the data block, never a panic.
fn with_refreshed_checksum(bytes: &[u8], sst: &Table<'_>, at: usize, change: u8) -> Vec<u8> {
    let block = sst
        .data_block_for(b"")
        .unwrap()
        .expect("a first data block");
    let (start, size) = (block.offset as usize, block.size as usize);
    let mut bad = bytes.to_vec();
    bad[start + at] = change;
    let trailer = start + size;
    if let Some(sum) = sst
        .footer()
        .checksum
        .checksum(&bad[start..trailer], bad[trailer])
    {
        bad[trailer + 1..trailer + 5].copy_from_slice(&sum.to_le_bytes());
    }
    bad
}

#[test]
fn damaged_compressed_blocks_are_errors_not_panics() {
    let mut errors = 0;
    for (name, bytes, _) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap();
        let walk = sst.for_each_key(|_, _| ()).unwrap();
        if walk.compressions.iter().all(|c| *c == Compression::None) {
            continue;
        }
        let block = sst.data_block_for(b"").unwrap().unwrap();
        // Every byte of the first data block set to 0 and to 0xff in turn.
        for at in 0..block.size as usize {
            for change in [0, 0xff] {
                let bad = with_refreshed_checksum(&bytes, &sst, at, change);
                let bad = Table::open(&bad).unwrap();
                if let Err(e) = bad.for_each_key(|_, _| ()) {
                    assert_eq!(
                        e.block(),
                        Some((BlockKind::Data, block.offset)),
                        "{name}: {e}"
                    );
                    errors += 1;
                }
                let _ = bad.check_filter();
            }
        }
        // A stated size one larger than the data gives (format_version >= 2
        // puts a varint32 size before all but Snappy's bytes), where the
        // first block is stored compressed.
        let compressed = bytes[(block.offset + block.size) as usize] != 0;
        if sst.footer().format_version >= 2 && !name.contains("snappy") && compressed {
            let first = bytes[block.offset as usize];
            if first < 0x7f {
                let bad = with_refreshed_checksum(&bytes, &sst, 0, first + 1);
                let e = Table::open(&bad)
                    .unwrap()
                    .for_each_key(|_, _| ())
                    .unwrap_err();
                let stated = [
                    Corruption::PastStatedSize,
                    Corruption::ShortOfStatedSize,
                    Corruption::Lz4DataShort,
                ];
                assert!(
                    e.corruption().is_some_and(|c| stated.contains(&c)),
                    "{name}: {e}"
                );
            }
        }
    }
    assert!(errors > 100, "only {errors} damaged blocks were errors");
}

/// RocksDB's `FullBloomTest` helpers (util/bloom_test.cc, 7.8): a payload of
/// `len` bytes and 5 of metadata (`probes` as a byte, `lines` as a fixed32),
/// cut from the end of a 3,000-byte buffer filled with `fill`.
fn raw_filter(len: usize, lines: u32, probes: u8, fill: impl Fn(usize) -> u8) -> Vec<u8> {
    let mut buffer: Vec<u8> = (0..3000).map(fill).collect();
    buffer[2995] = probes;
    buffer[2996..].copy_from_slice(&lines.to_le_bytes());
    buffer[3000 - 5 - len..].to_vec()
}

/// `ResetWeirdFill`: byte i of the buffer is `0x7b7b >> (i % 7)`, as a char.
fn weird(len: usize, lines: u32, probes: u8) -> Vec<u8> {
    raw_filter(len, lines, probes, |i| (0x7b7b_u32 >> (i % 7)) as u8)
}

/// `PackedMatches`: bit i says whether key `i + 12345` (a fixed32) matches.
fn packed_matches(filter: &[u8]) -> u64 {
    let bits = FilterBits::parse(filter);
    (0..64u32)
        .filter(|&i| bits.may_match(&(i + 12345).to_le_bytes()))
        .fold(0, |packed, i| packed | 1 << i)
}

/// `FullBloomTest.RawSchema`: the values RocksDB's own test pins for its
/// readers on hand-filled filters of each implementation.
#[test]
fn rocksdbs_raw_schema_values() {
    // LegacyBloom: two probes, lines of 256, 128 and 64 bytes.
    assert_eq!(packed_matches(&weird(256, 1, 2)), 11384799501900898790);
    assert_eq!(packed_matches(&weird(256, 2, 2)), 10157853359773492589);
    assert_eq!(packed_matches(&weird(256, 4, 2)), 7123594913907464682);
    // FastLocalBloom (marker 255): two probes, four 64-byte blocks.
    assert_eq!(
        packed_matches(&weird(256, 2 << 8, 255)),
        9957045189927952471
    );
    // Ribbon (marker 254): two blocks, seed 0; one column, then three to four.
    assert_eq!(packed_matches(&weird(32, 2 << 8, 254)), 6193930559317665002);
    assert_eq!(packed_matches(&weird(112, 2 << 8, 254)), 9007200345328128);
}

/// `FullBloomTest.CorruptFilters`: which metadata RocksDB reads, and what it
/// answers for what it does not.
#[test]
fn rocksdbs_corrupt_filter_expectations() {
    let matches = |filter: &[u8]| {
        let bits = FilterBits::parse(filter);
        [bits.may_match(b"hello"), bits.may_match(b"world")]
    };
    for fill in [false, true] {
        let raw = |len, lines, probes| raw_filter(len, lines, probes, |_| [0, 0xff][fill as usize]);
        // Good LegacyBloom filters answer as their bits: all set or none.
        for (len, lines, probes) in [
            (64, 1, 6),
            (192, 3, 6),
            (768, 3, 6),
            (64, 1, 30),
            (64, 1, 1),
        ] {
            assert_eq!(
                matches(&raw(len, lines, probes)),
                [fill; 2],
                "{len} {lines} {probes}"
            );
        }
        // Probes 31 and 127: read, "dubious".
        for probes in [31, 127] {
            assert_eq!(matches(&raw(64, 1, probes)), [fill; 2], "{probes}");
        }
        // No probes, negative markers (128, 253): true. No lines, or a line
        // size that is no power of two: true.
        for (len, lines, probes) in [
            (64, 1, 0),
            (64, 1, 128),
            (64, 1, 253),
            (64, 0, 6),
            (4, 3, 6),
            (291, 3, 6),
            (195, 3, 6),
        ] {
            assert_eq!(
                matches(&raw(len, lines, probes)),
                [true; 2],
                "{len} {lines} {probes}"
            );
        }
        // Nothing but metadata, or less: false, as if built from no keys.
        for (len, lines, probes) in [(0, 0, 6), (0, 37, 6), (0, 0, 0)] {
            assert_eq!(
                matches(&raw(len, lines, probes)),
                [false; 2],
                "{len} {lines} {probes}"
            );
        }
        assert_eq!(matches(&raw(0, 3, 6)[1..]), [false; 2], "4 bytes");
        // The empty payload: RocksDB's bits reader says false, but a table
        // never asks it: a full filter block of no bytes gets no reader, and
        // every key may match. This crate answers as the table does.
        assert_eq!(FilterBits::parse(&[]), FilterBits::Empty);
        assert_eq!(matches(&[]), [true; 2]);
        // FastLocalBloom: six probes good; any other metadata byte set,
        // or probes past 30: reserved, true.
        assert_eq!(matches(&raw(64, 6 << 8, 255)), [fill; 2]);
        assert_eq!(matches(&raw(64, 30 << 8, 255)), [fill; 2]);
        for lines in [
            6 << 8 | 1,
            6 << 8 | 1 << 16,
            6 << 8 | 1 << 24,
            31 << 8,
            33 << 8,
            66 << 8,
            130 << 8,
        ] {
            assert_eq!(matches(&raw(64, lines, 255)), [true; 2], "{lines:#x}");
        }
    }
    let zeros = |len, lines| raw_filter(len, lines, 254, |_| 0);
    // Ribbon: two blocks and 4 or 8 columns of zeros rule both keys out.
    assert_eq!(matches(&zeros(128, (2 << 8) + 123)), [false; 2]);
    assert_eq!(matches(&zeros(256, (2 << 8) + 123)), [false; 2]);
    // 5,000 blocks in 1,024 bits: almost every key may match, not all.
    let sparse = zeros(128, (5000 << 8) + 123);
    assert_eq!(matches(&sparse), [true; 2]);
    let bits = FilterBits::parse(&sparse);
    assert!((0..1000).any(|i: u32| !bits.may_match(i.to_string().as_bytes())));
    // One block, or none: true.
    assert_eq!(matches(&zeros(128, (1 << 8) + 123)), [true; 2]);
    assert_eq!(matches(&zeros(128, 123)), [true; 2]);
}

use crate::crafted_rocksdb as crafted;

/// Golden tables changed block by block (testkit/src/crafted/rocksdb.rs,
/// written by `cargo run -p leveldb-filter-testkit --bin craft-rocksdb`),
/// and beside each RocksDB 7.8's
/// own answer for every key (oracle/rocksdb-7.8/answer-rocksdb.cc): the crate
/// answers each key as RocksDB does, false negatives of RocksDB's own
/// included; a table RocksDB refuses, the crate refuses too.
/// `ROCKSDB_CRAFTED=DIR` reads another such directory (CI makes one).
#[test]
fn crafted_tables_answer_as_rocksdb() {
    let golden = rocksdb_dir();
    // Crafted from the golden tables read (`ROCKSDB_TABLES`): another set
    // needs its own crafted set.
    let crafted_dir = match std::env::var_os("ROCKSDB_CRAFTED") {
        Some(dir) => PathBuf::from(dir),
        None if std::env::var_os("ROCKSDB_TABLES").is_some() => {
            panic!("ROCKSDB_TABLES needs ROCKSDB_CRAFTED: the tables crafted from them")
        }
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/rocksdb/crafted"),
    };
    let mut cases = 0;
    for (name, source, _, change) in crafted::cases() {
        let bytes = std::fs::read(crafted_dir.join(format!("{name}.sst"))).expect("crafted table");
        // The crafted bytes are what the crafting makes of the golden table.
        let mut sst =
            crafted::Sst::new(&std::fs::read(golden.join(format!("{source}.sst"))).unwrap());
        change(&mut sst);
        assert!(
            sst.finish() == bytes,
            "{name}: not what testkit/src/crafted/rocksdb.rs makes"
        );
        let answers = std::fs::read_to_string(crafted_dir.join(format!("{name}.answers"))).unwrap();
        if let Some(why) = answers.strip_prefix("ingest-error ") {
            // RocksDB refuses the table: so does the crate, for the reason
            // RocksDB gives (a checksum, a handle, the properties' order).
            let e = match Table::open(&bytes) {
                Ok(_) => panic!("{name}: opens, where RocksDB says {why}"),
                Err(e) => e.to_string(),
            };
            for (rocksdb, ours) in [
                ("properties unsorted", "properties unsorted"),
                ("checksum mismatch", "checksum mismatch"),
                ("bad block handle", "not a block handle"),
            ] {
                assert_eq!(
                    why.contains(rocksdb),
                    e.contains(ours),
                    "{name}: {e} / {why}"
                );
            }
            cases += 1;
            continue;
        }
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut differ = Vec::new();
        for line in answers.lines() {
            let words: Vec<&str> = line.split(' ').collect();
            let key = unhex(words[0]);
            let ours = match sst.data_block_for(&key) {
                Err(_) => "error",
                // Past the table's last key (`probe`'s past-last-key): a
                // Get does not ask the table.
                Ok(None) => "may-match",
                Ok(Some(_)) if sst.key_may_match(&key) => "may-match",
                Ok(Some(_)) => "absent",
            };
            if ours != words[2] {
                differ.push(format!("{line}: ours {ours}"));
            }
        }
        assert!(
            differ.is_empty(),
            "{name}: {} differ, first {:?}",
            differ.len(),
            differ.first()
        );
        cases += 1;
    }
    assert_eq!(cases, crafted::cases().len());
}

/// Tables written by a newer RocksDB: 9.8.4 (format_version 6: the
/// footer's own checksum, each block's checksum offset by its place, the
/// index named in the metaindex; `oracle/rocksdb-9.8/gen-rocksdb9.py`, in
/// `testdata/rocksdb9/`) or 11.12 (format_version 7 and 8: index values with
/// an escape, blocks storing their keys' common prefix once;
/// `oracle/rocksdb-11.12/`, in `testdata/rocksdb11/`), with its answer for every
/// key. `ROCKSDB9_TABLES=DIR` and `ROCKSDB11_TABLES=DIR` read other such
/// directories (CI makes them from another seed).
fn newer_tables(version: &str) -> Vec<(String, Vec<u8>, Vec<Answer>)> {
    let dir = std::env::var_os(format!("ROCKSDB{version}_TABLES"))
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("testdata/rocksdb{version}"))
        });
    let tables = rocksdb_tables_in(&dir);
    assert!(
        tables.len() >= 5,
        "the golden RocksDB {version} tables are missing"
    );
    tables
}

/// Every key of every RocksDB 9.8.4 table answers as RocksDB 9.8.4
/// decided; the keys walked are the keys it wrote; every filter rebuilds
/// from them (at the length RocksDB stored).
#[test]
fn rocksdb9_tables_read_and_answer_as_rocksdb() {
    newer_tables_answer_as_rocksdb("9");
}

/// The same of RocksDB 11.12's tables.
#[test]
fn rocksdb11_tables_read_and_answer_as_rocksdb() {
    newer_tables_answer_as_rocksdb("11");
}

fn newer_tables_answer_as_rocksdb(version: &str) {
    let mut partitioned = 0;
    for (name, bytes, keys) in newer_tables(version) {
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fv: u32 = name
            .split("-fv")
            .nth(1)
            .and_then(|s| s[..1].parse().ok())
            .expect("fvN");
        assert_eq!(sst.footer().format_version, fv, "{name}");
        assert_ne!(sst.footer().base_context_checksum, 0, "{name}");
        assert_eq!(sst.footer().checksum, checksum_named(&name), "{name}");
        partitioned += usize::from(matches!(sst.filter(), Ok(Some(SstFilter::Partitioned(_)))));
        let wrong: Vec<_> = keys
            .iter()
            .filter(|(key, _, may_match)| sst.key_may_match(key) != *may_match)
            .collect();
        assert!(
            wrong.is_empty(),
            "{name}: {} of {} keys differ",
            wrong.len(),
            keys.len()
        );
        assert!(keys.iter().any(|k| !k.2), "{name}: no key ruled out");
        let mut walked = Vec::new();
        sst.for_each_key(|key, _| walked.push(key.to_vec()))
            .unwrap();
        let written: Vec<Vec<u8>> = keys.iter().filter(|k| k.1).map(|k| k.0.clone()).collect();
        assert_eq!(walked, written, "{name}: the keys walked");
        let check = sst.check_filter().unwrap();
        assert!(check.ok(), "{name}: {check:?}");
        // A flipped bit of the metaindex, the index or the first data block
        // fails that block's checksum (offset-modified).
        if sst.footer().checksum != ChecksumType::None {
            let first = sst.data_block_for(b"").unwrap().expect("a first block");
            for (kind, offset) in [
                (BlockKind::Metaindex, sst.footer().metaindex.offset),
                (BlockKind::Index, sst.footer().index.offset),
                (BlockKind::Data, first.offset),
            ] {
                let mut bad = bytes.clone();
                bad[offset as usize] ^= 1;
                match Table::open(&bad).and_then(|t| t.for_each_key(|_, _| ())) {
                    Err(e @ Error::ChecksumMismatch { .. }) => {
                        assert_eq!(e.block(), Some((kind, offset)), "{name}")
                    }
                    other => panic!("{name}: {kind} flipped: {other:?}"),
                }
            }
        }
        // And a flipped bit of the footer (in bytes no field reads) fails
        // the footer's checksum, where there is one.
        let mut bad = bytes.clone();
        let at = bad.len() - 53 + 20;
        bad[at] ^= 1;
        match (Table::open(&bad), sst.footer().checksum) {
            (Ok(_), ChecksumType::None) => {}
            (
                Err(Error::BadFooter {
                    what: FooterProblem::Checksum { .. },
                }),
                _,
            ) => {}
            (other, _) => panic!("{name}: {:?}", other.map(|_| "opens")),
        }
    }
    assert!(partitioned > 0, "no partitioned RocksDB {version} table");
}

/// Each filter's entries, as the check counts them (a hash equal to the
/// last one added once; RocksDB 9.6's `AddKeyAndAlt` rules for a key and its
/// prefix, and the prefixes added at partition cuts), add up to the count
/// RocksDB's builder stored in the property `rocksdb.num.filter_entries`,
/// for every golden table of RocksDB 7.8, 9.8.4 and 11.12.
#[test]
fn filter_entries_are_counted_as_rocksdb_counts_them() {
    let mut checked = 0;
    let all = rocksdb_tables()
        .into_iter()
        .chain(newer_tables("9"))
        .chain(newer_tables("11"));
    for (name, bytes, _) in all {
        let sst = Table::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Some(stored) = sst.property_number("rocksdb.num.filter_entries") else {
            continue;
        };
        let Verdict::Filters(reports) = sst.check_filter().unwrap() else {
            panic!("{name}: no filter checked");
        };
        let counted: u64 = reports.iter().map(|r| r.keys).sum();
        assert_eq!(counted, stored, "{name}");
        checked += 1;
    }
    assert!(checked > 40, "{checked} tables with the property");
}

/// format_version 7 names the compression manager in the property
/// `rocksdb.compression` (`BuiltinV2;04;`). A block of type 0x80 and up is
/// that manager's own: an error naming it, while the filter, which is never
/// compressed, answers as before. Another manager's name alone changes
/// nothing this crate reads.
#[test]
fn custom_compression_managers_are_named() {
    let (_, golden, keys) = rocksdb_tables_in(&PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/rocksdb11"
    )))
    .into_iter()
    .find(|(name, ..)| name == "fastbloom-fv7-none-lz4")
    .expect("the table without checksums");
    let mut bytes = golden.clone();
    let at = bytes
        .windows(13)
        .position(|w| w == b"BuiltinV2;04;")
        .expect("the compression property");
    bytes[at..at + 13].copy_from_slice(b"CustomMgr;84;");
    let sst = Table::open(&bytes).unwrap();
    assert_eq!(sst.compression_manager(), Some(&b"CustomMgr"[..]));
    let walked = sst.for_each_key(|_, _| {}).unwrap();
    assert_eq!(walked.keys, keys.iter().filter(|k| k.1).count() as u64);
    let first = sst.data_block_for(&keys[0].0).unwrap().unwrap();
    bytes[(first.offset + first.size) as usize] = 0x84;
    let sst = Table::open(&bytes).unwrap();
    let e = sst.for_each_key(|_, _| {}).unwrap_err();
    assert_eq!(
        e,
        Error::CustomCompression {
            block: leveldb_filter::format::BlockKind::Data,
            offset: first.offset,
            type_byte: 0x84,
            manager: "CustomMgr".into(),
        }
    );
    assert!(e.to_string().contains("\"CustomMgr\""), "{e}");
    for (key, written, may_match) in &keys {
        assert_eq!(sst.key_may_match(key), *may_match);
        assert!(!written || *may_match);
    }
}

/// Ribbon filters RocksDB 7.8 built (`testdata/rocksdb/ribbon.vec`, or the
/// file `RIBBON_VECTORS` names: CI makes a fresh one from another seed):
/// `RibbonBuilder` makes the same bytes, for RocksDB's own test cases, seeds
/// that fail, Bloom fallbacks, repeated keys, every column count, and random
/// key sets of 1 to a million keys at 0.5 to 99 bits per key.
#[test]
fn ribbon_filters_are_rocksdbs_byte_for_byte() {
    let path = std::env::var_os("RIBBON_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| vectors::testdata().join("rocksdb/ribbon.vec"));
    let text = std::fs::read_to_string(&path).expect("ribbon.vec");
    let (mut cases, mut bloom, mut retried) = (0, 0, 0);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split(' ');
        let (bits, spec, want) = (
            fields.next().unwrap().parse::<f64>().unwrap(),
            fields.next().unwrap(),
            fields.next().unwrap(),
        );
        let keys = vectors::ribbon_keys(spec);
        let built = RibbonBuilder::new(bits).build(keys.iter().map(Vec::as_slice));
        match want.strip_prefix('=') {
            None if want == "-" => assert!(built.is_empty(), "{line}"),
            None => assert_eq!(built, unhex(want), "{bits} {spec}"),
            Some(sum) => {
                let (len, crc) = sum.split_once(':').unwrap();
                let crc = u32::from_str_radix(crc, 16).unwrap();
                assert_eq!(built.len(), len.parse::<usize>().unwrap(), "{bits} {spec}");
                assert_eq!(crc32c::crc32c(&built), crc, "{bits} {spec}");
            }
        }
        if let Some(&marker) = built.get(built.len().wrapping_sub(5)) {
            bloom += usize::from(marker == 0xff);
            let first = leveldb_filter::rocksdb::hash64(&keys[0]);
            retried += usize::from(marker == 0xfe && built[built.len() - 4] != first as u8);
        }
        cases += 1;
    }
    assert!(cases >= 60, "{cases} cases in {}", path.display());
    assert!(
        bloom > 0 && retried > 0,
        "{bloom} Bloom fallbacks, {retried} seeds retried"
    );
}

/// RocksDB's `FullBloomTest.Schema` (util/bloom_test.cc) for its Ribbon
/// policy, as it pins them: keys `Key(i)` (`i` as 4 bytes, little-endian),
/// the stored seed, LevelDB's signed hash of the whole payload (its
/// `BloomHash`), and the first ten `i` from 1,000,000 on whose key the
/// filter lets through.
#[test]
fn rocksdbs_ribbon_schema_values() {
    /// Bits per key, keys, the seed (none for Bloom), BloomHash, FirstFPs.
    type Case = (f64, std::ops::Range<u32>, Option<u8>, u32, [u32; 10]);
    let cases: [Case; 5] = [
        (
            5.0,
            0..87,
            None,
            4_130_687_756,
            [31, 38, 40, 43, 61, 83, 86, 112, 125, 131],
        ),
        (
            2.0,
            0..2087,
            Some(61),
            1_705_851_228,
            [3, 8, 10, 17, 19, 20, 23, 28, 31, 32],
        ),
        (
            10.0,
            0..2087,
            Some(61),
            1_273_231_667,
            [296, 411, 419, 612, 619, 623, 630, 665, 686, 727],
        ),
        (
            10.0,
            1..2087,
            Some(184),
            3_007_790_572,
            [33, 152, 383, 497, 589, 633, 737, 781, 911, 990],
        ),
        (
            9.5,
            1..2088,
            Some(184),
            1_148_258_663,
            [33, 54, 95, 360, 589, 693, 737, 911, 990, 1048],
        ),
    ];
    for (bits, range, seed, hash, fps) in cases {
        let keys: Vec<[u8; 4]> = range.map(u32::to_le_bytes).collect();
        let filter = RibbonBuilder::new(bits).build(keys.iter().map(|k| &k[..]));
        let what = format!("{bits} bits per key, {} keys", keys.len());
        // None: the Bloom filter RocksDB builds for so few keys.
        let marker = filter[filter.len() - 5];
        assert_eq!(marker, if seed.is_some() { 0xfe } else { 0xff }, "{what}");
        if let Some(seed) = seed {
            assert_eq!(filter[filter.len() - 4], seed, "{what}");
        }
        let signed = leveldb_filter::HashVariant::Signed;
        assert_eq!(signed.hash(&filter, 0xbc9f_1d34), hash, "{what}");
        let bits = FilterBits::parse(&filter);
        let first: Vec<u32> = (0..)
            .filter(|i: &u32| bits.may_match(&(i + 1_000_000).to_le_bytes()))
            .take(10)
            .collect();
        assert_eq!(first, fps, "{what}");
    }
}

/// No key a Ribbon filter is built from is ruled out, whatever the keys
/// (repeated, empty, up to thousands) and bits per key: by the Ribbon
/// filter, or the Bloom filter RocksDB builds instead.
#[test]
fn ribbon_filters_never_rule_out_their_keys() {
    fn prop(mut keys: Vec<Vec<u8>>, more: u16, seed: u32, bits: u8, tenths: u8) -> bool {
        let more = u32::from(more % 4000);
        keys.extend((0..more).map(|i| (seed ^ i.wrapping_mul(0x9e37_79b9)).to_be_bytes().to_vec()));
        let bits = f64::from(bits % 70) + f64::from(tenths % 10) / 10.0;
        let filter = RibbonBuilder::new(bits).build(keys.iter().map(Vec::as_slice));
        if bits < 0.5 || keys.is_empty() {
            return filter.is_empty();
        }
        let parsed = FilterBits::parse(&filter);
        keys.iter().all(|k| parsed.may_match(k))
    }
    crate::arbitrary::check(200, prop as fn(Vec<Vec<u8>>, u16, u32, u8, u8) -> bool);
}
