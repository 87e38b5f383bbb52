//! The integration tests, in one binary: the helpers are compiled once and
//! one global allocator counts what every test allocates, per thread.

mod arbitrary;
mod crafted;
#[path = "crafted/rocksdb.rs"]
mod crafted_rocksdb;
mod peak;
mod reference;
mod vectors;

mod allocations;
mod bounds;
mod db;
mod deployed;
mod golden;
mod leveldb_tests;
mod properties;
mod rocksdb;
mod rusty;
mod source;
mod tables;

#[global_allocator]
static GLOBAL: peak::Peak = peak::Peak;
