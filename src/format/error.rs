use std::fmt;

use super::{BlockHandle, BlockKind, Compression};

/// What is wrong with a table file (LevelDB's
/// [`leveldb::Table`](crate::leveldb::Table), and RocksDB's
/// [`rocksdb::Table`](crate::rocksdb::Table)). Each variant carries
/// what was found, where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The file is shorter than a table's footer.
    TruncatedFooter {
        /// Length of the file.
        len: u64,
        /// Length of the footer: 48 bytes (LevelDB's, RocksDB's legacy
        /// footer), or 53 for RocksDB's magic.
        footer_len: u64,
    },
    /// The file does not end with a table magic number the reader reads.
    BadMagic {
        /// The last 8 bytes of the file, as a little-endian number.
        found: u64,
        /// The magic numbers the reader reads: LevelDB's
        /// ([`TABLE_MAGIC`](crate::format::TABLE_MAGIC)) alone for
        /// [`leveldb::Table`](crate::leveldb::Table), and RocksDB's
        /// ([`ROCKSDB_MAGIC`](crate::format::ROCKSDB_MAGIC)) and Pebble's
        /// ([`PEBBLE_MAGIC`](crate::format::PEBBLE_MAGIC)) for any table.
        expected: &'static [u64],
    },
    /// The footer's metaindex or index handle is not two varint64s.
    BadFooterHandle,
    /// A RocksDB footer of format_version 6 or later that does not read.
    BadFooter {
        /// What is wrong.
        what: FooterProblem,
    },
    /// A block handle points past the end of the file.
    HandlePastEnd {
        /// Which block.
        block: BlockKind,
        /// The handle.
        handle: BlockHandle,
        /// Length of the file.
        file_len: u64,
    },
    /// Bytes of the file could not be read: an I/O error, or the file
    /// shrank since it was opened.
    Read {
        /// Where the read started.
        offset: u64,
        /// How many bytes it asked for.
        len: u64,
        /// What went wrong.
        what: String,
    },
    /// A block's checksum does not match its trailer's: LevelDB's masked
    /// CRC-32C, or the checksum type a RocksDB footer names.
    ChecksumMismatch {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// The checksum the trailer holds (a CRC-32C unmasked).
        expected: u32,
        /// The checksum of the block's bytes and type.
        found: u32,
    },
    /// A LevelDB block's trailer names a compression type LevelDB does not
    /// know (RocksDB's unknown types are [`Error::Unsupported`]).
    UnknownCompression {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// The type byte (LevelDB knows 0, none, and 1, Snappy).
        kind: u8,
    },
    /// A block is compressed in a way this crate does not read.
    UnsupportedCompression {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// The compression (for LevelDB, type 2 is Zstd, which later
        /// LevelDBs write; for RocksDB, one of a build without the crate
        /// feature `codecs`).
        compression: Compression,
    },
    /// A block would take more than this crate allows for a file of its size.
    LimitExceeded {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// What is too large (the rule that limits it is in its `Display`).
        what: Limit,
        /// The size the file asks for.
        found: u64,
        /// The most allowed.
        limit: u64,
    },
    /// A field holds a value this crate does not read (a RocksDB footer's
    /// checksum type or format_version, a compression or an index type).
    Unsupported {
        /// The field.
        what: Field,
        /// The value found.
        found: u64,
    },
    /// The table orders its keys by a comparator this crate does not know
    /// (its property `rocksdb.comparator`): only that comparator's code can
    /// seek in it.
    UnknownComparator {
        /// The comparator's name.
        name: String,
    },
    /// A Pebble table's columnar data blocks are laid out by a key schema
    /// this crate does not read (its property `pebble.colblk.schema`; empty
    /// where it names none): only that schema's code can put its keys
    /// together. (A `DefaultKeySchema` of another comparer than the table's
    /// is one: its blocks' prefixes are that comparer's.)
    UnknownKeySchema {
        /// The schema's name.
        name: String,
    },
    /// A block compressed by a custom compression manager (a type byte of
    /// 0x80 and up, format_version 7 and later), which only that manager's
    /// code can read.
    CustomCompression {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// The block's compression type byte.
        type_byte: u8,
        /// The manager the table names (property `rocksdb.compression`).
        manager: String,
    },
    /// A block's contents do not parse.
    CorruptBlock {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// What is wrong.
        what: Corruption,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TruncatedFooter { len, footer_len } => write!(
                f,
                "truncated footer: the file is {len} bytes, a table ends with a {footer_len}-byte footer"
            ),
            Error::BadMagic { found, expected } => {
                write!(f, "bad magic {found:#018x}, expected ")?;
                for (i, magic) in expected.iter().enumerate() {
                    let or = if i == 0 { "" } else { " or " };
                    write!(f, "{or}{magic:#018x}")?;
                }
                let names: Vec<&str> = expected.iter().map(|&m| magic_name(m)).collect();
                write!(f, ": not a {} table", names.join(" or "))
            }
            Error::BadFooterHandle => write!(f, "corrupt footer: a block handle is not two varint64s"),
            Error::BadFooter { what } => write!(f, "corrupt footer: {what}"),
            Error::Read { offset, len, what } => {
                write!(f, "reading {len} bytes at offset {offset}: {what}")
            }
            Error::HandlePastEnd {
                block,
                handle,
                file_len,
            } => write!(
                f,
                "{block} at offset {} ({} bytes and a 5-byte trailer) runs past the end of the file ({file_len} bytes)",
                handle.offset, handle.size
            ),
            Error::ChecksumMismatch {
                block,
                offset,
                expected,
                found,
            } => write!(
                f,
                "checksum mismatch at offset {offset} ({block}): the trailer says {expected:#010x}, the contents give {found:#010x}"
            ),
            Error::UnknownCompression { block, offset, kind } => write!(
                f,
                "unknown compression type {kind} at offset {offset} ({block}), expected 0 (none) or 1 (snappy)"
            ),
            Error::UnsupportedCompression {
                block,
                offset,
                compression,
            } => write!(
                f,
                "unsupported compression {compression} at offset {offset} ({block})"
            ),
            Error::LimitExceeded {
                block,
                offset,
                what,
                found,
                limit,
            } => write!(
                f,
                "{block} at offset {offset}: {what} is {found} bytes, past the limit of {limit}"
            ),
            Error::Unsupported { what, found } => write!(f, "unsupported {what}: found {found}"),
            Error::UnknownComparator { ref name } => write!(
                f,
                "keys ordered by comparator {name:?}, whose order only its own code knows (known: {})",
                crate::format::KNOWN_COMPARATORS
            ),
            Error::UnknownKeySchema { ref name } => write!(
                f,
                "columnar data blocks under key schema {name:?}, whose layout only its own code knows (read: DefaultKeySchema of the table's comparer, crdb1 under cockroach_comparator)"
            ),
            Error::CustomCompression {
                block,
                offset,
                type_byte,
                ref manager,
            } => write!(
                f,
                "unsupported compression at offset {offset} ({block}): type {type_byte:#04x} of the custom compression manager {manager:?} (only RocksDB's built-in compressions are read)"
            ),
            Error::CorruptBlock { block, offset, what } => {
                write!(f, "corrupt {block} at offset {offset}: {what}")
            }
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The block the error is in and the block's offset in the file, where
    /// it is one block's.
    pub fn block(&self) -> Option<(BlockKind, u64)> {
        match *self {
            Error::HandlePastEnd { block, handle, .. } => Some((block, handle.offset)),
            Error::ChecksumMismatch { block, offset, .. }
            | Error::UnknownCompression { block, offset, .. }
            | Error::UnsupportedCompression { block, offset, .. }
            | Error::LimitExceeded { block, offset, .. }
            | Error::CustomCompression { block, offset, .. }
            | Error::CorruptBlock { block, offset, .. } => Some((block, offset)),
            _ => None,
        }
    }

    /// What is wrong inside a block ([`Error::CorruptBlock`]).
    pub fn corruption(&self) -> Option<Corruption> {
        match *self {
            Error::CorruptBlock { what, .. } => Some(what),
            _ => None,
        }
    }
}

