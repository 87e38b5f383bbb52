//! Pebble's table files (CockroachDB's storage engine, in Go).
pub(crate) mod colblk;
