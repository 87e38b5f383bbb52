//! Crafted Pebble tables (a golden table changed block by block with
//! valid checksums, or a small table made from scratch), each a problem a
//! review found: the reader answers each within its rules (bounded memory,
//! no key a table holds answered absent, as Pebble reads the bytes).

use crate::peak;
use leveldb_filter::format::{BlockHandle, ChecksumType, Footer, TableStep, PEBBLE_MAGIC};
use leveldb_filter::pebble::{FilterAnswer, Table};

/// A key and value of a block.
pub type Entry = (Vec<u8>, Vec<u8>);

pub fn golden(name: &str) -> Vec<u8> {
    let path = format!("{}/testdata/pebble/{name}.sst", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The written keys of a golden table (its answers file).
pub fn written(name: &str) -> Vec<Vec<u8>> {
    let path = format!(
        "{}/testdata/pebble/{name}.answers",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let key = words.next()?;
            (words.next()? == "written").then(|| unhex(key))
        })
        .collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn handle_bytes(h: BlockHandle) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, h.offset);
    varint(&mut out, h.size);
    out
}

/// A row block of `entries`, each a restart point (Pebble's metaindex,
/// properties, single-level index).
pub fn row_block(entries: &[Entry]) -> Vec<u8> {
    let (mut out, mut restarts) = (Vec::new(), Vec::new());
    for (key, value) in entries {
        restarts.push(out.len() as u32);
        varint(&mut out, 0);
        varint(&mut out, key.len() as u64);
        varint(&mut out, value.len() as u64);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    }
    for r in &restarts {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    out
}

/// The entries of a well-formed row block.
pub fn row_entries(block: &[u8]) -> Vec<Entry> {
    let restarts = u32::from_le_bytes(block[block.len() - 4..].try_into().unwrap()) as usize;
    let mut rest = &block[..block.len() - 4 - 4 * restarts];
    let read = |rest: &mut &[u8]| {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = rest[0];
            *rest = &rest[1..];
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return v as usize;
            }
            shift += 7;
        }
    };
    let (mut out, mut key) = (Vec::new(), Vec::<u8>::new());
    while !rest.is_empty() {
        let shared = read(&mut rest);
        let unshared = read(&mut rest);
        let value_len = read(&mut rest);
        key.truncate(shared);
        key.extend_from_slice(&rest[..unshared]);
        out.push((key.clone(), rest[unshared..unshared + value_len].to_vec()));
        rest = &rest[unshared + value_len..];
    }
    out
}

// -- Columnar blocks, as Pebble v2 lays them out (alignment relative to
// the block's first byte).

pub fn put_uints(b: &mut Vec<u8>, values: &[u64]) {
    if values.is_empty() {
        return;
    }
    let max = values.iter().copied().max().unwrap();
    let width = match max {
        0 => 0,
        1..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    };
    b.push(width as u8);
    if width > 0 {
        while !b.len().is_multiple_of(width) {
            b.push(0);
        }
        for v in values {
            b.extend_from_slice(&v.to_le_bytes()[..width]);
        }
    }
}

pub fn put_bytes(b: &mut Vec<u8>, strings: &[&[u8]]) {
    if strings.is_empty() {
        return;
    }
    let mut offsets = vec![0u64];
    for s in strings {
        offsets.push(offsets.last().unwrap() + s.len() as u64);
    }
    put_uints(b, &offsets);
    for s in strings {
        b.extend_from_slice(s);
    }
}

/// A bitmap of `rows` bits, none set, stored bit by bit (encoding 0).
pub fn put_dense_zero_bitmap(b: &mut Vec<u8>, rows: usize) {
    b.push(0);
    while !b.len().is_multiple_of(8) {
        b.push(0);
    }
    let words = rows.div_ceil(64);
    b.resize(b.len() + 8 * words + 8 * words.div_ceil(64), 0);
}

/// A bitmap of `rows` bits, none set, stored as "all zero" (encoding 1).
pub fn put_zero_bitmap(b: &mut Vec<u8>) {
    b.push(1);
}

/// A columnar block: `custom` header, `rows`, and each column's type
/// and writer.
/// A column: its type byte and what writes it.
pub type ColumnWriter<'c> = (u8, &'c dyn Fn(&mut Vec<u8>));

