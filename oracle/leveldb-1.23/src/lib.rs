//! The real LevelDB 1.23 (Debian's `libleveldb-dev`), linked statically through
//! a small C++ shim: its Bloom `FilterPolicy` and its `FilterBlockBuilder` and
//! `FilterBlockReader`. The oracle for `leveldb-filter`'s differential tests and
//! the source of its golden vectors.
#![deny(missing_docs)]

use std::ffi::{CStr, CString};
use std::os::raw::c_char;
use std::path::Path;

pub mod rng;

/// Lowercase hex, as the vector and probe files hold keys and filters.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The generators' command line, `[--seed N] OUT_DIR`: the seed (1 unless
/// given) and the directory, which is created. Exits with a usage line on
/// anything else.
pub fn generator_args(program: &str) -> (u64, std::path::PathBuf) {
    generator_args_from(program, std::env::args().collect())
}

/// [`generator_args`] from `args` (the program's name first).
pub fn generator_args_from(program: &str, args: Vec<String>) -> (u64, std::path::PathBuf) {
    let usage = || -> ! {
        eprintln!("usage: {program} [--seed N] OUT_DIR");
        std::process::exit(2)
    };
    let mut args = args.into_iter().skip(1);
    let (mut seed, mut dir) = (1, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seed" => {
                seed = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            _ if dir.is_none() && !arg.starts_with('-') => {
                dir = Some(std::path::PathBuf::from(arg))
            }
            _ => usage(),
        }
    }
    let dir = dir.unwrap_or_else(|| usage());
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{program}: {}: {e}", dir.display());
        std::process::exit(1);
    }
    (seed, dir)
}

/// Writes `dir/CHECKSUMS`: the CRC-32 (IEEE) and size of each of `names`
/// (files in `dir`), so that a golden file mangled in transit fails loudly.
pub fn write_checksums(dir: &std::path::Path, names: &[String]) -> std::io::Result<()> {
    let mut checksums =
        String::from("# crc32 (IEEE) and size of each file, to catch one mangled in transit\n");
    for name in names {
        let bytes = std::fs::read(dir.join(name))?;
        checksums += &format!("{:08x} {} {name}\n", crc32fast::hash(&bytes), bytes.len());
    }
    std::fs::write(dir.join("CHECKSUMS"), checksums)
}

/// Whether this build has the real LevelDB behind it. Without libleveldb-dev
/// (and outside CI, where its absence fails the build) the crate still builds,
/// but every call into LevelDB aborts with a message saying so.
pub const AVAILABLE: bool = !cfg!(leveldb_missing);

mod ffi {
    use std::os::raw::{c_char, c_int, c_void};

    #[repr(C)]
    pub struct Policy(c_void);
    #[repr(C)]
    pub struct Builder(c_void);
    #[repr(C)]
    pub struct Reader(c_void);
    #[repr(C)]
    pub struct KeySet(c_void);

