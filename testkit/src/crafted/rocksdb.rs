//! RocksDB tables changed block by block, with valid checksums: a golden
//! table's blocks stay where they are, new blocks are appended after its
//! footer, and a new metaindex and footer end the file. Each is a table
//! RocksDB opens; what RocksDB answers for it is the oracle's to say
//! (oracle/rocksdb-7.8/answer-rocksdb.cc), not this crate's.

use leveldb_filter::format::BlockHandle;
use leveldb_filter::rocksdb::{ChecksumType, Footer};

use super::varint;

/// A key and value of a block, in order.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Appends a block entry that shares nothing with the one before: its
/// key's and (with `value_lengths`) its value's lengths, then both.
pub(super) fn full_entry(out: &mut Vec<u8>, key: &[u8], value: &[u8], value_lengths: bool) {
    varint(out, 0);
    varint(out, key.len() as u64);
    if value_lengths {
        varint(out, value.len() as u64);
    }
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

fn read_varint(input: &mut &[u8]) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let byte = input[0];
        *input = &input[1..];
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// A handle's varints.
pub fn handle_bytes(h: BlockHandle) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, h.offset);
    varint(&mut out, h.size);
    out
}

/// The entries of a well-formed block with value lengths (metaindex,
/// properties, index blocks without delta-encoded values).
pub fn entries(block: &[u8]) -> Vec<Entry> {
    let restarts = u32::from_le_bytes(block[block.len() - 4..].try_into().unwrap()) as usize;
    let mut rest = &block[..block.len() - 4 - 4 * restarts];
    let (mut out, mut key) = (Vec::new(), Vec::<u8>::new());
    while !rest.is_empty() {
        let shared = read_varint(&mut rest) as usize;
        let unshared = read_varint(&mut rest) as usize;
        let value_len = read_varint(&mut rest) as usize;
        key.truncate(shared);
        key.extend_from_slice(&rest[..unshared]);
        out.push((key.clone(), rest[unshared..unshared + value_len].to_vec()));
        rest = &rest[unshared + value_len..];
    }
    out
}

/// A block of `entries`, each a restart point (sharing nothing); with
/// `value_lengths` false, as an index block of delta-encoded values lays
/// them out (no value length).
pub fn block(entries: &[Entry], value_lengths: bool) -> Vec<u8> {
    block_with_garbage(entries, value_lengths, None)
}

