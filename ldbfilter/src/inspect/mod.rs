//! `inspect`: what a table holds (footer, blocks, keys, filter policy,
//! per-filter statistics, a summary), as text or one JSON object a line.

mod leveldb;
mod pebble;
mod rocksdb;

use std::io::{self, Write};

use clap::Args;
use leveldb_filter::db::ManifestPointer;
use leveldb_filter::leveldb::MeasuredFpr;

use crate::report::{escaped, hex, one_line_json, shown, HandleJson, PathJson};
use crate::tables::{run_tables, Detect, Loaded, Report, TableJson};
use crate::targets::{Database, Inputs, Target};
use crate::{Failure, Status};
use leveldb_filter::TableFormat;

#[derive(Args)]
pub struct InspectArgs {
    #[command(flatten)]
    inputs: Inputs,
    /// One JSON object per table and per error, then a summary object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detect: Detect,
}

/// A report per table, in order, and a summary after a directory.
pub fn run(args: &InspectArgs) -> Status {
    run_tables(
        "inspect",
        &args.inputs,
        args.json,
        Some(database),
        |target| {
            let loaded = Loaded::read(target)?;
            let mut out = Vec::new();
            match loaded.format {
                TableFormat::LevelDb => {
                    leveldb::report(args.json, &args.detect, target, &loaded, &mut out)?
                }
                TableFormat::RocksDb { .. } => {
                    rocksdb::report(target, &loaded.file, args.json, &mut out)?
                }
                TableFormat::Pebble { .. } => {
                    pebble::report(target, &loaded.file, args.json, &mut out)?
                }
            }
            Ok(Report {
                out,
                well: true,
                not_checked: false,
            })
        },
    )
}

/// What `inspect` says of a database before its tables: the MANIFEST, and
/// per column family its comparator and tables and bytes per level.
fn database(database: &Database, json: bool) -> Result<Vec<u8>, Failure> {
    let manifest = &database.manifest;
    let engine = manifest.engine().name();
    let families: Vec<FamilyJson> = manifest
        .column_families()
        .iter()
        .map(|(&id, name)| {
            let mut levels: Vec<LevelJson> = Vec::new();
            for t in manifest.tables().iter().filter(|t| t.column_family == id) {
                match levels.last_mut() {
                    Some(l) if l.level == t.level => {
                        l.tables += 1;
                        l.bytes += t.size;
                    }
                    _ => levels.push(LevelJson {
                        level: t.level,
                        tables: 1,
                        bytes: t.size,
                    }),
                }
            }
            let blob_files = manifest
                .blob_files()
                .iter()
                .filter(|b| b.column_family == id)
                .map(|b| BlobJson {
                    file: crate::targets::blob_file_name(b.number),
                    blobs: b.total.0,
                    bytes: b.total.1,
                    garbage_blobs: b.garbage.0,
                    garbage_bytes: b.garbage.1,
                })
                .collect();
            FamilyJson {
                id,
                name,
                comparator: manifest.comparator(id),
                levels,
                blob_files,
            }
        })
        .collect();
    let named_by = match &database.located.pointer {
        ManifestPointer::Current => "CURRENT",
        ManifestPointer::Marker { file, .. } => file.as_str(),
    };
    let mut out = Vec::new();
    if json {
        let object = DatabaseJson {
            kind: "database",
            path: PathJson::new(&database.dir),
            engine,
            manifest: &database.manifest_name,
            manifest_named_by: named_by,
            pebble_format_major_version: database.located.pebble_format,
            edits: manifest.edits(),
            column_families: families,
        };
        writeln!(out, "{}", one_line_json(&object).map_err(Failure::Write)?)
            .map_err(Failure::Write)?;
        return Ok(out);
    }
    // Pebble's format major version, and the marker naming the MANIFEST.
    let pebble = match (&database.located.pointer, database.located.pebble_format) {
        (ManifestPointer::Marker { file, .. }, Some(v)) => {
            format!(" (named by {}, format major version {v})", escaped(file))
        }
        (ManifestPointer::Current, Some(v)) => format!(" (format major version {v})"),
        (ManifestPointer::Marker { file, .. }, None) => format!(" (named by {})", escaped(file)),
        (ManifestPointer::Current, None) => String::new(),
    };
    let mut text = format!(
        "{}: {engine} database, {}{pebble}, {} edits\n",
        shown(&database.dir),
        database.manifest_name,
        manifest.edits()
    );
    for family in &families {
        let levels: Vec<String> = family
            .levels
            .iter()
            .map(|l| format!("level {}: {} tables, {} bytes", l.level, l.tables, l.bytes))
            .collect();
        text.push_str(&format!(
            "  column family {} (id {}): comparator {}; {}\n",
            escaped(family.name),
            family.id,
            escaped(
                family
                    .comparator
                    .unwrap_or("leveldb.BytewiseComparator (the default)")
            ),
            if levels.is_empty() {
                "no tables".to_string()
            } else {
                levels.join("; ")
            }
        ));
        if !family.blob_files.is_empty() {
            let files: Vec<String> = family
                .blob_files
                .iter()
                .map(|b| {
                    format!(
                        "{} ({} blobs, {} bytes; {} blobs, {} bytes garbage)",
                        b.file, b.blobs, b.bytes, b.garbage_blobs, b.garbage_bytes
                    )
                })
                .collect();
            text.push_str(&format!("    blob files: {}\n", files.join(", ")));
        }
    }
    out.extend_from_slice(text.as_bytes());
    Ok(out)
}

