//! MinLZ blocks, Pebble's compression type 8 (Pebblev6 and later), decoded
//! as the block format of the MinLZ specification v1.0 says (this implements
//! the MinLZ specification v1.0: its block format, not its streams nor
//! dictionaries), with the reference decoder's reading where the text is
//! silent (github.com/minio/minlz, `decode.go`).
//!
//! ```text
//! block    00                       the empty block
//!          00 | 00 | bytes          stored: the bytes are the output
//!          00 | uvarint n | ops     n bytes (1 to 8 MiB) made by the ops; the ops
//!                                   are no more than n bytes and fill exactly n
//!          anything else            not MinLZ: Pebble reads it as Snappy (below)
//! op       the tag byte's low two bits say which; lengths and offsets are
//!          little-endian, extra length bytes come after the offset
//!   00 literals  bit 2 = 0, bits 3-7 = v: 1 + v bytes (v < 29), or 30 + the
//!                next 1, 2 or 3 bytes (v = 29, 30, 31); the literals follow
//!   00 repeat    bit 2 = 1, the length as the literals': a copy from the last
//!                offset used (1 at the start of the block)
//!   01 copy1     bits 2-5 = c: 4 + c bytes (c < 15), or 18 + 1 byte; offset
//!                1 + (bits 6-7 | next byte << 2): 1 to 1024
//!   10 copy2     bits 2-7 = c: 4 + c bytes (c < 61), or 64 + the 1, 2 or 3
//!                bytes after the offset (c = 61, 62, 63); offset 64 + u16
//!   11 fused     bit 2 = 0: bits 3-4 = 1 to 4 literals less 1, bits 5-7 = a
//!      copy2     copy of 4 to 11 bytes less 4, offset 64 + u16, the literals
//!   11 copy3     bit 2 = 1: bits 3-4 = 0 to 3 literals, bits 5-10 = c (as
//!                copy2's), bits 11-31 = offset less 65536 (up to 2,162,687),
//!                extra length bytes, the literals
//! ```
//!
//! Fused literals come before their copy; a copy may overlap what it
//! makes (offset < length: a run). Nothing may reach before the block's
//! start or past its stated length.
//!
//! Pebble frames a MinLZ block as `minlz.Encode` wrote it, with no prefix of
//! its own (`internal/compression/minlz.go`), and reads it with
//! `minlz.Decode`, which hands a block whose first byte is not 0 to S2, a
//! superset of Snappy: [`minlz_block`] reads such a block with this crate's
//! Snappy decoder. Pebble's writer never puts one under type 8 (its MinLZ
//! compressor falls back to Snappy past 8 MiB, and marks the block Snappy),
//! so S2's own extensions are not read.

use super::block::too_large;
use super::{snappy, uncompressed_limit, BlockHandle, BlockKind, Corruption, Error};

/// The most a MinLZ block decodes to: 8 MiB (a stored block, whose length
/// is its own, aside).
const MAX_BLOCK: usize = 8 << 20;

/// What follows a MinLZ block's header.
enum Body<'a> {
    /// The block's bytes, as they are (the empty block, or length 0).
    Stored(&'a [u8]),
    /// Ops that make `len` bytes.
    Ops { len: usize, ops: &'a [u8] },
}

impl Body<'_> {
    /// How many bytes the block decodes to.
    fn len(&self) -> usize {
        match *self {
            Body::Stored(bytes) => bytes.len(),
            Body::Ops { len, .. } => len,
        }
    }
}

/// A MinLZ block's header read as `minlz.IsMinLZ` reads it: the indicator,
/// the length, and what follows them.
fn header(input: &[u8]) -> Result<Body<'_>, Corruption> {
    let rest = match input {
        [0] => return Ok(Body::Stored(&[])),
        [0, rest @ ..] => rest,
        // Empty, or not MinLZ (Snappy, to Pebble).
        _ => return Err(Corruption::BadMinLzLength),
    };
    let (len, rest) = uvarint(rest).ok_or(Corruption::BadMinLzLength)?;
    if len > MAX_BLOCK as u64 {
        return Err(Corruption::MinLzLengthTooLarge);
    }
    let len = len as usize;
    // The reference refuses a length with no byte after it, even 0 (the
    // empty block is the indicator alone), and ops that outnumber the
    // bytes they make: each op makes at least as many bytes as it takes.
    if rest.is_empty() || (len != 0 && len < rest.len()) {
        return Err(Corruption::BadMinLzData);
    }
    Ok(match len {
        0 => Body::Stored(rest),
        _ => Body::Ops { len, ops: rest },
    })
}

/// Go's `binary.Uvarint` limited to 32 bits, as MinLZ reads its length:
/// up to 10 bytes, 7 bits each, low first; `None` where it does not end,
/// overflows 64 bits, or holds more than 32.
fn uvarint(input: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, &byte) in input.iter().take(10).enumerate() {
        if i == 9 && byte > 1 {
            return None;
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (value <= u64::from(u32::MAX)).then(|| (value, &input[i + 1..]));
        }
    }
    None
}

/// The length a MinLZ block states it decodes to (a stored block's, its
/// bytes'), once its header reads.
pub(crate) fn decoded_len(input: &[u8]) -> Result<usize, Corruption> {
    header(input).map(|body| body.len())
}

