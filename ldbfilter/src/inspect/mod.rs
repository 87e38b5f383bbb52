//! `inspect`: what a table holds (footer, blocks, keys, filter policy,
//! per-filter statistics, a summary), as text or one JSON object a line.

mod leveldb;
mod rocksdb;

use std::path::PathBuf;

use clap::Args;

use crate::tables::{for_each_table, Detect, Format, Loaded};

#[derive(Args)]
pub struct InspectArgs {
    /// Table files (.ldb, .sst).
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<PathBuf>,
    /// One JSON object per table, one per line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detect: Detect,
}

/// A report per table, as it is read; false if any table failed.
pub fn run(args: &InspectArgs) -> bool {
    for_each_table(&args.tables, |path, out| {
        let loaded = Loaded::read(path)?;
        match loaded.format() {
            Format::LevelDb => leveldb::report(args.json, &args.detect, path, &loaded, out)?,
            Format::RocksDb => rocksdb::report(path, &loaded.bytes, args.json, out)?,
        }
        Ok(true)
    })
}
