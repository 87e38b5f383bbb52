//! Real tables written by LevelDB 1.23 (`testdata/tables/`, from `gen-tables`
//! in `oracle/`): each verifies, each probe answers as LevelDB's own lookup
//! did, and every corruption the tests can make is an error, never a panic.

use crate::{arbitrary, crafted, run, vectors};

use std::path::{Path, PathBuf};

use vectors::unhex;

use leveldb_filter::table::Corruption;
use leveldb_filter::table::{BlockKind, Table, FOOTER_LEN};
use leveldb_filter::verify::{
    probe, verify_filter, KeyFormat, Probe, VariantFound, Verdict, VerifyOptions,
};
use leveldb_filter::{BloomFilterPolicy, Error};

fn tables_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tables")
}

fn tables() -> Vec<(String, Vec<u8>)> {
    let mut tables: Vec<(String, Vec<u8>)> = std::fs::read_dir(tables_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_str().unwrap().to_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    tables.sort();
    assert!(tables.len() >= 11, "the golden tables are there");
    tables
}

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
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        let verdict = verify_filter(&table, &stats, VerifyOptions::default()).unwrap();
        assert_eq!(verdict, expected(&name), "{name}");
    }
}

#[test]
fn forcing_the_wrong_settings_is_a_mismatch() {
    let bytes = std::fs::read(tables_dir().join("legacy-leveldb-signed.ldb")).unwrap();
    let table = Table::new(&bytes).unwrap();
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

/// The `.probe` files: LevelDB's `Table::InternalGet` decisions.
fn expected_probes(name: &str) -> Vec<(Vec<u8>, String)> {
    let text = std::fs::read_to_string(tables_dir().join(format!("{name}.probe"))).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (key, rest) = l.split_once(' ').unwrap();
            (unhex(key), rest.to_owned())
        })
        .collect()
}