/// A MinLZ block (its first byte 0) decoded, to at most `limit` bytes: a
/// block that states more is [`Corruption::MinLzLengthTooLarge`] before
/// anything is allocated. Memory is the output's length; time is linear in
/// the input and the output. Public (hidden) for the fuzz target alone.
#[doc(hidden)]
pub fn decode(input: &[u8], limit: usize) -> Result<Vec<u8>, Corruption> {
    let body = header(input)?;
    if body.len() > limit {
        return Err(Corruption::MinLzLengthTooLarge);
    }
    match body {
        Body::Stored(bytes) => Ok(bytes.to_vec()),
        Body::Ops { len, ops } => run(ops, len),
    }
}

/// `n` bytes little-endian at `at` of `ops`, where they are there.
fn le(ops: &[u8], at: usize, n: usize) -> Result<usize, Corruption> {
    let bytes = ops.get(at..at + n).ok_or(Corruption::BadMinLzData)?;
    Ok(bytes
        .iter()
        .rev()
        .fold(0, |value, &byte| value << 8 | usize::from(byte)))
}

/// A copy2's or copy3's length from its 6-bit code: up to 60 in the tag,
/// then 1, 2 or 3 bytes at `at`; also how many bytes those took.
fn long_length(code: u8, ops: &[u8], at: usize) -> Result<(usize, usize), Corruption> {
    Ok(match code {
        0..=60 => (usize::from(code) + 4, 0),
        _ => {
            let n = usize::from(code - 60);
            (64 + le(ops, at, n)?, n)
        }
    })
}

/// The ops of a block run into an output of exactly `len` bytes.
fn run(ops: &[u8], len: usize) -> Result<Vec<u8>, Corruption> {
    // Allocated once: `len` is at most 8 MiB and within the caller's limit.
    let mut out = Vec::with_capacity(len);
    let mut at = 0;
    // A repeat's offset: the last copy's, 1 before any.
    let mut offset = 1;
    while let Some(&tag) = ops.get(at) {
        // Each op: literals first (fused ones, or a literal run alone), then
        // a copy of `length` bytes from `offset` back (0: none).
        let (literals, length) = match tag & 3 {
            0 => {
                let (length, took) = match tag >> 3 {
                    v @ 0..=28 => (usize::from(v) + 1, 1),
                    v => {
                        let n = usize::from(v - 28);
                        (30 + le(ops, at + 1, n)?, 1 + n)
                    }
                };
                at += took;
                match tag & 4 {
                    0 => (length, 0),
                    _ => (0, length),
                }
            }
            1 => {
                let next = le(ops, at + 1, 1)?;
                offset = (usize::from(tag >> 6) | next << 2) + 1;
                let (length, took) = match (tag >> 2) & 15 {
                    15 => (18 + le(ops, at + 2, 1)?, 3),
                    c => (usize::from(c) + 4, 2),
                };
                at += took;
                (0, length)
            }
            2 => {
                offset = le(ops, at + 1, 2)? + 64;
                let (length, took) = long_length(tag >> 2, ops, at + 3)?;
                at += 3 + took;
                (0, length)
            }
            _ if tag & 4 == 0 => {
                offset = le(ops, at + 1, 2)? + 64;
                at += 3;
                (usize::from((tag >> 3) & 3) + 1, usize::from(tag >> 5) + 4)
            }
            _ => {
                let word = le(ops, at, 4)?;
                offset = (word >> 11) + 65536;
                let code = ((word >> 5) & 63) as u8;
                let (length, took) = long_length(code, ops, at + 4)?;
                at += 4 + took;
                (usize::from((tag >> 3) & 3), length)
            }
        };
        if literals > 0 {
            let bytes = ops
                .get(at..at + literals)
                .filter(|_| literals <= len - out.len())
                .ok_or(Corruption::BadMinLzData)?;
            out.extend_from_slice(bytes);
            at += literals;
        }
        if length > 0 {
            if offset > out.len() || length > len - out.len() {
                return Err(Corruption::BadMinLzData);
            }
            copy(&mut out, offset, length);
        }
    }
    match out.len() == len {
        true => Ok(out),
        false => Err(Corruption::BadMinLzData),
    }
}

/// `length` bytes appended from `offset` back in `out` (at most its length),
/// byte by byte in effect: where they overlap, the copy repeats the last
/// `offset` bytes.
fn copy(out: &mut Vec<u8>, offset: usize, length: usize) {
    let start = out.len() - offset;
    let mut left = length;
    // From `start` on the output repeats every `offset` bytes, so copying
    // from `start` again as it grows doubles each step.
    while left > 0 {
        let n = left.min(out.len() - start);
        out.extend_from_within(start..start + n);
        left -= n;
    }
}

/// A block of Pebble's type 8 uncompressed as Pebble's reader does: MinLZ
/// where its first byte is 0, otherwise Snappy (Pebble's `minlz.Decode`
/// falls back to S2, which reads Snappy); within what the file's size
/// allows ([`uncompressed_limit`]).
pub(crate) fn minlz_block(
    file_len: u64,
    kind: BlockKind,
    handle: BlockHandle,
    contents: &[u8],
) -> Result<Vec<u8>, Error> {
    if contents.first().is_some_and(|&byte| byte != 0) {
        return snappy(file_len, kind, handle, contents);
    }
    let corrupt = |what| Error::CorruptBlock {
        block: kind,
        offset: handle.offset,
        what,
    };
    let limit = uncompressed_limit(file_len);
    let len = decoded_len(contents).map_err(corrupt)?;
    if len > limit {
        return Err(too_large(kind, handle, len as u64, limit));
    }
    decode(contents, limit).map_err(corrupt)
}

#[cfg(test)]
mod tests;
