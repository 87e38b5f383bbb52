//! The decoder against blocks MinLZ and Pebble v2.1.7 made, and what
//! Pebble's own reader decoded them to (`testdata/pebble-minlz/`, written by
//! `oracle/pebble-minlz`); then the small ones cut short and bit-flipped,
//! which must give an error or an output within the limit, never a panic.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::*;

/// What Pebble read from a block.
#[derive(Clone, Debug)]
enum Expect {
    Ok {
        len: usize,
        sha256: String,
        bytes: Option<Vec<u8>>,
    },
    Error,
}

#[derive(Clone, Debug)]
struct Vector {
    name: String,
    block: Vec<u8>,
    expect: Expect,
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    assert!(s.len().is_multiple_of(2), "odd hex {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn vectors() -> Vec<Vector> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/pebble-minlz");
    let text = std::fs::read_to_string(format!("{dir}/vectors.txt")).unwrap();
    let bin = std::fs::read(format!("{dir}/blocks.bin")).unwrap();
    let mut out: Vec<Vector> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let name = words[0].to_owned();
        let vector = match words[1].strip_prefix('=') {
            Some(first) => Vector {
                name: name.clone(),
                ..out[by_name[first]].clone()
            },
            None => {
                let block = match words[1].strip_prefix('@') {
                    Some(place) => {
                        let (at, len) = place.split_once('+').unwrap();
                        let at: usize = at.parse().unwrap();
                        bin[at..at + len.parse::<usize>().unwrap()].to_vec()
                    }
                    None => unhex(words[1]),
                };
                let expect = match words[2] {
                    "ok" => Expect::Ok {
                        len: words[3].parse().unwrap(),
                        sha256: words[4].to_owned(),
                        bytes: words.get(5).map(|w| unhex(w)),
                    },
                    "error" => Expect::Error,
                    other => panic!("{name}: {other}"),
                };
                Vector {
                    name: name.clone(),
                    block,
                    expect,
                }
            }
        };
        by_name.insert(name, out.len());
        out.push(vector);
    }
    out
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const HANDLE: BlockHandle = BlockHandle {
    offset: 4096,
    size: 0,
};

/// A block as Pebble's table reader takes a type-8 block, in a file of
/// 1 GiB.
fn as_pebble(block: &[u8]) -> Result<Vec<u8>, Error> {
    minlz_block(1 << 30, BlockKind::Data, HANDLE, block)
}

/// Every vector decodes as Pebble decoded it: the same bytes, or an error;
/// a Snappy block (first byte not 0) through the fallback alone.
#[test]
fn golden_vectors_decode_as_pebble_decoded() {
    let vectors = vectors();
    let (mut ok, mut errors, mut snappy) = (0, 0, 0);
    for v in &vectors {
        let got = as_pebble(&v.block);
        let direct = decode(&v.block, MAX_BLOCK);
        let is_minlz = v.block.first() == Some(&0);
        match &v.expect {
            Expect::Ok {
                len,
                sha256: sum,
                bytes,
            } => {
                let out = got.unwrap_or_else(|e| panic!("{}: {e}", v.name));
                assert_eq!(out.len(), *len, "{}", v.name);
                assert_eq!(&sha256(&out), sum, "{}", v.name);
                if let Some(bytes) = bytes {
                    assert_eq!(&out, bytes, "{}", v.name);
                }
                match is_minlz {
                    true => assert_eq!(direct.as_ref(), Ok(&out), "{}", v.name),
                    false => {
                        assert_eq!(direct, Err(Corruption::BadMinLzLength), "{}", v.name);
                        snappy += 1;
                    }
                }
                ok += 1;
            }
            Expect::Error => {
                match got {
                    Err(Error::CorruptBlock {
                        block: BlockKind::Data,
                        offset: 4096,
                        what,
                    }) => assert_eq!(direct, Err(what), "{}", v.name),
                    other => panic!("{}: Pebble refused it, read {other:?}", v.name),
                }
                errors += 1;
            }
        }
    }
    // What the oracle writes (seed 1): MinLZ's levels and Pebble's
    // compressor on 24 inputs, Snappy on 15, the ops crafted, 568 damaged
    // (a block made again under another name counted again).
    assert_eq!(vectors.len(), 978);
    assert_eq!((ok, errors, snappy), (450, 528, 15));
    for name in ["text-64k.pebble", "op-copy3-off2162687-lits3-len65600"] {
        assert!(vectors.iter().any(|v| v.name == name), "{name}");
    }
}

/// A limit one byte short of the stated length is an error before any
/// decoding; the stated length itself decodes.
#[test]
fn a_limit_below_the_stated_length_is_an_error() {
    let mut checked = 0;
    for v in vectors() {
        let Expect::Ok { len, .. } = v.expect else {
            continue;
        };
        if len == 0 || v.block[0] != 0 {
            continue;
        }
        assert_eq!(
            decode(&v.block, len - 1),
            Err(Corruption::MinLzLengthTooLarge),
            "{}",
            v.name
        );
        assert_eq!(
            decode(&v.block, len).map(|o| o.len()),
            Ok(len),
            "{}",
            v.name
        );
        assert_eq!(decoded_len(&v.block), Ok(len), "{}", v.name);
        checked += 1;
    }
    assert_eq!(checked, 370);
}

/// The small vectors (to 2 KiB) cut at every length, from either end: an
/// error or an output within the limit, and the same answer whichever
/// way it is asked; never a panic.
#[test]
fn truncated_blocks_never_panic() {
    let limit = 1 << 20;
    let mut cuts = 0;
    for v in vectors().into_iter().filter(|v| v.block.len() <= 2048) {
        for cut in 0..v.block.len() {
            for part in [&v.block[..cut], &v.block[v.block.len() - cut..]] {
                check_any(part, limit);
                cuts += 1;
            }
        }
    }
    assert!(cuts > 100_000, "{cuts}");
}

