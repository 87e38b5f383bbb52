//! Writes RocksDB 6.28 databases, through RocksDB's C API, whose tables
//! hold the filters RocksDB 6.x writes: block-based filters
//! (`NewBloomFilterPolicy(10, true)`: `filter.rocksdb.BuiltinBloomFilter`,
//! LevelDB's filter block with RocksDB's hash) at every format_version 6.28
//! has (0 to 5), with and without a prefix extractor and whole keys, and a
//! full filter beside them. Beside each database RocksDB's own answers, as
//! oracle/rocksdb-7.8/gen-rocksdb-db.cc writes them for 7.8:
//!
//!   OUT_DIR/NAME/db, live.txt (`default LEVEL NUMBER SIZE SMALLEST_HEX
//!   LARGEST_HEX 0 0`: the C API gives no sequence numbers), gets.txt
//!   (`default KEY_HEX found|notfound USEFUL`, USEFUL the change of the
//!   ticker rocksdb.bloom.filter.useful across the Get).
//!
//!   cargo run --manifest-path oracle/rocksdb-6.28/Cargo.toml -- --seed N OUT_DIR
//!
//! Each database: keys `user:%08d` written in three rounds (some
//! overwritten, some deleted), each flushed to a level-0 table, automatic
//! compactions off.

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::ptr;

use librocksdb_sys as ffi;

/// A database to write: its name and table options.
struct Spec {
    name: &'static str,
    format_version: i32,
    block_based: bool,
    prefix: Option<usize>,
    whole: bool,
}

