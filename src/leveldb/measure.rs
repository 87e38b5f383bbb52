//! What a table's filters cost its lookups: the false-positive rate met on
//! keys like the table's own, and each Bloom filter's statistics.

use std::ops::ControlFlow;

use super::keys::{walk, FilterSink, KeyFormat};
use super::probe::{probe, Probe};
use super::Table;
use crate::format::user_key;
use crate::format::{MeasuredFpr, Neighbours};
use crate::{BloomFilterPolicy, Error};

/// The false-positive rate LevelDB's lookups meet on keys like the table's
/// own: for each distinct (user) key whose last byte is below 0xff, the key
/// with that byte one higher, when the table does not hold it, probed as
/// [`probe`] does. Keys that differ in their last byte are what tables of
/// sequential keys are asked for, and where LevelDB's hash is weakest: the
/// rate can be many times what the bits set suggest
/// ([`BloomStats::estimated_fpr`]). One pass over the data blocks, one block
/// at a time.
pub fn measure_fpr(
    table: &Table<'_>,
    policy: &BloomFilterPolicy,
    key_format: KeyFormat,
) -> Result<MeasuredFpr, Error> {
    let mut sink = NeighbourSink {
        neighbours: Neighbours::default(),
        prober: NeighbourProber {
            table,
            policy,
            key_format,
            measured: MeasuredFpr::default(),
        },
        error: None,
    };
    let _ = walk(table, &mut sink)?;
    if let Some(e) = sink.error {
        return Err(e);
    }
    // Those past the last key too: the index's last separator may be
    // above them, and LevelDB's lookup then asks the filter.
    let mut prober = sink.prober;
    for neighbour in sink.neighbours.rest() {
        prober.probe(&neighbour)?;
    }
    Ok(prober.measured)
}

/// [`measure_fpr`]'s pass over a LevelDB table's keys.
struct NeighbourSink<'t, 'a, 'p> {
    neighbours: Neighbours,
    prober: NeighbourProber<'t, 'a, 'p>,
    error: Option<Error>,
}

/// [`measure_fpr`]'s probes of the neighbours, as LevelDB's lookup makes them.
struct NeighbourProber<'t, 'a, 'p> {
    table: &'t Table<'a>,
    policy: &'p BloomFilterPolicy,
    key_format: KeyFormat,
    measured: MeasuredFpr,
}

impl NeighbourProber<'_, '_, '_> {
    fn probe(&mut self, neighbour: &[u8]) -> Result<(), Error> {
        if let Probe::Block { may_match, .. } =
            probe(self.table, Some(self.policy), self.key_format, neighbour)?
        {
            self.measured.probed += 1;
            self.measured.passed += u64::from(may_match);
        }
        Ok(())
    }
}

impl FilterSink for NeighbourSink<'_, '_, '_> {
    fn key(&mut self, key: &[u8]) -> ControlFlow<String> {
        let key = match self.prober.key_format {
            KeyFormat::User => key,
            KeyFormat::Internal => user_key(key),
        };
        let prober = &mut self.prober;
        match self
            .neighbours
            .key(key, |neighbour| prober.probe(neighbour))
        {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(String::new())
            }
        }
    }

    fn cut(&mut self, _index: usize) -> ControlFlow<String> {
        ControlFlow::Continue(())
    }
}

/// Statistics of one Bloom filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomStats {
    /// Keys the table put in it.
    pub keys: usize,
    /// Bits in its array.
    pub bits: usize,
    /// Its k byte.
    pub k: u8,
    /// Bits set.
    pub bits_set: usize,
}

impl BloomStats {
    /// Statistics of `filter`, which holds `keys` keys.
    pub fn new(filter: &[u8], keys: usize) -> Self {
        let (k, array) = filter.split_last().map_or((0, &[][..]), |(&k, a)| (k, a));
        BloomStats {
            keys,
            bits: array.len() * 8,
            k,
            bits_set: array.iter().map(|b| b.count_ones() as usize).sum(),
        }
    }

    /// Bits per key.
    pub fn bits_per_key(&self) -> f64 {
        self.bits as f64 / self.keys as f64
    }

    /// Share of the bits that are set.
    pub fn share_set(&self) -> f64 {
        self.bits_set as f64 / self.bits as f64
    }

    /// False-positive rate estimated from the bits set, as Guava's
    /// `BloomFilter.expectedFpp`: share set to the power k.
    pub fn estimated_fpr(&self) -> f64 {
        self.share_set().powi(i32::from(self.k))
    }

    /// Number of distinct keys estimated from the bits set, as Guava's
    /// `approximateElementCount`: -ln(1 - share set) * bits / k, rounded.
    pub fn estimated_keys(&self) -> f64 {
        (-(-self.share_set()).ln_1p() * self.bits as f64 / f64::from(self.k)).round()
    }
}