/// Every bit of the vectors of up to 256 bytes flipped in turn.
#[test]
fn bit_flipped_blocks_never_panic() {
    let limit = 1 << 20;
    let mut flips = 0;
    for v in vectors().into_iter().filter(|v| v.block.len() <= 256) {
        let mut block = v.block.clone();
        for bit in 0..block.len() * 8 {
            block[bit / 8] ^= 1 << (bit % 8);
            check_any(&block, limit);
            block[bit / 8] ^= 1 << (bit % 8);
            flips += 1;
        }
    }
    assert!(flips > 100_000, "{flips}");
}

/// Any bytes: `decode` errs or gives at most `limit` bytes, its length
/// what the header states; the table's path agrees where the block is
/// MinLZ.
fn check_any(block: &[u8], limit: usize) {
    let got = decode(block, limit);
    // Within 1 MiB the decoder refuses what the table's bound (8 MiB and
    // more) goes on to read.
    if got == Err(Corruption::MinLzLengthTooLarge) && decoded_len(block).is_ok() {
        assert!(decoded_len(block).is_ok_and(|len| len > limit));
        return;
    }
    if let Ok(out) = &got {
        assert!(out.len() <= limit);
        assert_eq!(decoded_len(block), Ok(out.len()));
    }
    if block.first() == Some(&0) || block.is_empty() {
        let table = as_pebble(block);
        match (&got, &table) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(what), Err(Error::CorruptBlock { what: w, .. })) => assert_eq!(what, w),
            _ => panic!("{block:02x?}: {got:?} and {table:?}"),
        }
    }
}

/// The header as the reference reads it: the indicator alone is the empty
/// block, a length of 0 stores the bytes after it, lengths of more than 32
/// bits or 8 MiB are refused, and so are ops longer than their output.
#[test]
fn headers() {
    assert_eq!(decode(&[0], 0), Ok(vec![]));
    assert_eq!(decode(&[0, 0, 7, 8], 2), Ok(vec![7, 8]));
    assert_eq!(
        decode(&[0, 0, 7, 8], 1),
        Err(Corruption::MinLzLengthTooLarge)
    );
    assert_eq!(decode(&[], 9), Err(Corruption::BadMinLzLength));
    assert_eq!(decode(&[1, 0], 9), Err(Corruption::BadMinLzLength));
    assert_eq!(decode(&[0, 0], 9), Err(Corruption::BadMinLzData));
    assert_eq!(decode(&[0, 0x80], 9), Err(Corruption::BadMinLzLength));
    // 2^32 - 1 reads, and is too large; 2^32 does not read.
    let max = [0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0];
    assert_eq!(
        decode(&max, usize::MAX),
        Err(Corruption::MinLzLengthTooLarge)
    );
    let over = [0, 0x80, 0x80, 0x80, 0x80, 0x10, 0];
    assert_eq!(decode(&over, usize::MAX), Err(Corruption::BadMinLzLength));
    // Ten varint bytes, the tenth past 1: overflows 64 bits.
    let mut long = vec![0];
    long.extend([0x80; 9]);
    long.push(2);
    assert_eq!(decoded_len(&long), Err(Corruption::BadMinLzLength));
    // 8 MiB and one: refused before anything is read after it.
    let past = [0, 0x81, 0x80, 0x80, 0x04, 0];
    assert_eq!(decoded_len(&past), Err(Corruption::MinLzLengthTooLarge));
    // Ops of 2 bytes for 1 byte of output.
    assert_eq!(decode(&[0, 1, 0, b'a'], 9), Err(Corruption::BadMinLzData));
}

/// The table's path: MinLZ's errors are the block's, at its offset; a
/// block whose first byte is not 0 is Snappy's, as Pebble falls back.
#[test]
fn table_blocks() {
    assert_eq!(
        as_pebble(&[0, 3, 0, b'a', 4 | 1 << 3]),
        Ok(b"aaa".to_vec()),
        "a literal and a repeat of 2 from offset 1"
    );
    assert_eq!(
        as_pebble(&[]),
        Err(Error::CorruptBlock {
            block: BlockKind::Data,
            offset: 4096,
            what: Corruption::BadMinLzLength,
        })
    );
    // Snappy: length 3, a literal of 3.
    assert_eq!(
        as_pebble(&[3, 2 << 2, b'x', b'y', b'z']),
        Ok(b"xyz".to_vec())
    );
    assert_eq!(
        as_pebble(&[3, 2 << 2, b'x']),
        Err(Error::CorruptBlock {
            block: BlockKind::Data,
            offset: 4096,
            what: Corruption::BadSnappyData,
        })
    );
}

/// Overlapping copies repeat the bytes they start from, at every offset
/// and length up to 70: as a byte-by-byte copy makes them.
#[test]
fn overlapping_copies() {
    for offset in 1..=70 {
        for length in 0..=140 {
            // Room for the 16-byte moves, or none past the copy's end.
            for room in [length, length + 16] {
                let start: Vec<u8> = (0..100u8).collect();
                let mut fast = start.clone();
                fast.resize(100 + room, 0xee);
                copy(&mut fast, 100, offset, length);
                let mut slow = start.clone();
                for _ in 0..length {
                    slow.push(slow[slow.len() - offset]);
                }
                assert_eq!(
                    fast[..100 + length],
                    slow,
                    "offset {offset} length {length}"
                );
            }
        }
    }
}
