//! A RocksDB table's data and index blocks: uncompressed as RocksDB 7.8
//! frames them (util/compression.h), the index walked (plain, delta-encoded
//! values, two levels) and each data block's keys read.
//!
//! ```text
//! compressed block, format_version >= 2: varint32 uncompressed size | codec's bytes
//! (Snappy carries its own size; Zstd always has the prefix; format_version
//! < 2 puts none before Zlib, and 8 bytes of native size_t before LZ4)
//! ```

use std::borrow::Cow;
#[cfg(feature = "codecs")]
use std::io::Read;

use crate::error::{Corruption, Field};
use crate::table::{
    snappy, varint64, BlockHandle, BlockIter, BlockKind, Compression, KEY_EXPANSION,
};
#[cfg(feature = "codecs")]
use crate::table::{too_large, uncompressed_limit};
use crate::Error;

/// The most a RocksDB block uncompresses to, per byte stored: deflate's
/// largest ratio.
#[cfg(feature = "codecs")]
pub(crate) const MAX_RATIO: usize = 1032;

/// A data or index block's contents, uncompressed, and how it was stored.
/// `contents` and `type_byte` come from the block's trailer, its checksum
/// checked; `format_version` says how compressed bytes are framed.
pub(crate) fn uncompress<'a>(
    file_len: usize,
    kind: BlockKind,
    handle: BlockHandle,
    contents: &'a [u8],
    type_byte: u8,
    format_version: u32,
) -> Result<(Compression, Cow<'a, [u8]>), Error> {
    let (compression, data) = match type_byte {
        0 => return Ok((Compression::None, Cow::Borrowed(contents))),
        1 => (
            Compression::Snappy,
            snappy(file_len, kind, handle, contents)?,
        ),
        2 | 4 | 5 | 7 | 0x40 => {
            let at = Place {
                file_len,
                kind,
                handle,
            };
            codec(at, contents, type_byte, format_version >= 2)?
        }
        // BZip2 (3), Xpress (6, Windows only), and types RocksDB 7.8 does
        // not write.
        _ => {
            return Err(Error::Unsupported {
                what: Field::CompressionType,
                found: u64::from(type_byte),
            })
        }
    };
    Ok((compression, Cow::Owned(data)))
}

/// Where a block is, for its errors and bounds.
#[derive(Clone, Copy)]
struct Place {
    #[cfg_attr(not(feature = "codecs"), allow(dead_code))]
    file_len: usize,
    kind: BlockKind,
    handle: BlockHandle,
}

/// A Zlib (2), LZ4 (4, 5) or Zstd (7, 0x40) block uncompressed; `prefixed`
/// where format_version >= 2 put the varint32 size before its bytes.
#[cfg(feature = "codecs")]
fn codec(
    at: Place,
    contents: &[u8],
    type_byte: u8,
    prefixed: bool,
) -> Result<(Compression, Vec<u8>), Error> {
    let Place {
        file_len,
        kind,
        handle,
    } = at;
    let corrupt = |what| Error::CorruptBlock {
        block: kind,
        offset: handle.offset,
        what,
    };
    // What a block may uncompress to: what the file's size allows, and no
    // more than deflate's largest ratio (1032) times the stored block, and
    // 64 KiB (Zstd and LZ4 blocks of RocksDB's sizes stay below).
    let limit = uncompressed_limit(file_len).min(
        contents
            .len()
            .saturating_mul(MAX_RATIO)
            .saturating_add(64 << 10),
    );
    // The size before the codec's bytes, where there is one.
    let sized = |contents| -> Result<(usize, &[u8]), Error> {
        let (size, rest) = varint64(contents)
            .filter(|&(size, _)| size <= u64::from(u32::MAX))
            .ok_or(corrupt(Corruption::BadUncompressedSize))?;
        if size > limit as u64 {
            return Err(too_large(kind, handle, size, limit));
        }
        Ok((size as usize, rest))
    };
    Ok(match type_byte {
        2 => {
            let (size, deflated) = match prefixed {
                true => {
                    let (size, rest) = sized(contents)?;
                    (Some(size), rest)
                }
                false => (None, contents),
            };
            let cap = size.unwrap_or(limit);
            let mut out = Vec::new();
            flate2::read::DeflateDecoder::new(deflated)
                .take(cap as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|_| corrupt(Corruption::BadZlibData))?;
            check_size(&out, size, cap, kind, handle)?;
            (Compression::Zlib, out)
        }
        4 | 5 => {
            let (size, block) = match prefixed {
                true => sized(contents)?,
                false => {
                    let header = contents
                        .get(..8)
                        .ok_or(corrupt(Corruption::Lz4ShorterThanSize))?;
                    let size = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
                    if size as usize > limit {
                        return Err(too_large(kind, handle, u64::from(size), limit));
                    }
                    (size as usize, &contents[8..])
                }
            };
            // An LZ4 block expands at most 255 times.
            if size > block.len().saturating_mul(255).saturating_add(16) {
                return Err(corrupt(Corruption::Lz4SizeTooLarge));
            }
            let mut out = vec![0; size];
            let n = lz4_flex::block::decompress_into(block, &mut out)
                .map_err(|_| corrupt(Corruption::BadLz4Data))?;
            if n != size {
                return Err(corrupt(Corruption::Lz4DataShort));
            }
            (Compression::Lz4, out)
        }
        7 | 0x40 => {
            let (size, frame) = sized(contents)?;
            let mut decoder = ruzstd::decoding::StreamingDecoder::new_with_max_window_size(
                frame,
                (size as u64).max(1 << 20),
            )
            .map_err(|_| corrupt(Corruption::BadZstdHeader))?;
            let mut out = Vec::new();
            (&mut decoder)
                .take(size as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|_| corrupt(Corruption::BadZstdData))?;
            check_size(&out, Some(size), size, kind, handle)?;
            (Compression::Zstd, out)
        }
        _ => unreachable!("the caller sends codec types only"),
    })
}

