//! `inspect` of a LevelDB table: footer, blocks, keys, the filter policy
//! and how its hash variant was found, each filter's statistics, the rate
//! measured on neighbouring keys, a summary.

use std::fmt::Write as _;
use std::io::{self, Write};

use leveldb_filter::leveldb::{
    detect, measure_fpr, user_key, BloomStats, Detected, Evidence, FilterFound, KeyFormat,
    KeyStats, MeasuredFpr, Table,
};
use leveldb_filter::{BloomFilterPolicy, FilterBlock};

use super::{database_lines, totals, FilterJson, InspectJson, MeasuredJson, StatJson};
use crate::report::{escaped, hex, one_line_json, shown, table_error, write_error, HandleJson};
use crate::tables::{variant_word, Detect, Loaded, TableJson};
use crate::targets::Target;
use crate::Failure;

/// `inspect` of a LevelDB table: its report, as text or JSON.
pub(super) fn report(
    json: bool,
    detect_args: &Detect,
    target: &Target,
    loaded: &Loaded,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let path = &target.path;
    let (table, stats) = loaded.open(path)?;
    let Detected {
        key_format: format,
        filter: found,
    } = detect(&table, Evidence::Stats(&stats), detect_args.options(None))
        .map_err(table_error(path))?;
    let report = Report {
        target,
        table: &table,
        stats: &stats,
        key_format: format,
        filter: found,
    };
    if json {
        report.json(out)
    } else {
        report.text(out)
    }
    .map_err(write_error)?;
    Ok(())
}

/// `inspect`'s report of one table: as text, a line per filter written as
/// it is computed; as JSON, one object (its filters' statistics, at most one
/// a 2 KiB piece of the file, held until it is written).
struct Report<'r, 't, 'a> {
    target: &'r Target,
    table: &'r Table<'a>,
    stats: &'r KeyStats,
    key_format: KeyFormat,
    filter: Option<FilterFound<'t, 'a>>,
}

