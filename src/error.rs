use std::fmt;

use crate::table::{BlockHandle, BlockKind};

/// What is wrong with a filter block ([`FilterBlock::parse`](crate::FilterBlock::parse))
/// or a table file ([`Table`](crate::table::Table)). Each variant carries what was
/// found, where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The block is shorter than its 5-byte trailer (array offset and base_lg).
    BlockTooShort {
        /// Length of the block.
        len: usize,
    },
    /// The array offset in the trailer points past the start of the trailer.
    ArrayOffsetPastEnd {
        /// The array offset found.
        array_offset: u32,
        /// The largest valid array offset: the block's length less 5.
        max: usize,
    },
    /// The offset array is not a whole number of fixed32 offsets.
    RaggedOffsetArray {
        /// Its length in bytes.
        len: usize,
    },
    /// The base_lg byte is too large to shift a 64-bit block offset by.
    BaseLgTooLarge {
        /// The base_lg byte found (LevelDB writes 11).
        base_lg: u8,
    },
    /// Bytes that no filter covers lie before the first filter (or, in a block
    /// without filters, before the offset array).
    UnusedBytes {
        /// How many.
        len: usize,
    },
    /// A filter ends before it starts.
    FilterOutOfOrder {
        /// Index of the filter.
        index: usize,
        /// Its start offset.
        start: u32,
        /// Its end offset, found smaller than the start.
        limit: u32,
    },
    /// A filter runs into the offset array.
    FilterPastArray {
        /// Index of the filter.
        index: usize,
        /// Its end offset.
        limit: u32,
        /// The offset array's start, which the end must not pass.
        array_offset: u32,
    },
    /// The file is shorter than a table's footer.
    TruncatedFooter {
        /// Length of the file.
        len: u64,
    },
    /// The footer does not end with LevelDB's table magic number.
    BadMagic {
        /// The last 8 bytes of the file, as a little-endian number.
        found: u64,
    },
    /// The footer's metaindex or index handle is not two varint64s.
    BadFooterHandle,
    /// A block handle points past the end of the file.
    HandlePastEnd {
        /// Which block.
        block: BlockKind,
        /// The handle.
        handle: BlockHandle,
        /// Length of the file.
        file_len: u64,
    },
    /// A block's CRC-32C does not match its trailer.
    ChecksumMismatch {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// The CRC-32C the trailer holds (unmasked).
        expected: u32,
        /// The CRC-32C of the block's bytes and type.
        found: u32,
    },
    /// A block's trailer names a compression type LevelDB does not know.
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
        /// The compression (type 2 is zstd, LevelDB after 1.23).
        name: &'static str,
    },
    /// A block would take more than this crate allows for a file of its size.
    LimitExceeded {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// What is too large, and the rule that limits it.
        what: &'static str,
        /// The size the file asks for.
        found: u64,
        /// The most allowed.
        limit: u64,
    },
    /// A field holds a value this crate does not read (a RocksDB footer's
    /// checksum type or format_version).
    Unsupported {
        /// The field, and what is read.
        what: &'static str,
        /// The value found.
        found: u64,
    },
    /// A block's contents do not parse.
    CorruptBlock {
        /// Which block.
        block: BlockKind,
        /// Offset of the block in the file.
        offset: u64,
        /// What is wrong.
        what: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BlockTooShort { len } => {
                write!(f, "filter block is {len} bytes, expected at least 5")
            }
            Error::ArrayOffsetPastEnd { array_offset, max } => write!(
                f,
                "filter block's array offset is {array_offset}, expected at most {max}"
            ),
            Error::RaggedOffsetArray { len } => write!(
                f,
                "filter block's offset array is {len} bytes, expected a multiple of 4"
            ),
            Error::BaseLgTooLarge { base_lg } => write!(
                f,
                "filter block's base_lg is {base_lg}, expected below 64 (LevelDB writes 11)"
            ),
            Error::UnusedBytes { len } => write!(
                f,
                "filter block has {len} bytes before its first filter, expected 0"
            ),
            Error::FilterOutOfOrder {
                index,
                start,
                limit,
            } => write!(
                f,
                "filter {index} ends at {limit} before it starts at {start}"
            ),
            Error::FilterPastArray {
                index,
                limit,
                array_offset,
            } => write!(
                f,
                "filter {index} ends at {limit}, past the offset array at {array_offset}"
            ),
            Error::TruncatedFooter { len } => write!(
                f,
                "truncated footer: the file is {len} bytes, a table ends with a 48-byte footer"
            ),
            Error::BadMagic { found } => write!(
                f,
                "bad magic {found:#018x}, expected {:#018x}: not a LevelDB table",
                crate::table::TABLE_MAGIC
            ),
            Error::BadFooterHandle => write!(f, "corrupt footer: a block handle is not two varint64s"),
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
                "checksum mismatch at offset {offset} ({block}): trailer says crc32c {expected:#010x}, contents give {found:#010x}"
            ),
            Error::UnknownCompression { block, offset, kind } => write!(
                f,
                "unknown compression type {kind} at offset {offset} ({block}), expected 0 (none) or 1 (snappy)"
            ),
            Error::UnsupportedCompression { block, offset, name } => write!(
                f,
                "unsupported compression {name} at offset {offset} ({block})"
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
            Error::CorruptBlock { block, offset, what } => {
                write!(f, "corrupt {block} at offset {offset}: {what}")
            }
        }
    }
}

impl std::error::Error for Error {}