/// `inspect --json`'s object for a database, before its tables.
#[derive(serde::Serialize)]
struct DatabaseJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    path: PathJson<'a>,
    /// `leveldb`, `rocksdb` or `pebble`, from the MANIFEST's edits and
    /// the directory's files (Pebble's markers and OPTIONS).
    engine: &'static str,
    manifest: &'a str,
    /// `CURRENT`, or the Pebble marker file naming the MANIFEST.
    manifest_named_by: &'a str,
    /// Pebble's format major version (its format-version marker); null
    /// without one.
    pebble_format_major_version: Option<u64>,
    edits: usize,
    column_families: Vec<FamilyJson<'a>>,
}

#[derive(serde::Serialize)]
struct FamilyJson<'a> {
    id: u32,
    name: &'a str,
    comparator: Option<&'a str>,
    levels: Vec<LevelJson>,
    /// The live blob files (RocksDB's integrated BlobDB), by number.
    blob_files: Vec<BlobJson>,
}

#[derive(serde::Serialize)]
struct BlobJson {
    file: String,
    blobs: u64,
    bytes: u64,
    garbage_blobs: u64,
    garbage_bytes: u64,
}

#[derive(serde::Serialize)]
struct LevelJson {
    level: u32,
    tables: usize,
    bytes: u64,
}

/// Where a database holds the table, as `inspect`'s text says it: its
/// level, column family and the key range the MANIFEST records.
fn database_lines(target: &Target, out: &mut dyn Write) -> io::Result<()> {
    let Some(live) = &target.live else {
        return Ok(());
    };
    writeln!(
        out,
        "  database         level {}, file number {}, column family {}",
        live.level,
        live.number,
        escaped(&live.column_family)
    )?;
    if let Some(backing) = live.backing {
        writeln!(
            out,
            "  virtual table    of backing table {backing} (its keys within the manifest range)"
        )?;
    }
    if let Some(comparator) = &live.comparator {
        writeln!(out, "  db comparator    {}", escaped(comparator))?;
    }
    writeln!(
        out,
        "  manifest range   {} .. {} (user keys, hex)",
        hex(&live.key_range.0),
        hex(&live.key_range.1)
    )
}

