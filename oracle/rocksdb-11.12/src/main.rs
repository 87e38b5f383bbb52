//! Writes SST files with RocksDB 11.12, format_version 7 and 8, and beside
//! each RocksDB's own per-key decisions, as gen-rocksdb.cc does for 7.8: the
//! file is ingested into a DB, each key is read with get, and the
//! statistics tickers `rocksdb.bloom.filter.useful` and
//! `rocksdb.bloom.filter.prefix.useful` say whether the filter ruled the key
//! out. For each table NAME: NAME.sst and NAME.answers (`<key hex>
//! written|unwritten may-match|absent`, the unwritten keys between the
//! table's first and last keys).
//!
//! With `--db --seed N OUT_DIR` (module `db`): a whole database directory
//! with two column families and tables at several levels, and beside it
//! RocksDB's own answers (`live.txt`, `gets.txt`), as
//! oracle/rocksdb-7.8/gen-rocksdb-db.cc does for 7.8.
//!
//! With `--deployed --seed N OUT_DIR` (module `deployed`): databases with
//! deletions of every kind and merges, blob files, and keys left in the
//! WAL, and RocksDB's answers beside each.

mod db;
mod deployed;

use rust_rocksdb::{
    statistics::Ticker, BlockBasedIndexType, BlockBasedOptions, ChecksumType, DBCompressionType,
    DataBlockIndexType, IngestExternalFileOptions, Options, SliceTransform, SstFileWriter, DB,
};

/// How a table is written: by an SstFileWriter, or by a DB, as its flush
/// output (one L0 file) or its compaction output (that file, and a second
/// flush of the same keys with new values, compacted into one file at the
/// last level).
#[derive(Clone, Copy, PartialEq)]
enum Source {
    Writer,
    Flush,
    Compaction,
}

/// A table to write: its name, keys, and options.
struct Spec {
    name: &'static str,
    keys: usize,
    format_version: i32,
    /// Ribbon; with `hybrid`, Bloom below level 1 and Ribbon from it.
    ribbon: bool,
    bits_per_key: f64,
    hybrid: bool,
    partitioned: bool,
    prefix: usize,
    whole: bool,
    checksum: ChecksumType,
    compression: DBCompressionType,
    /// Data blocks: keys and values in sections of their own; a hash index.
    separated: bool,
    hash_index: bool,
    /// Index blocks marked uniform (footer bit 29) where they are.
    uniform: bool,
    /// Padding so that no block crosses a 4 KiB boundary.
    super_blocks: bool,
    /// The index type kHashSearch (index type 1: prefixes hashed to their
    /// index entries, in meta blocks of their own).
    hash_search: bool,
    source: Source,
}

const BASE: Spec = Spec {
    name: "",
    keys: 600,
    format_version: 8,
    ribbon: false,
    bits_per_key: 10.0,
    hybrid: false,
    partitioned: false,
    prefix: 0,
    whole: true,
    checksum: ChecksumType::XXH3,
    compression: DBCompressionType::None,
    separated: false,
    hash_index: false,
    uniform: false,
    super_blocks: false,
    hash_search: false,
    source: Source::Writer,
};

