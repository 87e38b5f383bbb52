//! quickcheck generators shared by the property tests and the differential
//! tests against LevelDB (`oracle/leveldb-1.23/tests/`): keys of every length 0..=64 with
//! bytes >= 0x80 in their tails, both hash variants, table-like block layouts.

use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterPolicy, HashVariant};
use quickcheck::{Arbitrary, Gen, Testable};

/// Runs a property on `tests` inputs drawn from a fixed seed
/// (`QUICKCHECK_SEED` names another).
pub fn check<A: Testable>(tests: u64, prop: A) {
    crate::seed::check(tests, prop);
}

/// A key of length 0..=64 whose bytes are >= 0x80 half of the time.
#[derive(Clone, Debug)]
pub struct Key(pub Vec<u8>);

impl Arbitrary for Key {
    fn arbitrary(g: &mut Gen) -> Self {
        let len = usize::arbitrary(g) % 65;
        Key((0..len).map(|_| u8::arbitrary(g)).collect())
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Key))
    }
}

/// The keys as owned byte strings.
pub fn keys(keys: &[Key]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.0.clone()).collect()
}

/// A hash variant.
#[derive(Clone, Copy, Debug)]
pub struct Variant(pub HashVariant);

impl Arbitrary for Variant {
    fn arbitrary(g: &mut Gen) -> Self {
        Variant(
            *g.choose(&[HashVariant::Unsigned, HashVariant::Signed])
                .unwrap(),
        )
    }
}

impl Variant {
    pub fn signed(self) -> bool {
        self.0 == HashVariant::Signed
    }
    pub fn policy(self, bits_per_key: usize) -> BloomFilterPolicy {
        BloomFilterPolicy::new(bits_per_key).with_hash(self.0)
    }
}

/// One call to a filter-block builder.
#[derive(Clone, Debug)]
pub enum Call {
    Start(u64),
    Key(Vec<u8>),
}

/// A builder call sequence as a table writer makes it: offsets never go back,
/// gaps sometimes skip many 2 KiB ranges, keys may come before the first block.
#[derive(Clone, Debug)]
pub struct Layout(pub Vec<Call>);

impl Arbitrary for Layout {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut calls = Vec::new();
        let mut offset = u64::arbitrary(g) % 10_000;
        for _ in 0..usize::arbitrary(g) % 40 {
            if bool::arbitrary(g) {
                calls.push(Call::Start(offset));
                offset += match u8::arbitrary(g) % 10 {
                    0..=6 => u64::arbitrary(g) % 3000,
                    7 | 8 => u64::arbitrary(g) % 20_000,
                    _ => u64::arbitrary(g) % 200_000,
                };
            } else {
                calls.push(Call::Key(Key::arbitrary(g).0));
            }
        }
        Layout(calls)
    }
}

impl Layout {
    /// Feeds the calls to `builder`.
    pub fn replay<P: FilterPolicy>(&self, builder: &mut FilterBlockBuilder<P>) {
        for call in &self.0 {
            match call {
                Call::Start(offset) => builder.start_block(*offset),
                Call::Key(key) => builder.add_key(key),
            }
        }
    }

    /// The block this crate builds.
    pub fn build<P: FilterPolicy>(&self, policy: P) -> Vec<u8> {
        let mut builder = FilterBlockBuilder::new(policy);
        self.replay(&mut builder);
        builder.finish().to_vec()
    }

    /// Offsets to probe: each block's, inside skipped ranges, past the end, and huge.
    pub fn probe_offsets(&self) -> Vec<u64> {
        let mut offsets: Vec<u64> = self
            .0
            .iter()
            .filter_map(|c| match c {
                Call::Start(o) => Some(*o),
                Call::Key(_) => None,
            })
            .collect();
        let last = offsets.last().copied().unwrap_or(0);
        offsets.extend([
            0,
            2048,
            last + 2048,
            last + 100_000,
            1 << 32,
            1 << 63,
            u64::MAX,
        ]);
        offsets
    }
}

/// A block this crate built from `layout`, then damaged: bytes overwritten,
/// then cut to `cut` bytes.
pub fn damaged(mut block: Vec<u8>, damage: &[(u16, u8)], cut: u16) -> Vec<u8> {
    for &(at, byte) in damage {
        let len = block.len();
        block[usize::from(at) % len] = byte;
    }
    block.truncate(usize::from(cut));
    block
}