/// Without the `codecs` feature: Zlib, LZ4 and Zstd blocks are named, not read.
#[cfg(not(feature = "codecs"))]
fn codec(
    at: Place,
    _contents: &[u8],
    type_byte: u8,
    _prefixed: bool,
) -> Result<(Compression, Vec<u8>), Error> {
    Err(Error::UnsupportedCompression {
        block: at.kind,
        offset: at.handle.offset,
        compression: match type_byte {
            2 => Compression::Zlib,
            4 | 5 => Compression::Lz4,
            _ => Compression::Zstd,
        },
    })
}

/// Whether a codec's output has the size its prefix stated (if any) and no
/// more than `cap` bytes.
#[cfg(feature = "codecs")]
fn check_size(
    out: &[u8],
    size: Option<usize>,
    cap: usize,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(), Error> {
    if out.len() > cap {
        return Err(match size {
            Some(_) => Error::CorruptBlock {
                block: kind,
                offset: handle.offset,
                what: Corruption::PastStatedSize,
            },
            None => too_large(kind, handle, out.len() as u64, cap),
        });
    }
    if size.is_some_and(|size| size != out.len()) {
        return Err(Error::CorruptBlock {
            block: kind,
            offset: handle.offset,
            what: Corruption::ShortOfStatedSize,
        });
    }
    Ok(())
}

/// A block's entries as (key, block handle) pairs: an index block, or a
/// partitioned filter's index. With `delta` (the table property
/// `rocksdb.index.value.is.delta.encoded`, format_version >= 4), an entry
/// has no value length, and only entries at restart points hold a whole
/// handle; the others a size delta, the offset following the last block and
/// its trailer.
pub(crate) fn index_entries(block: &[u8], delta: bool) -> Option<Vec<(Vec<u8>, BlockHandle)>> {
    let num = u32::from_le_bytes(block.get(block.len().checked_sub(4)?..)?.try_into().ok()?);
    let restarts = (num & 0x7fff_ffff) as usize;
    let end = block
        .len()
        .checked_sub(4)?
        .checked_sub(restarts.checked_mul(4)?)?;
    let restart_at = |i: usize| {
        let at = end + 4 * i;
        u32::from_le_bytes(block[at..at + 4].try_into().expect("4 bytes")) as usize
    };
    let (data, mut at, mut next_restart) = (&block[..end], 0, 0);
    let mut key = Vec::new();
    let mut out: Vec<(Vec<u8>, BlockHandle)> = Vec::new();
    // Keys rebuilt from shared prefixes may add up to KEY_EXPANSION times
    // the block, as in every other block this crate reads.
    let mut budget = block.len().saturating_mul(KEY_EXPANSION);
    while at < data.len() {
        let entry = &data[at..];
        let (shared, rest) = varint64(entry)?;
        let (unshared, rest) = varint64(rest)?;
        let (value_len, rest) = if delta {
            (None, rest)
        } else {
            let (v, r) = varint64(rest)?;
            (Some(v), r)
        };
        let (shared, unshared) = (
            usize::try_from(shared).ok()?,
            usize::try_from(unshared).ok()?,
        );
        if shared > key.len() || unshared > rest.len() {
            return None;
        }
        key.truncate(shared);
        key.extend_from_slice(&rest[..unshared]);
        budget = budget.checked_sub(key.len())?;
        let rest = &rest[unshared..];
        // Is this entry at the next restart point?
        let at_restart = next_restart < restarts && restart_at(next_restart) == at;
        if at_restart {
            next_restart += 1;
        }
        let (handle, rest) = match value_len {
            Some(len) => {
                let len = usize::try_from(len).ok()?;
                let value = rest.get(..len)?;
                (BlockHandle::decode(value)?.0, &rest[len..])
            }
            None if at_restart || out.is_empty() => BlockHandle::decode(rest)?,
            None => {
                let (zigzag, rest) = varint64(rest)?;
                let size_delta = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
                let prev = out.last()?.1;
                let offset = prev.offset.checked_add(prev.size)?.checked_add(5)?;
                let size = prev.size.checked_add_signed(size_delta)?;
                (BlockHandle { offset, size }, rest)
            }
        };
        out.push((key.clone(), handle));
        at = data.len() - rest.len();
    }
    Some(out)
}

/// A data block's entries: as a LevelDB block, once the data-block hash
/// index RocksDB may append (`kDataBlockBinaryAndHash`: bit 31 of the
/// restart count, a byte per bucket and their u16 count before it) is cut
/// off.
pub(crate) fn data_block_without_hash_index(block: &[u8]) -> Option<Cow<'_, [u8]>> {
    let footer_at = block.len().checked_sub(4)?;
    let footer = u32::from_le_bytes(block[footer_at..].try_into().ok()?);
    if footer & 0x8000_0000 == 0 {
        return Some(Cow::Borrowed(block));
    }
    let buckets_at = footer_at.checked_sub(2)?;
    let buckets = u16::from_le_bytes(block[buckets_at..footer_at].try_into().ok()?) as usize;
    let restarts_end = buckets_at.checked_sub(buckets)?;
    let mut plain = block[..restarts_end].to_vec();
    plain.extend_from_slice(&(footer & 0x7fff_ffff).to_le_bytes());
    Some(Cow::Owned(plain))
}