const SPECS: &[Spec] = &[
    Spec { name: "blockbased-fv0", format_version: 0, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-fv1", format_version: 1, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-fv2", format_version: 2, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-fv3", format_version: 3, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-fv4", format_version: 4, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-fv5", format_version: 5, block_based: true, prefix: None, whole: true },
    Spec { name: "blockbased-prefix9-fv4", format_version: 4, block_based: true, prefix: Some(9), whole: true },
    Spec { name: "blockbased-prefixonly9-fv5", format_version: 5, block_based: true, prefix: Some(9), whole: false },
    Spec { name: "full-fv5", format_version: 5, block_based: false, prefix: None, whole: true },
];

/// The xorshift generator of the other oracles.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn key_of(id: u64) -> String {
    format!("user:{id:08}")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Fails the run on an error a call left in `err`.
fn check(err: *mut c_char, what: &str) {
    if !err.is_null() {
        // SAFETY: RocksDB's C API leaves a NUL-terminated message it allocated.
        let message = unsafe { CStr::from_ptr(err) }.to_string_lossy().into_owned();
        eprintln!("gen-rocksdb6: {what}: {message}");
        std::process::exit(1);
    }
}

/// The ticker `rocksdb.bloom.filter.useful` from the statistics string.
fn useful(options: *mut ffi::rocksdb_options_t) -> u64 {
    // SAFETY: options has statistics enabled; the string is RocksDB's,
    // NUL-terminated, freed after it is read.
    let text = unsafe {
        let raw = ffi::rocksdb_options_statistics_get_string(options);
        let text = CStr::from_ptr(raw).to_string_lossy().into_owned();
        ffi::rocksdb_free(raw.cast());
        text
    };
    text.lines()
        .find_map(|line| line.strip_prefix("rocksdb.bloom.filter.useful COUNT : "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| {
            eprintln!("gen-rocksdb6: no ticker rocksdb.bloom.filter.useful");
            std::process::exit(1)
        })
}

fn write_db(spec: &Spec, seed: u64, out: &str) {
    let dir = format!("{out}/{}", spec.name);
    std::fs::create_dir_all(&dir).expect("the output directory");
    let path = CString::new(format!("{dir}/db")).expect("a path");
    let mut rng = Rng(seed.wrapping_mul(0x9e3779b97f4a7c15) ^ 0x628);
    rng.next();
    let mut err: *mut c_char = ptr::null_mut();
    // SAFETY: every pointer passed is one RocksDB's C API returned and has
    // not freed, or a live CString or slice with its length.
    unsafe {
        let options = ffi::rocksdb_options_create();
        ffi::rocksdb_options_set_create_if_missing(options, 1);
        ffi::rocksdb_options_set_error_if_exists(options, 1);
        ffi::rocksdb_options_enable_statistics(options);
        ffi::rocksdb_options_set_disable_auto_compactions(options, 1);
        ffi::rocksdb_options_set_write_buffer_size(options, 1 << 20);
        let table = ffi::rocksdb_block_based_options_create();
        let policy = match spec.block_based {
            true => ffi::rocksdb_filterpolicy_create_bloom(10.0),
            false => ffi::rocksdb_filterpolicy_create_bloom_full(10.0),
        };
        ffi::rocksdb_block_based_options_set_filter_policy(table, policy);
        ffi::rocksdb_block_based_options_set_format_version(table, spec.format_version);
        ffi::rocksdb_block_based_options_set_whole_key_filtering(table, u8::from(spec.whole));
        ffi::rocksdb_block_based_options_set_block_size(table, 1024);
        ffi::rocksdb_options_set_block_based_table_factory(options, table);
        if let Some(n) = spec.prefix {
            let extractor = ffi::rocksdb_slicetransform_create_fixed_prefix(n);
            ffi::rocksdb_options_set_prefix_extractor(options, extractor);
        }
        let db = ffi::rocksdb_open(options, path.as_ptr(), &mut err);
        check(err, "open");
        let write = ffi::rocksdb_writeoptions_create();
        let flush = ffi::rocksdb_flushoptions_create();
        const SPACE: u64 = 3000;
        for round in 1..=3 {
            for _ in 0..700 {
                let key = key_of(rng.below(SPACE));
                if round > 1 && rng.below(8) == 0 {
                    ffi::rocksdb_delete(db, write, key.as_ptr().cast(), key.len(), &mut err);
                    check(err, "delete");
                } else {
                    let len = 20 + rng.below(40) as usize;
                    let value: Vec<u8> = (0..len).map(|_| b' ' + rng.below(95) as u8).collect();
                    ffi::rocksdb_put(
                        db,
                        write,
                        key.as_ptr().cast(),
                        key.len(),
                        value.as_ptr().cast(),
                        value.len(),
                        &mut err,
                    );
                    check(err, "put");
                }
            }
            ffi::rocksdb_flush(db, flush, &mut err);
            check(err, "flush");
        }
        // The probes: every id in the space, near misses, keys outside it.
        let mut probes: Vec<Vec<u8>> = (0..SPACE).map(|id| key_of(id).into_bytes()).collect();
        for _ in 0..60 {
            let k = key_of(rng.below(SPACE));
            probes.push(format!("{k}{}", rng.below(10)).into_bytes());
            probes.push(k.as_bytes()[..k.len() - 1].to_vec());
            probes.push(key_of(SPACE + rng.below(90_000_000)).into_bytes());
        }
        probes.extend([&b"a"[..], b"user", b"user:", b"zzz", b"\x01", b"\xff\xfe"].map(<[u8]>::to_vec));
        probes.sort();
        probes.dedup();
        let read = ffi::rocksdb_readoptions_create();
        let mut gets = String::new();
        for key in &probes {
            let before = useful(options);
            let mut len = 0usize;
            let value = ffi::rocksdb_get(db, read, key.as_ptr().cast(), key.len(), &mut len, &mut err);
            check(err, "get");
            let found = !value.is_null();
            if found {
                ffi::rocksdb_free(value.cast());
            }
            let skipped = useful(options) - before;
            let word = if found { "found" } else { "notfound" };
            gets.push_str(&format!("default {} {word} {skipped}\n", hex(key)));
        }
        let files = ffi::rocksdb_livefiles(db);
        let mut live = String::new();
        for i in 0..ffi::rocksdb_livefiles_count(files) {
            let name = CStr::from_ptr(ffi::rocksdb_livefiles_name(files, i)).to_string_lossy();
            let number: u64 = name
                .trim_start_matches('/')
                .trim_end_matches(".sst")
                .parse()
                .expect("a table's number");
            let (mut small, mut large) = (0usize, 0usize);
            let s = ffi::rocksdb_livefiles_smallestkey(files, i, &mut small);
            let l = ffi::rocksdb_livefiles_largestkey(files, i, &mut large);
            live.push_str(&format!(
                "default {} {number} {} {} {} 0 0\n",
                ffi::rocksdb_livefiles_level(files, i),
                ffi::rocksdb_livefiles_size(files, i),
                hex(std::slice::from_raw_parts(s.cast(), small)),
                hex(std::slice::from_raw_parts(l.cast(), large)),
            ));
        }
        ffi::rocksdb_livefiles_destroy(files);
        ffi::rocksdb_readoptions_destroy(read);
        ffi::rocksdb_flushoptions_destroy(flush);
        ffi::rocksdb_writeoptions_destroy(write);
        ffi::rocksdb_close(db);
        ffi::rocksdb_options_destroy(options);
        std::fs::write(format!("{dir}/gets.txt"), gets).expect("gets.txt");
        std::fs::write(format!("{dir}/live.txt"), live).expect("live.txt");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (seed, out) = match &args[..] {
        [flag, seed, out] if flag == "--seed" => (seed.parse().expect("a seed"), out.clone()),
        _ => {
            eprintln!("usage: gen-rocksdb6 --seed N OUT_DIR");
            std::process::exit(2);
        }
    };
    for spec in SPECS {
        write_db(spec, seed, &out);
    }
}
