//! Any bytes as a table file, with checksums checked and not: every step a
//! reader takes (footer, index, metaindex, data blocks, filter verification,
//! probes) returns or errs, never panics.
#![no_main]

use leveldb_filter::{probe, verify_filter, BloomFilterPolicy, FilterBlockReader, KeyFormat, Table, VerifyOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for table in [Table::new(data), Table::new_unchecked(data)] {
        let Ok(table) = table else { continue };
        if let Ok(blocks) = table.data_blocks() {
            let _ = verify_filter(&table, &blocks, VerifyOptions::default());
        }
        if let Ok(Some(filter)) = table.filter_block() {
            let reader = FilterBlockReader::new(BloomFilterPolicy::new(10), &filter.block.contents);
            for format in [KeyFormat::User, KeyFormat::Internal] {
                for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
                    let _ = probe(&table, Some(&reader), format, key);
                }
            }
        }
    }
});
