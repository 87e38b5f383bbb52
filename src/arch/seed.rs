//! The one source of the property tests' inputs: a generator from a fixed
//! seed, so that a run's result never depends on chance. `QUICKCHECK_SEED=N`
//! draws other inputs (a failure prints its arguments, and this seed in the
//! test's output).

use quickcheck::{Gen, QuickCheck, Testable};

/// The seed of every run that names none.
const DEFAULT_SEED: u64 = 20_261_124;

/// Runs `prop` on `tests` inputs drawn from the seed (up to ten times as many
/// tries where the property discards inputs).
pub fn check<A: Testable>(tests: u64, prop: A) {
    let seed = match std::env::var("QUICKCHECK_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("QUICKCHECK_SEED={s:?} is not a number")),
        Err(_) => DEFAULT_SEED,
    };
    eprintln!("quickcheck seed {seed} (QUICKCHECK_SEED), {tests} tests");
    QuickCheck::new()
        .rng(Gen::from_size_and_seed(100, seed))
        .tests(tests)
        .max_tests(tests * 10)
        .quickcheck(prop);
}
