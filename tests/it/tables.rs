//! Real tables written by LevelDB 1.23 (`testdata/tables/`, from `gen-tables`
//! in `oracle/leveldb-1.23/`): each verifies, each probe answers as LevelDB's own lookup
//! did, and every corruption the tests can make is an error, never a panic.

use crate::{arbitrary, crafted, vectors};

use vectors::{leveldb_dir, leveldb_probes, leveldb_tables};

use leveldb_filter::format::Corruption;
use leveldb_filter::format::{BlockKind, Compression};
use leveldb_filter::leveldb::{
    detect, probe, verify_filter, Basis, Evidence, KeyFormat, Probe, VariantFound, Verdict,
    VerifyOptions,
};
use leveldb_filter::leveldb::{Table, FOOTER_LEN};
use leveldb_filter::{BloomFilterPolicy, Error};

/// What each golden table was written with, from the generator's table list.
fn expected(name: &str) -> Verdict {
    if name == "user-nofilter" {
        return Verdict::NoFilter;
    }
    let (policy, variant) = match name {
        n if n.starts_with("goleveldb-") => ("leveldb.BuiltinBloomFilter", VariantFound::Unsigned),
        n if n.starts_with("legacy-rocksdb") => {
            ("rocksdb.BuiltinBloomFilter", VariantFound::Signed)
        }
        "legacy-leveldb-ascii" => ("leveldb.BuiltinBloomFilter", VariantFound::Either),
        n if n.starts_with("legacy-leveldb") || n.starts_with("db-legacy") => {
            ("leveldb.BuiltinBloomFilter", VariantFound::Signed)
        }
        _ => ("leveldb.BuiltinBloomFilter2", VariantFound::Unsigned),
    };
    Verdict::Match {
        name: policy.into(),
        variant,
        key_format: if name.starts_with("db-") || name.starts_with("goleveldb-db") {
            KeyFormat::Internal
        } else {
            KeyFormat::User
        },
        bits_per_key: if name.ends_with("bpk20") {
            20
        } else if name.ends_with("bpk5") {
            5
        } else {
            10
        },
    }
}

#[test]
fn every_table_verifies_with_the_settings_it_was_written_with() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        let verdict = verify_filter(&table, &stats, VerifyOptions::default()).unwrap();
        assert_eq!(verdict, expected(&name), "{name}");
    }
}

#[test]
fn forcing_the_wrong_settings_is_a_mismatch() {
    let bytes = std::fs::read(leveldb_dir().join("legacy-leveldb-signed.ldb")).unwrap();
    let table = Table::open(&bytes).unwrap();
    let stats = table.key_stats().unwrap();
    for options in [
        VerifyOptions {
            variant: Some(leveldb_filter::HashVariant::Unsigned),
            ..Default::default()
        },
        VerifyOptions {
            key_format: Some(KeyFormat::Internal),
            ..Default::default()
        },
        VerifyOptions {
            bits_per_key: Some(9),
            ..Default::default()
        },
    ] {
        let verdict = verify_filter(&table, &stats, options).unwrap();
        assert!(
            matches!(verdict, Verdict::Mismatch { .. }),
            "{options:?}: {verdict:?}"
        );
    }
}

#[test]
fn probes_agree_with_leveldb_table_lookup() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        let Verdict::Match {
            variant,
            key_format,
            ..
        } = expected(&name)
        else {
            // No filter: every key the index covers may match.
            for (key, want) in leveldb_probes(&name) {
                let got = match probe(&table, None, KeyFormat::User, &key).unwrap() {
                    Probe::PastLastKey => "- past-last-key".to_string(),
                    Probe::Block { offset, .. } => format!("{offset} may-match"),
                };
                assert_eq!(got, want, "{name} {key:02x?}");
            }
            continue;
        };
        assert_eq!(
            stats.looks_internal,
            key_format == KeyFormat::Internal,
            "{name}"
        );
        let hash = match variant {
            VariantFound::Signed => leveldb_filter::HashVariant::Signed,
            _ => leveldb_filter::HashVariant::Unsigned,
        };
        let bloom = BloomFilterPolicy::new(10).with_hash(hash);
        for (key, want) in leveldb_probes(&name) {
            let got = probe(&table, Some(&bloom), key_format, &key);
            let got = match got.unwrap() {
                Probe::PastLastKey => "- past-last-key".to_string(),
                Probe::Block { offset, may_match } => {
                    format!(
                        "{offset} {}",
                        if may_match { "may-match" } else { "absent" }
                    )
                }
            };
            assert_eq!(got, want, "{name} {key:02x?}");
        }
    }
}