/// The engine whose tables end with `magic`.
fn magic_name(magic: u64) -> &'static str {
    match magic {
        super::TABLE_MAGIC => "LevelDB",
        super::ROCKSDB_MAGIC => "RocksDB",
        super::PEBBLE_MAGIC => "Pebble",
        _ => "known",
    }
}

/// What is wrong inside a block ([`Error::CorruptBlock`], and what
/// [`BlockIter`](crate::format::BlockIter) stops at): one variant per
/// problem, so that a caller can match it; `Display` says it in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Corruption {
    /// Block shorter than its restart count.
    ShorterThanRestartCount,
    /// Restart array larger than the block.
    RestartArrayTooLarge,
    /// A restart point's entry shares bytes.
    RestartEntryShares,
    /// An entry shares more bytes than the previous key has.
    SharesTooMuch,
    /// An entry header runs into the restart array.
    EntryHeaderPastEntries,
    /// Bad varint in an entry header.
    BadVarint,
    /// An entry runs into the restart array.
    EntryPastEntries,
    /// Keys expand past 64 times the block's stored size.
    KeysTooLong,
    /// An entry's value is not a block handle.
    NotAHandle,
    /// Data block handles overlap or go backwards.
    HandlesOutOfOrder,
    /// Bad Snappy length header.
    BadSnappyLength,
    /// Snappy length header larger than the data allows.
    SnappyLengthTooLarge,
    /// Corrupt Snappy data.
    BadSnappyData,
    /// Bad varint32 uncompressed size.
    BadUncompressedSize,
    /// Corrupt Zlib (raw deflate) data.
    BadZlibData,
    /// Corrupt BZip2 data.
    BadBzip2Data,
    /// LZ4 block shorter than its 8-byte size.
    Lz4ShorterThanSize,
    /// LZ4 size larger than the data allows.
    Lz4SizeTooLarge,
    /// Corrupt LZ4 data.
    BadLz4Data,
    /// LZ4 data shorter than its stated size.
    Lz4DataShort,
    /// Corrupt Zstd frame header.
    BadZstdHeader,
    /// Corrupt Zstd data.
    BadZstdData,
    /// The data uncompresses past its stated size.
    PastStatedSize,
    /// The data uncompresses short of its stated size.
    ShortOfStatedSize,
    /// Block shorter than its footer.
    ShorterThanFooter,
    /// A key shorter than its 8-byte tag.
    KeyShorterThanTag,
    /// The properties entry is not a block handle.
    PropertiesNotAHandle,
    /// The filter entry is not a block handle.
    FilterEntryNotAHandle,
    /// A malformed entry.
    MalformedEntry,
    /// A malformed index entry.
    MalformedIndexEntry,
    /// A meta block stored compressed.
    MetaBlockCompressed,
    /// A properties block whose keys are not in strictly increasing order.
    PropertiesUnsorted,
    /// A format_version >= 6 metaindex without the entry `rocksdb.index`.
    NoIndexEntry,
    /// A block footer with bit 30 set: block metadata of a format newer
    /// than RocksDB 11.12's.
    ExtendedBlockMetadata,
    /// Separated keys and values outside a data block, or in a table
    /// without `rocksdb.data.block.restart.interval`.
    UnexpectedSeparatedValues,
    /// A value outside its block's values section.
    ValuePastValues,
    /// A Pebble columnar block shorter than its header.
    ColumnarTruncatedHeader,
    /// A Pebble columnar block of a version other than 1.
    ColumnarVersion,
    /// A Pebble columnar block whose column count or column types are not
    /// those of its kind.
    ColumnarSchema,
    /// A column of a Pebble columnar block that starts inside the header,
    /// before the column before it, or past the block.
    ColumnarColumnOffset,
    /// A column of a Pebble columnar block whose data does not end where
    /// the next column starts.
    ColumnarColumnLength,
    /// A Pebble columnar block with more rows than its bytes can hold.
    ColumnarRowCount,
    /// A Pebble integer column whose encoding byte is not a width of 0, 1,
    /// 2, 4 or 8 bytes (8 without a base).
    ColumnarUintEncoding,
    /// A Pebble bytes column whose offsets have a base, are 8 bytes wide, or
    /// go backwards.
    ColumnarOffsets,
    /// A Pebble bitmap whose encoding byte is not 0 or 1.
    ColumnarBitmapEncoding,
    /// A Pebble bitmap whose summary disagrees with its words, or with bits
    /// set past its rows.
    ColumnarBitmapSummary,
    /// Padding in a Pebble columnar block that is not zero.
    ColumnarPadding,
    /// A key of a Pebble columnar data block longer than the block's
    /// maximum key length.
    ColumnarKeyTooLong,
    /// A Pebble columnar data block without rows.
    ColumnarNoRows,
    /// A value of a Pebble columnar data block marked external but without
    /// its value prefix byte.
    ColumnarExternalValue,
    /// A row of a Pebble `crdb1` data block whose version columns disagree.
    ColumnarCockroachVersion,
    /// A Pebble keyspan block whose boundary key indices do not rise from 0
    /// to its key count, or leave a span without keys first, last or beside
    /// another.
    ColumnarKeyspanIndices,
    /// A MinLZ block whose header does not read: empty, a first byte other
    /// than 0, or a length that is not a varint of at most 32 bits.
    BadMinLzLength,
    /// A MinLZ block stating more than a block holds (8 MiB), or more than
    /// the bound it is read within.
    MinLzLengthTooLarge,
    /// Corrupt MinLZ data: an op cut short, a copy from before the block's
    /// start, output past or short of the stated length, nothing after the
    /// length, or more bytes of ops than the length.
    BadMinLzData,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Corruption::ShorterThanRestartCount => "block shorter than its restart count",
            Corruption::RestartArrayTooLarge => "restart array larger than the block",
            Corruption::RestartEntryShares => "a restart point's entry shares bytes",
            Corruption::SharesTooMuch => "an entry shares more bytes than the previous key has",
            Corruption::EntryHeaderPastEntries => "an entry header runs into the restart array",
            Corruption::BadVarint => "bad varint in an entry header",
            Corruption::EntryPastEntries => "an entry runs into the restart array",
            Corruption::KeysTooLong => "keys expand past 64 times the block's stored size",
            Corruption::NotAHandle => "an entry's value is not a block handle",
            Corruption::HandlesOutOfOrder => "data block handles overlap or go backwards",
            Corruption::BadSnappyLength => "bad Snappy length header",
            Corruption::SnappyLengthTooLarge => "Snappy length header larger than the data allows",
            Corruption::BadSnappyData => "corrupt Snappy data",
            Corruption::BadUncompressedSize => "bad varint32 uncompressed size",
            Corruption::BadZlibData => "corrupt Zlib (raw deflate) data",
            Corruption::BadBzip2Data => "corrupt BZip2 data",
            Corruption::Lz4ShorterThanSize => "LZ4 block shorter than its 8-byte size",
            Corruption::Lz4SizeTooLarge => "LZ4 size larger than the data allows",
            Corruption::BadLz4Data => "corrupt LZ4 data",
            Corruption::Lz4DataShort => "LZ4 data shorter than its stated size",
            Corruption::BadZstdHeader => "corrupt Zstd frame header",
            Corruption::BadZstdData => "corrupt Zstd data",
            Corruption::PastStatedSize => "the data uncompresses past its stated size",
            Corruption::ShortOfStatedSize => "the data uncompresses short of its stated size",
            Corruption::ShorterThanFooter => "block shorter than its footer",
            Corruption::KeyShorterThanTag => "a key shorter than its 8-byte tag",
            Corruption::PropertiesNotAHandle => "the properties entry is not a block handle",
            Corruption::FilterEntryNotAHandle => "the filter entry is not a block handle",
            Corruption::MalformedEntry => "a malformed entry",
            Corruption::MalformedIndexEntry => "a malformed index entry",
            Corruption::MetaBlockCompressed => "a meta block stored compressed",
            Corruption::PropertiesUnsorted => {
                "properties unsorted (RocksDB fails every lookup in such a table)"
            }
            Corruption::NoIndexEntry => "no entry rocksdb.index naming the index block",
            Corruption::ExtendedBlockMetadata => {
                "block footer bit 30 set: extended block metadata, newer than RocksDB 11.12 writes"
            }
            Corruption::UnexpectedSeparatedValues => {
                "separated keys and values where there is no data block restart interval"
            }
            Corruption::ValuePastValues => "a value outside the block's values section",
            Corruption::ColumnarTruncatedHeader => "columnar block shorter than its header",
            Corruption::ColumnarVersion => "columnar block of a version other than 1",
            Corruption::ColumnarSchema => {
                "columnar block whose columns are not those of its kind (count or types)"
            }
            Corruption::ColumnarColumnOffset => {
                "a column starts inside the header, before the column before it, or past the block"
            }
            Corruption::ColumnarColumnLength => {
                "a column's data does not end where the next column starts"
            }
            Corruption::ColumnarRowCount => "more rows than the columnar block can hold",
            Corruption::ColumnarUintEncoding => {
                "an integer column's encoding is not a width of 0, 1, 2, 4 or 8 bytes (8 without a base)"
            }
            Corruption::ColumnarOffsets => {
                "a bytes column's offsets have a base, are 8 bytes wide, or go backwards"
            }
            Corruption::ColumnarBitmapEncoding => "a bitmap's encoding is not 0 or 1",
            Corruption::ColumnarBitmapSummary => {
                "a bitmap's summary disagrees with its words, or bits are set past its rows"
            }
            Corruption::ColumnarPadding => "padding in a columnar block is not zero",
            Corruption::ColumnarKeyTooLong => "a key longer than the block's maximum key length",
            Corruption::ColumnarNoRows => "a columnar data block without rows",
            Corruption::ColumnarExternalValue => {
                "an external value without its value prefix byte"
            }
            Corruption::ColumnarCockroachVersion => {
                "a crdb1 row whose version columns disagree (an untyped version beside an MVCC time, a logical time past 32 bits, or an untyped version of 255 bytes or more)"
            }
            Corruption::ColumnarKeyspanIndices => {
                "keyspan boundary indices that do not rise from 0 to the key count, or leave a span without keys first, last or beside another"
            }
            Corruption::BadMinLzLength => {
                "bad MinLZ header (not the indicator 0 and a varint length of at most 32 bits)"
            }
            Corruption::MinLzLengthTooLarge => {
                "MinLZ length larger than a block holds (8 MiB) or than the bound it is read within"
            }
            Corruption::BadMinLzData => "corrupt MinLZ data",
        })
    }
}

