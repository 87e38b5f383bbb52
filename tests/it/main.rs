//! The integration tests, in one binary: the helpers are compiled once and
//! one global allocator counts what every test allocates, per thread.

// The helpers, shared with the command line's tests (`testkit/`).
use leveldb_filter_testkit::crafted::rocksdb as crafted_rocksdb;
use leveldb_filter_testkit::{arbitrary, crafted, peak, reference, vectors};

mod allocations;
mod bounds;
mod db;
mod deployed;
mod golden;
mod leveldb_tests;
mod lookup_work;
mod pebble;
mod properties;
mod rocksdb;
mod rusty;
mod source;
mod tables;

#[global_allocator]
static GLOBAL: peak::Peak = peak::Peak;
