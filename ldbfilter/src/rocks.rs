//! `inspect`, `probe` and `verify` on RocksDB tables (SST files whose
//! footer ends with RocksDB's magic number).

use std::io::{self, Write};
use std::path::Path;

use leveldb_filter::rocksdb::{
    FilterBits, FilterCheck, FilterReport, Footer, KeyStats, SstFilter, Table, Verdict,
};

use crate::report::{answer_word, table_error, write_error, HandleJson, PAST_LAST_KEY};
use crate::{escaped, hex, shown, Failure};

/// The table's filter kind: `full`, `partitioned` or `block-based`.
fn filter_kind(sst: &Table<'_>) -> &'static str {
    match sst.filter() {
        Ok(Some(SstFilter::Full(_))) => "full",
        Ok(Some(SstFilter::Partitioned(_))) => "partitioned",
        Ok(Some(SstFilter::BlockBased)) => "block-based",
        Ok(Some(_)) => "other",
        Ok(None) => "none",
        Err(_) => "unreadable",
    }
}

/// Each filter of the table (the full filter, or each distinct partition
/// in file order: one per index entry in a table RocksDB wrote), or none.
fn filters<'s>(sst: &'s Table<'_>) -> Vec<Result<&'s FilterBits<'s>, String>> {
    match sst.filter() {
        Ok(Some(SstFilter::Full(bits))) => vec![Ok(bits)],
        Ok(Some(SstFilter::Partitioned(partitions))) => partitions
            .distinct()
            .map(|(_, p)| p.map_err(ToString::to_string))
            .collect(),
        Ok(_) => Vec::new(),
        Err(e) => vec![Err(e.to_string())],
    }
}

/// One filter's statistics: implementation, size, probes, and from its bits
/// the share set and the false-positive rate they imply.
struct Stats {
    implementation: &'static str,
    keys: Option<u64>,
    bytes: usize,
    probes: Option<u32>,
    share_set: Option<f64>,
    estimated_fpr: Option<f64>,
}

impl Stats {
    fn new(bits: &FilterBits<'_>, keys: Option<u64>) -> Stats {
        let array = bits.bit_array();
        let set: u64 = array.iter().map(|b| u64::from(b.count_ones())).sum();
        let share = (!array.is_empty()).then(|| set as f64 / (array.len() * 8) as f64);
        let estimated_fpr = match (bits, bits.probes(), share) {
            (_, Some(k), Some(share)) => Some(share.powi(k as i32)),
            // A Ribbon filter's rate is 2^-r for r result bits per key
            // slot: the solution's columns per 128-slot block.
            (FilterBits::Ribbon { blocks, .. }, None, _) => {
                let columns = (array.len() / 16) as f64 / f64::from(*blocks);
                Some((-columns).exp2())
            }
            _ => None,
        };
        Stats {
            implementation: bits.implementation(),
            keys,
            bytes: array.len() + 5,
            probes: bits.probes(),
            share_set: share.filter(|_| bits.probes().is_some()),
            estimated_fpr,
        }
    }

    fn bits_per_key(&self) -> Option<f64> {
        let keys = self.keys.filter(|&k| k > 0)?;
        Some((self.bytes - 5) as f64 * 8.0 / keys as f64)
    }
}

/// The table, its keys walked, and its filter checked against them.
fn open<'a>(path: &Path, bytes: &'a [u8]) -> Result<Opened<'a>, Failure> {
    let sst = Table::open(bytes).map_err(table_error(path))?;
    let mut range: Option<(Vec<u8>, Vec<u8>)> = None;
    let walk = sst
        .for_each_key(|key, _| match &mut range {
            None => range = Some((key.to_vec(), key.to_vec())),
            Some((_, last)) => {
                last.clear();
                last.extend_from_slice(key);
            }
        })
        .map_err(table_error(path))?;
    let check = sst.check_filter().map_err(table_error(path))?;
    Ok(Opened {
        sst,
        walk,
        check,
        range,
    })
}

/// A table read through: its keys walked (the first and last user keys
/// kept) and its filter checked.
struct Opened<'a> {
    sst: Table<'a>,
    walk: KeyStats,
    check: Verdict,
    range: Option<(Vec<u8>, Vec<u8>)>,
}

/// `inspect`'s first lines, from the footer alone: all it can say of a
/// table whose body does not read.
fn footer_lines(
    path: &Path,
    footer: &Footer,
    file_len: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "{}", shown(path))?;
    writeln!(
        out,
        "  table            rocksdb, format_version {}, checksum {}",
        footer.format_version, footer.checksum
    )?;
    writeln!(out, "  file size        {file_len} bytes")?;
    let meta = footer.metaindex;
    writeln!(
        out,
        "  metaindex        offset {} size {}",
        meta.offset, meta.size
    )
}