/// The Bloom policy a table's filter was written with: its hash variant as
/// `verify_filter` finds it (unsigned where it cannot tell).
fn written_with(table: &Table<'_>, stats: &leveldb_filter::leveldb::KeyStats) -> BloomFilterPolicy {
    let variant = match verify_filter(table, stats, VerifyOptions::default()).unwrap() {
        Verdict::Match {
            variant: VariantFound::Signed,
            ..
        } => leveldb_filter::HashVariant::Signed,
        _ => leveldb_filter::HashVariant::Unsigned,
    };
    BloomFilterPolicy::new(10).with_hash(variant)
}

/// The misuse that gave false negatives is gone: a database's table probed
/// with the plain Bloom policy and the internal key format finds every key
/// it holds (the probe asks the filter for the user key, as LevelDB's
/// internal-key policy does).
#[test]
fn probing_a_databases_table_finds_every_key() {
    let mut tables_seen = 0;
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        if !stats.looks_internal || table.filter_block().is_none() {
            continue;
        }
        let policy = written_with(&table, &stats);
        let mut user_keys = Vec::new();
        for block in table.data_blocks() {
            let block = block.unwrap();
            let mut entries = block.entries();
            while let Ok(Some((key, _))) = entries.next_entry() {
                user_keys.push(key[..key.len() - 8].to_vec());
            }
        }
        assert!(!user_keys.is_empty(), "{name}");
        for key in &user_keys {
            match probe(&table, Some(&policy), KeyFormat::Internal, key).unwrap() {
                Probe::Block { may_match, .. } => assert!(may_match, "{name}: {key:02x?}"),
                Probe::PastLastKey => panic!("{name}: {key:02x?} past the last key"),
            }
        }
        tables_seen += 1;
    }
    assert!(tables_seen >= 3, "{tables_seen} database tables");
}

/// Sequential keys (numbers in ASCII) are where LevelDB's hash is weakest:
/// the rate measured on their neighbours is what the bits set do not show.
#[test]
fn measured_fpr_counts_neighbours_the_table_does_not_hold() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        if table.filter_block().is_none() || stats.keys == 0 {
            continue;
        }
        let format = if stats.looks_internal {
            KeyFormat::Internal
        } else {
            KeyFormat::User
        };
        let policy = written_with(&table, &stats);
        let m = leveldb_filter::leveldb::measure_fpr(&table, &policy, format).unwrap();
        // Counted again the plain way: every (user) key's neighbour that
        // the table does not hold, each probed on its own.
        let mut keys = std::collections::BTreeSet::new();
        for block in table.data_blocks() {
            let block = block.unwrap();
            let mut entries = block.entries();
            while let Some((key, _)) = entries.next_entry().unwrap() {
                let key = match format {
                    KeyFormat::Internal => leveldb_filter::leveldb::user_key(key),
                    _ => key,
                };
                keys.insert(key.to_vec());
            }
        }
        let (mut probed, mut passed) = (0, 0);
        for key in &keys {
            let Some((&last, rest)) = key.split_last().filter(|(&last, _)| last < 0xff) else {
                continue;
            };
            let neighbour = [rest, &[last + 1]].concat();
            if keys.contains(&neighbour) {
                continue;
            }
            if let Probe::Block { may_match, .. } =
                probe(&table, Some(&policy), format, &neighbour).unwrap()
            {
                probed += 1;
                passed += u64::from(may_match);
            }
        }
        assert_eq!((m.probed, m.passed), (probed, passed), "{name}");
        assert!(m.probed > 0, "{name}: {m:?}");
    }
}

