//! `verify`: each table's filter rebuilt from its keys and compared byte
//! for byte.

use std::path::{Path, PathBuf};

use clap::Args;
use leveldb_filter::leveldb::{verify_filter, Verdict};
use leveldb_filter::rocksdb::{self, FilterCheck, FilterReport};

use crate::report::{escaped, shown, table_error, write_error};
use crate::tables::{filter_kind, filters, for_each_table, Detect, Format, Loaded, Opened};
use crate::Failure;

#[derive(Args)]
pub struct VerifyArgs {
    /// Table files (.ldb, .sst).
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<PathBuf>,
    /// Bits per key, instead of inferring it from the filters' sizes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=crate::filters::MAX_BITS_PER_KEY))]
    bits_per_key: Option<u32>,
    #[command(flatten)]
    detect: Detect,
}

/// A line per table; false if any table failed or did not check.
pub fn run(args: &VerifyArgs) -> bool {
    for_each_table(&args.tables, |path, out| {
        let loaded = Loaded::read(path)?;
        let (line, ok) = match loaded.format() {
            Format::LevelDb => leveldb_line(args, path, &loaded)?,
            Format::RocksDb => rocksdb_line(path, &loaded.bytes)?,
        };
        writeln!(out, "{line}").map_err(write_error)?;
        Ok(ok)
    })
}

/// A LevelDB table's line: `OK` with the settings its filter rebuilds
/// with, else what is wrong; whether all is well.
fn leveldb_line(
    args: &VerifyArgs,
    path: &Path,
    loaded: &Loaded,
) -> Result<(String, bool), Failure> {
    let (table, stats) = loaded.open(path)?;
    let options = args.detect.options(args.bits_per_key.map(|b| b as usize));
    let verdict = verify_filter(&table, &stats, options).map_err(table_error(path))?;
    let path = shown(path);
    let (line, ok) = match verdict {
        Verdict::NoFilter => (format!("{path}: no filter block"), true),
        Verdict::UnknownPolicy { name } => (
            format!("{path}: MISMATCH unknown filter policy {}", escaped(&name)),
            false,
        ),
        Verdict::Match {
            name,
            variant,
            key_format,
            bits_per_key,
        } => (
            format!("{path}: OK {name} {variant} {key_format} {bits_per_key}"),
            true,
        ),
        Verdict::Mismatch { name, difference } => (
            format!("{path}: MISMATCH {}: {difference}", escaped(&name)),
            false,
        ),
        other => (format!("{path}: NOT CHECKED {other:?}"), false),
    };
    Ok((line, ok))
}

/// A RocksDB table's line: `OK` where every filter rebuilds, else what is
/// wrong; whether all is well.
fn rocksdb_line(path: &Path, bytes: &[u8]) -> Result<(String, bool), Failure> {
    let Opened { sst, check, .. } = Opened::read(path, bytes)?;
    let shown = shown(path);
    let name = sst.filter_name().map(escaped).unwrap_or_default();
    let reports = match check {
        rocksdb::Verdict::NoFilter => return Ok((format!("{shown}: no filter block"), true)),
        rocksdb::Verdict::NotChecked { why } => {
            return Ok((format!("{shown}: NOT CHECKED {name}: {why}"), false))
        }
        rocksdb::Verdict::Filters(reports) => reports,
        _ => return Ok((format!("{shown}: NOT CHECKED {name}"), false)),
    };
    if let Some(bad) = reports.iter().find_map(mismatch) {
        return Ok((format!("{shown}: MISMATCH {name}: {bad}"), false));
    }
    let implementations: std::collections::BTreeSet<&str> = filters(&sst)
        .into_iter()
        .flatten()
        .map(|bits| bits.implementation())
        .collect();
    let implementations: Vec<&str> = implementations.into_iter().collect();
    let mut line = format!(
        "{shown}: OK {name} {} {} fv{}",
        filter_kind(&sst),
        implementations.join("+"),
        sst.footer().format_version
    );
    let count = |f: fn(&FilterCheck) -> bool| reports.iter().filter(|r| f(&r.check)).count();
    let rebuilt = count(|c| matches!(c, FilterCheck::Built { .. } | FilterCheck::Rebuilt));
    if sst.footer().format_version >= 6 && rebuilt > 0 {
        // RocksDB 9.2 and later may size a filter to what the allocator
        // gives (`optimize_filters_for_memory`): no bits per key is implied.
        line.push_str(&format!(
            " ({rebuilt} of {} rebuilt at their stored sizes)",
            reports.len()
        ));
        let matched = count(|c| matches!(c, FilterCheck::EveryKeyMatches));
        if matched > 0 {
            line.push_str(&format!(" ({matched} not rebuilt: every key matches)"));
        }
        return Ok((line, true));
    }
    // The bits per key every rebuilt filter agrees on.
    let ranges = reports.iter().filter_map(|r| match r.check {
        FilterCheck::Built { bits_per_key } => Some(bits_per_key),
        _ => None,
    });
    let agreed = ranges.reduce(|(lo, hi), (l, h)| (lo.max(l), hi.min(h)));
    match agreed {
        Some((lo, hi)) if lo <= hi && lo == hi => line.push_str(&format!(" bits/key {lo}")),
        Some((lo, hi)) if lo <= hi => line.push_str(&format!(" bits/key {lo}..{hi}")),
        Some(_) => line.push_str(" (partitions built at different bits per key)"),
        None => {}
    }
    let matched = count(|c| matches!(c, FilterCheck::EveryKeyMatches));
    if matched > 0 {
        line.push_str(&format!(
            " ({matched} of {} filters not rebuilt: every key matches)",
            reports.len()
        ));
    }
    let rebuilt = count(|c| matches!(c, FilterCheck::Rebuilt));
    if rebuilt > 0 {
        line.push_str(&format!(
            " ({rebuilt} rebuilt at their stored size, which RocksDB 7.8's sizing does not give)"
        ));
    }
    Ok((line, true))
}

fn mismatch(report: &FilterReport) -> Option<String> {
    match &report.check {
        FilterCheck::Mismatch { what } => Some(format!("filter {}: {what}", report.index)),
        _ => None,
    }
}