/// [`block`], with bytes that are no entry before the entry of key
/// `before` (at no restart point), or before the restart array where no
/// entry has that key.
pub fn block_with_garbage(
    entries: &[Entry],
    value_lengths: bool,
    garbage: Option<(&[u8], &[u8])>,
) -> Vec<u8> {
    let (mut out, mut restarts) = (Vec::new(), Vec::new());
    let mut pending = garbage;
    for (key, value) in entries {
        if let Some((_, bytes)) = pending.filter(|(before, _)| before == key) {
            out.extend_from_slice(bytes);
            pending = None;
        }
        restarts.push(out.len() as u32);
        full_entry(&mut out, key, value, value_lengths);
    }
    if let Some((_, bytes)) = pending {
        out.extend_from_slice(bytes);
    }
    for r in &restarts {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    out
}

/// A RocksDB table (format_version 1 to 5) being changed.
pub struct Sst {
    pub bytes: Vec<u8>,
    pub footer: Footer,
    /// The metaindex the new footer will name.
    pub metaindex: Vec<Entry>,
    /// Bytes that are no entry, put in the metaindex before the entry of a
    /// key.
    pub metaindex_garbage: Option<(Vec<u8>, Vec<u8>)>,
}

impl Sst {
    pub fn new(bytes: &[u8]) -> Sst {
        let footer = Footer::read(bytes).expect("a RocksDB table");
        assert!(footer.format_version >= 1);
        let meta = footer.metaindex;
        let metaindex = entries(&bytes[meta.offset as usize..][..meta.size as usize]);
        Sst {
            bytes: bytes.to_vec(),
            footer,
            metaindex,
            metaindex_garbage: None,
        }
    }

    /// A block's stored contents and type byte.
    pub fn stored(&self, h: BlockHandle) -> (&[u8], u8) {
        let at = h.offset as usize;
        let contents = &self.bytes[at..at + h.size as usize];
        (contents, self.bytes[at + h.size as usize])
    }

    /// The handle the metaindex gives `name`.
    pub fn meta(&self, name: &[u8]) -> BlockHandle {
        let (_, value) = self.metaindex.iter().find(|(k, _)| k == name).unwrap();
        BlockHandle::decode(value).unwrap().0
    }

    /// Sets (or adds, in order) the metaindex entry `name`.
    pub fn set_meta(&mut self, name: &[u8], value: Vec<u8>) {
        match self
            .metaindex
            .binary_search_by(|(k, _)| k.as_slice().cmp(name))
        {
            Ok(i) => self.metaindex[i].1 = value,
            Err(i) => self.metaindex.insert(i, (name.to_vec(), value)),
        }
    }

    /// Appends a block with a valid trailer; its handle.
    pub fn append(&mut self, contents: &[u8], type_byte: u8) -> BlockHandle {
        let h = BlockHandle {
            offset: self.bytes.len() as u64,
            size: contents.len() as u64,
        };
        self.bytes.extend_from_slice(contents);
        self.bytes.push(type_byte);
        let sum = self
            .footer
            .checksum
            .checksum(contents, type_byte)
            .unwrap_or(0);
        self.bytes.extend_from_slice(&sum.to_le_bytes());
        h
    }

    /// The properties block's entries.
    pub fn properties(&self) -> Vec<Entry> {
        let (contents, _) = self.stored(self.meta(b"rocksdb.properties"));
        entries(contents)
    }

    /// Appends `properties` as the properties block.
    pub fn set_properties(&mut self, properties: &[Entry]) {
        let h = self.append(&block(properties, true), 0);
        self.set_meta(b"rocksdb.properties", handle_bytes(h));
    }

    /// Changes the value of property `name`, appending the properties anew.
    pub fn change_property(&mut self, name: &[u8], change: impl Fn(&mut Vec<u8>)) {
        let mut properties = self.properties();
        for (key, value) in &mut properties {
            if key == name {
                change(value);
            }
        }
        self.set_properties(&properties);
    }

    /// The file: the metaindex appended, then a footer naming it.
    pub fn finish(mut self) -> Vec<u8> {
        let garbage = self.metaindex_garbage.take();
        let garbage = garbage.as_ref().map(|(key, bytes)| (&key[..], &bytes[..]));
        let meta = self.append(
            &block_with_garbage(&self.metaindex.clone(), true, garbage),
            0,
        );
        let checksum = match self.footer.checksum {
            ChecksumType::None => 0,
            ChecksumType::Crc32c => 1,
            ChecksumType::XxHash32 => 2,
            ChecksumType::XxHash64 => 3,
            _ => 4,
        };
        let mut footer = vec![checksum];
        footer.extend(handle_bytes(meta));
        footer.extend(handle_bytes(self.footer.index));
        footer.resize(41, 0);
        footer.extend_from_slice(&self.footer.format_version.to_le_bytes());
        footer.extend_from_slice(&leveldb_filter::rocksdb::ROCKSDB_MAGIC.to_le_bytes());
        self.bytes.extend_from_slice(&footer);
        self.bytes
    }
}

/// A crafted case: its name, the golden table it is made from, whether
/// RocksDB reads it with the 11-byte prefix extractor, and the change.
pub type Case = (&'static str, &'static str, bool, fn(&mut Sst));

/// Each crafted case.
pub fn cases() -> Vec<Case> {
    vec![
        // `fullfilter.aaa` sorts first: RocksDB's seek of the prefix finds
        // a name it does not know and takes no full filter; the builtin
        // entry names an all-zero filter, which would rule out every key.
        (
            "meta-other-fullfilter-first",
            "fastbloom-fv5-xxh3",
            false,
            |sst| {
                let name = b"fullfilter.rocksdb.BuiltinBloomFilter";
                let real = sst.meta(name);
                let (contents, _) = sst.stored(real);
                let mut zeros = vec![0; contents.len() - 5];
                zeros.extend_from_slice(&contents[contents.len() - 5..]);
                let zeroed = sst.append(&zeros, 0);
                sst.set_meta(b"fullfilter.aaa", handle_bytes(real));
                sst.set_meta(name, handle_bytes(zeroed));
            },
        ),
        // A full-filter entry whose handle does not decode: RocksDB goes on
        // to the partitioned filter.
        (
            "meta-fullfilter-not-a-handle",
            "fastbloom-fv5-partitioned-xxh3",
            false,
            |sst| {
                sst.set_meta(b"fullfilter.rocksdb.BuiltinBloomFilter", vec![0xff]);
            },
        ),
        // The partition index's entries in reverse: RocksDB's binary search
        // picks the partitions.
        (
            "partition-index-reversed",
            "legacybloom-fv3-partitioned-crc32c",
            false,
            |sst| {
                let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
                let (contents, _) = sst.stored(sst.meta(name));
                let mut index = entries(contents);
                index.reverse();
                let h = sst.append(&block(&index, true), 0);
                sst.set_meta(name, handle_bytes(h));
            },
        ),
        // The partition index stored Snappy-compressed, in a table whose
        // blocks may be compressed: RocksDB uncompresses it.
        (
            "partition-index-snappy",
            "legacybloom-fv2-partitioned-lz4hc-crc32c",
            false,
            |sst| {
                let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
                let (contents, _) = sst.stored(sst.meta(name));
                let compressed = snap::raw::Encoder::new().compress_vec(contents).unwrap();
                let h = sst.append(&compressed, 1);
                sst.set_meta(name, handle_bytes(h));
            },
        ),
        // Two properties swapped: RocksDB fails every lookup.
        ("properties-unsorted", "fastbloom-fv5-xxh3", false, |sst| {
            let mut properties = sst.properties();
            properties.swap(0, 1);
            sst.set_properties(&properties);
        }),
        // The prefix extractor named with a leading zero: not the name
        // RocksDB's reader gives its own, so no prefix filtering.
        (
            "prefix-name-not-canonical",
            "fastbloom-fv5-prefixonly11-xxh3",
            true,
            |sst| {
                sst.change_property(b"rocksdb.prefix.extractor.name", |value| {
                    *value = b"rocksdb.FixedPrefix.011".to_vec()
                })
            },
        ),
        // The index type in 5 bytes: RocksDB reads a fixed32 from the first 4.
        (
            "index-type-5-bytes",
            "fastbloom-fv5-partitioned-xxh3",
            false,
            |sst| sst.change_property(b"rocksdb.block.based.table.index.type", |v| v.push(0)),
        ),
        // The index as one Zstd frame with a window descriptor and no
        // content size (raw blocks), as `zstd` writes from a pipe, in a table
        // whose blocks may be compressed (else RocksDB reads them as stored).
        (
            "index-zstd-window-no-size",
            "fastbloom-fv5-snappy-xxh3",
            false,
            |sst| {
                let (contents, kind) = sst.stored(sst.footer.index);
                assert_eq!(kind, 0, "the golden index is stored uncompressed");
                let contents = contents.to_vec();
                let mut block = Vec::new();
                varint(&mut block, contents.len() as u64);
                // Magic; no content size, not single-segment; a 2 MiB window.
                block.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]);
                let chunks: Vec<&[u8]> = contents.chunks(1000).collect();
                for (i, chunk) in chunks.iter().enumerate() {
                    let last = u32::from(i + 1 == chunks.len());
                    let header = (chunk.len() as u32) << 3 | last; // raw block
                    block.extend_from_slice(&header.to_le_bytes()[..3]);
                    block.extend_from_slice(chunk);
                }
                sst.footer.index = sst.append(&block, 7);
            },
        ),
        // A last properties entry that does not read: RocksDB keeps those
        // before it.
        (
            "properties-trailing-garbage",
            "legacybloom-fv4-crc32c",
            false,
            |sst| {
                let properties = sst.properties();
                let garbage = [0, 0x10, 0x01, b'z', b'z'];
                let block = block_with_garbage(&properties, true, Some((b"", &garbage)));
                let h = sst.append(&block, 0);
                sst.set_meta(b"rocksdb.properties", handle_bytes(h));
            },
        ),
        // A metaindex entry that does not read, between restart points no
        // seek RocksDB makes reaches.
        (
            "metaindex-unreached-garbage",
            "legacybloom-fv4-crc32c",
            false,
            |sst| {
                sst.set_meta(b"aaa", b"x".to_vec());
                sst.set_meta(b"aab", b"y".to_vec());
                sst.metaindex_garbage = Some((b"aab".to_vec(), vec![9, 1, 1, b'q', b'q']));
            },
        ),
        // The index of a table of range deletions alone: no entry, one
        // restart point.
        (
            "index-without-entries",
            "legacybloom-fv4-crc32c",
            false,
            |sst| {
                sst.footer.index = sst.append(&[0, 0, 0, 0, 1, 0, 0, 0], 0);
            },
        ),
        // A compression dictionary entry that is not a handle, and a
        // dictionary that fails its checksum: RocksDB's open reads it.
        (
            "dictionary-not-a-handle",
            "legacybloom-fv4-crc32c",
            false,
            |sst| {
                sst.set_meta(b"rocksdb.compression_dict", vec![0xff]);
            },
        ),
        (
            "dictionary-damaged",
            "legacybloom-fv4-crc32c",
            false,
            |sst| {
                let h = sst.append(b"some dictionary bytes", 0);
                damage(sst, h);
                sst.set_meta(b"rocksdb.compression_dict", handle_bytes(h));
            },
        ),
        // A filter partition, and a partition of a two-level index, that
        // fail their checksums: RocksDB's open reads every partition.
        (
            "filter-partition-damaged",
            "legacybloom-fv3-partitioned-crc32c",
            false,
            |sst| {
                let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
                let (stored, kind) = sst.stored(sst.meta(name));
                let first = first_handle(stored, kind, false);
                damage(sst, first);
            },
        ),
        (
            "index-partition-damaged",
            "legacybloom-fv3-partitioned-crc32c",
            false,
            |sst| {
                let (stored, kind) = sst.stored(sst.footer.index);
                let first = first_handle(stored, kind, false);
                damage(sst, first);
            },
        ),
        // The first filter partition's separator: the first key of the
        // second partition, sequence 1. Which partition RocksDB's seek picks
        // for that key depends on the reader's sequence number.
        (
            "separator-of-the-next-key",
            "legacybloom-fv2-partitioned-lz4hc-crc32c",
            false,
            |sst| {
                let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
                let mut index = entries(sst.stored(sst.meta(name)).0);
                let separator = &index[0].0;
                let user = &separator[..separator.len() - 8];
                let table = leveldb_filter::rocksdb::Table::open(&sst.bytes).unwrap();
                let mut next = None;
                table
                    .for_each_key(|key, _| {
                        if next.is_none() && key > user {
                            next = Some(key.to_vec());
                        }
                    })
                    .unwrap();
                let mut key = next.expect("a key after the first partition");
                key.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
                index[0].0 = key;
                let h = sst.append(&block(&index, true), 0);
                sst.set_meta(name, handle_bytes(h));
            },
        ),
    ]
}

