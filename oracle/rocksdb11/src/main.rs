//! Writes SST files with RocksDB 11.12, format_version 7 and 8, and beside
//! each RocksDB's own per-key decisions, as gen-rocksdb.cc does for 7.8: the
//! file is ingested into a DB, each key is read with get, and the
//! statistics tickers `rocksdb.bloom.filter.useful` and
//! `rocksdb.bloom.filter.prefix.useful` say whether the filter ruled the key
//! out. For each table NAME: NAME.sst and NAME.answers (`<key hex>
//! written|unwritten may-match|absent`, the unwritten keys between the
//! table's first and last keys).

use rust_rocksdb::{
    statistics::Ticker, BlockBasedIndexType, BlockBasedOptions, ChecksumType, DBCompressionType,
    IngestExternalFileOptions, Options, SliceTransform, SstFileWriter, DB,
};

/// A table to write: its name, keys, and options.
struct Spec {
    name: &'static str,
    keys: usize,
    format_version: i32,
    ribbon: bool,
    partitioned: bool,
    prefix: usize,
    whole: bool,
    checksum: ChecksumType,
    compression: DBCompressionType,
}

const SPECS: &[Spec] = &[
    spec("fastbloom-fv7-xxh3", 600, 7, false, false, 0, true, ChecksumType::XXH3, DBCompressionType::Lz4),
    spec("fastbloom-fv8-xxh3", 600, 8, false, false, 0, true, ChecksumType::XXH3, DBCompressionType::None),
    spec("fastbloom-fv8-crc32c-zstd", 500, 8, false, false, 0, true, ChecksumType::CRC32c, DBCompressionType::Zstd),
    spec("fastbloom-fv8-partitioned-xxh3", 800, 8, false, true, 0, true, ChecksumType::XXH3, DBCompressionType::Lz4),
    spec("ribbon-fv8-partitioned-xxh3", 800, 8, true, true, 0, true, ChecksumType::XXH3, DBCompressionType::None),
    spec("fastbloom-fv8-prefix4-xxh3", 500, 8, false, false, 4, true, ChecksumType::XXH3, DBCompressionType::Snappy),
    spec("fastbloom-fv8-partitioned-prefixonly11-xxh3", 600, 8, false, true, 11, false, ChecksumType::XXH3, DBCompressionType::None),
];

#[allow(clippy::too_many_arguments)]
const fn spec(
    name: &'static str,
    keys: usize,
    format_version: i32,
    ribbon: bool,
    partitioned: bool,
    prefix: usize,
    whole: bool,
    checksum: ChecksumType,
    compression: DBCompressionType,
) -> Spec {
    Spec { name, keys, format_version, ribbon, partitioned, prefix, whole, checksum, compression }
}

fn options(spec: &Spec) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(spec.format_version);
    if spec.ribbon {
        table.set_ribbon_filter(10.0);
    } else {
        table.set_bloom_filter(10.0, false);
    }
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
    let mut opts = Options::default();
    opts.create_if_missing(true);
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
    let mut writer = SstFileWriter::create(&opts);
    writer.open(&path)?;
    for i in (0..keys.len()).step_by(2) {
        writer.put(&keys[i], format!("v{i}"))?;
    }
    writer.finish()?;
    let db_dir = out.join(format!(".db-{}", spec.name));
    let _ = std::fs::remove_dir_all(&db_dir);
    let db = DB::open(&opts, &db_dir)?;
    db.ingest_external_file_opts(&IngestExternalFileOptions::default(), vec![&path])?;
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = std::path::PathBuf::from(args.next().ok_or("usage: gen-rocksdb11 OUT_DIR [SEED]")?);
    let seed = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    std::fs::create_dir_all(&out)?;
    for spec in SPECS {
        write(&out, spec, seed)?;
    }
    Ok(())
}
