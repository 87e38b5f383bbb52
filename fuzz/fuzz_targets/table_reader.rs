//! Any bytes as a table file, with checksums checked and not: every step a
//! reader takes (footer, index, metaindex, filter block, a pass over the data
//! blocks, filter verification, probes) returns or errs, never panics, and
//! never holds more than a multiple of the input's size at once.
//!
//! The multiple: a reader holds at most the index, the filter block (and a
//! rebuilt filter no larger), one data block and two keys, each no larger
//! than one uncompressed block, and Snappy expands a block at most 22 times:
//! 160 times the input and 1 MiB for everything else. (For large files the
//! README's bound, 16 times plus 64 MiB, is the tighter one; here inputs are
//! small.)
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use leveldb_filter::{
    probe, verify_filter, BloomFilterPolicy, FilterBlockReader, KeyFormat, Table, VerifyOptions,
};
use libfuzzer_sys::fuzz_target;

/// Live bytes and their peak, over every thread (libFuzzer runs one).
struct Peak;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        grew(-(layout.size() as isize));
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grew(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Peak = Peak;

fn read(data: &[u8]) {
    for table in [Table::new(data), Table::new_unchecked(data)] {
        let Ok(table) = table else { continue };
        if let Ok(stats) = table.key_stats() {
            for bits_per_key in [None, Some(usize::MAX)] {
                let options = VerifyOptions {
                    bits_per_key,
                    ..VerifyOptions::default()
                };
                let _ = verify_filter(&table, &stats, options);
            }
        }
        let policy = BloomFilterPolicy::new(10);
        let reader = table
            .filter_block()
            .map(|f| FilterBlockReader::new(&policy, &f.block.contents));
        for format in [KeyFormat::User, KeyFormat::Internal] {
            for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
                let _ = probe(&table, reader.as_ref(), format, key);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    read(data);
    let peak = (PEAK.load(Ordering::Relaxed) - base) as usize;
    assert!(
        peak <= 160 * data.len() + (1 << 20),
        "{peak} bytes at peak for {} bytes of input",
        data.len()
    );
});