impl Report<'_, '_, '_> {
    fn compressions(&self) -> Vec<String> {
        self.stats
            .compressions
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The stored filter block parsed, or what is wrong with it.
    fn parsed(&self) -> Option<Result<FilterBlock<'_>, String>> {
        let found = self.filter.as_ref()?;
        Some(FilterBlock::parse(&found.filter.block.contents).map_err(|e| e.to_string()))
    }

    /// Each stored filter's statistics, with the keys the table puts in it.
    fn filter_stats<'s>(
        &'s self,
        block: &FilterBlock<'s>,
    ) -> impl Iterator<Item = BloomStats> + 's {
        let counts = &self.stats.keys_per_filter;
        block
            .filters()
            .enumerate()
            .map(move |(i, f)| BloomStats::new(f, counts.get(i).copied().unwrap_or(0)))
    }

    /// The text report: the table's details, a line per filter, then a
    /// one-line summary.
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.details(out)?;
        self.summary(out)
    }

    fn details(&self, out: &mut dyn Write) -> io::Result<()> {
        let table = self.table;
        writeln!(out, "{}", shown(&self.target.path))?;
        database_lines(self.target, out)?;
        writeln!(out, "  file size        {} bytes", table.source().len())?;
        let (meta, index) = (table.metaindex_handle(), table.index_handle());
        writeln!(
            out,
            "  metaindex        offset {} size {}",
            meta.offset, meta.size
        )?;
        writeln!(
            out,
            "  index            offset {} size {}",
            index.offset, index.size
        )?;
        writeln!(out, "  compression      {}", self.compressions().join(", "))?;
        writeln!(out, "  data blocks      {}", self.stats.data_blocks)?;
        writeln!(out, "  keys             {}", self.stats.keys)?;
        writeln!(out, "  key format       {}", self.key_format)?;
        if self.stats.keys > 0 {
            let (first, last) = self.user_key_range();
            writeln!(
                out,
                "  key range        {} .. {} (user keys, hex)",
                hex(first),
                hex(last)
            )?;
        }
        let Some(found) = &self.filter else {
            return writeln!(out, "  filter           none");
        };
        let block = &found.filter.block;
        writeln!(out, "  filter policy    {}", escaped(&found.filter.name))?;
        writeln!(
            out,
            "  hash variant     {} ({})",
            variant_word(found),
            found.basis
        )?;
        let (offset, size) = (block.handle.offset, block.contents.len());
        writeln!(out, "  filter block     offset {offset} size {size}")?;
        let parsed = match self.parsed() {
            Some(Ok(parsed)) => parsed,
            Some(Err(problem)) => return writeln!(out, "  filter problem   {problem}"),
            None => return Ok(()),
        };
        writeln!(out, "  base_lg          {}", parsed.base_lg())?;
        writeln!(out, "  filters          {}", parsed.len())?;
        writeln!(
            out,
            "  {:>6} {:>6} {:>8} {:>3} {:>8} {:>6} {:>10} {:>8}",
            "filter", "keys", "bits", "k", "bits/key", "set", "est. fpr", "est. keys"
        )?;
        for (i, st) in self.filter_stats(&parsed).enumerate() {
            if st.bits == 0 {
                writeln!(out, "  {i:>6} {:>6} {:>8}", st.keys, "empty")?;
                continue;
            }
            writeln!(
                out,
                "  {i:>6} {:>6} {:>8} {:>3} {:>8.2} {:>6.3} {:>10.6} {:>8}",
                st.keys,
                st.bits,
                st.k,
                st.bits_per_key(),
                st.share_set(),
                st.estimated_fpr(),
                st.estimated_keys()
            )?;
        }
        Ok(())
    }

    /// The first and last user keys.
    fn user_key_range(&self) -> (&[u8], &[u8]) {
        let (first, last) = &self.stats.key_range;
        match self.key_format {
            KeyFormat::User => (first, last),
            _ => (user_key(first), user_key(last)),
        }
    }

    fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        let table = self.table;
        let parsed = self.parsed();
        let filter = self.filter.as_ref().map(|found| {
            let filters: Vec<StatJson> = match &parsed {
                Some(Ok(parsed)) => self.filter_stats(parsed).map(stat_json).collect(),
                _ => Vec::new(),
            };
            let (bytes, keys, bits_per_key, estimated_fpr) = totals(&filters);
            FilterJson {
                policy: &found.filter.name,
                kind: "leveldb",
                hash: Some(variant_word(found)),
                hash_basis: Some(found.basis.to_string()),
                whole_key_filtering: true,
                prefix_extractor: None,
                base_lg: match &parsed {
                    Some(Ok(parsed)) => Some(parsed.base_lg()),
                    _ => None,
                },
                count: filters.len(),
                bytes,
                keys,
                bits_per_key,
                estimated_fpr,
                measured_fpr: self.measured().map(MeasuredJson::from),
                problem: match &parsed {
                    Some(Err(problem)) => Some(problem.clone()),
                    _ => None,
                },
                filters,
            }
        });
        let (first, last) = self.user_key_range();
        let has_keys = self.stats.keys > 0;
        let report = InspectJson {
            table: TableJson::new(self.target, "leveldb"),
            file_size: table.source().len(),
            format_version: None,
            checksum: "crc32c".into(),
            metaindex: HandleJson::from(table.metaindex_handle()),
            index: HandleJson::from(table.index_handle()),
            index_type: None,
            compression: self.compressions(),
            compression_manager: None,
            data_blocks: self.stats.data_blocks as u64,
            entries: self.stats.keys as u64,
            key_format: match self.key_format {
                KeyFormat::User => "user",
                _ => "internal",
            },
            comparator: self
                .target
                .live
                .as_ref()
                .and_then(|l| l.comparator.as_deref()),
            smallest_key_hex: has_keys.then(|| hex(first)),
            largest_key_hex: has_keys.then(|| hex(last)),
            filter,
        };
        writeln!(out, "{}", one_line_json(&report)?)
    }

    /// The false-positive rate measured on the table's keys' neighbours,
    /// where the filter reads.
    fn measured(&self) -> Option<MeasuredFpr> {
        let found = self.filter.as_ref()?;
        let policy = BloomFilterPolicy::new(10).with_hash(found.variant?);
        measure_fpr(self.table, &policy, self.key_format).ok()
    }

    /// The last line of the text report.
    fn summary(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut line = format!(
            "summary: {}: leveldb table, {} data blocks, {} keys ({})",
            shown(&self.target.path),
            self.stats.data_blocks,
            self.stats.keys,
            self.key_format
        );
        match &self.filter {
            None => line.push_str(", no filter"),
            Some(found) => {
                let _ = write!(
                    line,
                    ", filter {} {}",
                    escaped(&found.filter.name),
                    variant_word(found)
                );
                if let Some(Ok(parsed)) = self.parsed() {
                    let (mut bits, mut keys, mut expected) = (0usize, 0usize, 0.0);
                    for st in self.filter_stats(&parsed) {
                        bits += st.bits;
                        keys += st.keys;
                        if st.bits > 0 {
                            expected += st.estimated_fpr() * st.keys as f64;
                        }
                    }
                    let _ = write!(
                        line,
                        ", {} filters, {:.2} bits/key, fpr estimated from bits set {:.4}%",
                        parsed.len(),
                        bits as f64 / keys.max(1) as f64,
                        100.0 * expected / keys.max(1) as f64
                    );
                }
                if let Some(m) = self.measured() {
                    let _ = write!(
                        line,
                        ", measured on {} neighbouring absent keys {:.4}%",
                        m.probed,
                        100.0 * m.rate()
                    );
                }
            }
        }
        writeln!(out, "{line}")
    }
}

/// A filter's statistics as JSON; an empty filter has its keys alone.
fn stat_json(st: BloomStats) -> StatJson {
    let some = |x: f64| (st.bits > 0 && x.is_finite()).then_some(x);
    StatJson {
        implementation: Some("leveldb-bloom"),
        keys: Some(st.keys as u64),
        bytes: Some(st.bits / 8 + usize::from(st.bits > 0)),
        probes: (st.bits > 0).then_some(u32::from(st.k)),
        bits_per_key: some(st.bits_per_key()),
        share_set: some(st.share_set()),
        estimated_fpr: some(st.estimated_fpr()),
        problem: None,
    }
}
