//! The real LevelDB 1.23 (Debian's `libleveldb-dev`), linked statically through
//! a small C++ shim: its Bloom `FilterPolicy` and its `FilterBlockBuilder` and
//! `FilterBlockReader`. The oracle for `leveldb-filter`'s differential tests and
//! the source of its golden vectors.
#![deny(missing_docs)]

use std::ffi::CStr;
use std::os::raw::c_char;

mod ffi {
    use std::os::raw::{c_char, c_int, c_void};

    #[repr(C)]
    pub struct Policy(c_void);
    #[repr(C)]
    pub struct Builder(c_void);
    #[repr(C)]
    pub struct Reader(c_void);

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