    extern "C" {
        pub fn ldb_free(p: *mut c_void);
        pub fn ldb_bloom_new(bits_per_key: c_int) -> *const Policy;
        pub fn ldb_policy_free(p: *const Policy);
        pub fn ldb_policy_name(p: *const Policy) -> *const c_char;
        pub fn ldb_create_filter(
            p: *const Policy,
            keys: *const *const u8,
            lens: *const usize,
            n: usize,
            out: *mut *mut u8,
            out_len: *mut usize,
        );
        pub fn ldb_key_may_match(
            p: *const Policy,
            key: *const u8,
            key_len: usize,
            filter: *const u8,
            len: usize,
        ) -> bool;
        pub fn ldb_block_builder_new(p: *const Policy) -> *mut Builder;
        pub fn ldb_block_builder_start(b: *mut Builder, offset: u64);
        pub fn ldb_block_builder_add(b: *mut Builder, key: *const u8, len: usize);
        pub fn ldb_block_builder_finish(b: *mut Builder, out: *mut *mut u8, out_len: *mut usize);
        pub fn ldb_block_builder_free(b: *mut Builder);
        pub fn ldb_block_reader_new(
            p: *const Policy,
            contents: *const u8,
            len: usize,
        ) -> *mut Reader;
        pub fn ldb_block_reader_may_match(
            r: *mut Reader,
            offset: u64,
            key: *const u8,
            len: usize,
        ) -> bool;
        pub fn ldb_block_reader_free(r: *mut Reader);
        pub fn ldb_keyset_new(keys: *const *const u8, lens: *const usize, n: usize) -> *mut KeySet;
        pub fn ldb_keyset_free(ks: *mut KeySet);
        pub fn ldb_keyset_output(ks: *const KeySet, out: *mut *const u8, out_len: *mut usize);
        pub fn ldb_bench_create(p: *const Policy, ks: *mut KeySet) -> usize;
        pub fn ldb_bench_query(
            p: *const Policy,
            ks: *const KeySet,
            filter: *const u8,
            len: usize,
        ) -> usize;
        pub fn ldb_db_count_found(
            dir: *const c_char,
            bits_per_key: c_int,
            keys: *const *const u8,
            key_lens: *const usize,
            values: *const *const u8,
            value_lens: *const usize,
            n: usize,
        ) -> std::ffi::c_long;
        pub fn ldb_bench_levels(
            p: *const Policy,
            ks: *const KeySet,
            filters: *const *const u8,
            lens: *const usize,
            n: usize,
        ) -> usize;
        pub fn ldb_bench_block(
            p: *const Policy,
            ks: *mut KeySet,
            keys_per_block: usize,
            stride: u64,
        ) -> usize;
        pub fn ldb_write_table(
            path: *const c_char,
            kind: c_int,
            bits_per_key: c_int,
            block_size: c_int,
            restart_interval: c_int,
            snappy: c_int,
            keys: *const *const u8,
            key_lens: *const usize,
            values: *const *const u8,
            value_lens: *const usize,
            n: usize,
        ) -> c_int;
        pub fn ldb_write_db(
            dir: *const c_char,
            kind: c_int,
            bits_per_key: c_int,
            block_size: c_int,
            snappy: c_int,
            keys: *const *const u8,
            key_lens: *const usize,
            values: *const *const u8,
            value_lens: *const usize,
            n: usize,
            delete_every: usize,
        ) -> c_int;
        pub fn ldb_table_probe(
            path: *const c_char,
            kind: c_int,
            internal: c_int,
            key: *const u8,
            key_len: usize,
            offset: *mut u64,
            has_offset: *mut c_int,
            may_match: *mut c_int,
            corrupt: *mut c_int,
        ) -> c_int;
    }
}

/// Takes ownership of a malloc'd buffer the shim returned.
fn take_bytes(ptr: *mut u8, len: usize) -> Vec<u8> {
    // SAFETY: the shim returns `len` initialised bytes from malloc (never null,
    // at least one byte allocated), which we copy and then free exactly once.
    unsafe {
        let v = std::slice::from_raw_parts(ptr, len).to_vec();
        ffi::ldb_free(ptr.cast());
        v
    }
}

/// LevelDB's `NewBloomFilterPolicy(bits_per_key)`.
pub struct Bloom {
    ptr: *const ffi::Policy,
}

// SAFETY: LevelDB's FilterPolicy objects are immutable after construction and
// documented as safe to call from several threads at once.
unsafe impl Send for Bloom {}
// SAFETY: as above.
unsafe impl Sync for Bloom {}

impl Bloom {
    /// `NewBloomFilterPolicy(bits_per_key)`.
    pub fn new(bits_per_key: i32) -> Self {
        // SAFETY: plain constructor call; the pointer is freed in Drop.
        Bloom {
            ptr: unsafe { ffi::ldb_bloom_new(bits_per_key) },
        }
    }

    /// `Name()`.
    pub fn name(&self) -> String {
        // SAFETY: Name() returns a static NUL-terminated string.
        let name: &CStr =
            unsafe { CStr::from_ptr(ffi::ldb_policy_name(self.ptr) as *const c_char) };
        name.to_string_lossy().into_owned()
    }

    /// `CreateFilter(keys, n, &dst)` on an empty `dst`.
    pub fn create_filter<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<u8> {
        let ptrs: Vec<*const u8> = keys.iter().map(|k| k.as_ref().as_ptr()).collect();
        let lens: Vec<usize> = keys.iter().map(|k| k.as_ref().len()).collect();
        let (mut out, mut out_len) = (std::ptr::null_mut(), 0);
        // SAFETY: ptrs/lens describe `keys`, alive for the call; out params are valid.
        unsafe {
            ffi::ldb_create_filter(
                self.ptr,
                ptrs.as_ptr(),
                lens.as_ptr(),
                keys.len(),
                &mut out,
                &mut out_len,
            )
        };
        take_bytes(out, out_len)
    }

