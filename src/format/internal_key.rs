//! Internal keys, as both engines store them in tables, MANIFESTs and logs:
//! the user key, then an 8-byte little-endian tag, the sequence number
//! shifted left 8 bits over the entry's type byte.

/// The largest sequence number (56 bits).
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;

/// The user key of an internal key: all but its last 8 bytes (LevelDB asserts
/// there are 8; a shorter key is taken as empty here).
pub fn user_key(internal_key: &[u8]) -> &[u8] {
    &internal_key[..internal_key.len().saturating_sub(8)]
}

/// `key`'s user key where it is an internal key, else `key` itself.
pub(crate) fn user_key_if(key: &[u8], internal: bool) -> &[u8] {
    match internal {
        true => user_key(key),
        false => key,
    }
}

/// The tag of the key a `Get` seeks: the largest sequence number, which
/// sorts before every entry of the user key, and the engine's type for a
/// seek (LevelDB's `kValueTypeForSeek`, 1; RocksDB's, 0x16).
pub(crate) fn seek_tag(type_for_seek: u8) -> u64 {
    MAX_SEQUENCE << 8 | u64::from(type_for_seek)
}
