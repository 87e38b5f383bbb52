//! `verify`: each table's filter rebuilt from its keys and compared byte
//! for byte.

use std::path::Path;

use clap::Args;
use leveldb_filter::format::{KeyOrder, TableFile};
use leveldb_filter::leveldb::{verify_filter, KeyStats, Table, Verdict};
use leveldb_filter::pebble;
use leveldb_filter::rocksdb::{self, FilterCheck, FilterReport};

use crate::report::{
    escaped, hex, one_line_json, shown, table_error, write_error, MISMATCH, OUT_OF_ORDER,
};
use crate::tables::{
    filter_kind, filters, place, run_tables, Detect, Loaded, Opened, Report, TableJson,
};
use crate::targets::{Inputs, Target};
use crate::{Failure, Status};
use leveldb_filter::TableFormat;

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    inputs: Inputs,
    /// Bits per key, instead of inferring it from the filters' sizes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=crate::filters::MAX_BITS_PER_KEY))]
    bits_per_key: Option<u32>,
    /// One JSON object per table and per error, then a summary object.
    #[arg(long)]
    json: bool,
    /// A filter that cannot be checked (NOT CHECKED: a prefix extractor
    /// only its writer's code knows) is a problem: exit 1.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    detect: Detect,
}

/// A report per table, in order, and a summary after a directory.
pub fn run(args: &VerifyArgs) -> Status {
    run_tables("verify", &args.inputs, args.json, None, |target| {
        let path = &target.path;
        let loaded = Loaded::read(target)?;
        let format = loaded.format.engine();
        let (line, ok) = match loaded.format {
            TableFormat::LevelDb => leveldb_line(args, target, &loaded)?,
            TableFormat::RocksDb { .. } => rocksdb_line(path, &loaded.file)?,
            TableFormat::Pebble { .. } => pebble_line(path, &loaded.file)?,
        };
        let not_checked = line.status == "not-checked";
        let ok = ok || (not_checked && !args.strict);
        let out = match args.json {
            true => {
                let object = VerifyJson {
                    table: TableJson::new(target, format.name()),
                    status: line.status,
                    detail: &line.detail,
                    hint: line.hint,
                };
                one_line_json(&object).map_err(write_error)?
            }
            false => {
                let hint = line.hint.map(|h| format!(" ({h})")).unwrap_or_default();
                format!("{}{}: {}{hint}", shown(path), place(target), line.text())
            }
        };
        Ok(Report {
            out: format!("{out}\n").into_bytes(),
            well: ok,
            not_checked,
        })
    })
}

/// `verify --json`'s object for a table.
#[derive(serde::Serialize)]
struct VerifyJson<'a> {
    #[serde(flatten)]
    table: TableJson<'a>,
    /// `ok`, `no-filter`, `mismatch`, `out-of-order` or `not-checked`.
    status: &'static str,
    /// The settings the filter rebuilds with, or what differs.
    detail: &'a str,
    hint: Option<&'static str>,
}

/// What `verify` says of a table: a status and its detail.
struct Line {
    status: &'static str,
    detail: String,
    /// What it means and what to do.
    hint: Option<&'static str>,
}

impl Line {
    fn new(status: &'static str, detail: String) -> Line {
        let hint = match status {
            "mismatch" => Some(MISMATCH),
            "out-of-order" => Some(OUT_OF_ORDER),
            _ => None,
        };
        Line {
            status,
            detail,
            hint,
        }
    }

    /// As text: `OK ...`, `MISMATCH ...`, `OUT OF ORDER ...`, `NOT CHECKED ...`,
    /// `no filter block`.
    fn text(&self) -> String {
        let word = match self.status {
            "ok" => "OK",
            "mismatch" => "MISMATCH",
            "out-of-order" => "OUT OF ORDER",
            "not-checked" => "NOT CHECKED",
            _ => return self.detail.clone(),
        };
        match self.detail.is_empty() {
            true => word.to_string(),
            false => format!("{word} {}", self.detail),
        }
    }
}

/// A LevelDB table's line: `OK` with the settings its filter rebuilds
/// with, else what is wrong; whether all is well. Keys out of order are a
/// problem in a database whose MANIFEST names the bytewise comparator; a
/// table named alone does not name its comparator, and its line says so.
fn leveldb_line(
    args: &VerifyArgs,
    target: &Target,
    loaded: &Loaded,
) -> Result<(Line, bool), Failure> {
    let path = &target.path;
    let (table, stats) = loaded.open(path)?;
    let order = target.live.as_ref().map(|live| live.key_order);
    let unordered = stats
        .out_of_order
        .as_ref()
        .map(|(before, after)| format!("key {} comes before key {}", hex(before), hex(after)));
    match (&unordered, order) {
        (Some(what), Some(Some(KeyOrder::Bytewise))) => {
            let what = format!(
                "{what}, against the database's comparator {}",
                KeyOrder::Bytewise.name()
            );
            return Ok((Line::new("out-of-order", what), false));
        }
        // Another comparator's order: the key pass checks bytewise order alone.
        (Some(_), Some(_)) => {}
        (Some(what), None) => {
            let (line, well) = leveldb_verdict(args, path, &table, &stats)?;
            let detail = format!(
                "{} ({what}, out of bytewise order: a comparator of its writer's, or damage)",
                line.detail
            );
            return Ok((Line { detail, ..line }, well));
        }
        (None, _) => {}
    }
    leveldb_verdict(args, path, &table, &stats)
}

