//! The readers against blocks Pebble v2.1.7 encoded, and what Pebble's own
//! decoders read from them (`testdata/pebble-colblk/`, written by
//! `oracle/pebble-colblk`); then the same blocks cut short, bit-flipped and
//! altered, which must give an error or an answer, never a panic.

use super::*;
use crate::format::Corruption;

/// One block of a vector file: its first line's words, its bytes, and the
/// lines of what Pebble read, split in words.
struct Record {
    head: Vec<String>,
    block: Vec<u8>,
    lines: Vec<Vec<String>>,
}

impl Record {
    fn name(&self) -> &str {
        &self.head[1]
    }
}

fn records(file: &str) -> Vec<Record> {
    let path = format!(
        "{}/testdata/pebble-colblk/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    let mut lines = text
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
    while let Some(head) = lines.next() {
        let hex = lines.next().expect("a hex line");
        assert_eq!(hex[0], "hex");
        let mut record = Record {
            head,
            block: unhex(&hex[1]),
            lines: Vec::new(),
        };
        for line in lines.by_ref() {
            if line[0] == "end" {
                break;
            }
            record.lines.push(line);
        }
        out.push(record);
    }
    assert!(!out.is_empty(), "{path} holds no blocks");
    out
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Whether `bytes` are what the vector's word says: hex, `-` for empty, or
/// `~<length>.<CRC-32C>` for a long string.
fn is(word: &str, bytes: &[u8]) -> bool {
    match word.strip_prefix('~') {
        Some(digest) => {
            let (len, crc) = digest.split_once('.').unwrap();
            bytes.len() == len.parse::<usize>().unwrap()
                && crc32c::crc32c(bytes) == u32::from_str_radix(crc, 16).unwrap()
        }
        None => unhex(word) == bytes,
    }
}

fn assert_is(word: &str, bytes: &[u8], what: &str) {
    assert!(
        is(word, bytes),
        "{what}: expected {word}, read {bytes:02x?}"
    );
}

fn col(line: &[String]) -> usize {
    line[1].parse().unwrap()
}

// ---------------------------------------------------------------------------
// Against Pebble.

#[test]
fn columns_read_as_pebble_reads_them() {
    for record in records("columns.txt") {
        let name = record.name();
        let block =
            ColumnarBlock::parse(&record.block, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut prefix_columns = Vec::new();
        for line in &record.lines {
            let what = format!("{name}, {}", line.join(" "));
            match line[0].as_str() {
                "header" => {
                    assert_eq!(block.version().to_string(), line[1], "{what}");
                    assert_eq!(block.columns().to_string(), line[2], "{what}");
                    assert_eq!(block.rows().to_string(), line[3], "{what}");
                }
                "uint" => {
                    let uints = block.uints(col(line), block.rows()).unwrap();
                    let read: Vec<String> = uints.iter().map(|v| v.to_string()).collect();
                    assert_eq!(read, line[2..], "{what}");
                    assert_eq!(uints.get(block.rows()), None);
                }
                "bytes" => {
                    let bytes = block.raw_bytes(col(line), block.rows()).unwrap();
                    assert_eq!(bytes.iter().len(), line.len() - 2, "{what}");
                    for (i, (word, read)) in line[2..].iter().zip(bytes.iter()).enumerate() {
                        assert_is(word, read, &what);
                        assert_eq!(bytes.get(i), Some(read));
                    }
                    assert_eq!(bytes.get(block.rows()), None);
                }
                "bool" => {
                    let bitmap = block.bitmap(col(line), block.rows()).unwrap();
                    let read: String = bitmap.iter().map(|b| if b { '1' } else { '0' }).collect();
                    let expected = if line[2] == "-" { "" } else { &line[2] };
                    assert_eq!(read, expected, "{what}");
                    assert_eq!(bitmap.count_ones(), expected.matches('1').count(), "{what}");
                }
                "prefix" => {
                    let column = block.prefix_bytes(col(line), block.rows()).unwrap();
                    assert_is(&line[2], column.shared_prefix(), &what);
                    assert_eq!(column.bundle_count().to_string(), line[3], "{what}");
                    prefix_columns.push(column);
                }
                "bundles" => {
                    let column = prefix_columns.last().unwrap();
                    for (b, word) in line[2..].iter().enumerate() {
                        assert_is(word, column.bundle_prefix(b).unwrap(), &what);
                    }
                    assert_eq!(column.bundle_prefix(line.len() - 2), None, "{what}");
                }
                "keys" => {
                    let column = prefix_columns.last().unwrap();
                    let keys = &line[2..];
                    assert_eq!(column.len(), keys.len(), "{what}");
                    // By row, by walk, and by length alone.
                    let mut key = Vec::new();
                    for (row, word) in keys.iter().enumerate() {
                        column.get_into(row, &mut key).unwrap();
                        assert_is(word, &key, &format!("{what}: row {row}"));
                    }
                    assert_eq!(column.get_into(keys.len(), &mut key), None);
                    let mut walk = PrefixBytesIter::new(column);
                    for (row, word) in keys.iter().enumerate() {
                        assert_is(word, walk.next().unwrap(), &format!("{what}: walk {row}"));
                    }
                    assert_eq!(walk.next(), None);
                    let lengths: Vec<usize> = column.lengths().collect();
                    let expected: Vec<usize> = keys.iter().map(|w| unhex(w).len()).collect();
                    assert_eq!(lengths, expected, "{what}");
                }
                other => panic!("{name}: unknown line {other}"),
            }
        }
    }
}

#[test]
fn data_blocks_read_as_pebble_reads_them() {
    let mut schemas = std::collections::HashSet::new();
    for record in records("data.txt") {
        let name = record.name();
        let schema = KeySchema::from_name(&record.head[2]).unwrap();
        schemas.insert(schema);
        let block =
            DataBlock::parse(&record.block, schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rows = block.iter();
        let mut count = 0;
        let mut externals = 0;
        for line in &record.lines {
            let what = format!("{name}, {}", line.join(" "));
            match line[0].as_str() {
                "maxkeylen" => assert_eq!(block.max_key_len().to_string(), line[1], "{what}"),
                "schemaheader" => assert_is(&line[1], block.schema_header(), &what),
                "row" => {
                    let row = rows.next().unwrap_or_else(|| panic!("{what}: no row"));
                    assert_is(&line[1], row.user_key, &format!("{what}: key"));
                    assert_is(&line[2], row.prefix, &format!("{what}: prefix"));
                    assert_eq!(row.trailer.to_string(), line[3], "{what}");
                    assert_eq!(row.seqnum() << 8 | u64::from(row.kind()), row.trailer);
                    let value = match row.value {
                        Value::InPlace(v) => v.to_vec(),
                        Value::External { prefix, handle } => {
                            externals += 1;
                            [&[prefix][..], handle].concat()
                        }
                    };
                    assert_is(&line[4], &value, &format!("{what}: value"));
                    assert_eq!(
                        matches!(row.value, Value::External { .. }),
                        line[5] == "1",
                        "{what}"
                    );
                    assert_eq!(row.obsolete, line[6] == "1", "{what}: obsolete");
                    assert_eq!(row.prefix_changed, line[7] == "1", "{what}: prefix changed");
                    count += 1;
                }
                other => panic!("{name}: unknown line {other}"),
            }
        }
        assert!(rows.next().is_none(), "{name}: rows past Pebble's");
        assert_eq!(block.rows(), count, "{name}");
        if name == "default-simple" {
            assert_eq!(externals, 2, "{name}: a value-block and a blob handle");
        }
    }
    assert_eq!(schemas.len(), 2, "both key schemas");
}

#[test]
fn index_blocks_read_as_pebble_reads_them() {
    for record in records("index.txt") {
        let name = record.name();
        let block = IndexBlock::parse(&record.block).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(block.len(), record.lines.len(), "{name}");
        for (i, (line, entry)) in record.lines.iter().zip(block.iter()).enumerate() {
            let what = format!("{name}, {}", line.join(" "));
            assert_is(&line[1], entry.separator, &what);
            assert_eq!(entry.handle.offset.to_string(), line[2], "{what}");
            assert_eq!(entry.handle.size.to_string(), line[3], "{what}");
            assert_is(&line[4], entry.properties, &what);
            assert_eq!(block.get(i), Some(entry));
        }
        assert_eq!(block.get(block.len()), None);
    }
}

#[test]
fn key_value_blocks_read_as_pebble_reads_them() {
    for record in records("key_value.txt") {
        let name = record.name();
        let block = KeyValueBlock::parse(&record.block).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(block.len(), record.lines.len(), "{name}");
        for (line, (key, value)) in record.lines.iter().zip(block.iter()) {
            let what = format!("{name}, {}", line.join(" "));
            assert_is(&line[1], key, &what);
            assert_is(&line[2], value, &what);
            assert_eq!(block.get(key), Some(value), "{what}");
        }
    }
    let metaindex = &records("key_value.txt")[0];
    let block = KeyValueBlock::parse(&metaindex.block).unwrap();
    assert!(block.get(b"rocksdb.properties").is_some());
    assert_eq!(block.get(b"rocksdb.range_del"), None);
}

#[test]
fn keyspan_blocks_read_as_pebble_reads_them() {
    for record in records("keyspan.txt") {
        let name = record.name();
        let block = KeyspanBlock::parse(&record.block).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut spans = block.spans();
        let mut keys = 0..0;
        let mut count = 0;
        for line in &record.lines {
            let what = format!("{name}, {}", line.join(" "));
            match line[0].as_str() {
                "span" => {
                    assert!(keys.is_empty(), "{what}: keys left in the span before");
                    let span = spans.next().unwrap_or_else(|| panic!("{what}: no span"));
                    assert_is(&line[1], span.start, &what);
                    assert_is(&line[2], span.end, &what);
                    keys = span.keys;
                }
                "key" => {
                    let key = block.key(keys.next().unwrap()).unwrap();
                    assert_eq!(key.trailer.to_string(), line[1], "{what}");
                    assert_is(&line[2], key.suffix, &what);
                    assert_is(&line[3], key.value, &what);
                    count += 1;
                }
                other => panic!("{name}: unknown line {other}"),
            }
        }
        assert!(
            keys.is_empty() && spans.next().is_none(),
            "{name}: spans past Pebble's"
        );
        assert_eq!(block.key_count(), count, "{name}");
    }
}

// ---------------------------------------------------------------------------
// What can be wrong.

/// The vector `name` of `file`.
fn vector(file: &str, name: &str) -> Record {
    records(file)
        .into_iter()
        .find(|r| r.name() == name)
        .unwrap_or_else(|| panic!("no vector {name} in {file}"))
}

/// Where column `col` of a block starts (custom header of `custom` bytes).
fn column_start(block: &[u8], custom: usize, col: usize) -> usize {
    let at = custom + 7 + 5 * col + 1;
    u32::from_le_bytes(block[at..at + 4].try_into().unwrap()) as usize
}

#[test]
fn header_faults_are_named() {
    let good = vector("columns.txt", "uint-encodings").block;
    let parse = |b: &[u8]| ColumnarBlock::parse(b, 0).err();
    assert_eq!(parse(&good), None);
    let mut b = good.clone();
    b[0] = 2;
    assert_eq!(parse(&b), Some(Corruption::ColumnarVersion));
    assert_eq!(parse(&good[..5]), Some(Corruption::ColumnarTruncatedHeader));
    assert_eq!(
        parse(&good[..20]),
        Some(Corruption::ColumnarTruncatedHeader)
    );
    assert_eq!(parse(&[]), Some(Corruption::ColumnarTruncatedHeader));
    let mut b = good.clone();
    *b.last_mut().unwrap() = 1;
    assert_eq!(parse(&b), Some(Corruption::ColumnarPadding));
    // A type byte of 0 (Pebble's invalid type) or past prefix bytes.
    for t in [0, 5, 0xff] {
        let mut b = good.clone();
        b[7] = t;
        assert_eq!(parse(&b), Some(Corruption::ColumnarSchema), "type {t}");
    }
    // Column 0 not right after the header, columns out of order, past the end.
    let mut b = good.clone();
    b[8] += 1;
    assert_eq!(parse(&b), Some(Corruption::ColumnarColumnOffset));
    let mut b = good.clone();
    b[13..17].copy_from_slice(&3u32.to_le_bytes());
    assert_eq!(parse(&b), Some(Corruption::ColumnarColumnOffset));
    let mut b = good.clone();
    b[13..17].copy_from_slice(&(good.len() as u32).to_le_bytes());
    assert_eq!(parse(&b), Some(Corruption::ColumnarColumnOffset));
    // Rows the block cannot hold: 4 billion, or one past 8 a byte.
    let mut b = good.clone();
    b[3..7].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(parse(&b), Some(Corruption::ColumnarRowCount));
    let mut b = good.clone();
    b[3..7].copy_from_slice(&(good.len() as u32 * 8 + 1).to_le_bytes());
    assert_eq!(parse(&b), Some(Corruption::ColumnarRowCount));
    // A column read as the wrong type, or not filling its bytes.
    let block = ColumnarBlock::parse(&good, 0).unwrap();
    assert_eq!(
        block.raw_bytes(1, 10).err(),
        Some(Corruption::ColumnarSchema)
    );
    assert_eq!(block.uints(12, 10).err(), Some(Corruption::ColumnarSchema));
    assert_eq!(
        block.uints(3, 9).err(),
        Some(Corruption::ColumnarColumnLength)
    );
    assert_eq!(
        block.uints(3, 11).err(),
        Some(Corruption::ColumnarColumnLength)
    );
    assert_eq!(
        block.expect_columns(&[&[DataType::Bool]]),
        Err(Corruption::ColumnarSchema)
    );
}

#[test]
fn column_faults_are_named() {
    let good = vector("columns.txt", "uint-encodings").block;
    let decode = |b: &[u8], col: usize| {
        let block = ColumnarBlock::parse(b, 0).unwrap();
        block.uints(col, 10).err()
    };
    // Column 3 holds 1-byte values; column 10 8-byte ones.
    for (col, encoding) in [(3, 3), (3, 0x7f), (10, 0x88), (3, 0x83)] {
        let mut b = good.clone();
        b[column_start(&good, 0, col)] = encoding;
        assert_eq!(
            decode(&b, col),
            Some(Corruption::ColumnarUintEncoding),
            "{encoding:#x}"
        );
    }
    // Column 5 (2-byte values) starts at an odd offset: nonzero padding.
    let start = column_start(&good, 0, 5);
    assert_eq!(good[start], 2);
    assert_eq!(start % 2, 0, "the encoding byte, then a byte of padding");
    let mut b = good.clone();
    b[start + 1] = 9;
    assert_eq!(decode(&b, 5), Some(Corruption::ColumnarPadding));

    // Offsets that go down, and a first offset past 0.
    let bytes = vector("columns.txt", "bytes").block;
    let start = column_start(&bytes, 0, 0);
    let read = |b: &[u8]| ColumnarBlock::parse(b, 0).unwrap().raw_bytes(0, 6).err();
    assert_eq!(read(&bytes), None);
    assert_eq!(bytes[start], 2, "2-byte offsets");
    let values = start + 1 + (start + 1) % 2;
    let offset =
        |b: &[u8], i: usize| u16::from_le_bytes([b[values + 2 * i], b[values + 2 * i + 1]]);
    assert_eq!(
        (0..7).map(|i| offset(&bytes, i)).collect::<Vec<_>>(),
        [0, 5, 5, 6, 306, 306, 310]
    );
    let mut b = bytes.clone();
    b[values + 2..values + 4].copy_from_slice(&400u16.to_le_bytes());
    assert_eq!(read(&b), Some(Corruption::ColumnarOffsets));
    let mut b = bytes.clone();
    b[values] = 1;
    assert_eq!(read(&b), Some(Corruption::ColumnarOffsets));
    // Offsets behind a base: the next 8 bytes are the base, not 0.
    let mut b = bytes.clone();
    b[start] = 0x82;
    assert_eq!(read(&b), Some(Corruption::ColumnarOffsets));

    // A bitmap: an unknown encoding, a wrong summary, a bit past the rows.
    let bits = vector("columns.txt", "bool-rows-130").block;
    let read = |b: &[u8], col: usize| ColumnarBlock::parse(b, 0).unwrap().bitmap(col, 130).err();
    let start = column_start(&bits, 0, 2); // every other bit
    assert_eq!(read(&bits, 2), None);
    let mut b = bits.clone();
    b[start] = 2;
    assert_eq!(read(&b, 2), Some(Corruption::ColumnarBitmapEncoding));
    let words = start + 1 + ((8 - (start + 1) % 8) % 8);
    let mut b = bits.clone();
    b[words + 3 * 8] ^= 1; // the summary word
    assert_eq!(read(&b, 2), Some(Corruption::ColumnarBitmapSummary));
    let mut b = bits.clone();
    b[words + 2 * 8] |= 0x80; // bit 135 of 130
    assert_eq!(read(&b, 2), Some(Corruption::ColumnarBitmapSummary));
    let mut b = bits.clone();
    b[words..words + 8].fill(0); // word 0 empty, its summary bit set
    assert_eq!(read(&b, 2), Some(Corruption::ColumnarBitmapSummary));
}

#[test]
fn data_block_faults_are_named() {
    let simple = vector("data.txt", "default-simple").block;
    let parse = |b: &[u8]| DataBlock::parse(b, KeySchema::Default).err();
    assert_eq!(parse(&simple), None);
    // The longest key is 9 bytes.
    let mut b = simple.clone();
    b[0] = 8;
    assert_eq!(parse(&b), Some(Corruption::ColumnarKeyTooLong));
    // The schema decides the columns.
    assert!(DataBlock::parse(&simple, KeySchema::Cockroach).is_err());
    // No rows.
    let mut b = simple.clone();
    b[7..11].fill(0);
    assert_eq!(parse(&b), Some(Corruption::ColumnarNoRows));
    // An external value of no bytes: mark row 1's empty value external.
    let start = column_start(&simple, 4, 5);
    let block = DataBlock::parse(&simple, KeySchema::Default).unwrap();
    let mut rows = block.iter();
    rows.next();
    assert_eq!(rows.next().unwrap().value, Value::InPlace(b""));
    let words = start + 1 + ((8 - (start + 1) % 8) % 8);
    let mut b = simple.clone();
    b[words] |= 2;
    assert_eq!(parse(&b), Some(Corruption::ColumnarExternalValue));

    let error = KeySchema::from_name("my.schema(v2)").unwrap_err();
    assert_eq!(error.name, "my.schema(v2)");
    assert!(error.to_string().contains("\"my.schema(v2)\""), "{error}");
    assert_eq!(KeySchema::from_name("crdb1"), Ok(KeySchema::Cockroach));
    assert_eq!(
        KeySchema::from_name("DefaultKeySchema(cockroach_comparator,4)"),
        Ok(KeySchema::Default)
    );
}

#[test]
fn keyspan_faults_are_named() {
    let good = vector("keyspan.txt", "range-deletions").block;
    let parse = |b: &[u8]| KeyspanBlock::parse(b).err();
    assert_eq!(parse(&good), None);
    // Boundary indices (1-byte): 0 1 2 3 3 4 4 5. Make one above 1, the
    // last 4, one go down, the first span empty, two empty spans in a row,
    // the last span empty.
    let start = column_start(&good, 4, 1);
    assert_eq!(good[start..start + 9], [1, 0, 1, 2, 3, 3, 4, 4, 5]);
    for (at, value) in [(1, 1), (8, 4), (4, 1), (2, 0), (6, 3), (7, 5)] {
        let mut b = good.clone();
        b[start + at] = value;
        assert_eq!(
            parse(&b),
            Some(Corruption::ColumnarKeyspanIndices),
            "{at} {value}"
        );
    }
    // A boundary count the block cannot hold.
    let mut b = good.clone();
    b[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(parse(&b), Some(Corruption::ColumnarRowCount));
}

/// A count the block can hold but no column stores a byte of: every column
/// of width 0, bitmaps all zero. Reading takes time in rows, at most 8 per
/// byte of the block.
#[test]
fn rows_stored_in_no_bytes_are_bounded_by_the_block() {
    // Header: 2 columns, a uint (width 0, base 0) and a zero bitmap.
    let mut b = vec![1, 2, 0];
    b.extend_from_slice(&0u32.to_le_bytes());
    for (t, start) in [(2u8, 17u32), (1, 18)] {
        b.push(t);
        b.extend_from_slice(&start.to_le_bytes());
    }
    b.extend_from_slice(&[0, 1, 0]);
    let most = b.len() as u32 * 8;
    b[3..7].copy_from_slice(&most.to_le_bytes());
    let block = ColumnarBlock::parse(&b, 0).unwrap();
    assert_eq!(
        block.uints(0, block.rows()).unwrap().iter().count(),
        most as usize
    );
    assert_eq!(block.bitmap(1, block.rows()).unwrap().count_ones(), 0);
    b[3..7].copy_from_slice(&(most + 1).to_le_bytes());
    assert_eq!(
        ColumnarBlock::parse(&b, 0).err(),
        Some(Corruption::ColumnarRowCount)
    );
}

// ---------------------------------------------------------------------------
// Damaged blocks: never a panic.

/// Reads `block` every way this module can, all the way through, whatever
/// it is; returns how many reads succeeded.
fn read_every_way(block: &[u8]) -> usize {
    let mut ok = 0;
    for custom in [0, 4, 5] {
        if let Ok(b) = ColumnarBlock::parse(block, custom) {
            ok += 1;
            for col in 0..b.columns() {
                let rows = b.rows();
                let _ = b.uints(col, rows).map(|u| u.iter().count());
                let _ = b
                    .raw_bytes(col, rows)
                    .map(|r| r.iter().map(<[u8]>::len).sum::<usize>());
                let _ = b.bitmap(col, rows).map(|m| m.iter().filter(|&x| x).count());
                if let Ok(p) = b.prefix_bytes(col, rows) {
                    let mut walk = PrefixBytesIter::new(&p);
                    while walk.next().is_some() {}
                    let mut key = Vec::new();
                    for row in [0, rows / 2, rows.saturating_sub(1), rows] {
                        let _ = p.get_into(row, &mut key);
                    }
                    let _ = p.lengths().sum::<usize>();
                    for bundle in [0, p.bundle_count()] {
                        let _ = p.bundle_prefix(bundle);
                    }
                }
            }
        }
    }
    for schema in [KeySchema::Default, KeySchema::Cockroach] {
        if let Ok(d) = DataBlock::parse(block, schema) {
            ok += 1;
            let mut rows = d.iter();
            let mut n = 0;
            while let Some(row) = rows.next() {
                assert!(row.user_key.len() <= d.max_key_len() as usize);
                assert!(row.user_key.starts_with(row.prefix));
                n += 1;
            }
            assert_eq!(n, d.rows());
        }
    }
    if let Ok(i) = IndexBlock::parse(block) {
        ok += 1;
        assert_eq!(i.iter().count(), i.len());
    }
    if let Ok(kv) = KeyValueBlock::parse(block) {
        ok += 1;
        assert_eq!(kv.iter().count(), kv.len());
        let _ = kv.get(b"rocksdb.properties");
    }
    if let Ok(k) = KeyspanBlock::parse(block) {
        ok += 1;
        let keys: usize = k.spans().map(|s| s.keys.len()).sum();
        assert_eq!(keys, k.key_count());
        for span in k.spans() {
            for i in span.keys {
                assert!(k.key(i).is_some());
            }
        }
    }
    ok
}

fn all_vectors() -> Vec<Record> {
    [
        "columns.txt",
        "data.txt",
        "index.txt",
        "key_value.txt",
        "keyspan.txt",
    ]
    .into_iter()
    .flat_map(records)
    .collect()
}

/// A deterministic generator (SplitMix64), for sampling big vectors.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Blocks up to this size are cut at every length and flipped at every
/// bit; larger ones at a sample.
const EXHAUSTIVE: usize = 1200;

#[test]
fn every_vector_reads_at_least_one_way() {
    for record in all_vectors() {
        assert!(read_every_way(&record.block) > 0, "{}", record.name());
    }
}

#[test]
fn truncated_blocks_never_panic() {
    let mut rng = Rng(1);
    for record in all_vectors() {
        let block = &record.block;
        let cuts: Vec<usize> = if block.len() <= EXHAUSTIVE {
            (0..block.len()).collect()
        } else {
            (0..200).map(|_| rng.below(block.len())).collect()
        };
        for cut in cuts {
            read_every_way(&block[..cut]);
            // Cut at the front too: what a wrong handle gives.
            read_every_way(&block[block.len() - cut..]);
        }
    }
}

#[test]
fn bit_flipped_blocks_never_panic() {
    let mut rng = Rng(2);
    for record in all_vectors() {
        let mut block = record.block.clone();
        let bits: Vec<usize> = if block.len() <= EXHAUSTIVE / 2 {
            (0..block.len() * 8).collect()
        } else {
            (0..400).map(|_| rng.below(block.len() * 8)).collect()
        };
        for bit in bits {
            block[bit / 8] ^= 1 << (bit % 8);
            read_every_way(&block);
            block[bit / 8] ^= 1 << (bit % 8);
        }
    }
}

#[test]
fn overwritten_bytes_never_panic() {
    let mut rng = Rng(3);
    for record in all_vectors() {
        let len = record.block.len();
        for _ in 0..60 {
            let mut block = record.block.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(len);
                block[at] = [0, 1, 0x7f, 0x80, 0xff, rng.next() as u8][rng.below(6)];
            }
            read_every_way(&block);
        }
    }
}