    /// `KeyMayMatch(key, filter)`.
    pub fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        // SAFETY: both slices are valid for their lengths during the call.
        unsafe {
            ffi::ldb_key_may_match(
                self.ptr,
                key.as_ptr(),
                key.len(),
                filter.as_ptr(),
                filter.len(),
            )
        }
    }

    /// LevelDB's `FilterBlockBuilder` over this policy.
    pub fn block_builder(&self) -> BlockBuilder<'_> {
        // SAFETY: the builder keeps a pointer to the policy, which the lifetime
        // on BlockBuilder keeps alive.
        BlockBuilder {
            ptr: unsafe { ffi::ldb_block_builder_new(self.ptr) },
            _policy: self,
        }
    }

    /// LevelDB's `FilterBlockReader` over a copy of `contents`.
    pub fn block_reader(&self, contents: &[u8]) -> BlockReader<'_> {
        // SAFETY: the shim copies `contents`; the policy outlives the reader.
        BlockReader {
            ptr: unsafe { ffi::ldb_block_reader_new(self.ptr, contents.as_ptr(), contents.len()) },
            _policy: self,
        }
    }
}

/// Keys handed to LevelDB once, for timing loops that run in C++.
pub struct KeySet<'k> {
    ptr: *mut ffi::KeySet,
    _keys: std::marker::PhantomData<&'k [u8]>,
}

impl<'k> KeySet<'k> {
    /// The keys, borrowed (LevelDB's `Slice`s point into them).
    pub fn new<K: AsRef<[u8]>>(keys: &'k [K]) -> Self {
        let (ptrs, lens) = pointers(keys.iter());
        // SAFETY: the shim copies the pointer/length pairs into Slices that
        // point into `keys`, which the lifetime 'k keeps alive and unchanged.
        let ptr = unsafe { ffi::ldb_keyset_new(ptrs.as_ptr(), lens.as_ptr(), keys.len()) };
        KeySet {
            ptr,
            _keys: std::marker::PhantomData,
        }
    }

    /// What the last `Bloom::bench_create` or `bench_block` wrote.
    pub fn output(&self) -> &[u8] {
        let (mut out, mut len) = (std::ptr::null(), 0);
        // SAFETY: the buffer lives in the key set, unchanged until the next
        // bench call, which needs `&mut self`.
        unsafe {
            ffi::ldb_keyset_output(self.ptr, &mut out, &mut len);
            std::slice::from_raw_parts(out, len)
        }
    }
}

impl Drop for KeySet<'_> {
    fn drop(&mut self) {
        // SAFETY: made by ldb_keyset_new, freed once.
        unsafe { ffi::ldb_keyset_free(self.ptr) }
    }
}

impl Bloom {
    /// `CreateFilter` over all the keys, in C++; the filter is `keys.output()`.
    pub fn bench_create(&self, keys: &mut KeySet<'_>) -> usize {
        // SAFETY: live policy and key set.
        unsafe { ffi::ldb_bench_create(self.ptr, keys.ptr) }
    }

    /// `KeyMayMatch(key, filter)` for each key, in a C++ loop: how many may match.
    pub fn bench_query(&self, keys: &KeySet<'_>, filter: &[u8]) -> usize {
        // SAFETY: live policy and key set; `filter` valid for the call.
        unsafe { ffi::ldb_bench_query(self.ptr, keys.ptr, filter.as_ptr(), filter.len()) }
    }

    /// Each key against each filter (`KeyMayMatch` every time, as an
    /// engine's `Get` probes one table per level), in a C++ loop: how many
    /// pairs may match.
    pub fn bench_levels(&self, keys: &KeySet<'_>, filters: &[&[u8]]) -> usize {
        let ptrs: Vec<*const u8> = filters.iter().map(|f| f.as_ptr()).collect();
        let lens: Vec<usize> = filters.iter().map(|f| f.len()).collect();
        // SAFETY: live policy and key set; the filters valid for the call.
        unsafe {
            ffi::ldb_bench_levels(
                self.ptr,
                keys.ptr,
                ptrs.as_ptr(),
                lens.as_ptr(),
                filters.len(),
            )
        }
    }

    /// `FilterBlockBuilder` over the keys cut into blocks of `keys_per_block`,
    /// block i at offset `i * stride`, in C++; the block is `keys.output()`.
    pub fn bench_block(&self, keys: &mut KeySet<'_>, keys_per_block: usize, stride: u64) -> usize {
        // SAFETY: live policy and key set.
        unsafe { ffi::ldb_bench_block(self.ptr, keys.ptr, keys_per_block, stride) }
    }
}

