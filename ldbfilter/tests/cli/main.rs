//! The command line's tests, in one binary: `ldbfilter` run as a user runs
//! it, on the golden tables and vectors and on the tables the library's tests
//! craft (the helpers both share are the `testkit/` crate's).

// The helpers, shared with the library's tests (`testkit/`).
use leveldb_filter_testkit::crafted::rocksdb as crafted_rocksdb;
use leveldb_filter_testkit::{crafted, rusty_database, vectors};

mod run;

mod bounds;
mod database;
mod deployed;
mod filters;
mod hostile;
mod leveldb;
mod pebble;
mod rocksdb;
mod rusty;