/// A LevelDB table's filter, checked.
fn leveldb_verdict(
    args: &VerifyArgs,
    path: &Path,
    table: &Table<'_>,
    stats: &KeyStats,
) -> Result<(Line, bool), Failure> {
    let options = args.detect.options(args.bits_per_key.map(|b| b as usize));
    let verdict = verify_filter(table, stats, options).map_err(table_error(path))?;
    Ok(match verdict {
        Verdict::NoFilter => (Line::new("no-filter", "no filter block".into()), true),
        Verdict::UnknownPolicy { name } => (
            Line {
                hint: None,
                ..Line::new(
                    "mismatch",
                    format!("unknown filter policy {}", escaped(&name)),
                )
            },
            false,
        ),
        Verdict::Match {
            name,
            variant,
            key_format,
            bits_per_key,
        } => (
            Line::new(
                "ok",
                format!("{name} {variant} {key_format} {bits_per_key}"),
            ),
            true,
        ),
        Verdict::Mismatch { name, difference } => (
            Line::new("mismatch", format!("{}: {difference}", escaped(&name))),
            false,
        ),
        other => (Line::new("not-checked", format!("{other:?}")), false),
    })
}

/// A RocksDB table's line: `OK` where every filter rebuilds, else what is
/// wrong; whether all is well.
fn rocksdb_line(path: &Path, file: &TableFile) -> Result<(Line, bool), Failure> {
    let Opened {
        sst, check, walk, ..
    } = Opened::read(path, file)?;
    let name = sst.filter_name().map(escaped).unwrap_or_default();
    if let Some((before, after)) = &walk.out_of_order {
        let order =
            String::from_utf8_lossy(sst.comparator().unwrap_or(b"leveldb.BytewiseComparator"));
        let order = escaped(&order);
        let what = format!(
            "key {} comes before key {}, against the table's comparator {order}",
            hex(before),
            hex(after)
        );
        return Ok((Line::new("out-of-order", what), false));
    }
    let reports = match check {
        rocksdb::Verdict::NoFilter => {
            return Ok((Line::new("no-filter", "no filter block".into()), true))
        }
        rocksdb::Verdict::NotChecked { why } => {
            return Ok((Line::new("not-checked", format!("{name}: {why}")), false))
        }
        rocksdb::Verdict::Filters(reports) => reports,
        _ => return Ok((Line::new("not-checked", name.to_string()), false)),
    };
    if let Some(bad) = reports.iter().find_map(mismatch) {
        return Ok((Line::new("mismatch", format!("{name}: {bad}")), false));
    }
    let implementations: std::collections::BTreeSet<&str> = filters(&sst)
        .into_iter()
        .flatten()
        .map(|bits| bits.implementation())
        .collect();
    let implementations: Vec<&str> = implementations.into_iter().collect();
    // A block-based filter is LevelDB's layout, of no bits implementation.
    let implementations = match implementations.is_empty() {
        true => String::new(),
        false => format!(" {}", implementations.join("+")),
    };
    let mut line = format!(
        "{name} {}{implementations} fv{}",
        filter_kind(&sst),
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
        return Ok((Line::new("ok", line), true));
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
    Ok((Line::new("ok", line), true))
}

/// A Pebble table's line: `OK` where its filter rebuilds from the keys'
/// `Split` prefixes, `NOT CHECKED` under a comparer this crate does not
/// know, else what differs; whether all is well.
fn pebble_line(path: &Path, file: &TableFile) -> Result<(Line, bool), Failure> {
    let table = pebble::Table::open(file).map_err(table_error(path))?;
    let check = table.check_filter().map_err(table_error(path))?;
    let comparer = table.props().comparer().unwrap_or_default();
    let setting = format!(
        "{} {} comparer {}",
        pebble::FILTER_NAME,
        table.format(),
        escaped(&comparer)
    );
    let reports = match check {
        rocksdb::Verdict::NoFilter => {
            return Ok((Line::new("no-filter", "no filter block".into()), true))
        }
        rocksdb::Verdict::Filters(reports) => reports,
        rocksdb::Verdict::NotChecked { why } => {
            return Ok((Line::new("not-checked", format!("{setting}: {why}")), false))
        }
        other => {
            return Ok((
                Line::new("not-checked", format!("{setting}: {other:?}")),
                false,
            ))
        }
    };
    if let Some(bad) = reports.iter().find_map(mismatch) {
        return Ok((Line::new("mismatch", format!("{setting}: {bad}")), false));
    }
    let detail = match reports.first().map(|r| (&r.check, r.keys)) {
        Some((
            FilterCheck::Built {
                bits_per_key: (lo, hi),
            },
            _,
        )) if lo == hi => {
            format!("{setting} bits/key {lo}")
        }
        Some((
            FilterCheck::Built {
                bits_per_key: (lo, hi),
            },
            _,
        )) => {
            format!("{setting} bits/key {lo}..{hi}")
        }
        Some((_, 0)) => format!("{setting} (empty: no point keys)"),
        _ => format!("{setting} (rebuilt at its stored size, which no bits per key gives)"),
    };
    Ok((Line::new("ok", detail), true))
}

fn mismatch(report: &FilterReport) -> Option<String> {
    match &report.check {
        FilterCheck::Mismatch { what } => Some(format!("filter {}: {what}", report.index)),
        _ => None,
    }
}