/// The handle of the first entry of an index block stored as `kind` (none
/// or Snappy), which shares nothing: a whole handle, after a value length
/// unless values are `delta`-encoded.
pub fn first_handle(stored: &[u8], kind: u8, delta: bool) -> BlockHandle {
    let contents = match kind {
        0 => stored.to_vec(),
        1 => snap::raw::Decoder::new().decompress_vec(stored).unwrap(),
        _ => panic!("an index block stored as type {kind}"),
    };
    let mut rest = &contents[..];
    assert_eq!(read_varint(&mut rest), 0, "the first entry shares nothing");
    let key_len = read_varint(&mut rest) as usize;
    if !delta {
        read_varint(&mut rest);
    }
    BlockHandle::decode(&rest[key_len..]).unwrap().0
}

/// Flips a bit of the block at `h`, its checksum left as it was.
pub fn damage(sst: &mut Sst, h: BlockHandle) {
    sst.bytes[h.offset as usize + (h.size as usize) / 2] ^= 0x10;
}

/// A deflated (RocksDB's Zlib, type 2) block of format_version >= 2: its
/// size, then raw deflate.
pub fn zlib(contents: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    varint(&mut out, contents.len() as u64);
    let mut encoder = flate2::write::DeflateEncoder::new(out, flate2::Compression::best());
    encoder.write_all(contents).unwrap();
    encoder.finish().unwrap()
}

