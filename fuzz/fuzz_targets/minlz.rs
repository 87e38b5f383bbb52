//! Any bytes as a MinLZ block (Pebble's compression type 8), decoded within
//! MinLZ's own bound (8 MiB) and within a small one: each errs or returns
//! no more than its limit, never panics, and holds no more than its limit
//! at once (the output is allocated once, at the length the block states);
//! where the small bound decodes, the large one decodes the same bytes.
#![no_main]

use leveldb_filter::format::{minlz_decode, Corruption};
use libfuzzer_sys::fuzz_target;

use leveldb_filter_testkit::peak;

#[global_allocator]
static GLOBAL: peak::Peak = peak::Peak;

fuzz_target!(|data: &[u8]| {
    let small = 4 * data.len();
    let (wide, peak_wide) = peak::peak_during(|| minlz_decode(data, 8 << 20));
    let (narrow, peak_narrow) = peak::peak_during(|| minlz_decode(data, small));
    assert!(peak_wide <= 8 << 20, "{peak_wide} bytes at peak");
    assert!(peak_narrow <= small, "{peak_narrow} bytes at peak, limit {small}");
    if let Ok(out) = &narrow {
        assert!(out.len() <= small);
        assert_eq!(wide.as_ref(), Ok(out));
    } else if narrow != Err(Corruption::MinLzLengthTooLarge) {
        // Refused for what it holds, not its length: refused either way.
        assert_eq!(wide, narrow);
    }
});