/// Reads every key of a data block (internal keys: user key and an 8-byte
/// tag), calling `each` with each user key.
pub(crate) fn for_each_user_key(
    block: &[u8],
    handle: BlockHandle,
    mut each: impl FnMut(&[u8]),
) -> Result<u64, Error> {
    let corrupt = |what| Error::CorruptBlock {
        block: BlockKind::Data,
        offset: handle.offset,
        what,
    };
    let plain =
        data_block_without_hash_index(block).ok_or(corrupt(Corruption::ShorterThanFooter))?;
    let mut iter = BlockIter::with_budget(&plain, plain.len() as u64);
    let mut keys = 0;
    loop {
        match iter.next_entry() {
            Ok(Some((key, _))) => {
                let user = key
                    .len()
                    .checked_sub(8)
                    .ok_or(corrupt(Corruption::KeyShorterThanTag))?;
                each(&key[..user]);
                keys += 1;
            }
            Ok(None) => return Ok(keys),
            Err(what) => return Err(corrupt(what)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without the `codecs` feature, a Zlib, LZ4 or Zstd block is named as
    /// an unsupported compression; with it, bytes that are no such block
    /// are corrupt: an error either way, never a panic.
    #[test]
    fn codec_blocks_are_read_or_named() {
        let handle = BlockHandle {
            offset: 100,
            size: 4,
        };
        for (type_byte, compression) in [
            (2, Compression::Zlib),
            (4, Compression::Lz4),
            (5, Compression::Lz4),
            (7, Compression::Zstd),
            (0x40, Compression::Zstd),
        ] {
            let got = uncompress(1000, BlockKind::Data, handle, &[9, 1, 2, 3], type_byte, 5);
            if cfg!(feature = "codecs") {
                assert!(
                    matches!(got, Err(Error::CorruptBlock { offset: 100, .. })),
                    "{type_byte}: {got:?}"
                );
            } else {
                assert_eq!(
                    got.unwrap_err(),
                    Error::UnsupportedCompression {
                        block: BlockKind::Data,
                        offset: 100,
                        compression,
                    }
                );
            }
        }
    }
}
