use std::fmt;

/// What is wrong with a filter block ([`FilterBlock::parse`](crate::FilterBlock::parse)),
/// apart from the errors of the table around it: what was found, and what
/// was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterBlockError {
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
}

impl fmt::Display for FilterBlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterBlockError::BlockTooShort { len } => {
                write!(f, "filter block is {len} bytes, expected at least 5")
            }
            FilterBlockError::ArrayOffsetPastEnd { array_offset, max } => write!(
                f,
                "filter block's array offset is {array_offset}, expected at most {max}"
            ),
            FilterBlockError::RaggedOffsetArray { len } => write!(
                f,
                "filter block's offset array is {len} bytes, expected a multiple of 4"
            ),
            FilterBlockError::BaseLgTooLarge { base_lg } => write!(
                f,
                "filter block's base_lg is {base_lg}, expected below 64 (LevelDB writes 11)"
            ),
            FilterBlockError::UnusedBytes { len } => write!(
                f,
                "filter block has {len} bytes before its first filter, expected 0"
            ),
            FilterBlockError::FilterOutOfOrder {
                index,
                start,
                limit,
            } => write!(
                f,
                "filter {index} ends at {limit} before it starts at {start}"
            ),
            FilterBlockError::FilterPastArray {
                index,
                limit,
                array_offset,
            } => write!(
                f,
                "filter {index} ends at {limit}, past the offset array at {array_offset}"
            ),
        }
    }
}

impl std::error::Error for FilterBlockError {}