pub fn columnar(custom: &[u8], rows: u32, cols: &[ColumnWriter<'_>]) -> Vec<u8> {
    let mut b = custom.to_vec();
    b.push(1);
    b.extend_from_slice(&(cols.len() as u16).to_le_bytes());
    b.extend_from_slice(&rows.to_le_bytes());
    let at = b.len();
    b.resize(at + 5 * cols.len(), 0);
    for (i, (data_type, write)) in cols.iter().enumerate() {
        let start = b.len() as u32;
        b[at + 5 * i] = *data_type;
        b[at + 5 * i + 1..at + 5 * i + 5].copy_from_slice(&start.to_le_bytes());
        write(&mut b);
    }
    b.push(0);
    b
}

pub const BOOL: u8 = 1;
pub const UINT: u8 = 2;
pub const BYTES: u8 = 3;
pub const PREFIX: u8 = 4;

/// A columnar index block of `(separator, handle)` rows.
pub fn columnar_index(entries: &[(&[u8], BlockHandle)]) -> Vec<u8> {
    let seps: Vec<&[u8]> = entries.iter().map(|e| e.0).collect();
    let offsets: Vec<u64> = entries.iter().map(|e| e.1.offset).collect();
    let sizes: Vec<u64> = entries.iter().map(|e| e.1.size).collect();
    let props: Vec<&[u8]> = entries.iter().map(|_| &b""[..]).collect();
    columnar(
        &[],
        entries.len() as u32,
        &[
            (BYTES, &|b| put_bytes(b, &seps)),
            (UINT, &|b| put_uints(b, &offsets)),
            (UINT, &|b| put_uints(b, &sizes)),
            (BYTES, &|b| put_bytes(b, &props)),
        ],
    )
}

/// A `DefaultKeySchema` data block of `rows` rows, each the empty user
/// key with trailer 0: every column but one bitmap stored in a byte or
/// two, as the reader's row count allows (8 rows a byte).
pub fn cheap_rows_block(rows: u32) -> Vec<u8> {
    let r = rows as usize;
    columnar(
        &0u32.to_le_bytes(),
        rows,
        &[
            // Prefixes: a bundle shift, offsets all 0 (width 0).
            (PREFIX, &|b| {
                b.push(4);
                b.push(0);
            }),
            // Suffixes: offsets all 0.
            (BYTES, &|b| b.push(0)),
            // Trailers: all 0.
            (UINT, &|b| b.push(0)),
            // Prefix changed: stored bit by bit.
            (BOOL, &|b| put_dense_zero_bitmap(b, r)),
            // Values: all empty.
            (BYTES, &|b| b.push(0)),
            (BOOL, &|b| put_zero_bitmap(b)),
            (BOOL, &|b| put_zero_bitmap(b)),
        ],
    )
}

/// A Zstandard frame of `data` that RocksDB's and Pebble's readers
/// take (the size as a varint before it): runs of zeros as RLE blocks
/// of 4000 bytes (below Zstandard's largest ratio the reader allows),
/// the rest as raw blocks.
pub fn zstd_blocks(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, data.len() as u64);
    out.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0xa0]);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let mut pieces: Vec<(bool, usize, usize)> = Vec::new(); // (rle, start, len)
    let mut i = 0;
    while i < data.len() {
        let run = data[i..].iter().take_while(|&&b| b == 0).count();
        if run >= 64 {
            let mut left = run;
            while left > 0 {
                let n = left.min(4000);
                pieces.push((true, i, n));
                i += n;
                left -= n;
            }
        } else {
            let start = i;
            i += run.max(1);
            while i < data.len() && data[i..].iter().take(64).any(|&b| b != 0) {
                i += 1;
            }
            let mut at = start;
            while at < i {
                let n = (i - at).min(100_000);
                pieces.push((false, at, n));
                at += n;
            }
        }
    }
    let last = pieces.len() - 1;
    for (k, (rle, start, len)) in pieces.into_iter().enumerate() {
        let header = u32::from(k == last) | (u32::from(rle) << 1) | ((len as u32) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        match rle {
            true => out.push(0),
            false => out.extend_from_slice(&data[start..start + len]),
        }
    }
    out
}

/// Appends a block and its trailer (type byte, CRC-32C).
pub fn append(file: &mut Vec<u8>, contents: &[u8], type_byte: u8) -> BlockHandle {
    append_with(ChecksumType::Crc32c, file, contents, type_byte)
}

/// Appends a block and its trailer (type byte, checksum).
pub fn append_with(
    checksum: ChecksumType,
    file: &mut Vec<u8>,
    contents: &[u8],
    type_byte: u8,
) -> BlockHandle {
    let h = BlockHandle {
        offset: file.len() as u64,
        size: contents.len() as u64,
    };
    file.extend_from_slice(contents);
    file.push(type_byte);
    let sum = checksum.checksum(contents, type_byte).unwrap();
    file.extend_from_slice(&sum.to_le_bytes());
    h
}

/// A footer of Pebble's magic, version 1 to 5 (53 bytes), CRC-32C.
pub fn pebble_footer(file: &mut Vec<u8>, version: u32, meta: BlockHandle, index: BlockHandle) {
    pebble_footer_with(ChecksumType::Crc32c, file, version, meta, index)
}

/// A footer of Pebble's magic, version 1 to 5 (53 bytes).
pub fn pebble_footer_with(
    checksum: ChecksumType,
    file: &mut Vec<u8>,
    version: u32,
    meta: BlockHandle,
    index: BlockHandle,
) {
    let checksum = match checksum {
        ChecksumType::Crc32c => 1,
        _ => 3,
    };
    let mut footer = vec![checksum];
    footer.extend(handle_bytes(meta));
    footer.extend(handle_bytes(index));
    footer.resize(41, 0);
    footer.extend_from_slice(&version.to_le_bytes());
    footer.extend_from_slice(&PEBBLE_MAGIC.to_le_bytes());
    file.extend_from_slice(&footer);
}

/// A Pebblev5 table from scratch: the data blocks (contents, type
/// byte) and their separators, a single-level columnar index, the
/// properties (with the bytewise comparer and the default key schema
/// added), the metaindex entries `extra` besides the properties.
pub fn pebblev5(
    blocks: &[(&[u8], Vec<u8>, u8)],
    props: &[Entry],
    extra: &[(Vec<u8>, Vec<u8>)],
) -> Vec<u8> {
    let mut file = Vec::new();
    let mut entries = Vec::new();
    for (sep, contents, type_byte) in blocks {
        let h = append(&mut file, contents, *type_byte);
        entries.push((*sep, h));
    }
    let index = append(&mut file, &columnar_index(&entries), 0);
    let mut all: Vec<Entry> = vec![
        (
            b"pebble.colblk.schema".to_vec(),
            b"DefaultKeySchema(leveldb.BytewiseComparator,16)".to_vec(),
        ),
        (
            b"rocksdb.comparator".to_vec(),
            b"leveldb.BytewiseComparator".to_vec(),
        ),
    ];
    all.extend(props.iter().cloned());
    all.sort();
    let props = append(&mut file, &row_block(&all), 0);
    let mut meta: Vec<Entry> = vec![(b"rocksdb.properties".to_vec(), handle_bytes(props))];
    meta.extend(extra.iter().cloned());
    meta.sort();
    let meta = append(&mut file, &row_block(&meta), 0);
    pebble_footer(&mut file, 5, meta, index);
    file
}