#[rustfmt::skip]
const SPECS: &[Spec] = &[
    Spec { name: "fastbloom-fv7-xxh3", format_version: 7, compression: DBCompressionType::Lz4, ..BASE },
    Spec { name: "fastbloom-fv8-xxh3", ..BASE },
    // No checksums: a test changes its bytes in place.
    Spec { name: "fastbloom-fv7-none-lz4", keys: 300, format_version: 7, checksum: ChecksumType::NoChecksum, compression: DBCompressionType::Lz4, ..BASE },
    Spec { name: "fastbloom-fv8-crc32c-zstd", keys: 500, checksum: ChecksumType::CRC32c, compression: DBCompressionType::Zstd, ..BASE },
    Spec { name: "fastbloom-fv8-partitioned-xxh3", keys: 800, partitioned: true, compression: DBCompressionType::Lz4, ..BASE },
    Spec { name: "ribbon-fv8-partitioned-xxh3", keys: 800, ribbon: true, partitioned: true, ..BASE },
    // Ribbon at other bits per key and sizes: few keys (the Bloom filter
    // RocksDB builds instead), thousands, a prefix extractor (9.6's feed).
    Spec { name: "ribbon-fv8-bpk3.5-xxh3", keys: 3000, ribbon: true, bits_per_key: 3.5, ..BASE },
    Spec { name: "ribbon-fv7-bpk23.5-xxh3", keys: 2000, format_version: 7, ribbon: true, bits_per_key: 23.5, ..BASE },
    Spec { name: "ribbon-fv8-bpk1-xxh3", ribbon: true, bits_per_key: 1.0, ..BASE },
    Spec { name: "ribbon-fv8-fewkeys-xxh3", keys: 100, ribbon: true, ..BASE },
    Spec { name: "ribbon-fv8-prefix4-xxh3", keys: 2500, ribbon: true, prefix: 4, compression: DBCompressionType::Lz4, ..BASE },
    Spec { name: "fastbloom-fv8-prefix4-xxh3", keys: 500, prefix: 4, compression: DBCompressionType::Snappy, ..BASE },
    Spec { name: "fastbloom-fv8-partitioned-prefixonly11-xxh3", prefix: 11, whole: false, partitioned: true, ..BASE },
    Spec { name: "fastbloom-fv8-partitioned-separatedkv-uniform-xxh3", keys: 500, partitioned: true, separated: true, uniform: true, ..BASE },
    Spec { name: "fastbloom-fv7-hash-superblock-crc32c-zstd", keys: 400, format_version: 7, checksum: ChecksumType::CRC32c, compression: DBCompressionType::Zstd, hash_index: true, super_blocks: true, ..BASE },
    Spec { name: "fastbloom-fv8-separatedkv-hash-superblock-xxh3", keys: 400, separated: true, hash_index: true, super_blocks: true, compression: DBCompressionType::Lz4, ..BASE },
    Spec { name: "fastbloom-fv8-hashsearch-prefix4-xxhash", keys: 400, prefix: 4, hash_search: true, checksum: ChecksumType::XXHash, ..BASE },
    Spec { name: "db-flush-hybrid-fv8-partitioned-xxh3", keys: 500, ribbon: true, hybrid: true, partitioned: true, source: Source::Flush, ..BASE },
    Spec { name: "db-compaction-hybrid-fv8-partitioned-xxh3", keys: 500, ribbon: true, hybrid: true, partitioned: true, source: Source::Compaction, ..BASE },
    Spec { name: "db-flush-fastbloom-fv7-prefix4-xxh3", keys: 300, format_version: 7, prefix: 4, compression: DBCompressionType::Lz4, source: Source::Flush, ..BASE },
    Spec { name: "db-compaction-fastbloom-fv7-prefix4-xxh3", keys: 300, format_version: 7, prefix: 4, compression: DBCompressionType::Lz4, source: Source::Compaction, ..BASE },
];

fn options(spec: &Spec) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(spec.format_version);
    match (spec.ribbon, spec.hybrid) {
        (true, true) => table.set_hybrid_ribbon_filter(spec.bits_per_key, 1),
        (true, false) => table.set_ribbon_filter(spec.bits_per_key),
        (false, _) => table.set_bloom_filter(spec.bits_per_key, false),
    }
    // ChecksumType is neither Copy nor Clone.
    table.set_checksum_type(match spec.checksum {
        ChecksumType::CRC32c => ChecksumType::CRC32c,
        ChecksumType::XXHash => ChecksumType::XXHash,
        ChecksumType::XXHash64 => ChecksumType::XXHash64,
        ChecksumType::NoChecksum => ChecksumType::NoChecksum,
        ChecksumType::XXH3 => ChecksumType::XXH3,
    });
    table.set_block_size(1024);
    table.set_index_block_restart_interval(4);
    table.set_whole_key_filtering(spec.whole);
    if spec.partitioned {
        table.set_partition_filters(true);
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_metadata_block_size(256);
    }
    if spec.hash_search {
        table.set_index_type(BlockBasedIndexType::HashSearch);
    }
    table.set_separate_key_value_in_data_block(spec.separated);
    if spec.hash_index {
        table.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
    }
    if spec.uniform {
        // Every index block of three restarts or more is "uniform".
        table.set_uniform_cv_threshold(1e9);
    }
    if spec.super_blocks {
        table.set_super_block_alignment_size(4096);
        table.set_super_block_alignment_space_overhead_ratio(4);
    }
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_disable_auto_compactions(true);
    opts.set_block_based_table_factory(&table);
    opts.set_compression_type(spec.compression);
    if spec.prefix > 0 {
        opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(spec.prefix));
    }
    opts.enable_statistics();
    opts
}

