//! Builds the C++ shim and links it against Debian's static LevelDB 1.23.
use std::path::Path;

fn main() {
    let lib_dirs = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
        "/usr/local/lib",
    ];
    let Some(dir) = lib_dirs
        .iter()
        .find(|d| Path::new(d).join("libleveldb.a").exists())
    else {
        panic!(
            "\n\nleveldb-filter-oracle needs the real LevelDB: libleveldb.a was not found in {lib_dirs:?}.\n\
             Install it with `apt-get install -y libleveldb-dev`, or leave this crate out \
             (a plain `cargo test` at the workspace root does).\n"
        );
    };
    cc::Build::new()
        .cpp(true)
        .file("shim.cc")
        .flag("-std=c++17")
        .warnings(true)
        .compile("ldbshim");
    println!("cargo:rerun-if-changed=shim.cc");
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=static=leveldb");
    println!("cargo:rustc-link-lib=dylib=snappy");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
