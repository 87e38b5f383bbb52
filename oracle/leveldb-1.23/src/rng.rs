//! The generators' seeded PRNG and the keys they draw from it.

/// splitmix64: small, seedable, and the same on every platform.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    /// One of `items`, which must not be empty.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as u64 - 1) as usize]
    }
    /// A key of length `0..=max_len`, any bytes (so tails often hold bytes >= 0x80).
    pub fn key(&mut self, max_len: u64) -> Vec<u8> {
        let len = if self.chance(50) {
            self.range(0, max_len.min(16))
        } else {
            self.range(0, max_len)
        };
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
    /// `n` keys, about one in ten a duplicate of an earlier one.
    pub fn keys(&mut self, n: usize, max_len: u64) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(n);
        for _ in 0..n {
            let key = if !keys.is_empty() && self.chance(10) {
                self.pick(&keys).clone()
            } else {
                self.key(max_len)
            };
            keys.push(key);
        }
        keys
    }
    /// Probe keys: up to `members` of `keys`, then `others` fresh ones.
    pub fn probes(&mut self, keys: &[Vec<u8>], members: usize, others: usize) -> Vec<Vec<u8>> {
        let mut probes: Vec<Vec<u8>> = (0..members.min(keys.len()))
            .map(|_| self.pick(keys).clone())
            .collect();
        probes.extend((0..others).map(|_| self.key(64)));
        probes
    }
}
