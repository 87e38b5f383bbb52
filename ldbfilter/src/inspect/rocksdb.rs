//! `inspect` of a RocksDB table: footer, properties, index, each filter's
//! statistics (the full filter, or each partition), a summary.

use std::io::{self, Write};
use std::path::Path;

use leveldb_filter::format::TableFile;
use leveldb_filter::rocksdb::{self, FilterBits, Footer};

use super::{database_lines, totals, FilterJson, InspectJson, MeasuredJson, StatJson};
use crate::report::{escaped, hex, one_line_json, shown};
use crate::tables::{filter_kind, filters, Opened, TableJson};
use crate::targets::Target;
use crate::Failure;

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

/// `inspect`'s first lines, from the footer.
fn footer_lines(
    path: &Path,
    footer: &Footer,
    file_len: u64,
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
fn keys_of(check: &rocksdb::Verdict, i: usize, count: usize) -> Option<u64> {
    match check {
        rocksdb::Verdict::Filters(reports) if reports.len() == count => {
            reports.get(i).filter(|r| r.index == i).map(|r| r.keys)
        }
        _ => None,
    }
}

/// `inspect` of a RocksDB table: its report, or what its footer says before
/// the error that ends it.
pub(super) fn report(
    target: &Target,
    file: &TableFile,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let path = &target.path;
    let Opened {
        sst,
        walk,
        check,
        range,
    } = Opened::read(path, file)?;
    let footer = sst.footer();
    let comparator = sst
        .property("rocksdb.comparator")
        .map(String::from_utf8_lossy);
    let compressions: Vec<String> = walk.compressions.iter().map(ToString::to_string).collect();
    let manager = sst.compression_manager().map(String::from_utf8_lossy);
    let filters = filters(&sst);
    let count = filters.len();
    // Where the filter does not read, every key may match: nothing to measure.
    let measured = sst
        .measure_fpr()
        .ok()
        .filter(|m| m.probed > 0 && sst.filter().is_ok_and(|f| f.is_some()));
    let stats: Vec<Result<Stats, String>> = filters
        .into_iter()
        .enumerate()
        .map(|(i, bits)| bits.map(|bits| Stats::new(bits, keys_of(&check, i, count))))
        .collect();
    let write = |out: &mut dyn Write| -> io::Result<()> {
        if json {
            let filters: Vec<StatJson> = stats
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
                .collect();
            let (filter_bytes, keys, bits_per_key, estimated_fpr) = totals(&filters);
            let report = InspectJson {
                table: TableJson::new(target, "rocksdb"),
                file_size: file.len(),
                format_version: Some(footer.format_version),
                checksum: footer.checksum.to_string(),
                metaindex: footer.metaindex.into(),
                index: footer.index.into(),
                index_type: Some(sst.index_type()),
                compression: compressions.clone(),
                compression_manager: manager.as_deref(),
                data_blocks: walk.data_blocks,
                entries: walk.keys,
                key_format: "internal",
                comparator: comparator.as_deref(),
                smallest_key_hex: range.as_ref().map(|(first, _)| hex(first)),
                largest_key_hex: range.as_ref().map(|(_, last)| hex(last)),
                filter: sst.filter_name().map(|name| FilterJson {
                    policy: name,
                    kind: filter_kind(&sst),
                    hash: None,
                    hash_basis: None,
                    whole_key_filtering: sst.whole_key_filtering(),
                    prefix_extractor: sst.prefix_extractor(),
                    base_lg: None,
                    count: filters.len(),
                    bytes: filter_bytes,
                    keys,
                    bits_per_key,
                    estimated_fpr,
                    measured_fpr: measured.map(MeasuredJson::from),
                    problem: None,
                    filters,
                }),
            };
            return writeln!(out, "{}", one_line_json(&report)?);
        }
        footer_lines(path, footer, file.len(), out)?;
        database_lines(target, out)?;
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
        let measured = match measured {
            Some(m) => format!(
                ", measured on {} neighbouring absent keys {:.4}%",
                m.probed,
                100.0 * m.rate()
            ),
            None => String::new(),
        };
        writeln!(
            out,
            "summary: {}: rocksdb table fv{} {}, {} data blocks, {} keys, filter {} ({}), {} filters, {:.2} bits/key{measured}",
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
    write(out).map_err(Failure::Write)
}
