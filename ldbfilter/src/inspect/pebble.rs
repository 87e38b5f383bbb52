//! `inspect` of a Pebble table: its format, footer, properties (the
//! comparer, the key schema, the block property collectors), index and
//! filter.

use std::io::{self, Write};

use leveldb_filter::format::TableFile;
use leveldb_filter::pebble::{self, Table};

use super::database_lines;
use crate::report::{escaped, hex, one_line_json, shown, table_error, HandleJson};
use crate::tables::TableJson;
use crate::targets::Target;
use crate::Failure;

/// `inspect --json`'s object for a Pebble table.
#[derive(serde::Serialize)]
struct PebbleJson<'a> {
    #[serde(flatten)]
    table: TableJson<'a>,
    file_size: u64,
    /// `Pebblev1` to `Pebblev7`.
    table_format: String,
    checksum: String,
    /// The footer's attributes bitset (Pebblev7 and later; 0 before).
    attributes: u32,
    metaindex: HandleJson,
    index: HandleJson,
    two_level_index: bool,
    comparer: Option<String>,
    key_schema: Option<String>,
    merger: Option<String>,
    /// The block property collectors (`rocksdb.property.collectors`).
    property_collectors: Option<String>,
    data_blocks: u64,
    entries: u64,
    smallest_key_hex: Option<String>,
    largest_key_hex: Option<String>,
    /// The metaindex's names.
    meta_blocks: Vec<String>,
    filter: Option<PebbleFilterJson>,
}

/// A Pebble table's Bloom filter in `inspect --json`.
#[derive(serde::Serialize)]
struct PebbleFilterJson {
    policy: &'static str,
    bytes: usize,
    probes: Option<u8>,
    lines: Option<u32>,
    /// The filter's bits over its table's point keys.
    bits_per_key: Option<f64>,
    problem: Option<String>,
}

/// `inspect` of a Pebble table.
pub(super) fn report(
    target: &Target,
    file: &TableFile,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let path = &target.path;
    let table = Table::open(file).map_err(table_error(path))?;
    let walk = table.walk().map_err(table_error(path))?;
    let footer = table.footer();
    let props = table.props();
    let filter = table.filter().map(|(_, bytes)| match bytes {
        Err(e) => PebbleFilterJson {
            policy: pebble::FILTER_NAME,
            bytes: 0,
            probes: None,
            lines: None,
            bits_per_key: None,
            problem: Some(e.to_string()),
        },
        Ok(data) => {
            let trailer = data.len().checked_sub(5).map(|n| &data[n..]);
            PebbleFilterJson {
                policy: pebble::FILTER_NAME,
                bytes: data.len(),
                probes: trailer.map(|t| t[0]),
                lines: trailer.map(|t| u32::from_le_bytes(t[1..5].try_into().expect("4 bytes"))),
                bits_per_key: (walk.keys > 0 && data.len() > 5)
                    .then(|| (data.len() - 5) as f64 * 8.0 / walk.keys as f64),
                problem: None,
            }
        }
    });
    let report = PebbleJson {
        table: TableJson::new(target, "pebble"),
        file_size: file.len(),
        table_format: table.format().to_string(),
        checksum: footer.checksum.to_string(),
        attributes: footer.attributes,
        metaindex: footer.metaindex.into(),
        index: footer.index.into(),
        two_level_index: props.two_level_index(),
        comparer: props.comparer(),
        key_schema: props.key_schema(),
        merger: props.text("rocksdb.merge.operator"),
        property_collectors: props.text("rocksdb.property.collectors"),
        data_blocks: walk.data_blocks,
        entries: walk.keys,
        smallest_key_hex: walk.range.as_ref().map(|(first, _)| hex(first)),
        largest_key_hex: walk.range.as_ref().map(|(_, last)| hex(last)),
        meta_blocks: table
            .metaindex()
            .iter()
            .map(|(name, _)| String::from_utf8_lossy(name).into_owned())
            .collect(),
        filter,
    };
    let write = |out: &mut dyn Write| -> io::Result<()> {
        if json {
            return writeln!(out, "{}", one_line_json(&report)?);
        }
        writeln!(out, "{}", shown(path))?;
        writeln!(
            out,
            "  table            pebble, {}, checksum {}",
            report.table_format, report.checksum
        )?;
        writeln!(out, "  file size        {} bytes", report.file_size)?;
        database_lines(target, out)?;
        let text = |value: &Option<String>| -> String {
            value
                .as_deref()
                .map_or("none".into(), |v| escaped(v).into_owned())
        };
        writeln!(out, "  comparer         {}", text(&report.comparer))?;
        if report.key_schema.is_some() {
            writeln!(out, "  key schema       {}", text(&report.key_schema))?;
        }
        writeln!(out, "  merger           {}", text(&report.merger))?;
        writeln!(
            out,
            "  block properties {}",
            text(&report.property_collectors)
        )?;
        if footer.attributes != 0 {
            writeln!(out, "  attributes       {:#x}", footer.attributes)?;
        }
        writeln!(
            out,
            "  index            offset {} size {}{}",
            footer.index.offset,
            footer.index.size,
            if report.two_level_index {
                " (two-level)"
            } else {
                ""
            }
        )?;
        writeln!(out, "  meta blocks      {}", report.meta_blocks.join(", "))?;
        writeln!(out, "  data blocks      {}", walk.data_blocks)?;
        writeln!(out, "  keys             {}", walk.keys)?;
        if let Some((first, last)) = &walk.range {
            writeln!(
                out,
                "  key range        {} .. {} (hex)",
                hex(first),
                hex(last)
            )?;
        }
        match &report.filter {
            None => writeln!(out, "  filter           none")?,
            Some(f) => match &f.problem {
                Some(problem) => {
                    writeln!(out, "  filter           {} (problem: {problem})", f.policy)?
                }
                None => writeln!(
                    out,
                    "  filter           {} ({} bytes, {} probes, {} lines, {} bits/key)",
                    f.policy,
                    f.bytes,
                    f.probes.map_or("-".into(), |p| p.to_string()),
                    f.lines.map_or("-".into(), |l| l.to_string()),
                    f.bits_per_key.map_or("-".into(), |b| format!("{b:.2}"))
                )?,
            },
        }
        writeln!(
            out,
            "summary: {}: pebble table {} {}, {} data blocks, {} keys, filter {}",
            shown(path),
            report.table_format,
            report.checksum,
            walk.data_blocks,
            walk.keys,
            if report.filter.is_some() {
                pebble::FILTER_NAME
            } else {
                "none"
            }
        )
    };
    write(out).map_err(Failure::Write)
}