/// The keys the check put in filter `i` of `count`, where each index
/// entry names a partition of its own (as in every table RocksDB writes).
fn keys_of(check: &Verdict, i: usize, count: usize) -> Option<u64> {
    match check {
        Verdict::Filters(reports) if reports.len() == count => {
            reports.get(i).filter(|r| r.index == i).map(|r| r.keys)
        }
        _ => None,
    }
}

pub fn inspect(path: &Path, bytes: &[u8], json: bool, out: &mut dyn Write) -> Result<(), Failure> {
    let Opened {
        sst,
        walk,
        check,
        range,
    } = match open(path, bytes) {
        Ok(opened) => opened,
        Err(failure) => {
            // What the footer says, before the error that ends the table.
            if let (false, Ok(footer)) = (json, Footer::read_end(bytes, bytes.len() as u64)) {
                footer_lines(path, &footer, bytes.len(), out).map_err(write_error)?;
            }
            return Err(failure);
        }
    };
    let footer = sst.footer();
    let comparator = sst
        .property("rocksdb.comparator")
        .map(String::from_utf8_lossy);
    let compressions: Vec<String> = walk.compressions.iter().map(ToString::to_string).collect();
    let manager = sst.compression_manager().map(String::from_utf8_lossy);
    let filters = filters(&sst);
    let count = filters.len();
    let stats: Vec<Result<Stats, String>> = filters
        .into_iter()
        .enumerate()
        .map(|(i, bits)| bits.map(|bits| Stats::new(bits, keys_of(&check, i, count))))
        .collect();
    let write = |out: &mut dyn Write| -> io::Result<()> {
        if json {
            let report = SstJson {
                path: crate::PathJson::new(path),
                table: "rocksdb",
                format_version: footer.format_version,
                checksum: footer.checksum.to_string(),
                file_size: bytes.len(),
                metaindex: footer.metaindex.into(),
                index: IndexJson {
                    offset: footer.index.offset,
                    size: footer.index.size,
                    r#type: sst.index_type(),
                },
                compression: compressions.clone(),
                compression_manager: manager.as_deref(),
                data_blocks: walk.data_blocks,
                keys: walk.keys,
                comparator: comparator.as_deref(),
                smallest_key: range.as_ref().map(|(first, _)| hex(first)),
                largest_key: range.as_ref().map(|(_, last)| hex(last)),
                filter: sst.filter_name().map(|name| SstFilterJson {
                    name,
                    kind: filter_kind(&sst),
                    whole_key_filtering: sst.whole_key_filtering(),
                    prefix_extractor: sst.prefix_extractor(),
                    filters: stats
                        .iter()
                        .map(|st| match st {
                            Err(problem) => StatJson {
                                problem: Some(problem.clone()),
                                ..StatJson::default()
                            },
                            Ok(st) => StatJson {
                                implementation: Some(st.implementation),
                                keys: st.keys,
                                bytes: Some(st.bytes),
                                probes: st.probes,
                                bits_per_key: st.bits_per_key(),
                                share_set: st.share_set,
                                estimated_fpr: st.estimated_fpr,
                                problem: None,
                            },
                        })
                        .collect(),
                }),
            };
            return writeln!(out, "{}", crate::one_line_json(&report)?);
        }
        footer_lines(path, footer, bytes.len(), out)?;
        let index = footer.index;
        writeln!(
            out,
            "  index            offset {} size {} (type {})",
            index.offset,
            index.size,
            sst.index_type()
        )?;
        match &manager {
            Some(manager) => writeln!(
                out,
                "  compression      {} (manager {})",
                compressions.join(", "),
                escaped(manager)
            )?,
            None => writeln!(out, "  compression      {}", compressions.join(", "))?,
        }
        writeln!(out, "  data blocks      {}", walk.data_blocks)?;
        writeln!(out, "  keys             {}", walk.keys)?;
        if let Some(comparator) = &comparator {
            writeln!(out, "  comparator       {}", escaped(comparator))?;
        }
        if let Some((first, last)) = &range {
            writeln!(
                out,
                "  key range        {} .. {} (hex)",
                hex(first),
                hex(last)
            )?;
        }
        let Some(name) = sst.filter_name() else {
            return writeln!(out, "  filter           none");
        };
        writeln!(
            out,
            "  filter           {} ({})",
            escaped(name),
            filter_kind(&sst)
        )?;
        writeln!(
            out,
            "  whole keys       {}; prefix extractor {}",
            if sst.whole_key_filtering() {
                "yes"
            } else {
                "no"
            },
            sst.prefix_extractor().map_or("none".into(), escaped)
        )?;
        writeln!(
            out,
            "  {:>6} {:<17} {:>6} {:>8} {:>6} {:>8} {:>6} {:>10}",
            "filter", "implementation", "keys", "bytes", "probes", "bits/key", "set", "est. fpr"
        )?;
        let or_dash = |x: Option<String>| x.unwrap_or_else(|| "-".into());
        for (i, st) in stats.iter().enumerate() {
            match st {
                Err(problem) => writeln!(out, "  {i:>6} problem: {problem}")?,
                Ok(st) => writeln!(
                    out,
                    "  {i:>6} {:<17} {:>6} {:>8} {:>6} {:>8} {:>6} {:>10}",
                    st.implementation,
                    or_dash(st.keys.map(|k| k.to_string())),
                    st.bytes,
                    or_dash(st.probes.map(|k| k.to_string())),
                    or_dash(st.bits_per_key().map(|b| format!("{b:.2}"))),
                    or_dash(st.share_set.map(|s| format!("{s:.3}"))),
                    or_dash(st.estimated_fpr.map(|f| format!("{f:.6}"))),
                )?,
            }
        }
        let (bytes, keys) = stats.iter().flatten().fold((0, 0), |(b, k), st| {
            (b + st.bytes - 5, k + st.keys.unwrap_or(0))
        });
        writeln!(
            out,
            "summary: {}: rocksdb table fv{} {}, {} data blocks, {} keys, filter {} ({}), {} filters, {:.2} bits/key",
            shown(path),
            footer.format_version,
            footer.checksum,
            walk.data_blocks,
            walk.keys,
            escaped(name),
            filter_kind(&sst),
            stats.len(),
            bytes as f64 * 8.0 / keys.max(1) as f64
        )
    };
    write(out).map_err(|e| Failure::Io("writing stdout".into(), e))
}