impl Drop for Bloom {
    fn drop(&mut self) {
        // SAFETY: made by NewBloomFilterPolicy, deleted once.
        unsafe { ffi::ldb_policy_free(self.ptr) }
    }
}

/// LevelDB's `FilterBlockBuilder`.
pub struct BlockBuilder<'p> {
    ptr: *mut ffi::Builder,
    _policy: &'p Bloom,
}

impl BlockBuilder<'_> {
    /// `StartBlock(offset)`. LevelDB asserts (and so aborts the process) when
    /// the offset's filter was already cut: callers must not do that.
    pub fn start_block(&mut self, offset: u64) {
        // SAFETY: live builder.
        unsafe { ffi::ldb_block_builder_start(self.ptr, offset) }
    }

    /// `AddKey(key)`.
    pub fn add_key(&mut self, key: &[u8]) {
        // SAFETY: live builder; LevelDB copies the key.
        unsafe { ffi::ldb_block_builder_add(self.ptr, key.as_ptr(), key.len()) }
    }

    /// `Finish()`: the builder cannot be used again.
    pub fn finish(self) -> Vec<u8> {
        let (mut out, mut out_len) = (std::ptr::null_mut(), 0);
        // SAFETY: live builder; out params valid. Drop frees it afterwards.
        unsafe { ffi::ldb_block_builder_finish(self.ptr, &mut out, &mut out_len) };
        take_bytes(out, out_len)
    }
}

impl Drop for BlockBuilder<'_> {
    fn drop(&mut self) {
        // SAFETY: made by ldb_block_builder_new, freed once.
        unsafe { ffi::ldb_block_builder_free(self.ptr) }
    }
}

/// LevelDB's `FilterBlockReader`.
pub struct BlockReader<'p> {
    ptr: *mut ffi::Reader,
    _policy: &'p Bloom,
}

impl BlockReader<'_> {
    /// `KeyMayMatch(block_offset, key)`.
    pub fn key_may_match(&self, block_offset: u64, key: &[u8]) -> bool {
        // SAFETY: live reader, which owns its copy of the block; `key` valid for the call.
        unsafe { ffi::ldb_block_reader_may_match(self.ptr, block_offset, key.as_ptr(), key.len()) }
    }
}

impl Drop for BlockReader<'_> {
    fn drop(&mut self) {
        // SAFETY: made by ldb_block_reader_new, freed once.
        unsafe { ffi::ldb_block_reader_free(self.ptr) }
    }
}

/// The filter policy a table is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// No filter block.
    NoFilter = 0,
    /// LevelDB 1.23's `NewBloomFilterPolicy`: `leveldb.BuiltinBloomFilter2`.
    Bloom2 = 1,
    /// The shim's pre-1.18 Bloom (signed hash) named `leveldb.BuiltinBloomFilter`.
    LegacyLevelDb = 2,
    /// The shim's pre-1.18 Bloom (signed hash) named `rocksdb.BuiltinBloomFilter`.
    LegacyRocksDb = 3,
    /// LevelDB 1.23's Bloom (unsigned hash) under goleveldb's name,
    /// `leveldb.BuiltinBloomFilter`: for reading goleveldb's tables.
    GoLevelDb = 4,
}

/// How LevelDB's `TableBuilder` is set up.
#[derive(Clone, Copy, Debug)]
pub struct TableOptions {
    /// The filter policy.
    pub policy: PolicyKind,
    /// Bits per key of the policy.
    pub bits_per_key: i32,
    /// `Options::block_size`.
    pub block_size: i32,
    /// `Options::block_restart_interval`.
    pub restart_interval: i32,
    /// Snappy compression.
    pub snappy: bool,
}

fn c_path(path: &Path) -> CString {
    CString::new(path.to_str().expect("UTF-8 path")).expect("path without NUL")
}

/// Pointer and length arrays over `items`, alive as long as `items`.
fn pointers<K: AsRef<[u8]>>(
    items: impl Iterator<Item = K> + Clone,
) -> (Vec<*const u8>, Vec<usize>) {
    let ptrs = items.clone().map(|k| k.as_ref().as_ptr()).collect();
    let lens = items.map(|k| k.as_ref().len()).collect();
    (ptrs, lens)
}