#[test]
fn probes_agree_with_leveldb_table_lookup() {
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
        let stats = table.key_stats().unwrap();
        let Verdict::Match {
            variant,
            key_format,
            ..
        } = expected(&name)
        else {
            // No filter: every key the index covers may match.
            for (key, want) in expected_probes(&name) {
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
        for (key, want) in expected_probes(&name) {
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
fn written_with(table: &Table<'_>, stats: &leveldb_filter::verify::KeyStats) -> BloomFilterPolicy {
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
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
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

/// `probe` takes keys on stdin and from a file as well as arguments: the
/// golden answers for each table, and 400,000 keys at once (more than an
/// argument list holds).
#[test]
fn cli_probe_reads_keys_from_stdin_and_files() {
    let run = |args: &[&str], stdin: &str| {
        let out = run::ldbfilter(args, stdin);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, _) in tables() {
        let golden = std::fs::read_to_string(tables_dir().join(format!("{name}.probe"))).unwrap();
        let golden: String = golden
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let keys: String = golden
            .lines()
            .map(|l| format!("{}\n", l.split(' ').next().unwrap()))
            .collect();
        let path = tables_dir().join(format!("{name}.ldb"));
        let path = path.to_str().unwrap();
        assert_eq!(
            run(&["probe", path], &keys),
            golden,
            "{name}: keys on stdin"
        );
        let file = dir.path().join("keys");
        std::fs::write(&file, &keys).unwrap();
        let from = ["probe", path, "--keys-from", file.to_str().unwrap()];
        assert_eq!(run(&from, ""), golden, "{name}: --keys-from");
    }
    let many: String = (0..400_000u32)
        .map(|i| format!("{:08x}\n", i.wrapping_mul(2_654_435_761)))
        .collect();
    let path = tables_dir().join("user-4k-r16-none.ldb");
    let out = run(&["probe", path.to_str().unwrap()], &many);
    assert_eq!(out.lines().count(), 400_000);
    assert!(out.lines().all(|l| l.ends_with(" may-match")
        || l.ends_with(" absent")
        || l.ends_with(" - past-last-key")));
}

fn ldbfilter(args: &[&str]) -> std::process::Output {
    run::ldbfilter(args, "")
}

#[test]
fn cli_verify_and_probe_agree_with_leveldb() {
    let paths: Vec<String> = tables()
        .iter()
        .map(|(name, _)| {
            tables_dir()
                .join(format!("{name}.ldb"))
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut args = vec!["verify"];
    args.extend(paths.iter().map(String::as_str));
    let out = ldbfilter(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), paths.len());
    assert_eq!(
        stdout.lines().filter(|l| l.contains(": OK ")).count(),
        paths.len() - 1
    );
    assert!(stdout.contains("user-nofilter.ldb: no filter block"));

    for (name, _) in tables() {
        let probes = expected_probes(&name);
        let keys: Vec<String> = probes
            .iter()
            .map(|(k, _)| k.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        let path = tables_dir().join(format!("{name}.ldb"));
        let mut args = vec!["probe", path.to_str().unwrap()];
        args.extend(keys.iter().map(String::as_str));
        let out = ldbfilter(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: String = keys
            .iter()
            .zip(&probes)
            .map(|(k, (_, rest))| format!("{k} {rest}\n"))
            .collect();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{name}");
    }
}

#[test]
fn cli_inspect_reports_each_table() {
    let path = tables_dir().join("db-snappy-0.ldb");
    let out = ldbfilter(&["inspect", path.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in [
        "key format       internal",
        "filter policy    leveldb.BuiltinBloomFilter2",
        "base_lg          11",
        "compression      snappy",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    // The last line: a summary, with the rate measured on neighbours.
    let summary = text.lines().last().unwrap();
    assert!(
        summary.starts_with("summary: ") && summary.contains("measured on"),
        "{summary}"
    );
    let out = ldbfilter(&["inspect", "--json", path.to_str().unwrap()]);
    let json = String::from_utf8(out.stdout).unwrap();
    assert_eq!(json.lines().count(), 1, "one object a table, one a line");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["table"], "leveldb");
    assert_eq!(v["key_format"], "internal");
    assert_eq!(v["filter"]["policy"], "leveldb.BuiltinBloomFilter2");
    assert_eq!(v["filter"]["base_lg"], 11);
    let filters = v["filter"]["filters"].as_array().unwrap();
    let keys: u64 = filters.iter().map(|f| f["keys"].as_u64().unwrap()).sum();
    assert_eq!(v["keys"].as_u64(), Some(keys), "every key in one filter");
    let measured = &v["filter"]["measured_fpr"];
    assert!(measured["probed"].as_u64().unwrap() > 1000);
    assert!(measured["rate"].as_f64().unwrap() < 0.05, "{measured}");
}

/// Sequential keys (numbers in ASCII) are where LevelDB's hash is weakest:
/// the rate measured on their neighbours is what the bits set do not show.
#[test]
fn measured_fpr_counts_neighbours_the_table_does_not_hold() {
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
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
        let m = leveldb_filter::verify::measure_fpr(&table, &policy, format).unwrap();
        // Every probed neighbour is absent: each the table holds is skipped,
        // so probing them one by one finds the same count.
        assert!(m.probed > 0 && m.passed <= m.probed, "{name}: {m:?}");
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
        Table::new(bytes)?
    } else {
        Table::new_unchecked(bytes)?
    };
    let stats = table.key_stats()?;
    verify_filter(&table, &stats, VerifyOptions::default())?;
    Ok(())
}

#[test]
fn a_flipped_byte_in_any_block_is_a_checksum_mismatch_at_its_offset() {
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
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
    let bytes = std::fs::read(tables_dir().join("user-4k-r16-none.ldb")).unwrap();
    let table = Table::new(&bytes).unwrap();
    let first = table.index_entries().next().unwrap().unwrap().handle;
    for (kind, want) in [
        (7u8, "unknown compression type 7"),
        (2, "unsupported compression zstd"),
    ] {
        let mut damaged = bytes.clone();
        damaged[(first.offset + first.size) as usize] = kind;
        let err = read_all(&damaged, false).unwrap_err();
        assert!(err.to_string().starts_with(want), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("at offset {}", first.offset)),
            "{err}"
        );
    }
}

#[test]
fn every_truncation_through_the_footer_is_an_error() {
    for (name, bytes) in tables() {
        for cut in 1..=FOOTER_LEN + 16 {
            let err = read_all(&bytes[..bytes.len().saturating_sub(cut)], true).unwrap_err();
            assert!(
                matches!(err, Error::BadMagic { .. } | Error::TruncatedFooter { .. }),
                "{name} less {cut} bytes: {err}"
            );
        }
    }
}

#[test]
fn cli_reports_bad_files_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(tables_dir().join("user-1k-r1-snappy.ldb")).unwrap();
    let mut flipped = good.clone();
    flipped[100] ^= 1;
    let files: [(&str, &[u8], &str); 5] = [
        ("empty.ldb", b"", "truncated footer: the file is 0 bytes"),
        ("garbage.ldb", &[0x5a; 300], "bad magic"),
        ("truncated.ldb", &good[..good.len() - 10], "bad magic"),
        ("short.ldb", &good[good.len() - 20..], "truncated footer"),
        (
            "flipped.ldb",
            &flipped,
            "checksum mismatch at offset 0 (data block)",
        ),
    ];
    for (file, bytes, want) in files {
        let path = dir.path().join(file);
        std::fs::write(&path, bytes).unwrap();
        for command in [&["verify"][..], &["inspect"], &["probe"]] {
            let mut args = command.to_vec();
            args.push(path.to_str().unwrap());
            if command[0] == "probe" {
                args.push("00");
            }
            let out = ldbfilter(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{file} {command:?}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.contains(file) && stderr.contains(want),
                "{file}: {stderr}"
            );
            // probe answers as LevelDB, which reads without checksums, and
            // says the mismatch; the others write nothing.
            let answered = command[0] == "probe" && file == "flipped.ldb";
            assert_eq!(out.stdout.is_empty(), !answered, "{file} {command:?}");
        }
    }
    for path in [dir.path().to_path_buf(), dir.path().join("missing.ldb")] {
        let out = ldbfilter(&["verify", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains(path.to_str().unwrap()));
    }
    // A bad table among good ones: the good ones are still reported.
    let good_path = tables_dir().join("user-1k-r1-snappy.ldb");
    let out = ldbfilter(&[
        "verify",
        dir.path().join("garbage.ldb").to_str().unwrap(),
        good_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains(": OK "));
}

/// Arbitrary bytes, and real tables damaged anywhere (with checksums on and
/// off, so damage reaches the block and Snappy parsers): errors, never panics.
#[test]
fn damaged_tables_never_panic() {
    static TABLES: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    fn prop(pick: usize, damage: Vec<(u32, u8)>, cut: u32, checked: bool, random: Vec<u8>) -> bool {
        let tables = TABLES.get_or_init(tables);
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
    let table = Table::new(&table_bytes).unwrap();
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
    let table = Table::new(&table_bytes).unwrap();
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
            let table = Table::new(&bytes).unwrap();
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

/// Damaged tables whose checksums pass (`testdata/damaged/`, or the directory
/// `DAMAGED_TABLES` names: CI makes a fresh set from another seed), each
/// with LevelDB's lookup decisions (`gen-damaged` in `oracle/`): `ldbfilter
/// probe` prints LevelDB's decision for every key; where LevelDB's lookup
/// fails, `corrupt`, one line on stderr and exit 1; where LevelDB does not
/// open the table, one line on stderr and exit 1.
///
/// Damage is the index, metaindex, filter or a data block changed (restart
/// offsets moved or swapped, the restart count, an entry's byte, any bit)
/// with its CRC-32C refitted, so that LevelDB reads what the damage made.
#[test]
fn probes_of_damaged_tables_are_leveldbs_decisions() {
    let dir = std::env::var_os("DAMAGED_TABLES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/damaged"),
        PathBuf::from,
    );
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    tables.sort();
    assert!(
        tables.len() >= 40,
        "{}: the damaged tables are there",
        dir.display()
    );
    let (mut differing, mut corrupt, mut unopened, mut guessed) = (Vec::new(), 0, 0, 0);
    for table in &tables {
        let expected = std::fs::read_to_string(table.with_extension("probe")).unwrap();
        let (header, answers) = expected.split_once('\n').unwrap();
        let keys = tempfile::NamedTempFile::new().unwrap();
        let key_list: String = answers
            .lines()
            .map(|l| format!("{}\n", l.split(' ').next().unwrap()))
            .collect();
        std::fs::write(keys.path(), key_list).unwrap();
        let mut args = vec![
            "probe",
            table.to_str().unwrap(),
            "--keys-from",
            keys.path().to_str().unwrap(),
        ];
        let mut out = ldbfilter(&args);
        if String::from_utf8_lossy(&out.stderr).contains("is a guess") {
            // The damage left nothing that tells the hash variant of
            // `leveldb.BuiltinBloomFilter` (LevelDB <= 1.17's signed, or
            // goleveldb's unsigned): the reader decides, as it did for
            // LevelDB here. Asked as that reader, ldbfilter must agree.
            guessed += 1;
            args.extend([
                "--hash",
                if header.contains("policy GoLevelDb") {
                    "unsigned"
                } else {
                    "signed"
                },
            ]);
            out = ldbfilter(&args);
        }
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let fails =
            header.starts_with("# LevelDB does not open") || answers.contains(" - corrupt\n");
        // Where LevelDB answers every key, a block the damage made fail its
        // checksum (a handle moved onto other bytes: LevelDB does not check)
        // is said in one line, with exit 1, after LevelDB's answers.
        let said = |needle| {
            out.status.code() == Some(1) && stderr.lines().count() == 1 && stderr.contains(needle)
        };
        let agrees = stdout == answers
            && if fails {
                said("")
            } else {
                (out.status.success() && stderr.is_empty()) || said("checksum mismatch")
            };
        if !agrees {
            differing.push(format!(
                "{}: {header}\n{}",
                table.display(),
                stdout
                    .lines()
                    .zip(answers.lines())
                    .filter(|(a, b)| a != b)
                    .take(3)
                    .map(|(a, b)| format!("  ours {a}\n  LevelDB {b}\n"))
                    .collect::<String>()
                    + &stderr
            ));
        }
        corrupt += usize::from(answers.contains(" - corrupt\n"));
        unopened += usize::from(answers.is_empty());
    }
    assert!(
        differing.is_empty(),
        "{} of {} damaged tables answered unlike LevelDB:\n{}",
        differing.len(),
        tables.len(),
        differing.join("\n")
    );
    eprintln!(
        "{} damaged tables as LevelDB answers them ({corrupt} with corrupt lookups, {unopened} it does not open, {guessed} whose hash variant only the reader decides)",
        tables.len()
    );
}

/// Statistics a caller builds by hand (counts near `usize::MAX`, more or
/// fewer filters than the table has, any bits per key) get a verdict or an
/// error from `verify_filter`, never a panic or an allocation they size.
#[test]
fn hand_made_statistics_get_a_verdict() {
    for (name, bytes) in tables() {
        let table = Table::new(&bytes).unwrap();
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
