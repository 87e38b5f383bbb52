//! The aarch64 kernel: [`Lanes`](crate::arch::simd::Lanes) for NEON's
//! vectors. This file's module and `simd.rs` hold the crate's only
//! `unsafe` code on aarch64.
#![allow(unsafe_code)]

mod neon;

pub(crate) use neon::Neon;
