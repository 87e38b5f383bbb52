//! No table makes this crate allocate past its size's bound: 16 times the
//! file's size plus 64 MiB, measured by a global allocator that tracks the
//! peak of live bytes, over every step `ldbfilter` takes (open, one pass over
//! the keys, verification with inferred and forced settings, per-filter
//! statistics, probes). The inputs are crafted tables whose numbers ask for
//! gigabytes (`crafted/`); each gets an error or a mismatch. (The command
//! line's tests run the same tables through `ldbfilter` with the bound as
//! its address-space limit.)

use crate::{crafted, crafted_rocksdb, peak};
use crafted::bound;

use leveldb_filter::format::{BlockKind, Corruption};
use leveldb_filter::leveldb::Table;
use leveldb_filter::leveldb::{
    probe, verify_filter, BloomStats, KeyFormat, Verdict, VerifyOptions,
};
use leveldb_filter::rocksdb;
use leveldb_filter::{BloomFilterPolicy, Error, FilterBlock};

/// Every step `ldbfilter verify`, `inspect` and `probe` take, through the
/// library; the outcome of each, in words.
fn every_step(bytes: &[u8]) -> Vec<String> {
    let table = match Table::open(bytes) {
        Ok(table) => table,
        Err(e) => return vec![format!("open: {e}")],
    };
    let mut outcomes = Vec::new();
    let stats = table.key_stats();
    outcomes.push(match &stats {
        Ok(stats) => format!("stats: {} keys", stats.keys),
        Err(e) => format!("stats: {e}"),
    });
    if let Ok(stats) = &stats {
        for bits_per_key in [None, Some(10), Some(1 << 40), Some(usize::MAX)] {
            let options = VerifyOptions {
                bits_per_key,
                ..VerifyOptions::default()
            };
            outcomes.push(match verify_filter(&table, stats, options) {
                Ok(verdict) => format!("verify {bits_per_key:?}: {verdict:?}"),
                Err(e) => format!("verify {bits_per_key:?}: {e}"),
            });
        }
        if let Some(Ok(block)) = table
            .filter_block()
            .map(|f| FilterBlock::parse(&f.block.contents))
        {
            let counts = &stats.keys_per_filter;
            let bits: usize = block
                .filters()
                .enumerate()
                .map(|(i, f)| BloomStats::new(f, counts.get(i).copied().unwrap_or(0)).bits_set)
                .sum();
            outcomes.push(format!("stats of {} filters: {bits} bits set", block.len()));
        }
    }
    let policy = BloomFilterPolicy::new(10);
    for key in [&b""[..], b"a", b"k", b"kkkk", &[0xff; 9]] {
        for format in [KeyFormat::User, KeyFormat::Internal] {
            outcomes.push(match probe(&table, Some(&policy), format, key) {
                Ok(answer) => format!("probe {key:02x?}: {answer:?}"),
                Err(e) => format!("probe {key:02x?}: {e}"),
            });
        }
    }
    outcomes
}

#[test]
fn no_crafted_table_takes_more_than_its_bound() {
    for (name, bytes) in crafted::all() {
        let (outcomes, peak) = peak::peak_during(|| every_step(&bytes));
        assert!(
            peak <= bound(bytes.len()),
            "{name}: {peak} bytes at peak for a file of {}: {outcomes:#?}",
            bytes.len()
        );
        // Each says what is wrong with it; none verifies.
        assert!(
            !outcomes.iter().any(|o| o.contains("Match {")),
            "{name}: {outcomes:#?}"
        );
    }
}

/// Every step `ldbfilter` takes on a RocksDB table, through the library.
fn every_rocksdb_step(bytes: &[u8]) -> Vec<String> {
    let sst = match rocksdb::Table::open(bytes) {
        Ok(sst) => sst,
        Err(e) => return vec![format!("open: {e}")],
    };
    let mut outcomes = vec![
        format!("walk: {:?}", sst.for_each_key(|_, _| ()).map(|w| w.keys)),
        format!("check: {:?}", sst.check_filter().map(|c| c.ok())),
    ];
    for i in 0..1000u32 {
        let key = format!("key{i:08}");
        let block = sst.data_block_for(key.as_bytes());
        outcomes.push(format!(
            "{key}: {block:?} {}",
            sst.key_may_match(key.as_bytes())
        ));
    }
    outcomes
}

/// RocksDB tables whose index blocks name one block many times (400,000
/// entries, a two-level index's 2,000 entries naming one partition of
/// 200,000, 200,000 filter partitions that are one): each block is read
/// once, the walk refuses blocks out of the file's order, and nothing
/// holds the entries: within the bound, in time for the bytes.
#[test]
fn no_rocksdb_bomb_takes_more_than_its_bound() {
    for (name, bytes) in crafted_rocksdb::bombs() {
        let (outcomes, peak) = peak::peak_during(|| every_rocksdb_step(&bytes));
        assert!(
            peak <= bound(bytes.len()),
            "{name}: {peak} bytes at peak for a file of {}: {:?}",
            bytes.len(),
            &outcomes[..2]
        );
        // The walk refuses an index naming a block out of the file's
        // order; a check, a filter partition named out of order.
        let refused = match name.starts_with("filter-") {
            true => outcomes[1] == "check: Ok(false)",
            false => outcomes[0].contains("HandlesOutOfOrder"),
        };
        assert!(refused, "{name}: {:?}", &outcomes[..2]);
    }
}

