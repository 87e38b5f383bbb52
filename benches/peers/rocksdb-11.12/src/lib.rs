//! Nothing: the package exists for its dependency's build (librocksdb.a).
pub use rust_librocksdb_sys as sys;