/// Every block's handle, with its kind.
fn all_blocks(table: &Table<'_>) -> Vec<(BlockKind, u64, u64)> {
    let mut blocks: Vec<(BlockKind, u64, u64)> = table
        .index_entries()
        .map(|e| {
            let handle = e.unwrap().handle;
            (BlockKind::Data, handle.offset, handle.size)
        })
        .collect();
    blocks.push((
        BlockKind::Index,
        table.index_handle().offset,
        table.index_handle().size,
    ));
    blocks.push((
        BlockKind::Metaindex,
        table.metaindex_handle().offset,
        table.metaindex_handle().size,
    ));
    if let Some(f) = table.filter_block() {
        blocks.push((
            BlockKind::Filter,
            f.block.handle.offset,
            f.block.handle.size,
        ));
    }
    blocks
}

/// Opens, reads every block, verifies: the first error, if any.
fn read_all(bytes: &[u8], checked: bool) -> Result<(), Error> {
    let table = if checked {
        Table::open(bytes)?
    } else {
        Table::open_unchecked(bytes)?
    };
    let stats = table.key_stats()?;
    verify_filter(&table, &stats, VerifyOptions::default())?;
    Ok(())
}

#[test]
fn a_flipped_byte_in_any_block_is_a_checksum_mismatch_at_its_offset() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        for (kind, offset, size) in all_blocks(&table) {
            // A byte of the contents, and the compression type in the trailer.
            for at in [offset + size / 2, offset + size] {
                let mut damaged = bytes.clone();
                damaged[at as usize] ^= 0x40;
                match read_all(&damaged, true) {
                    Err(Error::ChecksumMismatch {
                        block, offset: o, ..
                    }) => {
                        assert_eq!((block, o), (kind, offset), "{name} byte {at}")
                    }
                    other => panic!("{name}: byte {at} of the {kind} at {offset}: {other:?}"),
                }
            }
        }
    }
}

#[test]
fn an_unknown_compression_type_is_named_when_checksums_are_off() {
    let bytes = std::fs::read(leveldb_dir().join("user-4k-r16-none.ldb")).unwrap();
    let table = Table::open(&bytes).unwrap();
    let first = table.index_entries().next().unwrap().unwrap().handle;
    for kind in [7u8, 2] {
        let mut damaged = bytes.clone();
        damaged[(first.offset + first.size) as usize] = kind;
        let err = read_all(&damaged, false).unwrap_err();
        match (kind, &err) {
            (7, Error::UnknownCompression { kind: 7, .. }) => {}
            (
                2,
                Error::UnsupportedCompression {
                    compression: Compression::Zstd,
                    ..
                },
            ) => {}
            _ => panic!("type {kind}: {err}"),
        }
        assert_eq!(err.block(), Some((BlockKind::Data, first.offset)), "{err}");
    }
}

#[test]
fn every_truncation_through_the_footer_is_an_error() {
    for (name, bytes) in leveldb_tables() {
        for cut in 1..=FOOTER_LEN + 16 {
            let err = read_all(&bytes[..bytes.len().saturating_sub(cut)], true).unwrap_err();
            assert!(
                matches!(err, Error::BadMagic { .. } | Error::TruncatedFooter { .. }),
                "{name} less {cut} bytes: {err}"
            );
        }
    }
}

/// Arbitrary bytes, and real tables damaged anywhere (with checksums on and
/// off, so damage reaches the block and Snappy parsers): errors, never panics.
#[test]
fn damaged_tables_never_panic() {
    static TABLES: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    fn prop(pick: usize, damage: Vec<(u32, u8)>, cut: u32, checked: bool, random: Vec<u8>) -> bool {
        let tables = TABLES.get_or_init(leveldb_tables);
        let (_, bytes) = &tables[pick % tables.len()];
        let mut bytes = bytes.clone();
        for (at, byte) in damage {
            let len = bytes.len();
            bytes[at as usize % len] = byte;
        }
        let keep = bytes.len() - (cut as usize % 64).min(bytes.len());
        bytes.truncate(keep);
        let _ = read_all(&bytes, checked);
        let _ = read_all(&random, checked);
        true
    }
    arbitrary::check(
        500,
        prop as fn(usize, Vec<(u32, u8)>, u32, bool, Vec<u8>) -> bool,
    );
}