/// What a block asks for past this crate's bounds ([`Error::LimitExceeded`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The size a block uncompresses to.
    UncompressedSize,
    /// The distinct partitions a partitioned filter's index names.
    FilterPartitions,
    /// The merge operands of one key a `Get` holds from one data block.
    MergeOperands,
    /// The bytes a table's range deletions hold once read.
    RangeDeletions,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::UncompressedSize => {
                "the uncompressed size (at most twice the file's size plus 8 MiB, and what the codec can expand the block to)"
            }
            Limit::FilterPartitions => {
                "the bytes of the distinct filter partitions its entries name (at most twice the file's size, each counted as at least 64)"
            }
            Limit::MergeOperands => "the merge operands of one key in one data block (at most 65536)",
            Limit::RangeDeletions => {
                "the bytes a table's range deletions hold (at most twice the block's size and 64 KiB)"
            }
        })
    }
}

/// What is wrong with a footer that holds its own checksum
/// ([`Error::BadFooter`]): RocksDB's of format_version 6 or later, as
/// RocksDB's `Footer::DecodeFrom` finds it, and Pebble's from version 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FooterProblem {
    /// The 4 bytes after the checksum type are not the extended magic
    /// `3e 00 7a 00`.
    ExtendedMagic {
        /// The bytes, as a little-endian number.
        found: u32,
    },
    /// The footer's checksum does not match its bytes.
    Checksum {
        /// The checksum the footer holds.
        expected: u32,
        /// The checksum of its bytes, with the modifier of its offset.
        found: u32,
    },
    /// The base context checksum is 0, which RocksDB never writes.
    NoContextChecksum,
}

