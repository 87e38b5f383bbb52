//! Compressed blocks uncompressed as RocksDB frames them
//! (util/compression.h), within bounds set by the file's size.
//!
//! ```text
//! compressed block, format_version >= 2: varint32 uncompressed size | codec's bytes
//! (Snappy carries its own size; Zstd always has the prefix; format_version
//! < 2 puts none before Zlib, and 8 bytes of native size_t before LZ4)
//! ```

use std::borrow::Cow;
#[cfg(feature = "codecs")]
use std::io::Read;

use super::snappy;
#[cfg(feature = "codecs")]
use super::varint64;
#[cfg(feature = "codecs")]
use super::Corruption;
use super::Error;
use super::Field;
#[cfg(feature = "codecs")]
use super::{too_large, uncompressed_limit};
use super::{BlockHandle, BlockKind, Compression};

/// The most a RocksDB block uncompresses to, per byte stored: deflate's
/// largest ratio.
#[cfg(feature = "codecs")]
pub(crate) const MAX_RATIO: usize = 1032;

/// A data or index block's contents, uncompressed, and how it was stored.
/// `contents` and `type_byte` come from the block's trailer, its checksum
/// checked; `format_version` says how compressed bytes are framed; `dict`
/// is the table's compression dictionary (empty for none), with which
/// RocksDB compresses Zlib, LZ4 and Zstd data blocks.
pub(crate) fn uncompress<'a>(
    file_len: u64,
    kind: BlockKind,
    handle: BlockHandle,
    contents: Cow<'a, [u8]>,
    (type_byte, format_version): (u8, u32),
    dict: &[u8],
) -> Result<(Compression, Cow<'a, [u8]>), Error> {
    let (compression, data) = match type_byte {
        0 => return Ok((Compression::None, contents)),
        1 => (
            Compression::Snappy,
            snappy(file_len, kind, handle, &contents)?,
        ),
        2..=5 | 7 | 0x40 => {
            let at = Place {
                file_len,
                kind,
                handle,
                dict,
            };
            codec(at, &contents, type_byte, format_version >= 2)?
        }
        // Xpress (6, Windows only), and types RocksDB does not write
        // (0x80 and up: a custom compression manager's, format_version 7).
        _ => {
            return Err(Error::Unsupported {
                what: Field::CompressionType,
                found: u64::from(type_byte),
            })
        }
    };
    Ok((compression, Cow::Owned(data)))
}

/// Where a block is, for its errors and bounds, and the dictionary its
/// codec starts from.
#[derive(Clone, Copy)]
struct Place<'d> {
    #[cfg_attr(not(feature = "codecs"), allow(dead_code))]
    file_len: u64,
    kind: BlockKind,
    handle: BlockHandle,
    #[cfg_attr(not(feature = "codecs"), allow(dead_code))]
    dict: &'d [u8],
}

/// A Zlib (2), BZip2 (3), LZ4 (4, 5) or Zstd (7, 0x40) block uncompressed; `prefixed`
/// where format_version >= 2 put the varint32 size before its bytes.
#[cfg(feature = "codecs")]
fn codec(
    at: Place<'_>,
    contents: &[u8],
    type_byte: u8,
    prefixed: bool,
) -> Result<(Compression, Vec<u8>), Error> {
    let Place {
        file_len,
        kind,
        handle,
        dict,
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
        2 | 3 => {
            // A stream, its size before it where format_version >= 2.
            let (size, stream) = match prefixed {
                true => {
                    let (size, rest) = sized(contents)?;
                    (Some(size), rest)
                }
                false => (None, contents),
            };
            let cap = size.unwrap_or(limit);
            let mut out = Vec::new();
            let (compression, read, bad) = match type_byte {
                2 if !dict.is_empty() => (
                    Compression::Zlib,
                    inflate_with_dict(stream, dict, cap).map(|inflated| out = inflated),
                    Corruption::BadZlibData,
                ),
                2 => (
                    Compression::Zlib,
                    read_up_to(flate2::read::DeflateDecoder::new(stream), cap, &mut out),
                    Corruption::BadZlibData,
                ),
                _ => (
                    Compression::Bzip2,
                    read_up_to(bzip2::read::BzDecoder::new(stream), cap, &mut out),
                    Corruption::BadBzip2Data,
                ),
            };
            read.map_err(|_| corrupt(bad))?;
            check_size(&out, size, cap, kind, handle)?;
            (compression, out)
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
            let n = lz4_flex::block::decompress_into_with_dict(block, &mut out, dict)
                .map_err(|_| corrupt(Corruption::BadLz4Data))?;
            if n != size {
                return Err(corrupt(Corruption::Lz4DataShort));
            }
            (Compression::Lz4, out)
        }
        7 | 0x40 => {
            let (size, frame) = sized(contents)?;
            let (frame, window) = window_at_most(frame, size);
            let out = unzstd(&frame, window, dict, size).map_err(corrupt)?;
            check_size(&out, Some(size), size, kind, handle)?;
            (Compression::Zstd, out)
        }
        _ => unreachable!("the caller sends codec types only"),
    })
}