/// xorshift64: the keys' random tails.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn write(out: &std::path::Path, spec: &Spec, seed: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ spec.name.len() as u64 | 1);
    // Key i: even written, odd probed; varying lengths, bytes >= 0x80 too.
    let keys: Vec<Vec<u8>> = (0..2 * spec.keys)
        .map(|i| {
            let mut key = format!("key{i:08}").into_bytes();
            let extra = rng.next() % 24;
            key.extend((0..extra).map(|_| rng.next() as u8));
            key
        })
        .collect();
    let opts = options(spec);
    let path = out.join(format!("{}.sst", spec.name));
    let db_dir = out.join(format!(".db-{}", spec.name));
    let _ = std::fs::remove_dir_all(&db_dir);
    let db = DB::open(&opts, &db_dir)?;
    let put_all = |round: usize| -> Result<(), rust_rocksdb::Error> {
        for i in (0..keys.len()).step_by(2) {
            db.put(&keys[i], format!("v{i}.{round}"))?;
        }
        db.flush()
    };
    match spec.source {
        Source::Writer => {
            let mut writer = SstFileWriter::create(&opts);
            writer.open(&path)?;
            for i in (0..keys.len()).step_by(2) {
                writer.put(&keys[i], format!("v{i}"))?;
            }
            writer.finish()?;
            db.ingest_external_file_opts(&IngestExternalFileOptions::default(), vec![&path])?;
        }
        Source::Flush => put_all(0)?,
        Source::Compaction => {
            put_all(0)?;
            put_all(1)?;
            db.compact_range(None::<&[u8]>, None::<&[u8]>);
        }
    }
    if spec.source != Source::Writer {
        // The DB's one table is the golden one.
        let live = db.live_files()?;
        let [file] = live.as_slice() else {
            return Err(format!("{}: {} live tables, not 1", spec.name, live.len()).into());
        };
        let from = std::path::Path::new(&file.directory).join(file.name.trim_start_matches('/'));
        std::fs::copy(from, &path)?;
    }
    let useful = || {
        opts.get_ticker_count(Ticker::BloomFilterUseful)
            + opts.get_ticker_count(Ticker::BloomFilterPrefixUseful)
    };
    let mut answers = String::new();
    for (i, key) in keys.iter().enumerate().take(keys.len() - 1) {
        let before = useful();
        let value = db.get(key)?;
        let absent = useful() > before;
        if i % 2 == 0 && (absent || value.is_none()) {
            return Err(format!("{}: a written key was not found", spec.name).into());
        }
        let written = if i % 2 == 0 { "written" } else { "unwritten" };
        let answer = if absent { "absent" } else { "may-match" };
        answers.push_str(&format!("{} {written} {answer}\n", hex(key)));
    }
    drop(db);
    std::fs::remove_dir_all(&db_dir)?;
    std::fs::write(out.join(format!("{}.answers", spec.name)), answers)?;
    Ok(())
}

/// `--big PATH [--partitioned]`: a table of about 64 MiB with RocksDB
/// 11.12's default table options (format_version 7, Snappy) and a
/// FastLocalBloom filter at 10 bits per key, to measure readers on: keys
/// `user:%012d` of even numbers, values of 100 pseudo-random bytes.
fn big(path: &str, partitioned: bool) -> Result<(), Box<dyn std::error::Error>> {
    let mut table = BlockBasedOptions::default();
    table.set_bloom_filter(10.0, false);
    if partitioned {
        table.set_partition_filters(true);
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
    }
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&table);
    let mut writer = SstFileWriter::create(&opts);
    writer.open(path)?;
    let mut rng = Rng(0x5eed);
    let mut value = [0u8; 100];
    for i in 0..580_000u64 {
        for chunk in value.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next().to_le_bytes()[..chunk.len()]);
        }
        writer.put(format!("user:{:012}", 2 * i), value)?;
    }
    writer.finish()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, seed) = match args[..] {
        ["--big", path] => return big(path, false),
        ["--big", path, "--partitioned"] => return big(path, true),
        ["--db", "--seed", seed, out] => return db::run(seed.parse()?, out),
        ["--deployed", "--seed", seed, out] => return deployed::run(seed.parse()?, out),
        [out] => (out, 1),
        [out, seed] => (out, seed.parse()?),
        _ => return Err("usage: gen-rocksdb11 OUT_DIR [SEED] | --big PATH [--partitioned] | --db --seed N OUT_DIR | --deployed --seed N OUT_DIR".into()),
    };
    let out = std::path::Path::new(out);
    std::fs::create_dir_all(out)?;
    for spec in SPECS {
        write(out, spec, seed)?;
    }
    Ok(())
}
