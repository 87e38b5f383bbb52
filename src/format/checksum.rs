//! Block trailers: how a table's blocks are checksummed (the footer names
//! the type), and a block read once its trailer's checksum matches.

use std::borrow::Cow;

use super::{kept_block, stored_block, BlockHandle, BlockKind, Corruption, Error, Footer, Source};

/// How a table's blocks are checksummed (the footer's first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChecksumType {
    /// 0: none.
    None,
    /// 1: masked CRC-32C, as LevelDB.
    Crc32c,
    /// 2: xxHash32, seed 0.
    XxHash32,
    /// 3: the low 32 bits of xxHash64, seed 0.
    XxHash64,
    /// 4: the low 32 bits of XXH3 (64-bit) of the contents, the type byte
    /// mixed in after (RocksDB 7.8's default).
    Xxh3,
}

impl ChecksumType {
    pub(crate) fn from_byte(byte: u8) -> Option<ChecksumType> {
        Some(match byte {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash32,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            _ => return None,
        })
    }

    /// The checksum of a block's contents and its type byte, as stored in
    /// its trailer (`ComputeBuiltinChecksum`); `None` for no checksum.
    pub fn checksum(self, contents: &[u8], kind: u8) -> Option<u32> {
        let with_kind = || [contents, &[kind]].concat();
        Some(match self {
            ChecksumType::None => return None,
            ChecksumType::Crc32c => {
                let crc = crc32c::crc32c_append(crc32c::crc32c(contents), &[kind]);
                crc.rotate_right(15).wrapping_add(0xa282_ead8)
            }
            ChecksumType::XxHash32 => xxhash_rust::xxh32::xxh32(&with_kind(), 0),
            ChecksumType::XxHash64 => xxhash_rust::xxh64::xxh64(&with_kind(), 0) as u32,
            ChecksumType::Xxh3 => {
                let h = xxhash_rust::xxh3::xxh3_64(contents) as u32;
                h ^ u32::from(kind).wrapping_mul(0x6b90_83d9)
            }
        })
    }
}

impl std::fmt::Display for ChecksumType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChecksumType::None => "none",
            ChecksumType::Crc32c => "crc32c",
            ChecksumType::XxHash32 => "xxhash32",
            ChecksumType::XxHash64 => "xxhash64",
            ChecksumType::Xxh3 => "xxh3",
        })
    }
}

/// `ChecksumModifierForContext`: 0 without a context, else the context
/// xor the offset's two halves added.
pub(crate) fn context_modifier(base: u32, offset: u64) -> u32 {
    match base {
        0 => 0,
        base => base ^ (offset as u32).wrapping_add((offset >> 32) as u32),
    }
}

/// A block's contents, its trailer checked; meta and filter blocks are never
/// compressed.
pub(crate) fn read_block<'f>(
    file: Source<'f>,
    footer: &Footer,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<&'f [u8], Error> {
    let (contents, trailer) = kept_block(file, kind, handle)?;
    let type_byte = check_trailer(footer, kind, handle, contents, trailer)?;
    if type_byte != 0 && kind != BlockKind::Filter {
        return Err(Error::CorruptBlock {
            block: kind,
            offset: handle.offset,
            what: Corruption::MetaBlockCompressed,
        });
    }
    Ok(contents)
}

/// A block's stored contents and type byte, once its trailer's checksum
/// matches (with format_version >= 6, the checksum plus the modifier of the
/// block's offset).
pub(crate) fn checked_block<'f>(
    file: Source<'f>,
    footer: &Footer,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(Cow<'f, [u8]>, u8), Error> {
    let (contents, trailer) = stored_block(file, kind, handle)?;
    let type_byte = check_trailer(footer, kind, handle, &contents, trailer)?;
    Ok((contents, type_byte))
}

/// The block's type byte, once the trailer's checksum matches its contents.
pub(crate) fn check_trailer(
    footer: &Footer,
    kind: BlockKind,
    handle: BlockHandle,
    contents: &[u8],
    trailer: [u8; 5],
) -> Result<u8, Error> {
    let expected = u32::from_le_bytes(trailer[1..5].try_into().expect("4 bytes"));
    let checksum = footer.checksum.checksum(contents, trailer[0]);
    if let Some(found) = checksum.map(|c| c.wrapping_add(footer.checksum_modifier(handle.offset))) {
        if found != expected {
            return Err(Error::ChecksumMismatch {
                block: kind,
                offset: handle.offset,
                expected,
                found,
            });
        }
    }
    Ok(trailer[0])
}
