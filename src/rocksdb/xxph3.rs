//! RocksDB's 64-bit key hash for full filters (`GetSliceHash64`,
//! util/hash.cc): XXPH3, a preview of XXH3 (xxHash 0.7.2) that RocksDB froze,
//! seed 0 and the default 192-byte secret. It differs from the released XXH3
//! at every length, so no xxHash crate computes it. Written from the
//! algorithm's description (the `rocksdb-sst-filters` notes and util/xxph3.h);
//! held to RocksDB's own values by `testdata/rocksdb/hash64.vec`.

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;

const SECRET: [u8; 192] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
];

/// Bytes in a stripe of the long-input loop.
const STRIPE: usize = 64;

#[inline(always)]
fn read32(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(
        bytes[at..at + 4].try_into().expect("4 bytes"),
    ))
}

#[inline(always)]
fn read64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ (product >> 64) as u64
}

#[inline(always)]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

#[inline(always)]
fn mix16(input: &[u8], at: usize, secret: usize) -> u64 {
    fold(
        read64(input, at) ^ read64(&SECRET, secret),
        read64(input, at + 8) ^ read64(&SECRET, secret + 8),
    )
}

/// RocksDB's `Hash64(data)` (`GetSliceHash64`), what its FastLocalBloom and
/// Ribbon filters hash keys with: XXPH3 of `data`, seed 0.
///
/// ```
/// // RocksDB's util/hash_test.cc, Hash64SmallValueSchema: the empty input.
/// assert_eq!(leveldb_filter::rocksdb::hash64(b""), 0x5342c3010fe1dd04);
/// ```
#[inline(always)]
pub fn hash64(input: &[u8]) -> u64 {
    let len = input.len();
    let len64 = len as u64;
    // Keys of 9 to 16 bytes, the common size, tested first.
    if len.wrapping_sub(9) < 8 {
        let lo = read64(input, 0) ^ read64(&SECRET, 0);
        let hi = read64(input, len - 8) ^ read64(&SECRET, 8);
        return avalanche(
            len64
                .wrapping_add(lo.wrapping_add(hi))
                .wrapping_add(fold(lo, hi)),
        );
    }
    match len {
        0 => fold(read64(&SECRET, 0), PRIME64_2),
        1..=3 => {
            let combined = u64::from(input[0])
                | u64::from(input[len >> 1]) << 8
                | u64::from(input[len - 1]) << 16
                | len64 << 24;
            avalanche((combined ^ read32(&SECRET, 0)).wrapping_mul(PRIME64_1))
        }
        4..=8 => {
            let word = read32(input, 0) | read32(input, len - 4) << 32;
            let keyed = word ^ read64(&SECRET, 0);
            let mix = len64.wrapping_add((keyed ^ (keyed >> 51)).wrapping_mul(PRIME32_1));
            avalanche((mix ^ (mix >> 47)).wrapping_mul(PRIME64_2))
        }
        _ => longer(input),
    }
}

/// [`hash64`] of inputs past 16 bytes: out of line, so that the short
/// keys' path stays small where it is inlined (a lookup's few registers).
#[inline(never)]
fn longer(input: &[u8]) -> u64 {
    let len = input.len();
    let len64 = len as u64;
    match len {
        17..=128 => {
            let mut acc = len64.wrapping_mul(PRIME64_1);
            let pairs: &[(usize, usize)] = match len {
                97.. => &[
                    (48, 96),
                    (64, 112),
                    (32, 64),
                    (48, 80),
                    (16, 32),
                    (32, 48),
                    (0, 0),
                    (16, 16),
                ],
                65.. => &[(32, 64), (48, 80), (16, 32), (32, 48), (0, 0), (16, 16)],
                33.. => &[(16, 32), (32, 48), (0, 0), (16, 16)],
                _ => &[(0, 0), (16, 16)],
            };
            // Pairs (from the front, from the back): even entries read at
            // `front`, odd ones `len - back`.
            for (i, &(at, secret)) in pairs.iter().enumerate() {
                let at = if i % 2 == 0 { at } else { len - at };
                acc = acc.wrapping_add(mix16(input, at, secret));
            }
            avalanche(acc)
        }
        129..=240 => {
            let mut acc = len64.wrapping_mul(PRIME64_1);
            for i in 0..8 {
                acc = acc.wrapping_add(mix16(input, 16 * i, 16 * i));
            }
            acc = avalanche(acc);
            for i in 8..len / 16 {
                acc = acc.wrapping_add(mix16(input, 16 * i, 16 * (i - 8) + 3));
            }
            acc = acc.wrapping_add(mix16(input, len - 16, 136 - 17));
            avalanche(acc)
        }
        _ => long(input),
    }
}

/// Inputs of more than 240 bytes: 64-byte stripes into eight accumulators.
#[inline(never)]
fn long(input: &[u8]) -> u64 {
    let mut acc = [
        PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
    ];
    let rounds = (SECRET.len() - STRIPE) / 8;
    let block = STRIPE * rounds;
    let blocks = input.len() / block;
    for b in 0..blocks {
        for s in 0..rounds {
            accumulate(&mut acc, &input[b * block + s * STRIPE..], 8 * s);
        }
        scramble(&mut acc);
    }
    let stripes = (input.len() - blocks * block) / STRIPE;
    for s in 0..stripes {
        accumulate(&mut acc, &input[blocks * block + s * STRIPE..], 8 * s);
    }
    if !input.len().is_multiple_of(STRIPE) {
        accumulate(
            &mut acc,
            &input[input.len() - STRIPE..],
            SECRET.len() - STRIPE - 7,
        );
    }
    let mut result = (input.len() as u64).wrapping_mul(PRIME64_1);
    for i in 0..4 {
        let secret = 11 + 16 * i;
        result = result.wrapping_add(fold(
            acc[2 * i] ^ read64(&SECRET, secret),
            acc[2 * i + 1] ^ read64(&SECRET, secret + 8),
        ));
    }
    avalanche(result)
}

fn accumulate(acc: &mut [u64; 8], stripe: &[u8], secret: usize) {
    for (i, acc) in acc.iter_mut().enumerate() {
        let data = read64(stripe, 8 * i);
        let key = data ^ read64(&SECRET, secret + 8 * i);
        *acc = acc
            .wrapping_add(data)
            .wrapping_add((key & 0xffff_ffff).wrapping_mul(key >> 32));
    }
}

fn scramble(acc: &mut [u64; 8]) {
    for (i, acc) in acc.iter_mut().enumerate() {
        let mut a = *acc;
        a ^= a >> 47;
        a ^= read64(&SECRET, SECRET.len() - STRIPE + 8 * i);
        *acc = a.wrapping_mul(PRIME32_1);
    }
}
