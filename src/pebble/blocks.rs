//! The blocks of a Pebble table that map names to values (the metaindex,
//! the properties): row blocks of raw keys, or from Pebblev6 (metaindex)
//! and Pebblev7 (properties) columnar key-value blocks.

use crate::format::{Corruption, Cursor, Layout};

/// A name and its value, as a block stores them.
pub(super) type Named = (Vec<u8>, Vec<u8>);

/// Every entry of a name-to-value block, in its order (Pebble v1's
/// metaindex is not always sorted: `pebble.value_index` comes before
/// `pebble.range_key`, and Pebble's reader reads every entry).
pub(super) fn key_values(block: &[u8], columnar: bool) -> Result<Vec<Named>, Corruption> {
    if columnar {
        return super::columnar::key_values(block);
    }
    // Pebble masks bit 31 of every restart point.
    let mut cursor = Cursor::new(block, Layout::Plain)?.flagged_restarts(true);
    let mut entries = Vec::new();
    let mut more = cursor.seek_to_first()?;
    while more {
        entries.push((cursor.key().to_vec(), cursor.value().to_vec()));
        more = cursor.advance()?;
    }
    Ok(entries)
}
