//! Any bytes as a filter block, probed at offsets taken from the input: no
//! panic, and where the strict parser accepts the block, its reader and the
//! lenient one agree.
#![no_main]

use leveldb_filter::{BloomFilterPolicy, FilterBlock, FilterBlockReader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let reader = FilterBlockReader::new(BloomFilterPolicy::new(10), data);
    let strict = FilterBlock::parse(data).ok().map(|b| b.reader(BloomFilterPolicy::new(10)));
    for (i, window) in data.windows(8).step_by(5).take(64).enumerate() {
        let offset = u64::from_le_bytes(window.try_into().unwrap()) >> (i % 64);
        let key = &window[..i % 9];
        let answer = reader.key_may_match(offset, key);
        if let Some(strict) = &strict {
            assert_eq!(strict.key_may_match(offset, key), answer);
        }
    }
});
