//! What the benches share: the CPU they ran on, to print beside each figure.

/// The CPU, from /proc/cpuinfo where there is one: model name, family,
/// model, and the vector extensions the kernels use.
pub fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map_or("?", |(_, v)| v.trim())
    };
    let flags: Vec<&str> = field("flags")
        .split_whitespace()
        .filter(|f| matches!(*f, "avx2" | "avx512f" | "avx512vl" | "bmi2"))
        .collect();
    format!(
        "{} (family {}, model {}; {})",
        field("model name"),
        field("cpu family"),
        field("model"),
        flags.join(" ")
    )
}
