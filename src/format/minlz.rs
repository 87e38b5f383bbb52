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
    // empty block is the indicator alone), and ops longer than what they
    // make (the specification: a compressed block is no bigger than its
    // output).
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

/// `n` bytes (at most 4) of `word` from byte `at` on, little-endian.
fn field(word: u64, at: u32, n: u32) -> usize {
    ((word >> (8 * at)) & ((1 << (8 * n)) - 1)) as usize
}

/// A copy2's or copy3's length from its 6-bit code: up to 60 in the tag,
/// then 1, 2 or 3 bytes from byte `at` of `word`; also how many bytes
/// those take.
fn long_length(code: u8, word: u64, at: u32) -> (usize, usize) {
    match code {
        0..=60 => (usize::from(code) + 4, 0),
        _ => {
            let n = u32::from(code - 60);
            (64 + field(word, at, n), n as usize)
        }
    }
}

/// The ops of a block run into an output of exactly `len` bytes.
fn run(ops: &[u8], len: usize) -> Result<Vec<u8>, Corruption> {
    // Allocated once: `len` is at most 8 MiB and within the caller's limit.
    // Zeroed, so that short literals and copies can move 16 bytes at once
    // where there is room: what they write past their end is written again
    // by the ops after them, which must fill the output to its end.
    let mut out = vec![0; len];
    let (mut at, mut done) = (0, 0);
    // A repeat's offset: the last copy's, 1 before any.
    let mut offset = 1;
    while at < ops.len() {
        // The op's first 8 bytes (the longest header is 7), zeros past the
        // end: its header's length is checked once it is known.
        let word = match ops.get(at..at + 8) {
            Some(bytes) => u64::from_le_bytes(bytes.try_into().expect("8 bytes")),
            None => {
                let mut bytes = [0; 8];
                bytes[..ops.len() - at].copy_from_slice(&ops[at..]);
                u64::from_le_bytes(bytes)
            }
        };
        let tag = word as u8;
        // Each op but a literal run: its header's length, how many literals
        // it carries (fused), and the length of its copy from `offset` back.
        let (head, literals, length) = match tag & 3 {
            0 => {
                let (n, head) = match tag >> 3 {
                    v @ 0..=28 => (usize::from(v) + 1, 1),
                    v => {
                        let extra = u32::from(v - 28);
                        (30 + field(word, 1, extra), 1 + extra as usize)
                    }
                };
                if tag & 4 == 0 {
                    // A literal run: its bytes follow the header.
                    let start = at + head;
                    if n > len - done || start > ops.len() || n > ops.len() - start {
                        return Err(Corruption::BadMinLzData);
                    }
                    literals_to(&mut out, done, &ops[start..], n);
                    at = start + n;
                    done += n;
                    continue;
                }
                (head, 0, n)
            }
            1 => {
                offset = (field(word, 0, 2) >> 6) + 1;
                match (tag >> 2) & 15 {
                    15 => (3, 0, 18 + field(word, 2, 1)),
                    code => (2, 0, usize::from(code) + 4),
                }
            }
            2 => {
                offset = field(word, 1, 2) + 64;
                let (length, extra) = long_length(tag >> 2, word, 3);
                (3 + extra, 0, length)
            }
            _ if tag & 4 == 0 => {
                offset = field(word, 1, 2) + 64;
                let literals = usize::from((tag >> 3) & 3) + 1;
                (3, literals, usize::from(tag >> 5) + 4)
            }
            _ => {
                offset = (field(word, 0, 4) >> 11) + 65536;
                let (length, extra) = long_length(((word >> 5) & 63) as u8, word, 4);
                (4 + extra, usize::from((tag >> 3) & 3), length)
            }
        };
        if head > ops.len() - at {
            return Err(Corruption::BadMinLzData);
        }
        at += head;
        // Fused literals, 0 to 4, then the copy.
        if literals > len - done || literals > ops.len() - at {
            return Err(Corruption::BadMinLzData);
        }
        literals_to(&mut out, done, &ops[at..], literals);
        at += literals;
        done += literals;
        if offset > done || length > len - done {
            return Err(Corruption::BadMinLzData);
        }
        copy(&mut out, done, offset, length);
        done += length;
    }
    match done == len {
        true => Ok(out),
        false => Err(Corruption::BadMinLzData),
    }
}

/// The first `n` bytes of `from` written to `out[done..]`, where both
/// hold them; in one move of 16 or 64 bytes where both have the room (what
/// it writes past `n` bytes is written again by the ops after it).
#[inline(always)]
fn literals_to(out: &mut [u8], done: usize, from: &[u8], n: usize) {
    let room = from.len().min(out.len() - done);
    if n <= 16 && room >= 16 {
        out[done..done + 16].copy_from_slice(&from[..16]);
    } else if n <= 64 && room >= 64 {
        out[done..done + 64].copy_from_slice(&from[..64]);
    } else {
        out[done..done + n].copy_from_slice(&from[..n]);
    }
}

/// `length` bytes copied to `out[done..]` from `offset` back (at most
/// `done`), byte by byte in effect: where they overlap, the copy repeats
/// the last `offset` bytes. `length` fits in `out` past `done`.
#[inline(always)]
fn copy(out: &mut [u8], done: usize, offset: usize, length: usize) {
    let from = done - offset;
    let room = out.len() - done;
    if offset >= 16 && length <= 64 && length + 15 <= room {
        // Moves of 16 bytes, each from before where it writes (what the
        // last writes past `length` is written again later).
        chunks::<16>(out, from, done, length);
    } else if offset >= 8 && length <= 32 && length + 7 <= room {
        chunks::<8>(out, from, done, length);
    } else if offset >= length {
        out.copy_within(from..from + length, done);
    } else {
        // From `from` on the output repeats every `offset` bytes, so a move
        // from `from` as long as what is there doubles each step.
        let mut copied = 0;
        while copied < length {
            let n = (length - copied).min(done + copied - from);
            out.copy_within(from..from + n, done + copied);
            copied += n;
        }
    }
}

/// `length` bytes moved `N` at a time from `from` to `to`: `N` is no more
/// than `to - from`, so that each move reads what is already written, and
/// `length` rounded up to `N` fits in `out` from `to`.
#[inline(always)]
fn chunks<const N: usize>(out: &mut [u8], from: usize, to: usize, length: usize) {
    let mut k = 0;
    while k < length {
        out.copy_within(from + k..from + k + N, to + k);
        k += N;
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