/// Writes a table with LevelDB's `TableBuilder`; `entries` sorted by key, keys distinct.
pub fn write_table(
    path: &Path,
    options: TableOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Result<(), String> {
    let (kp, kl) = pointers(entries.iter().map(|e| &e.0));
    let (vp, vl) = pointers(entries.iter().map(|e| &e.1));
    let path_c = c_path(path);
    // SAFETY: every pointer/length pair describes memory owned by `entries` or
    // `path_c`, alive for the call.
    let rc = unsafe {
        ffi::ldb_write_table(
            path_c.as_ptr(),
            options.policy as i32,
            options.bits_per_key,
            options.block_size,
            options.restart_interval,
            i32::from(options.snappy),
            kp.as_ptr(),
            kl.as_ptr(),
            vp.as_ptr(),
            vl.as_ptr(),
            entries.len(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!("LevelDB could not write {}", path.display()))
    }
}

/// Opens the database in `dir` with LevelDB 1.23 (a Bloom policy of
/// `bits_per_key`) and `Get`s each key: how many it finds with their value.
pub fn db_count_found(
    dir: &Path,
    bits_per_key: i32,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Result<usize, String> {
    let (kp, kl) = pointers(entries.iter().map(|e| &e.0));
    let (vp, vl) = pointers(entries.iter().map(|e| &e.1));
    let dir_c = c_path(dir);
    // SAFETY: as in write_table: the pointers are valid for the call.
    let found = unsafe {
        ffi::ldb_db_count_found(
            dir_c.as_ptr(),
            bits_per_key,
            kp.as_ptr(),
            kl.as_ptr(),
            vp.as_ptr(),
            vl.as_ptr(),
            entries.len(),
        )
    };
    usize::try_from(found).map_err(|_| format!("LevelDB could not open {}", dir.display()))
}

/// Writes a database in `dir` through `DB::Put` (and `Delete` of every
/// `delete_every`-th key), then compacts it into `.ldb` tables.
pub fn write_db(
    dir: &Path,
    options: TableOptions,
    entries: &[(Vec<u8>, Vec<u8>)],
    delete_every: usize,
) -> Result<(), String> {
    let (kp, kl) = pointers(entries.iter().map(|e| &e.0));
    let (vp, vl) = pointers(entries.iter().map(|e| &e.1));
    let dir_c = c_path(dir);
    // SAFETY: as in write_table.
    let rc = unsafe {
        ffi::ldb_write_db(
            dir_c.as_ptr(),
            options.policy as i32,
            options.bits_per_key,
            options.block_size,
            i32::from(options.snappy),
            kp.as_ptr(),
            kl.as_ptr(),
            vp.as_ptr(),
            vl.as_ptr(),
            entries.len(),
            delete_every,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "LevelDB could not write a database in {}",
            dir.display()
        ))
    }
}

/// What LevelDB's `Table::InternalGet` decides for a key before reading a
/// data block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The index has no block for the key: not found.
    PastLastKey,
    /// The index points to a data block.
    Block {
        /// The block's offset.
        offset: u64,
        /// Whether the filter lets the lookup read it (or there is no filter).
        may_match: bool,
    },
    /// The lookup failed (status Corruption) before reading a data block.
    Corrupt,
}

impl Lookup {
    /// The decision as `ldbfilter probe` prints it after the key.
    pub fn words(self) -> String {
        match self {
            Lookup::PastLastKey => "- past-last-key".into(),
            Lookup::Block { offset, may_match } => {
                format!(
                    "{offset} {}",
                    if may_match { "may-match" } else { "absent" }
                )
            }
            Lookup::Corrupt => "- corrupt".into(),
        }
    }
}

/// What LevelDB's `Table::InternalGet` decides for `key` before reading a data
/// block. For a database's table (`internal`), `key` is a user key. An error
/// if LevelDB does not open the table.
pub fn table_probe(
    path: &Path,
    policy: PolicyKind,
    internal: bool,
    key: &[u8],
) -> Result<Lookup, String> {
    let path_c = c_path(path);
    let (mut offset, mut has_offset, mut may_match, mut corrupt) = (0u64, 0, 0, 0);
    // SAFETY: the path and key are valid for the call; the out params are locals.
    let rc = unsafe {
        ffi::ldb_table_probe(
            path_c.as_ptr(),
            policy as i32,
            i32::from(internal),
            key.as_ptr(),
            key.len(),
            &mut offset,
            &mut has_offset,
            &mut may_match,
            &mut corrupt,
        )
    };
    if rc != 0 {
        return Err(format!("LevelDB could not open {}", path.display()));
    }
    Ok(match (has_offset != 0, corrupt != 0) {
        (true, _) => Lookup::Block {
            offset,
            may_match: may_match != 0,
        },
        (false, true) => Lookup::Corrupt,
        (false, false) => Lookup::PastLastKey,
    })
}