/// A golden table of Pebble's magic (versions 1 to 5, CRC-32C) changed
/// block by block: blocks appended after its footer, then a new
/// metaindex and footer.
pub struct Golden {
    pub bytes: Vec<u8>,
    pub footer: Footer,
    pub metaindex: Vec<Entry>,
}

impl Golden {
    pub fn new(name: &str) -> Golden {
        let bytes = golden(name);
        let footer = Footer::read(&bytes[..]).unwrap();
        assert!(footer.magic == PEBBLE_MAGIC && footer.format_version <= 5);
        let meta = footer.metaindex;
        let metaindex = row_entries(&bytes[meta.offset as usize..][..meta.size as usize]);
        Golden {
            bytes,
            footer,
            metaindex,
        }
    }

    pub fn meta(&self, name: &[u8]) -> BlockHandle {
        let (_, value) = self.metaindex.iter().find(|(k, _)| k == name).unwrap();
        BlockHandle::decode(value).unwrap().0
    }

    pub fn set_meta(&mut self, name: &[u8], value: Vec<u8>) {
        match self.metaindex.iter().position(|(k, _)| k == name) {
            Some(i) => self.metaindex[i].1 = value,
            None => {
                self.metaindex.push((name.to_vec(), value));
                self.metaindex.sort();
            }
        }
    }

    pub fn append(&mut self, contents: &[u8], type_byte: u8) -> BlockHandle {
        append_with(self.footer.checksum, &mut self.bytes, contents, type_byte)
    }

    /// The properties (an uncompressed row block, as Pebble writes it).
    pub fn properties(&self) -> Vec<Entry> {
        let h = self.meta(b"rocksdb.properties");
        row_entries(&self.bytes[h.offset as usize..][..h.size as usize])
    }

    pub fn set_properties(&mut self, props: &[Entry]) {
        let h = self.append(&row_block(props), 0);
        self.set_meta(b"rocksdb.properties", handle_bytes(h));
    }

    pub fn finish(mut self) -> Vec<u8> {
        let metaindex = row_block(&self.metaindex);
        let meta = self.append(&metaindex, 0);
        let (version, index) = (self.footer.format_version, self.footer.index);
        pebble_footer_with(self.footer.checksum, &mut self.bytes, version, meta, index);
        self.bytes
    }
}

/// What the fuzz target reads of a Pebble table, and the bound it
/// holds the peak of live bytes to.
fn fuzz_read(data: &[u8]) {
    let Ok(table) = Table::open(data) else { return };
    let _ = table.walk();
    let _ = table.check_filter();
    for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
        let _ = table.filter_answer(key);
        let _ = table.get_step(key);
    }
}

fn fuzz_bound(len: usize) -> usize {
    2200 * len + (4 << 20)
}

#[test]
fn crafted_tables_open() {
    let table = pebblev5(
        &[(b"z", cheap_rows_block(1000), 0)],
        &[(b"rocksdb.num.entries".to_vec(), vec![0xe8, 0x07])],
        &[],
    );
    let t = Table::open(&table[..]).unwrap();
    assert_eq!(t.walk().unwrap().keys, 1000);
    let g = Golden::new("v2-pebblev5-bytewise-bpk4-none-crc32c").finish();
    let t = Table::open(&g[..]).unwrap();
    assert_eq!(t.walk().unwrap().keys, 182);
}

/// A `Get` of a key that a columnar block repeats row after row holds
/// each row's entry: a row costs the block one bit (a bitmap's), so a
/// Zstandard block of ~1 KiB (2 MiB of rows, 256 KiB uncompressed)
/// makes the lookup hold 2M entries of 16 bytes, past the fuzz
/// target's bound of 2200 times the input and 4 MiB. The walk and the
/// filter check of the same table stay bounded.
#[test]
fn pebble_get_of_a_key_repeated_in_cheap_rows_is_bounded() {
    let rows = (1 << 21) + 64;
    let block = cheap_rows_block(rows);
    let table = pebblev5(
        &[(b"z", zstd_blocks(&block), 7)],
        &[(b"rocksdb.num.entries".to_vec(), {
            let mut v = Vec::new();
            varint(&mut v, u64::from(rows));
            v
        })],
        &[],
    );
    let t = Table::open(&table[..]).unwrap();
    let (walk, peak_walk) = peak::peak_during(|| t.walk().unwrap());
    assert_eq!(walk.keys, u64::from(rows));
    assert!(peak_walk <= fuzz_bound(table.len()), "walk: {peak_walk}");
    let (step, peak) = peak::peak_during(|| t.get_step(b"").unwrap());
    if let (TableStep::Read(entries), _) = &step {
        eprintln!("{} entries for the one key", entries.len());
    }
    assert!(
        peak <= fuzz_bound(table.len()),
        "{peak} bytes at peak for a {}-byte table (bound {})",
        table.len(),
        fuzz_bound(table.len())
    );
    let ((), peak) = peak::peak_during(|| fuzz_read(&table));
    assert!(peak <= fuzz_bound(table.len()), "fuzz read: {peak}");
}

