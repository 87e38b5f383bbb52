//! LevelDB's own unit tests, ported: util/hash_test.cc, util/bloom_test.cc and
//! table/filter_block_test.cc (LevelDB 1.23); and RocksDB's util/hash_test.cc
//! values, the independent source for the signed (legacy) hash.

use leveldb_filter::{
    BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy, HashVariant,
};

#[test]
fn hash_signed_unsigned_issue() {
    let data5: [u8; 48] = [
        0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
        0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00,
    ];
    let h = |data: &[u8], seed| HashVariant::Unsigned.hash(data, seed);
    assert_eq!(h(&[], 0xbc9f1d34), 0xbc9f1d34);
    assert_eq!(h(&[0x62], 0xbc9f1d34), 0xef1345c4);
    assert_eq!(h(&[0xc3, 0x97], 0xbc9f1d34), 0x5b663814);
    assert_eq!(h(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
    assert_eq!(h(&[0xe1, 0x80, 0xb9, 0x32], 0xbc9f1d34), 0xed21633a);
    assert_eq!(h(&data5, 0x12345678), 0xf333dabb);
}

/// RocksDB's `HashTest.Values`: RocksDB keeps the sign-extending hash on every
/// platform, so these are values of the signed variant.
#[test]
fn rocksdb_hash_values_signed() {
    let cases: &[(&[u8], u32)] = &[
        (b"", 3164544308),
        (b"\x08", 422599524),
        (b"\x17", 3168152998),
        (b"\x9a", 3195034349),
        (b"\x1c", 2651681383),
        (b"\x4d\x76", 2447836956),
        (b"\x52\xd5", 3854228105),
        (b"\x91\xf7", 31066776),
        (b"\xd6\x27", 1806091603),
        (b"\x30\x46\x0b", 3808221797),
        (b"\x56\xdc\xd6", 2157698265),
        (b"\xd4\x52\x33", 1721992661),
        (b"\x6a\xb5\xf4", 2469105222),
        (b"\x67\x53\x81\x1c", 118283265),
        (b"\x69\xb8\xc0\x88", 3416318611),
        (b"\x1e\x84\xaf\x2d", 3315003572),
        (b"\x46\xdc\x54\xbe", 447346355),
        (b"\xd0\x7a\x6e\xea\x56", 4255445370),
        (b"\x86\x83\xd5\xa4\xd8", 2390603402),
        (b"\xb7\x46\xbb\x77\xce", 2048907743),
        (b"\x6c\xa8\xbc\xe5\x99", 2177978500),
        (b"\x5c\x5e\xe1\xa0\x73\x81", 1036846008),
        (b"\x08\x5d\x73\x1c\xe5\x2e", 229980482),
        (b"\x42\xfb\xf2\x52\xb4\x10", 3655585422),
        (b"\x73\xe1\xff\x56\x9c\xce", 3502708029),
        (b"\x5c\xbe\x97\x75\x54\x9a\x52", 815120748),
        (b"\x16\x82\x39\x49\x88\x2b\x36", 3056033698),
        (b"\x59\x77\xf0\xa7\x24\xf4\x78", 587205227),
        (b"\xd3\xa5\x7c\x0e\xc0\x02\x07", 2030937252),
        (b"\x31\x1b\x98\x75\x96\x22\xd3\x9a", 469635402),
        (b"\x38\xd6\xf7\x28\x20\xb4\x8a\xe9", 3530274698),
        (b"\xbb\x18\x5d\xf4\x12\x03\xf7\x99", 1974545809),
        (b"\x80\xd4\x3b\x3b\xae\x22\xa2\x78", 3563570120),
        (b"\x1a\xb5\xd0\xfe\xab\xc3\x61\xb2\x99", 2706087434),
        (b"\x8e\x4a\xc3\x18\x20\x2f\x06\xe6\x3c", 1534654151),
        (b"\xb6\xc0\xdd\x05\x3f\xc4\x86\x4c\xef", 2355554696),
        (b"\x9a\x5f\x78\x0d\xaf\x50\xe1\x1f\x55", 1400800912),
        (b"\x22\x6f\x39\x1f\xf8\xdd\x4f\x52\x17\x94", 3420325137),
        (b"\x32\x89\x2a\x75\x48\x3a\x4a\x02\x69\xdd", 3427803584),
        (b"\x06\x92\x5c\xf4\x88\x0e\x7e\x68\x38\x3e", 1152407945),
        (b"\xbd\x2c\x63\x38\xbf\xe9\x78\xb7\xbf\x15", 3382479516),
    ];
    let mut differ = 0;
    for &(data, expected) in cases {
        assert_eq!(
            HashVariant::Signed.hash(data, 0xbc9f1d34),
            expected,
            "{data:02x?}"
        );
        // The unsigned variant differs exactly where a tail byte is >= 0x80.
        let tail = &data[data.len() / 4 * 4..];
        let same = HashVariant::Unsigned.hash(data, 0xbc9f1d34) == expected;
        assert_eq!(same, tail.iter().all(|&b| b < 0x80), "{data:02x?}");
        differ += usize::from(!same);
    }
    assert!(
        differ >= 10,
        "the values exercise the signed tails ({differ} differ)"
    );
}

/// bloom_test.cc's keys: i as a fixed32.
fn key(i: u32) -> [u8; 4] {
    i.to_le_bytes()
}

struct BloomTest {
    policy: BloomFilterPolicy,
    keys: Vec<Vec<u8>>,
    filter: Vec<u8>,
}

impl BloomTest {
    fn new() -> Self {
        BloomTest {
            policy: BloomFilterPolicy::new(10),
            keys: Vec::new(),
            filter: Vec::new(),
        }
    }
    fn reset(&mut self) {
        self.keys.clear();
        self.filter.clear();
    }
    fn add(&mut self, key: &[u8]) {
        self.keys.push(key.to_vec());
    }
    fn build(&mut self) {
        let slices: Vec<&[u8]> = self.keys.iter().map(Vec::as_slice).collect();
        self.filter.clear();
        self.policy.create_filter(&slices, &mut self.filter);
        self.keys.clear();
    }
    fn matches(&mut self, key: &[u8]) -> bool {
        if !self.keys.is_empty() {
            self.build();
        }
        self.policy.key_may_match(key, &self.filter)
    }
    fn false_positive_rate(&mut self) -> f64 {
        let hits = (0..10000)
            .filter(|&i| self.matches(&key(i + 1_000_000_000)))
            .count();
        hits as f64 / 10000.0
    }
}

#[test]
fn bloom_empty_filter() {
    let mut t = BloomTest::new();
    assert!(!t.matches(b"hello"));
    assert!(!t.matches(b"world"));
}

#[test]
fn bloom_small() {
    let mut t = BloomTest::new();
    t.add(b"hello");
    t.add(b"world");
    assert!(t.matches(b"hello"));
    assert!(t.matches(b"world"));
    assert!(!t.matches(b"x"));
    assert!(!t.matches(b"foo"));
}

#[test]
fn bloom_varying_lengths() {
    fn next_length(length: u32) -> u32 {
        length
            + match length {
                0..=9 => 1,
                10..=99 => 10,
                100..=999 => 100,
                _ => 1000,
            }
    }
    let mut t = BloomTest::new();
    let (mut mediocre, mut good) = (0, 0);
    let mut length = 1;
    while length <= 10000 {
        t.reset();
        for i in 0..length {
            t.add(&key(i));
        }
        t.build();
        assert!(
            t.filter.len() <= (length as usize * 10 / 8) + 40,
            "length {length}"
        );
        for i in 0..length {
            assert!(t.matches(&key(i)), "length {length}; key {i}");
        }
        let rate = t.false_positive_rate();
        assert!(rate <= 0.02, "length {length}: false positive rate {rate}");
        if rate > 0.0125 {
            mediocre += 1;
        } else {
            good += 1;
        }
        length = next_length(length);
    }
    assert!(
        mediocre <= good / 5,
        "{mediocre} mediocre filters, {good} good"
    );
}

/// filter_block_test.cc's policy: one fixed32 hash (seed 1) per key; not
/// LevelDB's Bloom filter.
pub(crate) struct TestHashFilter;

impl FilterPolicy for TestHashFilter {
    fn name(&self) -> &str {
        "TestHashFilter"
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        for key in keys {
            dst.extend_from_slice(&HashVariant::Unsigned.hash(key, 1).to_le_bytes());
        }
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let h = HashVariant::Unsigned.hash(key, 1).to_le_bytes();
        filter.chunks_exact(4).any(|word| word == h)
    }
}

#[test]
fn filter_block_empty_builder() {
    let mut builder = FilterBlockBuilder::new(TestHashFilter);
    let block = builder.finish();
    assert_eq!(block, b"\x00\x00\x00\x00\x0b");
    let reader = FilterBlockReader::new(TestHashFilter, block);
    assert!(reader.key_may_match(0, b"foo"));
    assert!(reader.key_may_match(100000, b"foo"));
}

#[test]
fn filter_block_single_chunk() {
    let mut builder = FilterBlockBuilder::new(TestHashFilter);
    builder.start_block(100);
    builder.add_key(b"foo");
    builder.add_key(b"bar");
    builder.add_key(b"box");
    builder.start_block(200);
    builder.add_key(b"box");
    builder.start_block(300);
    builder.add_key(b"hello");
    let block = builder.finish();
    let reader = FilterBlockReader::new(TestHashFilter, block);
    assert!(reader.key_may_match(100, b"foo"));
    assert!(reader.key_may_match(100, b"bar"));
    assert!(reader.key_may_match(100, b"box"));
    assert!(reader.key_may_match(100, b"hello"));
    assert!(reader.key_may_match(100, b"foo"));
    assert!(!reader.key_may_match(100, b"missing"));
    assert!(!reader.key_may_match(100, b"other"));
}

#[test]
fn filter_block_multi_chunk() {
    let mut builder = FilterBlockBuilder::new(TestHashFilter);
    // First filter
    builder.start_block(0);
    builder.add_key(b"foo");
    builder.start_block(2000);
    builder.add_key(b"bar");
    // Second filter
    builder.start_block(3100);
    builder.add_key(b"box");
    // Third filter is empty
    // Last filter
    builder.start_block(9000);
    builder.add_key(b"box");
    builder.add_key(b"hello");
    let block = builder.finish();
    let reader = FilterBlockReader::new(TestHashFilter, block);

    assert!(reader.key_may_match(0, b"foo"));
    assert!(reader.key_may_match(2000, b"bar"));
    assert!(!reader.key_may_match(0, b"box"));
    assert!(!reader.key_may_match(0, b"hello"));

    assert!(reader.key_may_match(3100, b"box"));
    assert!(!reader.key_may_match(3100, b"foo"));
    assert!(!reader.key_may_match(3100, b"bar"));
    assert!(!reader.key_may_match(3100, b"hello"));

    assert!(!reader.key_may_match(4100, b"foo"));
    assert!(!reader.key_may_match(4100, b"bar"));
    assert!(!reader.key_may_match(4100, b"box"));
    assert!(!reader.key_may_match(4100, b"hello"));

    assert!(reader.key_may_match(9000, b"box"));
    assert!(reader.key_may_match(9000, b"hello"));
    assert!(!reader.key_may_match(9000, b"foo"));
    assert!(!reader.key_may_match(9000, b"bar"));
}
