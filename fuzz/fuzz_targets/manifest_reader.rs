//! Any bytes as a MANIFEST (and as a CURRENT file, and as a directory's file
//! names, one a line, naming the live MANIFEST): replaying the version
//! edits and asking the Get order of a key returns or errs, never panics,
//! and holds at most a multiple of the input's size: each record is copied
//! once, and each live table keeps its two keys (from the record) and a
//! fixed-size entry (about 130 bytes) for at least 22 bytes of input.
#![no_main]

use leveldb_filter::db::{current_manifest, DirNames, Manifest};
use libfuzzer_sys::fuzz_target;

use leveldb_filter_testkit::peak;

#[global_allocator]
static GLOBAL: peak::Peak = peak::Peak;

fn read(data: &[u8]) {
    let _ = current_manifest(data);
    let mut names = DirNames::default();
    for name in String::from_utf8_lossy(data).lines() {
        names.add(name);
    }
    let _ = names.live_manifest(Some(data));
    if let Ok(manifest) = Manifest::parse(data) {
        for table in manifest.tables().iter().take(64) {
            let _ = manifest.get_order(table.column_family, table.smallest_user_key());
            let _ = manifest.get_order(table.column_family, table.largest_user_key());
        }
        let _ = manifest.get_order(0, b"");
    }
}

fuzz_target!(|data: &[u8]| {
    let ((), peak) = peak::peak_during(|| read(data));
    assert!(
        peak <= 16 * data.len() + (1 << 20),
        "{peak} bytes at peak for {} bytes of input",
        data.len()
    );
});