/// The table `probe` answers for.
pub fn open_for_probes<'a>(path: &Path, bytes: &'a [u8]) -> Result<Table<'a>, Failure> {
    Table::open(bytes).map_err(table_error(path))
}

/// A key's `OFFSET may-match|absent`: the data block RocksDB's index points
/// the key to and whether the filter lets `Get` read it; `- past-last-key`
/// past the last key, where the table cannot hold it.
pub fn answer(path: &Path, sst: &Table<'_>, key: &[u8]) -> Result<(String, &'static str), Failure> {
    Ok(match sst.data_block_for(key).map_err(table_error(path))? {
        None => ("-".to_string(), PAST_LAST_KEY),
        Some(handle) => (
            handle.offset.to_string(),
            answer_word(sst.key_may_match(key)),
        ),
    })
}

/// One line: `OK` where every filter rebuilds (Bloom) or matches every key
/// (Ribbon), else what is wrong; whether all is well.
pub fn verify(path: &Path, bytes: &[u8]) -> Result<(String, bool), Failure> {
    let Opened { sst, check, .. } = open(path, bytes)?;
    let shown = shown(path);
    let name = sst.filter_name().map(escaped).unwrap_or_default();
    let reports = match check {
        Verdict::NoFilter => return Ok((format!("{shown}: no filter block"), true)),
        Verdict::NotChecked { why } => {
            return Ok((format!("{shown}: NOT CHECKED {name}: {why}"), false))
        }
        Verdict::Filters(reports) => reports,
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

/// `inspect --json`'s object for a RocksDB table.
#[derive(serde::Serialize)]
struct SstJson<'a> {
    #[serde(flatten)]
    path: crate::PathJson<'a>,
    table: &'static str,
    format_version: u32,
    checksum: String,
    file_size: usize,
    metaindex: HandleJson,
    index: IndexJson,
    compression: Vec<String>,
    /// format_version 7 and later: the compression manager's name.
    compression_manager: Option<&'a str>,
    data_blocks: u64,
    keys: u64,
    comparator: Option<&'a str>,
    /// The first and last user keys, in hex.
    smallest_key: Option<String>,
    largest_key: Option<String>,
    filter: Option<SstFilterJson<'a>>,
}

#[derive(serde::Serialize)]
struct IndexJson {
    offset: u64,
    size: u64,
    r#type: u32,
}

#[derive(serde::Serialize)]
struct SstFilterJson<'a> {
    name: &'a str,
    kind: &'static str,
    whole_key_filtering: bool,
    prefix_extractor: Option<&'a str>,
    filters: Vec<StatJson>,
}

/// One filter (the full filter, or a partition): its statistics, or why it
/// does not read.
#[derive(serde::Serialize, Default)]
struct StatJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    implementation: Option<&'static str>,
    keys: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<usize>,
    probes: Option<u32>,
    bits_per_key: Option<f64>,
    share_set: Option<f64>,
    estimated_fpr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}
