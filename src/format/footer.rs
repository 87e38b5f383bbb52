//! A table's footer, the fixed-size end of every table file: its magic
//! says which engine's table it is, and it names the metaindex and index.
//!
//! ```text
//! LevelDB's (RocksDB's format_version 0), 48 bytes: metaindex handle | index handle | padding to 40 | magic (8)
//! RocksDB's before format_version 6, 53 bytes: checksum type (1) | metaindex handle | index handle | padding to 41 | format_version (4) | magic (8)
//! RocksDB's from format_version 6, 53 bytes: checksum type (1) | extended magic (4) | footer checksum (4) | base context checksum (4) | metaindex size (4) | padding to 41 | format_version (4) | magic (8)
//! Pebble's, versions 1 to 5, 53 bytes: as RocksDB's before format_version 6
//! Pebble's, version 6, 57 bytes: checksum type (1) | metaindex handle | index handle | padding to 41 | footer checksum (4) | version (4) | magic (8)
//! Pebble's, version 7, 61 bytes: checksum type (1) | metaindex handle | index handle | padding to 41 | attributes (4) | footer checksum (4) | version (4) | magic (8)
//! ```
//!
//! Pebble's footer checksum is the masked CRC-32C of the footer's bytes
//! without the checksum's four (sstable/table.go, `parseFooter`).

use super::checksum::{context_modifier, read_block};
use super::cursor::{Cursor, Layout};
use super::{
    BlockHandle, BlockKind, ChecksumType, Corruption, Error, Field, FooterProblem, Source,
};

/// The magic number that ends every LevelDB table, and RocksDB's with a
/// legacy footer (format_version 0).
pub const TABLE_MAGIC: u64 = 0xdb4775248b80fb57;
/// The magic number that ends a RocksDB block-based table with a
/// format_version >= 1 footer.
pub const ROCKSDB_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// The magic number that ends a table in one of Pebble's own formats
/// (Pebblev1 and later): the bytes `f0 9f aa b3` twice, "🪳🪳".
pub const PEBBLE_MAGIC: u64 = 0xb3aa_9ff0_b3aa_9ff0;
/// Length of LevelDB's footer (RocksDB's legacy one).
pub const LEVELDB_FOOTER_LEN: usize = 48;
/// Length of RocksDB's footer from format_version 1 (and Pebble's to
/// version 5).
pub const ROCKSDB_FOOTER_LEN: usize = 53;
/// Length of Pebble's footer from version 7, the longest: the most read to
/// judge any table from its end.
pub const MAX_FOOTER_LEN: usize = 61;
/// The magic numbers [`Footer::read_end`] reads.
pub(crate) const MAGICS: &[u64] = &[TABLE_MAGIC, ROCKSDB_MAGIC, PEBBLE_MAGIC];

/// A table's footer: LevelDB's (read as RocksDB's legacy footer,
/// format_version 0), RocksDB's or Pebble's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// The magic number that ends it: [`TABLE_MAGIC`], [`ROCKSDB_MAGIC`]
    /// or [`PEBBLE_MAGIC`].
    pub magic: u64,
    /// 0 for a footer of LevelDB's magic (RocksDB's legacy footer), else
    /// the footer's own: RocksDB's format_version, or Pebble's table format
    /// version (1 for Pebblev1, ...).
    pub format_version: u32,
    /// How blocks are checksummed.
    pub checksum: ChecksumType,
    /// The metaindex block.
    pub metaindex: BlockHandle,
    /// The index block: from the footer, or for format_version >= 6 from
    /// the metaindex entry `rocksdb.index` ([`Footer::read`] looks it up;
    /// [`Footer::read_end`], which sees no metaindex, gives offset and size 0).
    pub index: BlockHandle,
    /// RocksDB's format_version >= 6: the table's context for block
    /// checksums (never 0 there); 0 before, and for Pebble's tables.
    pub base_context_checksum: u32,
    /// Pebble's version 7 and later: the attributes bitset (value blocks
    /// 1, range key sets 2, unsets 4, deletions 8, range deletions 16,
    /// two-level index 32, blob values 64, point keys 128); 0 otherwise.
    pub attributes: u32,
}