impl fmt::Display for FooterProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FooterProblem::ExtendedMagic { found } => {
                write!(f, "extended magic {found:#010x}, expected 0x007a003e")
            }
            FooterProblem::Checksum { expected, found } => write!(
                f,
                "footer checksum mismatch: the footer says {expected:#010x}, its bytes give {found:#010x}"
            ),
            FooterProblem::NoContextChecksum => f.write_str("a base context checksum of 0"),
        }
    }
}

/// A field whose value this crate does not read ([`Error::Unsupported`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// A RocksDB footer's checksum type (RocksDB writes 0 to 4; Pebble's
    /// readers read 1 and 3).
    ChecksumType,
    /// A RocksDB footer's format_version (1 to 8 are read).
    FormatVersion,
    /// A Pebble footer's table format version (1 to 7 are read).
    PebbleFormatVersion,
    /// A RocksDB block's compression type (BZip2, Xpress, or unknown).
    CompressionType,
    /// A RocksDB index type (0 to 3 are read).
    IndexType,
    /// The reserved bytes of a format_version >= 6 footer: a feature of a
    /// newer RocksDB.
    FooterReserved,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::ChecksumType => {
                "checksum type (RocksDB writes 0 to 4; under Pebble's magic number, 1 CRC-32C and 3 xxHash64 are read)"
            }
            Field::PebbleFormatVersion => {
                "table format version (read: 1 to 7 under Pebble's magic number, Pebblev1 to Pebblev7, what Pebble v2.1 writes)"
            }
            Field::FormatVersion => {
                "format_version (read: 1 to 8 under RocksDB's magic number, what RocksDB writes up to 11.12, and LevelDB's footer)"
            }
            Field::FooterReserved => {
                "footer feature (reserved footer bytes set: a RocksDB newer than this crate)"
            }
            Field::CompressionType => {
                "compression type (read: 0 none, 1 Snappy, 2 Zlib, 3 BZip2, 4 and 5 LZ4, 7 and 0x40 Zstd; not Xpress 6, nor 0x80 and up, a custom compression manager's)"
            }
            Field::IndexType => "index type (read: 0 binary search, 1 hash search, 2 two-level, 3 binary search with first keys)",
        })
    }
}

impl std::error::Error for Corruption {}