#[test]
fn a_hand_made_table_reads_back() {
    let block = crafted::block(&[
        (0, b"apple", b"1"),
        (1, b"pricot", b"2"),
        (0, b"banana", b"3"),
    ]);
    let table_bytes = crafted::one_block(&block, 0);
    let table = Table::open(&table_bytes).unwrap();
    let block = table.data_blocks().next().unwrap().unwrap();
    let mut entries = block.entries();
    let mut keys = Vec::new();
    while let Some((key, _)) = entries.next_entry().unwrap() {
        keys.push(key.to_vec());
    }
    assert_eq!(keys, [&b"apple"[..], b"apricot", b"banana"]);
    let stats = table.key_stats().unwrap();
    assert_eq!((stats.data_blocks, stats.keys), (1, 3));
    assert_eq!(
        verify_filter(&table, &stats, VerifyOptions::default()).unwrap(),
        Verdict::NoFilter
    );
}

/// Every entry sharing a 10,000-byte prefix: 200 KB of file would expand to
/// 500 MB of keys. It is an error, found before the memory is taken.
#[test]
fn keys_that_expand_without_bound_are_an_error() {
    let long = vec![b'k'; 10_000];
    let mut entries: Vec<(u32, &[u8], &[u8])> = vec![(0, &long, b"")];
    entries.extend(std::iter::repeat_n((10_000, &b""[..], &b""[..]), 50_000));
    let table_bytes = crafted::one_block(&crafted::block(&entries), 0);
    let table = Table::open(&table_bytes).unwrap();
    let err = table.key_stats().unwrap_err();
    assert!(
        matches!(
            err,
            Error::CorruptBlock {
                block: BlockKind::Data,
                offset: 0,
                what: Corruption::KeysTooLong
            }
        ),
        "{err}"
    );
}