/// A table whose properties say it holds no point keys (entries all
/// range deletions), and whose filter is empty, still holds the keys
/// of its data blocks: the filter's "absent" (Pebble's for a filter of
/// 5 bytes or fewer) rules out keys the table holds. Whether the table
/// holds point keys is the properties' word, which a file sets.
#[test]
fn pebble_empty_filter_with_lying_properties_never_rules_out_a_held_key() {
    for name in [
        "v2-pebblev5-bytewise-bpk4-none-crc32c",
        "v2-pebblev4-bytewise-bpk3-none-xxhash64-tiny",
    ] {
        let mut g = Golden::new(name);
        let mut props = g.properties();
        let entries = props
            .iter()
            .find(|(k, _)| k == b"rocksdb.num.entries")
            .unwrap()
            .1
            .clone();
        for (k, v) in &mut props {
            if k == b"rocksdb.num.range-deletions" {
                *v = entries.clone();
            }
        }
        g.set_properties(&props);
        let filter = g.append(&[], 0);
        g.set_meta(
            b"fullfilter.rocksdb.BuiltinBloomFilter",
            handle_bytes(filter),
        );
        let bytes = g.finish();
        let t = Table::open(&bytes[..]).unwrap();
        assert_eq!(t.props().point_keys(), Some(0));
        let keys = t.walk().unwrap().keys;
        assert!(keys > 100, "{name}: {keys} keys");
        for key in written(name) {
            assert_ne!(
                t.filter_answer(&key),
                Some(FilterAnswer::Absent),
                "{name}: held key {key:02x?} ruled out"
            );
            assert_ne!(t.get_step(&key).unwrap().0, TableStep::Absent, "{name}");
        }
    }
}