/// `inspect --json`'s object for a table, the same for LevelDB and
/// RocksDB (fields a format does not have are null).
#[derive(serde::Serialize)]
struct InspectJson<'a> {
    #[serde(flatten)]
    table: TableJson<'a>,
    file_size: u64,
    /// RocksDB's footer's format_version; null for LevelDB.
    format_version: Option<u32>,
    /// The block checksum: `crc32c` for LevelDB.
    checksum: String,
    metaindex: HandleJson,
    index: HandleJson,
    /// RocksDB's index type; null for LevelDB.
    index_type: Option<u32>,
    compression: Vec<String>,
    compression_manager: Option<&'a str>,
    data_blocks: u64,
    entries: u64,
    /// `internal` (a database's) or `user`.
    key_format: &'static str,
    /// The table's comparator (RocksDB), else the database's MANIFEST's.
    comparator: Option<&'a str>,
    smallest_key_hex: Option<String>,
    largest_key_hex: Option<String>,
    filter: Option<FilterJson<'a>>,
}

/// A table's filter in `inspect --json`.
#[derive(serde::Serialize)]
struct FilterJson<'a> {
    policy: &'a str,
    /// `leveldb` (LevelDB's filter block), `full`, `partitioned` or
    /// `block-based`.
    kind: &'static str,
    /// LevelDB's hash variant and how it was found; null for RocksDB.
    hash: Option<String>,
    hash_basis: Option<String>,
    whole_key_filtering: bool,
    prefix_extractor: Option<&'a str>,
    /// LevelDB's filter block's base_lg (a filter per 2^base_lg bytes of
    /// data-block offset); null for RocksDB.
    base_lg: Option<u8>,
    /// Filters, their bytes and keys, in all.
    count: usize,
    bytes: usize,
    keys: u64,
    bits_per_key: Option<f64>,
    /// From the bits set, weighted by keys.
    estimated_fpr: Option<f64>,
    /// Measured on neighbours of the table's keys.
    measured_fpr: Option<MeasuredJson>,
    problem: Option<String>,
    filters: Vec<StatJson>,
}

/// [`MeasuredFpr`], and its rate.
#[derive(serde::Serialize)]
struct MeasuredJson {
    probed: u64,
    passed: u64,
    rate: Option<f64>,
}

impl From<MeasuredFpr> for MeasuredJson {
    fn from(m: MeasuredFpr) -> Self {
        MeasuredJson {
            probed: m.probed,
            passed: m.passed,
            rate: Some(m.rate()).filter(|r| r.is_finite()),
        }
    }
}

/// One filter (LevelDB's per 2 KiB, RocksDB's full filter or partition):
/// its statistics, or why it does not read.
#[derive(serde::Serialize, Default)]
struct StatJson {
    implementation: Option<&'static str>,
    keys: Option<u64>,
    bytes: Option<usize>,
    probes: Option<u32>,
    bits_per_key: Option<f64>,
    share_set: Option<f64>,
    estimated_fpr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

/// Totals over the filters that read: bytes, keys, and, weighted by each
/// filter's keys, its bits per key (its bit array's, as each filter's own
/// `bits_per_key` counts them) and the rate its bits set imply.
fn totals(filters: &[StatJson]) -> (usize, u64, Option<f64>, Option<f64>) {
    let weighted = |of: fn(&StatJson) -> Option<f64>| {
        let (mut sum, mut keys) = (0.0, 0);
        for (value, k) in filters.iter().filter_map(|f| of(f).zip(f.keys)) {
            sum += value * k as f64;
            keys += k;
        }
        (keys > 0).then(|| sum / keys as f64)
    };
    let bytes = filters.iter().filter_map(|f| f.bytes).sum();
    let keys = filters.iter().filter_map(|f| f.keys).sum();
    (
        bytes,
        keys,
        weighted(|f| f.bits_per_key),
        weighted(|f| f.estimated_fpr),
    )
}