/// The verifier, which streams a table's keys into filters the size of the
/// stored ones, against the reference: the `FilterBlockBuilder` (checked
/// against LevelDB's vectors) fed as LevelDB's `TableBuilder` feeds it. Tables
/// of blocks whose sizes cross 2 KiB boundaries by zero, one or several (empty
/// filters between), any bits per key, both variants under the old name.
#[test]
fn verification_agrees_with_the_filter_block_builder() {
    fn prop(layout: Vec<(u8, u8)>, bits: u8, seed: u32, signed: bool) -> bool {
        let blocks: Vec<Vec<Vec<u8>>> = layout
            .iter()
            .take(12)
            .enumerate()
            .map(|(b, &(n, len))| {
                (0..usize::from(n))
                    .map(|i| {
                        let len = usize::from(len) % 90 + (i + b) % 5;
                        let x = seed ^ (b * 1000 + i) as u32;
                        (0..len)
                            .map(|j| (x >> (j % 4 * 8)) as u8 ^ j as u8)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let bits = usize::from(bits % 24);
        let variant = match signed {
            true => leveldb_filter::HashVariant::Signed,
            false => leveldb_filter::HashVariant::Unsigned,
        };
        let policy = BloomFilterPolicy::goleveldb(bits).with_hash(variant);
        let mut builder = leveldb_filter::FilterBlockBuilder::new(&policy);
        builder.start_block(0);
        let mut end = 0;
        for keys in &blocks {
            for key in keys {
                builder.add_key(key);
            }
            end += crafted::keys_block(keys, &vec![vec![]; keys.len()]).len() + 5;
            builder.start_block(end as u64);
        }
        let mut filter = builder.finish().to_vec();
        let layout: Vec<(usize, Vec<Vec<u8>>)> = blocks.into_iter().map(|k| (0, k)).collect();
        let verdict = |filter: &[u8], bits_per_key, variant| {
            let bytes = crafted::table(&layout, Some((b"leveldb.BuiltinBloomFilter", filter)));
            let table = Table::open(&bytes).unwrap();
            let stats = table.key_stats().unwrap();
            let options = VerifyOptions {
                bits_per_key,
                key_format: Some(KeyFormat::User),
                variant,
            };
            verify_filter(&table, &stats, options).unwrap()
        };
        let matched = |v: Verdict| match v {
            Verdict::Match { variant, .. } => {
                variant == VariantFound::Either || (variant == VariantFound::Signed) == signed
            }
            _ => false,
        };
        if !matched(verdict(&filter, Some(bits), None)) || !matched(verdict(&filter, None, None)) {
            return false;
        }
        // The first filter with keys starts the block: one bit of it flipped
        // is a mismatch for the variant that built it. (The other variant may
        // make the flipped bytes: 200 keys in a filter of 64 bits leave a
        // few bits clear, and either variant's keys may leave those.)
        if filter.len() > 5 + 4 {
            filter[0] ^= 1;
            return matches!(
                verdict(&filter, Some(bits), Some(variant)),
                Verdict::Mismatch { .. }
            );
        }
        true
    }
    // Found by a random run: the flipped filter is the signed variant's.
    assert!(prop(vec![(200, 1)], 0, 1_788_778_553, false));
    arbitrary::check(300, prop as fn(Vec<(u8, u8)>, u8, u32, bool) -> bool);
}

/// Statistics a caller builds by hand (counts near `usize::MAX`, more or
/// fewer filters than the table has, any bits per key) get a verdict or an
/// error from `verify_filter`, never a panic or an allocation they size.
#[test]
fn hand_made_statistics_get_a_verdict() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let real = table.key_stats().unwrap();
        let filters = real.keys_per_filter.len();
        for counts in [
            vec![usize::MAX; filters],
            vec![1 << 40; filters],
            vec![0; filters],
            vec![3; filters + 1000],
            Vec::new(),
        ] {
            for bits_per_key in [None, Some(0), Some(usize::MAX), Some(1 << 40)] {
                let mut stats = real.clone();
                stats.keys_per_filter = counts.clone();
                stats.keys = usize::MAX;
                let options = VerifyOptions {
                    bits_per_key,
                    ..VerifyOptions::default()
                };
                let verdict = verify_filter(&table, &stats, options).unwrap();
                let fits = counts == real.keys_per_filter;
                assert!(
                    fits || !matches!(verdict, Verdict::Match { .. }),
                    "{name}: {verdict:?}"
                );
            }
        }
    }
}

/// `detect` finds what each golden table was written with: its key format,
/// and its filter's variant (from the name, or under the old name from a
/// rebuild, or either where no key tells them apart); the same from the
/// keys of the blocks that read, as for a lookup.
#[test]
fn detection_finds_what_each_table_was_written_with() {
    for (name, bytes) in leveldb_tables() {
        let table = Table::open(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        let by_stats = detect(&table, Evidence::Stats(&stats), VerifyOptions::default()).unwrap();
        let by_reads = detect(&table, Evidence::Reads(None), VerifyOptions::default()).unwrap();
        let Verdict::Match {
            variant,
            key_format,
            ..
        } = expected(&name)
        else {
            assert!(
                by_stats.filter.is_none() && by_reads.filter.is_none(),
                "{name}"
            );
            continue;
        };
        assert_eq!(by_stats.key_format, key_format, "{name}");
        assert_eq!(by_reads.key_format, key_format, "{name}");
        let found = by_stats.filter.unwrap();
        assert_eq!(found.found, Some(variant), "{name}");
        let old_name = found.filter.name == BloomFilterPolicy::LEVELDB_LEGACY_NAME;
        let basis = match variant {
            VariantFound::Either => Basis::NoKeyTellsApart,
            _ if old_name => Basis::Rebuilt,
            _ => Basis::PolicyName,
        };
        assert_eq!(found.basis, basis, "{name}");
        // From the keys as lookups read them: one variant, never a guess
        // where the keys tell them apart.
        let read = by_reads.filter.unwrap();
        match variant {
            VariantFound::Either => assert_eq!(read.basis, Basis::Guess, "{name}"),
            _ => assert_eq!(read.found, Some(variant), "{name}: {:?}", read.basis),
        }
    }
}

/// An index entry made unreadable (its shared length past any key) ends
/// the index's walk there; the handles past it are found again from the
/// restart points, and only the damaged entry's is lost.
#[test]
fn a_damaged_index_entry_loses_only_its_own_block() {
    let bytes = std::fs::read(leveldb_dir().join("user-4k-r16-none.ldb")).unwrap();
    let table = Table::open(&bytes).unwrap();
    let all: Vec<_> = table.index_entries().map(|e| e.unwrap().handle).collect();
    assert!(all.len() > 8, "{} data blocks", all.len());
    assert_eq!(table.salvaged_data_handles(), all, "undamaged: the walk");
    // The index is stored uncompressed; LevelDB's index restarts at every entry.
    let index = table.index_handle();
    let contents = &bytes[index.offset as usize..(index.offset + index.size) as usize];
    let count = u32::from_le_bytes(contents[contents.len() - 4..].try_into().unwrap()) as usize;
    assert_eq!(count, all.len());
    let damaged_entry = count / 2;
    let at = contents.len() - 4 - 4 * count + 4 * damaged_entry;
    let restart = u32::from_le_bytes(contents[at..at + 4].try_into().unwrap()) as usize;
    let mut damaged = bytes.clone();
    damaged[index.offset as usize + restart] = 0x7f; // shared: 127 bytes of no key
    let table = Table::open_unchecked(&damaged).unwrap();
    assert!(table.index_entries().any(|e| e.is_err()));
    let mut want = all.clone();
    want.remove(damaged_entry);
    want.sort();
    assert_eq!(table.salvaged_data_handles(), want);
}

/// `user` as an internal key: sequence number `seq`, a value.
fn internal(user: &[u8], seq: u64) -> Vec<u8> {
    [user, &((seq << 8) | 1).to_le_bytes()].concat()
}

#[test]
fn keys_out_of_order_are_named_by_their_first_pair() {
    let stats = |keys: Vec<Vec<u8>>| {
        let bytes = crafted::table(&[(0, keys)], None);
        Table::open(&bytes).unwrap().key_stats().unwrap()
    };
    // User keys: strictly ascending, bytewise.
    let unordered = stats(vec![
        b"a".to_vec(),
        b"c".to_vec(),
        b"b".to_vec(),
        b"a".to_vec(),
    ]);
    assert_eq!(unordered.out_of_order, Some((b"c".to_vec(), b"b".to_vec())));
    let repeated = stats(vec![b"a".to_vec(), b"a".to_vec()]);
    assert_eq!(repeated.out_of_order, Some((b"a".to_vec(), b"a".to_vec())));
    // Internal keys: user keys ascending, sequence numbers descending,
    // though their bytes are not ascending.
    let ordered = stats(vec![
        internal(b"a", 2),
        internal(b"a", 1),
        internal(b"b", 9),
    ]);
    assert!(ordered.looks_internal);
    assert_eq!(ordered.out_of_order, None);
    // Sequence numbers ascending: out of either order (in bytewise order
    // they would be user keys that look internal, in order).
    let newest_last = stats(vec![internal(b"a", 1), internal(b"a", 0x100)]);
    assert!(!newest_last.looks_internal);
    assert_eq!(
        newest_last.out_of_order,
        Some((internal(b"a", 1), internal(b"a", 0x100)))
    );
    let as_user_keys = stats(vec![internal(b"a", 1), internal(b"a", 2)]);
    assert_eq!(as_user_keys.out_of_order, None);
    for (name, bytes) in leveldb_tables() {
        let stats = Table::open(&bytes).unwrap().key_stats().unwrap();
        assert_eq!(stats.out_of_order, None, "{name}");
    }
}