fn verdict(bytes: &[u8], bits_per_key: Option<usize>) -> Verdict {
    let table = Table::open(bytes).unwrap();
    let stats = table.key_stats().unwrap();
    let options = VerifyOptions {
        bits_per_key,
        ..VerifyOptions::default()
    };
    verify_filter(&table, &stats, options).unwrap()
}

fn difference(verdict: Verdict) -> String {
    match verdict {
        Verdict::Mismatch { difference, .. } => difference,
        other => panic!("{other:?}"),
    }
}

#[test]
fn filters_implying_huge_bits_per_key_are_a_mismatch_found_before_rebuilding() {
    for name in ["huge-bits-per-key", "large-bits-per-key"] {
        let bytes = crafted::named(name);
        let (found, peak) = peak::peak_during(|| difference(verdict(&bytes, None)));
        assert_eq!(
            found, "no bits-per-key setting explains the filters' sizes and k",
            "{name}"
        );
        assert!(peak < 4 * bytes.len(), "{name}: {peak} bytes");
        // Forced settings that would make filter 0 gigabytes: sized, not built.
        for bits_per_key in [80_000, 1 << 40, usize::MAX] {
            let (found, peak) =
                peak::peak_during(|| difference(verdict(&bytes, Some(bits_per_key))));
            assert!(
                found.starts_with("filter 0 (10000 keys) is 0 bytes"),
                "{name} {bits_per_key}: {found}"
            );
            assert!(
                peak < 4 * bytes.len(),
                "{name} {bits_per_key}: {peak} bytes"
            );
        }
    }
}

#[test]
fn an_offset_array_of_many_filters_is_a_mismatch() {
    assert_eq!(
        difference(verdict(&crafted::named("many-filters"), None)),
        "250000 filters stored, 1 rebuilt"
    );
}

#[test]
fn keys_that_expand_past_their_budget_are_an_error_in_every_block() {
    let expand = |e: &Error| e.corruption() == Some(Corruption::KeysTooLong);
    let block = |e: &Error| e.block().map(|(kind, _)| kind);
    let data = crafted::named("data-key-bomb");
    let table = Table::open(&data).unwrap();
    assert!(expand(&table.key_stats().unwrap_err()));
    let metaindex = Table::open(&crafted::named("metaindex-key-bomb")).unwrap_err();
    assert!(
        expand(&metaindex) && block(&metaindex) == Some(BlockKind::Metaindex),
        "{metaindex}"
    );
    // The index: a probe for a key after the long keys scans them all.
    let index = crafted::named("index-key-bomb");
    let table = Table::open(&index).unwrap();
    let err = probe(&table, None, KeyFormat::User, b"z").unwrap_err();
    assert!(
        expand(&err) && block(&err) == Some(BlockKind::Index),
        "{err}"
    );
    // One before them is found at once, as LevelDB finds it.
    let found = probe(&table, None, KeyFormat::User, b"a").unwrap();
    assert!(matches!(
        found,
        leveldb_filter::leveldb::Probe::Block { offset: 0, .. }
    ));
}

#[test]
fn snappy_blocks_are_uncompressed_only_within_their_limits() {
    let bytes = crafted::named("snappy-expands");
    let table = Table::open(&bytes).unwrap();
    let (err, peak) = peak::peak_during(|| table.key_stats().unwrap_err());
    match err {
        Error::LimitExceeded { found, limit, .. } => {
            // The block's length header: one 16 MiB key, its entry header
            // (6 bytes) and one restart point (8 bytes).
            assert_eq!(found, (16 << 20) + 14);
            assert_eq!(limit, 2 * bytes.len() as u64 + (8 << 20));
        }
        other => panic!("{other}"),
    }
    assert!(peak < 1 << 20, "refused before uncompressing: {peak} bytes");
    let claim = crafted::named("snappy-claims-4g");
    let err = Table::open(&claim).unwrap().key_stats().unwrap_err();
    assert_eq!(
        err.corruption(),
        Some(Corruption::SnappyLengthTooLarge),
        "{err}"
    );
}

#[test]
fn bad_restart_counts_and_handles_are_errors() {
    for (name, want) in [
        ("restart-count", Some(Corruption::RestartArrayTooLarge)),
        ("repeated-handles", Some(Corruption::HandlesOutOfOrder)),
        ("handle-past-end", None),
    ] {
        let bytes = crafted::named(name);
        let err = Table::open(&bytes).unwrap().key_stats().unwrap_err();
        match want {
            Some(want) => assert_eq!(err.corruption(), Some(want), "{name}: {err}"),
            None => assert!(matches!(err, Error::HandlePastEnd { .. }), "{name}: {err}"),
        }
    }
}