/// `n` index entries (8-byte big-endian keys from 0) each naming `h`, as
/// a whole handle (a key that shares nothing holds one in every layout).
fn naming(n: u64, h: BlockHandle) -> Vec<Entry> {
    (0..n)
        .map(|i| (i.to_be_bytes().to_vec(), handle_bytes(h)))
        .collect()
}

/// Tables whose numbers ask for work or memory past their size: each
/// block is named many times, so that a reader that decoded or checked a
/// block once per reference, or held every entry, would take minutes or
/// gigabytes. Each is small (Zlib-compressed index blocks).
pub fn bombs() -> Vec<(&'static str, Vec<u8>)> {
    let golden = |name: &str| {
        let path = crate::vectors::testdata().join(format!("rocksdb/{name}.sst"));
        Sst::new(&std::fs::read(path).unwrap())
    };
    let mut out = Vec::new();
    // An index of 400,000 entries naming the first data block.
    let first_data_block = |sst: &Sst| {
        let golden = leveldb_filter::rocksdb::Table::open(&sst.bytes).unwrap();
        golden.data_block_for(b"").unwrap().unwrap()
    };
    let mut sst = golden("legacybloom-fv3-zlib-xxhash");
    let first = first_data_block(&sst);
    let index = block(&naming(400_000, first), true);
    sst.footer.index = sst.append(&zlib(&index), 2);
    out.push(("index-entries-name-one-block", sst.finish()));
    // A two-level index: 2,000 entries naming one partition of 200,000
    // entries, each naming the first data block (delta-encoded values).
    let mut sst = golden("fastbloom-fv5-partitioned-zstd-xxh3");
    let partition = block(&naming(200_000, first_data_block(&sst)), false);
    let partition = sst.append(&zlib(&partition), 2);
    let top = block(&naming(2000, partition), false);
    sst.footer.index = sst.append(&zlib(&top), 2);
    out.push(("partitions-name-one-partition", sst.finish()));
    // A partitioned filter's index of 200,000 entries naming one filter.
    let mut sst = golden("fastbloom-fv5-partitioned-zstd-xxh3");
    let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
    // The first partition the golden index names.
    let (stored, kind) = sst.stored(sst.meta(name));
    let first_filter = first_handle(stored, kind, true);
    // Delta-encoded values (format_version 5): no value lengths.
    let index = block(&naming(200_000, first_filter), false);
    let h = sst.append(&zlib(&index), 2);
    sst.set_meta(name, handle_bytes(h));
    out.push(("filter-partitions-name-one-filter", sst.finish()));
    // A filter index of 200,000 distinct partitions, all starting at 0.
    let mut sst = golden("fastbloom-fv5-partitioned-zstd-xxh3");
    let index: Vec<Entry> = (0..200_000u64)
        .map(|i| {
            let h = BlockHandle { offset: 0, size: i };
            (i.to_be_bytes().to_vec(), handle_bytes(h))
        })
        .collect();
    let h = sst.append(&zlib(&block(&index, false)), 2);
    sst.set_meta(name, handle_bytes(h));
    out.push(("filter-partitions-overlap", sst.finish()));
    out
}
