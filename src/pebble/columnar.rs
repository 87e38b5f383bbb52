//! Pebble's columnar blocks (Pebblev5 and later) as the table reader
//! needs them. Not read yet: every call is an error.

use crate::format::{BlockHandle, Corruption};

pub(super) fn key_values(_block: &[u8]) -> Result<Vec<super::blocks::Named>, Corruption> {
    Err(Corruption::MalformedEntry)
}

pub(super) fn index_handles(_block: &[u8]) -> Result<Vec<BlockHandle>, Corruption> {
    Err(Corruption::MalformedEntry)
}

pub(super) fn seek_index(_block: &[u8], _key: &[u8]) -> Result<Option<BlockHandle>, Corruption> {
    Err(Corruption::MalformedEntry)
}

pub(super) fn data_keys(
    _block: &[u8],
    _schema: Option<&str>,
    _each: impl FnMut(&[u8], u64),
) -> Result<u64, Corruption> {
    Err(Corruption::MalformedEntry)
}

pub(super) fn spans(_block: &[u8], _each: impl FnMut(&[u8], &[u8], u64)) -> Result<(), Corruption> {
    Err(Corruption::MalformedEntry)
}
