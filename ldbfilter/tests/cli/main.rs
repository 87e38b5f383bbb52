//! The command line's tests, in one binary: `ldbfilter` run as a user runs
//! it, on the golden tables and vectors and on the tables the library's tests
//! craft (their helpers are shared from `tests/it/`).

// Helpers shared with the library's tests, of which these use a part.
#[path = "../../../tests/it/arbitrary/mod.rs"]
mod arbitrary;
#[allow(dead_code)]
#[path = "../../../tests/it/crafted/mod.rs"]
mod crafted;
#[path = "../../../tests/it/crafted/rocksdb.rs"]
mod crafted_rocksdb;
#[allow(dead_code)]
#[path = "../../../tests/it/reference/mod.rs"]
mod reference;
#[path = "../../../tests/it/rusty/database.rs"]
mod rusty_database;
#[allow(dead_code)]
#[path = "../../../tests/it/vectors/mod.rs"]
mod vectors;

mod run;

mod bounds;
mod database;
mod deployed;
mod filters;
mod hostile;
mod leveldb;
mod rocksdb;
mod rusty;