impl Footer {
    /// Reads the footer at the end of `file` (and for format_version >= 6
    /// the index handle from the metaindex).
    pub fn read<'a>(file: impl Into<Source<'a>>) -> Result<Footer, Error> {
        let file = file.into();
        let footer = Footer::read_last(file)?;
        if !footer.index_in_metaindex() {
            return Ok(footer);
        }
        Ok(footer.with_metaindex(file)?.0)
    }

    /// Whether the index handle is the metaindex's (RocksDB's
    /// format_version 6 and later), not the footer's.
    fn index_in_metaindex(&self) -> bool {
        self.magic == ROCKSDB_MAGIC && self.format_version >= 6
    }

    /// [`Footer::read_end`] of the file's last bytes.
    pub(crate) fn read_last(file: Source<'_>) -> Result<Footer, Error> {
        let len = file.len().min(MAX_FOOTER_LEN as u64);
        let end = file.read(file.len() - len, len as usize)?;
        Footer::read_end(&end, file.len())
    }

    /// [`Footer::read`], and the metaindex block it names, read and checked.
    pub(crate) fn read_with_metaindex(file: Source<'_>) -> Result<(Footer, &[u8]), Error> {
        Footer::read_last(file)?.with_metaindex(file)
    }

    /// This footer, read from the end of `file`, and the metaindex it
    /// names; for format_version >= 6 the index handle from there.
    fn with_metaindex(mut self, file: Source<'_>) -> Result<(Footer, &[u8]), Error> {
        let metaindex = read_block(file, &self, BlockKind::Metaindex, self.metaindex)?;
        if self.index_in_metaindex() {
            let corrupt = |what| Error::CorruptBlock {
                block: BlockKind::Metaindex,
                offset: self.metaindex.offset,
                what,
            };
            let value =
                find_meta(metaindex, b"rocksdb.index").ok_or(corrupt(Corruption::NoIndexEntry))?;
            self.index = BlockHandle::decode(value)
                .ok_or(corrupt(Corruption::NotAHandle))?
                .0;
        }
        Ok((self, metaindex))
    }

    /// Reads the footer from `end`, the last bytes of a file of `file_len`
    /// bytes (61 of them, or all of a shorter file), and checks that the
    /// blocks it names lie inside the file: a file can be judged from its
    /// end before it is read whole. LevelDB's magic reads as format_version
    /// 0. From format_version 6 the footer holds its own checksum (checked
    /// here) and the metaindex's size, the metaindex ending where the
    /// footer starts; the index handle is in the metaindex.
    pub fn read_end(end: &[u8], file_len: u64) -> Result<Footer, Error> {
        let len = end.len();
        if len < LEVELDB_FOOTER_LEN || file_len < len as u64 {
            return Err(Error::TruncatedFooter {
                len: file_len,
                footer_len: LEVELDB_FOOTER_LEN as u64,
            });
        }
        let magic = u64::from_le_bytes(end[len - 8..].try_into().expect("8 bytes"));
        let footer = match magic {
            TABLE_MAGIC => {
                let (metaindex, index) = Footer::leveldb_handles(&end[len - LEVELDB_FOOTER_LEN..])?;
                Footer {
                    magic,
                    format_version: 0,
                    checksum: ChecksumType::Crc32c,
                    metaindex,
                    index,
                    base_context_checksum: 0,
                    attributes: 0,
                }
            }
            ROCKSDB_MAGIC | PEBBLE_MAGIC if len < ROCKSDB_FOOTER_LEN => {
                return Err(Error::TruncatedFooter {
                    len: file_len,
                    footer_len: ROCKSDB_FOOTER_LEN as u64,
                })
            }
            ROCKSDB_MAGIC => Footer::read_rocksdb(
                &end[len - ROCKSDB_FOOTER_LEN..],
                file_len - ROCKSDB_FOOTER_LEN as u64,
            )?,
            PEBBLE_MAGIC => Footer::read_pebble(end, file_len)?,
            found => {
                return Err(Error::BadMagic {
                    found,
                    expected: MAGICS,
                })
            }
        };
        let index = (!footer.index_in_metaindex()).then_some((BlockKind::Index, footer.index));
        for (block, handle) in [(BlockKind::Metaindex, footer.metaindex)]
            .into_iter()
            .chain(index)
        {
            let end = handle
                .offset
                .checked_add(handle.size)
                .and_then(|e| e.checked_add(super::BLOCK_TRAILER_LEN));
            if end.is_none_or(|end| end > file_len) {
                return Err(Error::HandlePastEnd {
                    block,
                    handle,
                    file_len,
                });
            }
        }
        Ok(footer)
    }

    /// A footer of RocksDB's magic: its 53 bytes, at `offset` in the file.
    fn read_rocksdb(footer: &[u8], offset: u64) -> Result<Footer, Error> {
        let u32_at =
            |at: usize| u32::from_le_bytes(footer[at..at + 4].try_into().expect("4 bytes"));
        let format_version = u32_at(41);
        if !(1..=8).contains(&format_version) {
            return Err(Error::Unsupported {
                what: Field::FormatVersion,
                found: u64::from(format_version),
            });
        }
        let checksum = ChecksumType::from_byte(footer[0]).ok_or(Error::Unsupported {
            what: Field::ChecksumType,
            found: u64::from(footer[0]),
        })?;
        if format_version < 6 {
            let (metaindex, index) = two_handles(&footer[1..41])?;
            return Ok(Footer {
                magic: ROCKSDB_MAGIC,
                format_version,
                checksum,
                metaindex,
                index,
                base_context_checksum: 0,
                attributes: 0,
            });
        }
        // `Footer::DecodeFrom` of format_version 6 to 8.
        let bad = |what| Err(Error::BadFooter { what });
        if footer[1..5] != [0x3e, 0x00, 0x7a, 0x00] {
            return bad(FooterProblem::ExtendedMagic { found: u32_at(1) });
        }
        let reserved = u64::from_le_bytes(footer[33..41].try_into().expect("8 bytes"));
        if reserved != 0 {
            return Err(Error::Unsupported {
                what: Field::FooterReserved,
                found: reserved,
            });
        }
        let base = u32_at(9);
        if base == 0 {
            return bad(FooterProblem::NoContextChecksum);
        }
        let mut zeroed = [0u8; ROCKSDB_FOOTER_LEN];
        zeroed.copy_from_slice(footer);
        zeroed[5..9].fill(0);
        let found = checksum
            .checksum(&zeroed[..52], zeroed[52])
            .unwrap_or(0)
            .wrapping_add(context_modifier(base, offset));
        if found != u32_at(5) {
            return bad(FooterProblem::Checksum {
                expected: u32_at(5),
                found,
            });
        }
        // format_version 8: the size in the low 16 bits, the gap between
        // the metaindex and the footer in the high 16.
        let (size, gap) = match format_version {
            8 => (u64::from(u32_at(13) & 0xffff), u64::from(u32_at(13) >> 16)),
            _ => (u64::from(u32_at(13)), 0),
        };
        let metaindex = BlockHandle {
            offset: offset
                .checked_sub(size + gap + super::BLOCK_TRAILER_LEN)
                .ok_or(Error::HandlePastEnd {
                    block: BlockKind::Metaindex,
                    handle: BlockHandle { offset: 0, size },
                    file_len: offset + ROCKSDB_FOOTER_LEN as u64,
                })?,
            size,
        };
        Ok(Footer {
            magic: ROCKSDB_MAGIC,
            format_version,
            checksum,
            metaindex,
            index: BlockHandle { offset: 0, size: 0 },
            base_context_checksum: base,
            attributes: 0,
        })
    }

    /// A footer of Pebble's magic, from `end`, the file's last bytes (at
    /// least 53): its version, just before the magic, gives its length
    /// (`parseFooter`).
    fn read_pebble(end: &[u8], file_len: u64) -> Result<Footer, Error> {
        let u32_at = |at: usize| u32::from_le_bytes(end[at..at + 4].try_into().expect("4 bytes"));
        let len = end.len();
        let version = u32_at(len - 12);
        let footer_len = match version {
            1..=5 => ROCKSDB_FOOTER_LEN,
            6 => ROCKSDB_FOOTER_LEN + 4,
            7 => MAX_FOOTER_LEN,
            _ => {
                return Err(Error::Unsupported {
                    what: Field::PebbleFormatVersion,
                    found: u64::from(version),
                })
            }
        };
        if len < footer_len {
            return Err(Error::TruncatedFooter {
                len: file_len,
                footer_len: footer_len as u64,
            });
        }
        let footer = &end[len - footer_len..];
        let checksum = match footer[0] {
            1 => ChecksumType::Crc32c,
            3 => ChecksumType::XxHash64,
            other => {
                return Err(Error::Unsupported {
                    what: Field::ChecksumType,
                    found: u64::from(other),
                })
            }
        };
        // Version 6 and later: the checksum after the handles' 41 bytes
        // (and version 7's attributes), over every byte but its own.
        let mut attributes = 0;
        if version >= 6 {
            let at = if version >= 7 { 45 } else { 41 };
            if version >= 7 {
                attributes = u32::from_le_bytes(footer[41..45].try_into().expect("4 bytes"));
            }
            let expected = u32::from_le_bytes(footer[at..at + 4].try_into().expect("4 bytes"));
            let crc = crc32c::crc32c_append(crc32c::crc32c(&footer[..at]), &footer[at + 4..]);
            let found = crc.rotate_right(15).wrapping_add(0xa282_ead8);
            if found != expected {
                return Err(Error::BadFooter {
                    what: FooterProblem::Checksum { expected, found },
                });
            }
        }
        let (metaindex, index) = two_handles(&footer[1..41])?;
        Ok(Footer {
            magic: PEBBLE_MAGIC,
            format_version: version,
            checksum,
            metaindex,
            index,
            base_context_checksum: 0,
            attributes,
        })
    }

    /// What a block's stored checksum adds to its computed one
    /// (format_version >= 6, `ChecksumModifierForContext`).
    pub fn checksum_modifier(&self, offset: u64) -> u32 {
        context_modifier(self.base_context_checksum, offset)
    }

    /// LevelDB's footer, the file's last [`LEVELDB_FOOTER_LEN`] bytes, as
    /// LevelDB's `Footer::DecodeFrom` reads it: its magic, then the
    /// metaindex and index handles (not yet checked against the file).
    pub(crate) fn leveldb_handles(footer: &[u8]) -> Result<(BlockHandle, BlockHandle), Error> {
        let at = footer.len() - 8;
        let magic = u64::from_le_bytes(footer[at..].try_into().expect("8 bytes"));
        if magic != TABLE_MAGIC {
            return Err(Error::BadMagic {
                found: magic,
                expected: &[TABLE_MAGIC],
            });
        }
        two_handles(&footer[..at])
    }
}

/// The metaindex and index handles of a footer before format_version 6.
fn two_handles(handles: &[u8]) -> Result<(BlockHandle, BlockHandle), Error> {
    let (metaindex, rest) = BlockHandle::decode(handles).ok_or(Error::BadFooterHandle)?;
    let (index, _) = BlockHandle::decode(rest).ok_or(Error::BadFooterHandle)?;
    Ok((metaindex, index))
}

/// The value of the metaindex entry `name`, as RocksDB's `FindMetaBlock`
/// finds it: the entry its seek lands on, if its key is `name`.
pub(crate) fn find_meta<'b>(metaindex: &'b [u8], name: &[u8]) -> Option<&'b [u8]> {
    let mut cursor = Cursor::new(metaindex, Layout::Plain).ok()?;
    let found = cursor.seek(|key| key.cmp(name)).ok()?;
    (found && cursor.key() == name).then(|| cursor.value())
}