/// A Zstd frame uncompressed, to at most `size + 1` bytes, with `dict`
/// where it is not empty: a dictionary in Zstd's format (with its magic
/// number), or raw content, as RocksDB passes it to `ZSTD_createDDict`.
#[cfg(feature = "codecs")]
fn unzstd(frame: &[u8], window: u64, dict: &[u8], size: usize) -> Result<Vec<u8>, Corruption> {
    use ruzstd::decoding::{BlockDecodingStrategy, Dictionary, FrameDecoder};
    let mut decoder = FrameDecoder::new();
    decoder.set_max_window_size(window);
    // The id a raw-content dictionary is filed under (frames name none).
    const RAW: u32 = u32::MAX;
    // A dictionary in Zstd's format starts with its magic number.
    let raw = !dict.is_empty() && !dict.starts_with(&[0x37, 0xa4, 0x30, 0xec]);
    if raw {
        let dict = Dictionary {
            id: RAW,
            fse: Default::default(),
            huf: Default::default(),
            dict_content: dict.to_vec(),
            offset_hist: [1, 4, 8],
        };
        decoder
            .add_dict(dict)
            .map_err(|_| Corruption::BadZstdHeader)?;
    } else if !dict.is_empty() {
        let dict = Dictionary::decode_dict(dict).map_err(|_| Corruption::BadZstdHeader)?;
        decoder
            .add_dict(dict)
            .map_err(|_| Corruption::BadZstdHeader)?;
    }
    let mut source = frame;
    decoder
        .init(&mut source)
        .map_err(|_| Corruption::BadZstdHeader)?;
    if raw {
        decoder
            .force_dict(RAW)
            .map_err(|_| Corruption::BadZstdHeader)?;
    }
    let mut out = Vec::new();
    while !decoder.is_finished() && out.len() <= size {
        decoder
            .decode_blocks(&mut source, BlockDecodingStrategy::UptoBytes(1 << 16))
            .map_err(|_| Corruption::BadZstdData)?;
        decoder
            .collect_to_writer(&mut out)
            .map_err(|_| Corruption::BadZstdData)?;
    }
    decoder
        .collect_to_writer(&mut out)
        .map_err(|_| Corruption::BadZstdData)?;
    Ok(out)
}

/// A stream's output, up to one byte past `cap` (which [`check_size`] then
/// refuses).
#[cfg(feature = "codecs")]
fn read_up_to(stream: impl Read, cap: usize, out: &mut Vec<u8>) -> Result<(), ()> {
    stream
        .take(cap as u64 + 1)
        .read_to_end(out)
        .map(drop)
        .map_err(drop)
}

/// Raw deflate uncompressed to at most `cap` bytes after `dict`, as zlib's
/// `inflateSetDictionary` reads it: the dictionary's last 32 KiB (deflate's
/// window) stand before the output, where matches may reach back.
#[cfg(feature = "codecs")]
fn inflate_with_dict(deflated: &[u8], dict: &[u8], cap: usize) -> Result<Vec<u8>, ()> {
    use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    let dict = &dict[dict.len().saturating_sub(32 << 10)..];
    let mut out = vec![0; dict.len() + cap + 1];
    out[..dict.len()].copy_from_slice(dict);
    let mut state = DecompressorOxide::new();
    let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
    let (status, _, written) = decompress(&mut state, deflated, &mut out, dict.len(), flags);
    if status != TINFLStatus::Done {
        return Err(());
    }
    out.truncate(dict.len() + written);
    out.drain(..dict.len());
    Ok(out)
}

/// A Zstd frame whose window needs no more than the `size` bytes it
/// uncompresses to, and the window to allow it: a frame written without
/// its content size (as `zstd` writes from a pipe) may state a window of
/// many megabytes, which a decoder would reserve, though no match can
/// reach back past the output. Such a frame's window descriptor is
/// rewritten to the smallest window that holds `size` bytes.
#[cfg(feature = "codecs")]
fn window_at_most(frame: &[u8], size: usize) -> (Cow<'_, [u8]>, u64) {
    let want = (size as u64).max(1 << 10);
    let allowed = want.max(1 << 20);
    // Window_Descriptor: exponent (5 bits) and mantissa (3 bits).
    let window = |byte: u8| {
        let base = 1u64 << (10 + u32::from(byte >> 3));
        base + (base / 8) * u64::from(byte & 7)
    };
    let single_segment = |descriptor: u8| descriptor & 0x20 != 0;
    match frame {
        [0x28, 0xb5, 0x2f, 0xfd, descriptor, byte, ..]
            if !single_segment(*descriptor) && window(*byte) > allowed =>
        {
            let Some(smallest) = (0..=255u8).find(|&b| window(b) >= want) else {
                return (Cow::Borrowed(frame), allowed);
            };
            let mut copy = frame.to_vec();
            copy[5] = smallest;
            (Cow::Owned(copy), allowed.max(window(smallest)))
        }
        _ => (Cow::Borrowed(frame), allowed),
    }
}

/// Without the `codecs` feature: Zlib, LZ4 and Zstd blocks are named, not read.
#[cfg(not(feature = "codecs"))]
fn codec(
    at: Place<'_>,
    _contents: &[u8],
    type_byte: u8,
    _prefixed: bool,
) -> Result<(Compression, Vec<u8>), Error> {
    Err(Error::UnsupportedCompression {
        block: at.kind,
        offset: at.handle.offset,
        compression: match type_byte {
            2 => Compression::Zlib,
            3 => Compression::Bzip2,
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
            (3, Compression::Bzip2),
            (4, Compression::Lz4),
            (5, Compression::Lz4),
            (7, Compression::Zstd),
            (0x40, Compression::Zstd),
        ] {
            let got = uncompress(
                1000,
                BlockKind::Data,
                handle,
                Cow::Borrowed(&[9, 1, 2, 3]),
                (type_byte, 5),
                &[],
            );
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