/// All keys of a golden table's answers file, written or not.
pub fn probes(name: &str) -> Vec<Vec<u8>> {
    let path = format!(
        "{}/testdata/pebble/{name}.answers",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .map(|line| unhex(line.split(' ').next().unwrap()))
        .collect()
}

/// A metaindex that names the filter twice: Pebble's readers (v1.1.5
/// `readMetaindex`, v2.1.7 `decodeMetaindex`) put every entry in a map,
/// so the last entry of a name wins; here the first does. With a first
/// entry of a filter whose bits are all 0 and the table's own filter
/// last, Pebble reads the table's filter (may match for every held
/// key); this reader rules the held keys out.
#[test]
fn pebble_metaindex_names_read_as_pebbles_map_reads_them() {
    let name = "v2-pebblev5-bytewise-bpk4-none-crc32c";
    let mut g = Golden::new(name);
    let mut zeros = vec![0u8; 64];
    zeros.push(6);
    zeros.extend_from_slice(&1u32.to_le_bytes());
    let bogus = g.append(&zeros, 0);
    let filter_name = b"fullfilter.rocksdb.BuiltinBloomFilter".to_vec();
    let at = g
        .metaindex
        .iter()
        .position(|(k, _)| *k == filter_name)
        .unwrap();
    g.metaindex.insert(at, (filter_name, handle_bytes(bogus)));
    let bytes = g.finish();
    let t = Table::open(&bytes[..]).unwrap();
    for key in written(name) {
        assert_ne!(
            t.filter_answer(&key),
            Some(FilterAnswer::Absent),
            "held key {key:02x?} ruled out by the first of two filter entries"
        );
    }
}

/// Pebble masks bit 31 of every restart point of every row block it
/// reads, whatever the table's format (`decodeRestart`, v1.1.5 and
/// v2.1.7): the flag is written from Pebblev3, but read everywhere.
/// Here a Pebblev2 (and a LevelDB-format) table whose index block's
/// restart point carries the bit does not read.
#[test]
fn pebble_restart_flags_masked_in_every_format() {
    for name in [
        "v2-pebblev2-bytewise-bpk1-none-xxhash64",
        "v1-leveldb-bytewise-bpk8-none-crc32c",
    ] {
        let mut bytes = golden(name);
        let footer = Footer::read(&bytes[..]).unwrap();
        let h = footer.index;
        let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
        assert_eq!(bytes[end], 0, "{name}: an uncompressed index");
        // The first restart point's high byte.
        let count = u32::from_le_bytes(bytes[end - 4..end].try_into().unwrap()) as usize;
        let first = end - 4 - 4 * count;
        bytes[first + 3] |= 0x80;
        let sum = footer.checksum.checksum(&bytes[start..end], 0).unwrap();
        bytes[end + 1..end + 5].copy_from_slice(&sum.to_le_bytes());
        let t = Table::open(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let walk = t.walk().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(walk.keys > 0);
        for key in written(name).iter().take(20) {
            t.get_step(key).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}

/// A table whose range deletions are named `rocksdb.range_del` (the
/// block RocksDB writes) and not `rocksdb.range_del2`: Pebble v1.1.5
/// reads them (`meta[metaRangeDelName]`, fragmented on read), v2.1.7
/// refuses the table (`unexpected range-del block type`). Here they
/// are passed over: a covered key reads as not covered.
#[test]
fn pebble_range_deletions_of_rocksdbs_name_are_not_passed_over() {
    let name = "v2-pebblev2-bytewise-bpk1-none-xxhash64";
    let original = golden(name);
    let t = Table::open(&original[..]).unwrap();
    let covered: Vec<Vec<u8>> = probes(name)
        .into_iter()
        .filter(|k| t.covering_tombstone(k).unwrap() > 0)
        .collect();
    assert!(!covered.is_empty());
    let mut g = Golden::new(name);
    for (k, _) in &mut g.metaindex {
        if k == b"rocksdb.range_del2" {
            *k = b"rocksdb.range_del".to_vec();
        }
    }
    g.metaindex.sort();
    let bytes = g.finish();
    let Ok(t) = Table::open(&bytes[..]) else {
        return; // refused, as Pebble v2 refuses it
    };
    for key in &covered {
        match t.get_step(key) {
            Err(_) => {}
            Ok((_, covering)) => {
                assert!(covering > 0, "{key:02x?}: its range deletion passed over")
            }
        }
    }
}

// -- A mutation loop over the golden tables (`cargo test --test it
// pebble_mutations -- --ignored`; PEBBLE_MUTATE_SECS seconds, 20 by
// default; PEBBLE_MUTATE_SEED). Blocks are found by their trailers;
// mutated in place with their checksums refitted, or the footer's and
// metaindex's handles pointed at other blocks, or properties changed.
// Every read must return or err, and stay within the fuzz target's
// bound of memory.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A golden table taken apart: its blocks (by their trailers), its
/// footer, its metaindex and properties.
struct Parts {
    name: String,
    bytes: Vec<u8>,
    footer: Footer,
    footer_len: usize,
    blocks: Vec<BlockHandle>,
    metaindex: Vec<Entry>,
    props: Vec<Entry>,
    format: u32,
    keys: Vec<Vec<u8>>,
}

fn footer_len(footer: &Footer) -> usize {
    match (footer.magic, footer.format_version) {
        (PEBBLE_MAGIC, 6) => 57,
        (PEBBLE_MAGIC, 7) => 61,
        (leveldb_filter::format::TABLE_MAGIC, _) => 48,
        _ => 53,
    }
}

fn parts(t: &crate::vectors::PebbleTable) -> Parts {
    let bytes = t.bytes.clone();
    let footer = Footer::read(&bytes[..]).unwrap();
    let flen = footer_len(&footer);
    let end = bytes.len() - flen;
    let mut blocks = Vec::new();
    let mut s = 0;
    'scan: while s < end {
        let mut crc = crc32c::crc32c(&[]);
        let from = s;
        for e in from..end.saturating_sub(4) {
            let type_byte = bytes[e];
            if matches!(type_byte, 0 | 1 | 7 | 8) {
                let stored = u32::from_le_bytes(bytes[e + 1..e + 5].try_into().unwrap());
                let found = match footer.checksum {
                    ChecksumType::Crc32c => {
                        let c = crc32c::crc32c_append(crc, &[type_byte]);
                        c.rotate_right(15).wrapping_add(0xa282_ead8)
                    }
                    other => other.checksum(&bytes[s..e], type_byte).unwrap(),
                };
                if found == stored {
                    blocks.push(BlockHandle {
                        offset: s as u64,
                        size: (e - s) as u64,
                    });
                    s = e + 5;
                    continue 'scan;
                }
            }
            crc = crc32c::crc32c_append(crc, &bytes[e..e + 1]);
        }
        break;
    }
    let table = Table::open(&bytes[..]).unwrap();
    let format = footer.format_version;
    let metaindex = table.metaindex().to_vec();
    let props = table.props().entries.clone();
    let keys = t
        .answers
        .iter()
        .map(|(k, _, _)| k.clone())
        .collect::<Vec<_>>();
    Parts {
        name: t.name.clone(),
        bytes,
        footer,
        footer_len: flen,
        blocks,
        metaindex,
        props,
        format,
        keys,
    }
}

/// A columnar key-value block (Pebblev6's metaindex, Pebblev7's
/// properties).
fn kv_block(entries: &[Entry]) -> Vec<u8> {
    let keys: Vec<&[u8]> = entries.iter().map(|e| &e.0[..]).collect();
    let values: Vec<&[u8]> = entries.iter().map(|e| &e.1[..]).collect();
    columnar(
        &[],
        entries.len() as u32,
        &[
            (BYTES, &|b| put_bytes(b, &keys)),
            (BYTES, &|b| put_bytes(b, &values)),
        ],
    )
}

/// A footer like `footer`, naming `meta` and `index`.
fn footer_bytes(footer: &Footer, meta: BlockHandle, index: BlockHandle) -> Vec<u8> {
    let mut out = Vec::new();
    if footer.magic == leveldb_filter::format::TABLE_MAGIC {
        out.extend(handle_bytes(meta));
        out.extend(handle_bytes(index));
        out.resize(40, 0);
        out.extend_from_slice(&footer.magic.to_le_bytes());
        return out;
    }
    out.push(match footer.checksum {
        ChecksumType::Crc32c => 1,
        _ => 3,
    });
    out.extend(handle_bytes(meta));
    out.extend(handle_bytes(index));
    out.resize(41, 0);
    if footer.magic == PEBBLE_MAGIC && footer.format_version >= 6 {
        if footer.format_version >= 7 {
            out.extend_from_slice(&footer.attributes.to_le_bytes());
        }
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&footer.format_version.to_le_bytes());
        out.extend_from_slice(&footer.magic.to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out[..at]), &out[at + 4..]);
        let sum = crc.rotate_right(15).wrapping_add(0xa282_ead8);
        out[at..at + 4].copy_from_slice(&sum.to_le_bytes());
        return out;
    }
    out.extend_from_slice(&footer.format_version.to_le_bytes());
    out.extend_from_slice(&footer.magic.to_le_bytes());
    out
}

const INTERESTING: [u64; 12] = [
    0,
    1,
    2,
    7,
    0x7f,
    0x80,
    0xff,
    0x100,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
];

/// One mutation of `p`.
fn mutate(p: &Parts, rng: &mut Rng) -> Vec<u8> {
    let mut bytes = p.bytes.clone();
    let pick = |rng: &mut Rng| p.blocks[rng.below(p.blocks.len())];
    match rng.below(10) {
        // In place, the checksum refitted.
        0..=5 => {
            let h = pick(rng);
            let (start, size) = (h.offset as usize, h.size as usize);
            if size == 0 {
                return bytes;
            }
            for _ in 0..1 + rng.below(3) {
                let at = start + rng.below(size);
                match rng.below(6) {
                    0 => bytes[at] ^= 1 << rng.below(8),
                    1 => bytes[at] = INTERESTING[rng.below(INTERESTING.len())] as u8,
                    2 => bytes[at] = rng.next() as u8,
                    3 => {
                        let v = match rng.below(3) {
                            0 => INTERESTING[rng.below(INTERESTING.len())] as u32,
                            1 => (size as u32)
                                .wrapping_add(rng.below(3) as u32)
                                .wrapping_sub(1),
                            _ => rng.below(64) as u32,
                        };
                        let n = (start + size - at).min(4);
                        bytes[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
                    }
                    4 => {
                        // Splice a run of the block over another.
                        let from = start + rng.below(size);
                        let n = rng
                            .below(16)
                            .min(start + size - from)
                            .min(start + size - at);
                        let run = bytes[from..from + n].to_vec();
                        bytes[at..at + n].copy_from_slice(&run);
                    }
                    _ => bytes[at] = bytes[at].wrapping_add(1),
                }
            }
            let type_byte = bytes[start + size];
            let sum = p
                .footer
                .checksum
                .checksum(&bytes[start..start + size], type_byte)
                .unwrap();
            bytes[start + size + 1..start + size + 5].copy_from_slice(&sum.to_le_bytes());
            bytes
        }
        // The footer's index handle at another block.
        6 => {
            let end = bytes.len() - p.footer_len;
            bytes.truncate(end);
            let footer = footer_bytes(&p.footer, p.footer.metaindex, pick(rng));
            bytes.extend(footer);
            bytes
        }
        // A metaindex entry at another block, or properties changed.
        _ => {
            let end = bytes.len() - p.footer_len;
            bytes.truncate(end);
            let mut meta = p.metaindex.clone();
            let mut props = p.props.clone();
            if rng.below(2) == 0 && !meta.is_empty() {
                let i = rng.below(meta.len());
                meta[i].1 = handle_bytes(pick(rng));
            } else if !props.is_empty() {
                let i = rng.below(props.len());
                props[i].1 = match rng.below(6) {
                    0 => vec![],
                    1 => vec![2, 0, 0, 0],
                    2 => vec![0, 0, 0, 0],
                    3 => {
                        let mut v = Vec::new();
                        varint(&mut v, INTERESTING[rng.below(INTERESTING.len())]);
                        v
                    }
                    4 => b"crdb1".to_vec(),
                    _ => [
                        &b"leveldb.BytewiseComparator"[..],
                        b"cockroach_comparator",
                        b"pebble.internal.testkeys",
                    ][rng.below(3)]
                    .to_vec(),
                };
                let block = match p.format >= 7 && p.footer.magic == PEBBLE_MAGIC {
                    true => kv_block(&props),
                    false => row_block(&props),
                };
                let h = append_with(p.footer.checksum, &mut bytes, &block, 0);
                let name = b"rocksdb.properties";
                if let Some(e) = meta.iter_mut().find(|e| e.0 == name) {
                    e.1 = handle_bytes(h);
                }
            }
            let block = match p.format >= 6 && p.footer.magic == PEBBLE_MAGIC {
                true => kv_block(&meta),
                false => row_block(&meta),
            };
            let h = append_with(p.footer.checksum, &mut bytes, &block, 0);
            let footer = footer_bytes(&p.footer, h, p.footer.index);
            bytes.extend(footer);
            bytes
        }
    }
}

fn read_all(data: &[u8], keys: &[Vec<u8>]) {
    fuzz_read(data);
    let Ok(table) = Table::open(data) else { return };
    for key in keys {
        let _ = table.filter_answer(key);
        let _ = table.get_step(key);
        let _ = table.data_block_for(key);
    }
}

#[test]
#[ignore]
fn pebble_mutations() {
    let secs: u64 = std::env::var("PEBBLE_MUTATE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("PEBBLE_MUTATE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let only = std::env::var("PEBBLE_MUTATE_ONLY").ok();
    let all: Vec<Parts> = crate::vectors::pebble_tables()
        .iter()
        .filter(|t| only.as_deref().is_none_or(|o| t.name.contains(o)))
        // Tables this reader reads (not MinLZ's, yet).
        .filter(|t| Table::open(&t.bytes[..]).is_ok_and(|t| t.walk().is_ok()))
        .map(parts)
        .collect();
    for p in &all {
        assert!(
            p.blocks.len() >= 3,
            "{}: {} blocks found",
            p.name,
            p.blocks.len()
        );
    }
    let out = std::path::Path::new("/tmp/pebble-redteam");
    std::fs::create_dir_all(out).unwrap();
    let mut rng = Rng(seed | 1);
    let start = std::time::Instant::now();
    let (mut runs, mut failures) = (0u64, Vec::new());
    // Mutations that open, and that also walk.
    let mut depth = [0u64; 2];
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    while start.elapsed().as_secs() < secs {
        let p = &all[rng.below(all.len())];
        let data = mutate(p, &mut rng);
        if let Ok(t) = Table::open(&data[..]) {
            depth[0] += 1;
            if t.walk().is_ok() {
                depth[1] += 1;
            }
        }
        let keys: Vec<Vec<u8>> = (0..4)
            .map(|_| p.keys[rng.below(p.keys.len())].clone())
            .collect();
        let t0 = std::time::Instant::now();
        let result = std::panic::catch_unwind(|| peak::peak_during(|| read_all(&data, &keys)).1);
        let took = t0.elapsed();
        let problem = match result {
            Err(e) => Some(format!(
                "panic: {}",
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
            Ok(peak) if peak > fuzz_bound(data.len()) => {
                Some(format!("peak {peak} for {} bytes", data.len()))
            }
            Ok(_) if took.as_secs() >= 2 => Some(format!("took {took:?}")),
            Ok(_) => None,
        };
        if let Some(problem) = problem {
            let file = out.join(format!("{}-{runs}.sst", p.name));
            std::fs::write(&file, &data).unwrap();
            std::fs::write(
                file.with_extension("keys"),
                keys.iter()
                    .map(|k| {
                        format!(
                            "{}\n",
                            k.iter().map(|b| format!("{b:02x}")).collect::<String>()
                        )
                    })
                    .collect::<String>(),
            )
            .unwrap();
            failures.push(format!("{}: {problem}", file.display()));
        }
        runs += 1;
    }
    std::panic::set_hook(hook);
    eprintln!(
        "{runs} mutations ({} open, {} walk), {} failures",
        depth[0],
        depth[1],
        failures.len()
    );
    for f in failures.iter().take(40) {
        eprintln!("{f}");
    }
    assert!(failures.is_empty());
}

/// An internal key: `user` and its trailer.
pub fn ikey(user: &[u8], seq: u64, kind: u8) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&(seq << 8 | u64::from(kind)).to_le_bytes());
    k
}

/// A Pebblev4 table (row blocks) from scratch, ordered bytewise: one
/// data block of key "k", and the range-deletion block given (contents,
/// type byte).
pub fn pebblev4_with_range_dels(range_dels: &[u8], type_byte: u8, count: u64) -> Vec<u8> {
    let data = row_block(&[(ikey(b"k", 1, 1), b"v".to_vec())]);
    pebblev4(&data, 0, 1, Some((range_dels, type_byte, count)))
}

/// A Pebblev4 table (row blocks) from scratch, ordered bytewise: one
/// data block (contents, type byte, its entries) under the separator
/// "l", and a range-deletion block where given (contents, type byte,
/// its deletions).
pub fn pebblev4(
    data: &[u8],
    data_type: u8,
    entries: u64,
    range_dels: Option<(&[u8], u8, u64)>,
) -> Vec<u8> {
    let mut file = Vec::new();
    let data = append(&mut file, data, data_type);
    let mut meta = Vec::new();
    let mut count = 0;
    if let Some((dels, type_byte, n)) = range_dels {
        let del = append(&mut file, dels, type_byte);
        meta.push((b"rocksdb.range_del2".to_vec(), handle_bytes(del)));
        count = n;
    }
    let index = append(
        &mut file,
        &row_block(&[(ikey(b"l", 0, 0), handle_bytes(data))]),
        0,
    );
    let num = |n: u64| {
        let mut v = Vec::new();
        varint(&mut v, n);
        v
    };
    let props = vec![
        (
            b"rocksdb.comparator".to_vec(),
            b"leveldb.BytewiseComparator".to_vec(),
        ),
        (b"rocksdb.num.entries".to_vec(), num(entries + count)),
        (b"rocksdb.num.range-deletions".to_vec(), num(count)),
    ];
    let props = append(&mut file, &row_block(&props), 0);
    meta.push((b"rocksdb.properties".to_vec(), handle_bytes(props)));
    meta.sort();
    let meta = append(&mut file, &row_block(&meta), 0);
    pebble_footer(&mut file, 4, meta, index);
    file
}

/// Range deletions whose spans are disjoint by the check "each ends at
/// or before the next starts", but whose starts are not sorted: the
/// span [z, c) ends before it starts. The binary search over starts
/// then misses [c, e), which covers "d": a Get of "d" would read a
/// value that a range deletion deletes, with no error.
#[test]
fn pebble_covering_span_found_whatever_the_spans() {
    let dels = row_block(&[
        (ikey(b"a", 5, 0x0f), b"b".to_vec()),
        (ikey(b"z", 6, 0x0f), b"c".to_vec()),
        (ikey(b"c", 7, 0x0f), b"e".to_vec()),
    ]);
    let file = pebblev4_with_range_dels(&dels, 0, 3);
    let t = Table::open(&file[..]).unwrap();
    match t.covering_tombstone(b"d") {
        Err(_) => {} // an inverted span named as corrupt
        Ok(covering) => assert_eq!(covering, 7, "[c, e) at 7 covers d"),
    }
}

/// A Zstandard frame of `first` then `period` repeated `copies` times,
/// then `tail`, as RocksDB's and Pebble's readers take it (the size as
/// a varint before it): the repeats as blocks of one sequence each
/// (literals none, offset `period.len()`, ~10000 bytes matched; every
/// code table in RLE mode), ~830 bytes out for each byte in.
pub fn zstd_repeats(first: &[u8], period: &[u8], copies: usize, tail: &[u8]) -> Vec<u8> {
    let ml: usize = 10_000 - 10_000 % period.len();
    assert!(ml >= 8195);
    assert_eq!(copies * period.len() % ml, 0);
    let total = first.len() + period.len() * (copies + 1) + tail.len();
    let mut out = Vec::new();
    varint(&mut out, total as u64);
    out.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0xa0]);
    out.extend_from_slice(&(total as u32).to_le_bytes());
    let block = |out: &mut Vec<u8>, last: bool, kind: u32, size: usize| {
        let header = u32::from(last) | (kind << 1) | ((size as u32) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
    };
    // A raw block: the first bytes and one period.
    let raw = [first, period].concat();
    block(&mut out, false, 0, raw.len());
    out.extend_from_slice(&raw);
    let offset_value = period.len() as u32 + 3;
    let of_code = 31 - offset_value.leading_zeros();
    let of_extra = offset_value - (1 << of_code);
    // ML code 49: baseline 8195, 13 extra bits (ML a multiple of the
    // period, from 8195 to 10000).
    let ml_extra = (ml - 8195) as u32;
    let bits = ml_extra | (of_extra << 13) | (1 << (13 + of_code));
    let nbytes = (13 + of_code as usize + 1).div_ceil(8);
    for _ in 0..copies * period.len() / ml {
        let mut b = vec![0x00, 0x01, 0x54, 0x00, of_code as u8, 49];
        b.extend_from_slice(&bits.to_le_bytes()[..nbytes]);
        block(&mut out, false, 2, b.len());
        out.extend_from_slice(&b);
    }
    block(&mut out, true, 0, tail.len());
    out.extend_from_slice(tail);
    out
}

/// Range deletions, in a row block, that all start at one long key
/// stored once (each entry shares it whole: 5 bytes an entry) with
/// ends that alternate ("l", "m"): a Zstandard block of ~1.3 KiB holds 200,000 of
/// them, and reading the table's range deletions copies each start,
/// 300 bytes, so ~70 MB held for a ~1.6 KB file (the fuzz target's
/// bound: 2200 times the input and 4 MiB).
#[test]
fn pebble_range_deletions_held_within_the_bound() {
    let user = vec![b'k'; 300];
    let key = ikey(&user, 9, 0x0f);
    let mut first = Vec::new();
    varint(&mut first, 0);
    varint(&mut first, key.len() as u64);
    varint(&mut first, 1);
    first.extend_from_slice(&key);
    first.push(b'm');
    // Two entries: the whole key shared, values "l" and "m".
    let mut period = Vec::new();
    for value in [b'l', b'm'] {
        varint(&mut period, key.len() as u64);
        period.extend_from_slice(&[0, 1, value]);
    }
    assert_eq!(period.len(), 10);
    let copies = 100_000;
    let mut tail = 0u32.to_le_bytes().to_vec();
    tail.extend_from_slice(&1u32.to_le_bytes());
    let frame = zstd_repeats(&first, &period, copies, &tail);
    let file = pebblev4_with_range_dels(&frame, 7, 2 * copies as u64 + 2);
    let t = Table::open(&file[..]).unwrap();
    // The covering deletion, or (held past the limit) an error: never
    // more memory than the bound.
    let (covering, peak) = peak::peak_during(|| t.covering_tombstone(&user));
    match covering {
        Ok(covering) => assert_eq!(covering, 9),
        Err(leveldb_filter::Error::LimitExceeded { .. }) => {}
        Err(e) => panic!("{e}"),
    }
    assert!(
        peak <= fuzz_bound(file.len()),
        "{peak} bytes at peak for a {}-byte table (bound {})",
        file.len(),
        fuzz_bound(file.len())
    );
}

/// The row-block form of `pebble_get_of_a_key_repeated_in_cheap_rows_is_bounded`:
/// a data block whose entries all share the whole key "k" and its
/// trailer (3 bytes an entry: shared 9, unshared 0, no value), in a
/// Zstandard block of ~830 bytes out for each byte in. A `Get` of "k"
/// holds 16 bytes for each entry: past the fuzz target's bound.
#[test]
fn pebble_get_of_a_key_repeated_in_shared_row_entries_is_bounded() {
    let key = ikey(b"k", 1, 1);
    let mut first = vec![0, key.len() as u8, 0];
    first.extend_from_slice(&key);
    let period = [key.len() as u8, 0, 0];
    let ml = 10_000 - 10_000 % 3;
    let copies = 630 * ml / 3;
    let mut tail = 0u32.to_le_bytes().to_vec();
    tail.extend_from_slice(&1u32.to_le_bytes());
    let frame = zstd_repeats(&first, &period, copies, &tail);
    let entries = copies as u64 + 2;
    let file = pebblev4(&frame, 7, entries, None);
    let t = Table::open(&file[..]).unwrap();
    assert_eq!(t.walk().unwrap().keys, entries);
    let (step, peak) = peak::peak_during(|| t.get_step(b"k").unwrap().0);
    let TableStep::Read(read) = step else {
        panic!("{step:?}")
    };
    assert!(!read.is_empty());
    assert!(
        peak <= fuzz_bound(file.len()),
        "{peak} bytes at peak for a {}-byte table (bound {})",
        file.len(),
        fuzz_bound(file.len())
    );
}

/// A columnar table whose comparer (`rocksdb.comparator`) and key
/// schema (`DefaultKeySchema(<comparer>,16)`) name different comparers:
/// the filter check hashes the blocks' stored prefixes (the schema's
/// Split) and finds the filter rebuilt, while lookups hash the
/// comparer's Split of the key, and rule out the keys the check just
/// found in the filter. (Pebble does not open such a table: its
/// reader takes the schema registered under the name, which names the
/// comparer.)
#[test]
fn pebble_key_schema_of_another_comparer_never_rules_out_a_held_key() {
    let name = "v2-pebblev5-testkeys-bpk18-zstd-crc32c-tiny";
    let mut g = Golden::new(name);
    let mut props = g.properties();
    assert!(props.iter().any(|(k, v)| k == b"pebble.colblk.schema"
        && v.starts_with(b"DefaultKeySchema(pebble.internal.testkeys")));
    for (k, v) in &mut props {
        if k == b"rocksdb.comparator" {
            *v = b"leveldb.BytewiseComparator".to_vec();
        }
    }
    g.set_properties(&props);
    let bytes = g.finish();
    let t = Table::open(&bytes[..]).unwrap();
    let verdict = t.check_filter().unwrap();
    let ruled_out: Vec<_> = written(name)
        .into_iter()
        .filter(|key| t.filter_answer(key) == Some(FilterAnswer::Absent))
        .collect();
    assert!(
        ruled_out.is_empty(),
        "{} held keys ruled out (e.g. {:02x?}); the filter check said {verdict:?}",
        ruled_out.len(),
        ruled_out[0]
    );
}
