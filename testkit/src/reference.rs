//! A naive, obviously-correct reading of LevelDB's util/hash.cc, util/bloom.cc
//! and table/filter_block.cc, line by line, for the property tests to pit the
//! library against. Slow on purpose: no shortcut that could hide a mistake.
// A literal transcription of the C++, clamps and rotations spelt out as there.
#![allow(clippy::manual_clamp, clippy::manual_div_ceil, clippy::manual_rotate)]

use crate::arbitrary::Call;

/// util/hash.cc `Hash`, with `signed` choosing `char` (x86) over `uint8_t` tails.
pub fn hash(data: &[u8], seed: u32, signed: bool) -> u32 {
    let m: u32 = 0xc6a4a793;
    let r = 24;
    let mut h: u32 = seed ^ ((data.len() as u64 * m as u64) as u32);
    let mut i = 0;
    while i + 4 <= data.len() {
        let w = data[i] as u32
            | (data[i + 1] as u32) << 8
            | (data[i + 2] as u32) << 16
            | (data[i + 3] as u32) << 24;
        i += 4;
        h = h.wrapping_add(w);
        h = h.wrapping_mul(m);
        h ^= h >> 16;
    }
    let byte = |b: u8| -> u32 {
        if signed {
            (b as i8) as i32 as u32
        } else {
            b as u32
        }
    };
    let rest = data.len() - i;
    if rest == 3 {
        h = h.wrapping_add(byte(data[i + 2]).wrapping_shl(16));
    }
    if rest >= 2 {
        h = h.wrapping_add(byte(data[i + 1]).wrapping_shl(8));
    }
    if rest >= 1 {
        h = h.wrapping_add(byte(data[i]));
        h = h.wrapping_mul(m);
        h ^= h >> r;
    }
    h
}

/// util/bloom.cc `CreateFilter`, on a fresh vector.
pub fn bloom_create(bits_per_key: usize, keys: &[Vec<u8>], signed: bool) -> Vec<u8> {
    let mut k = (bits_per_key as f64 * 0.69) as usize;
    if k < 1 {
        k = 1;
    }
    if k > 30 {
        k = 30;
    }
    let mut bits = keys.len() * bits_per_key;
    if bits < 64 {
        bits = 64;
    }
    let bytes = (bits + 7) / 8;
    bits = bytes * 8;
    let mut set = vec![false; bits];
    for key in keys {
        let mut h = hash(key, 0xbc9f1d34, signed);
        let delta = (h >> 17) | (h << 15);
        for _ in 0..k {
            set[(h as u64 % bits as u64) as usize] = true;
            h = h.wrapping_add(delta);
        }
    }
    let mut filter: Vec<u8> = set
        .chunks(8)
        .map(|byte| (0..8).filter(|&b| byte[b]).map(|b| 1u8 << b).sum())
        .collect();
    filter.push(k as u8);
    filter
}

/// util/bloom.cc `KeyMayMatch`.
pub fn bloom_may_match(key: &[u8], filter: &[u8], signed: bool) -> bool {
    let len = filter.len();
    if len < 2 {
        return false;
    }
    let bits = (len - 1) * 8;
    // `const size_t k = array[len - 1]` with `char` signed: sign-extended.
    let k = filter[len - 1] as i8 as i64 as u64;
    if k > 30 {
        return true;
    }
    let mut h = hash(key, 0xbc9f1d34, signed);
    let delta = (h >> 17) | (h << 15);
    for _ in 0..k {
        let bitpos = (h as u64 % bits as u64) as usize;
        if filter[bitpos / 8] & (1 << (bitpos % 8)) == 0 {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

/// table/filter_block.cc `FilterBlockBuilder` over the Bloom policy: first the
/// key groups per filter, then the bytes.
pub fn block_build(bits_per_key: usize, calls: &[Call], signed: bool) -> Vec<u8> {
    let mut filters: Vec<Vec<u8>> = Vec::new();
    let mut pending: Vec<Vec<u8>> = Vec::new();
    for call in calls {
        match call {
            Call::Start(offset) => {
                let index = offset / 2048;
                assert!(index >= filters.len() as u64, "offsets went backwards");
                while (filters.len() as u64) < index {
                    filters.push(if pending.is_empty() {
                        Vec::new()
                    } else {
                        bloom_create(bits_per_key, &pending, signed)
                    });
                    pending.clear();
                }
            }
            Call::Key(key) => pending.push(key.clone()),
        }
    }
    if !pending.is_empty() {
        filters.push(bloom_create(bits_per_key, &pending, signed));
    }
    filter_block(&filters)
}

/// The bytes of a filter block holding `filters`: the filters, their
/// offsets, the array's offset, base_lg 11.
pub fn filter_block(filters: &[impl AsRef<[u8]>]) -> Vec<u8> {
    let mut block = Vec::new();
    let mut offsets = Vec::new();
    for filter in filters {
        offsets.push(block.len() as u32);
        block.extend_from_slice(filter.as_ref());
    }
    let array_offset = block.len() as u32;
    for offset in offsets {
        block.extend_from_slice(&offset.to_le_bytes());
    }
    block.extend_from_slice(&array_offset.to_le_bytes());
    block.push(11);
    block
}

fn fixed32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// table/filter_block.cc `FilterBlockReader` and `KeyMayMatch`, with the shift
/// count taken modulo 64 as x86-64's `shr` does.
pub fn block_may_match(contents: &[u8], block_offset: u64, key: &[u8], signed: bool) -> bool {
    let n = contents.len();
    if n < 5 {
        return true;
    }
    let base_lg = contents[n - 1] as u32 % 64;
    let last_word = fixed32(contents, n - 5) as usize;
    if last_word > n - 5 {
        return true;
    }
    let num = ((n - 5 - last_word) / 4) as u64;
    let index = block_offset >> base_lg;
    if index >= num {
        return true;
    }
    let at = last_word + index as usize * 4;
    let start = fixed32(contents, at) as usize;
    let limit = fixed32(contents, at + 4) as usize;
    if start <= limit && limit <= last_word {
        bloom_may_match(key, &contents[start..limit], signed)
    } else {
        start != limit
    }
}
