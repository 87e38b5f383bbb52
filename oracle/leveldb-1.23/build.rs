//! Builds the C++ shim and links it against Debian's static LevelDB 1.23.
use std::path::Path;

fn main() {
    // Debian's directory for the target's libraries; the others only when
    // building for this machine (a cross build cannot link the host's).
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let (target, host) = (env("TARGET"), env("HOST"));
    let multiarch = format!("/usr/lib/{}-linux-gnu", env("CARGO_CFG_TARGET_ARCH"));
    let mut lib_dirs = vec![multiarch.as_str()];
    if target == host {
        lib_dirs.extend(["/usr/lib", "/usr/local/lib"]);
    }
    println!("cargo::rustc-check-cfg=cfg(leveldb_missing)");
    println!("cargo:rerun-if-env-changed=CI");
    for dir in &lib_dirs {
        println!("cargo:rerun-if-changed={dir}/libleveldb.a");
    }
    let Some(dir) = lib_dirs
        .iter()
        .find(|d| Path::new(d).join("libleveldb.a").exists())
    else {
        // CI installs LevelDB for the machine it runs on: a build for it
        // must find it. (A cross build, for the tests of another CPU that
        // read the checked-in vectors, goes on without.)
        if std::env::var_os("CI").is_some() && target == host {
            panic!(
                "\n\nleveldb-filter-oracle needs the real LevelDB: libleveldb.a was not found in {lib_dirs:?}.\n\
                 Install it with `apt-get install -y libleveldb-dev`.\n"
            );
        }
        // Elsewhere the crate still builds, so that the root package (whose
        // comparison bench depends on it) builds and tests without LevelDB:
        // every shim function is then one that says LevelDB is missing and
        // aborts, and `leveldb_filter_oracle::AVAILABLE` is false.
        println!("cargo:warning=libleveldb.a not found: the LevelDB oracle is unavailable (apt-get install -y libleveldb-dev)");
        println!("cargo:rustc-cfg=leveldb_missing");
        let mut c = String::from(
            "#include <stdio.h>\n#include <stdlib.h>\n\
             void ldb_missing(void) {\n\
               fputs(\"leveldb-filter-oracle: built without LevelDB; apt-get install -y libleveldb-dev, \"\n\
                     \"then cargo clean -p leveldb-filter-oracle\\n\", stderr);\n\
               abort();\n}\n",
        );
        let shim = std::fs::read_to_string("shim.cc").expect("shim.cc");
        for name in shim_functions(&shim) {
            c.push_str(&format!(
                "void {name}(void) __attribute__((alias(\"ldb_missing\")));\n"
            ));
        }
        let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("missing.c");
        std::fs::write(&out, c).expect("write missing.c");
        cc::Build::new().file(&out).compile("ldbshim");
        println!("cargo:rerun-if-changed=shim.cc");
        return;
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

/// The names of the shim's C functions: every `ldb_*(` defined in shim.cc's
/// `extern "C"` block.
fn shim_functions(shim: &str) -> Vec<String> {
    let exported = &shim[shim.find("extern \"C\" {").unwrap_or(0)..];
    let mut names: Vec<String> = exported
        .match_indices(" ldb_")
        .map(|(at, _)| {
            let rest = &exported[at + 1..];
            rest[..rest.find('(').unwrap_or(0)].to_string()
        })
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    names.sort();
    names.dedup();
    names
}
