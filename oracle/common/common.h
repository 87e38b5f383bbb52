// What the database generators share: failing loudly, hex, the xorshift
// generator of the other oracles, the command line
// `NAME --seed N [--big MB] OUT_DIR` (OUT_DIR made if need be), and the
// writes and summary of a --big run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

[[noreturn]] static void fail_as(const char* name, const std::string& what) {
  fprintf(stderr, "%s: %s\n", name, what.c_str());
  exit(1);
}

static std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

struct Rng {
  uint64_t x;
  uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

struct Args {
  uint64_t seed = 1, mib = 0;
  std::string out;
};

// The arguments, or the usage on stderr and exit 2.
static Args parse_args(const char* name, int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc) {
      args.seed = strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--big" && i + 1 < argc) {
      args.mib = strtoull(argv[++i], nullptr, 10);
    } else if (args.out.empty() && arg[0] != '-') {
      args.out = arg;
    } else {
      args.out.clear();
      break;
    }
  }
  if (args.out.empty()) {
    fprintf(stderr, "usage: %s --seed N [--big MB] OUT_DIR\n", name);
    exit(2);
  }
  std::error_code error;
  std::filesystem::create_directories(args.out, error);
  if (error) fail_as(name, "cannot create " + args.out + ": " + error.message());
  return args;
}

// A --big run's random source for `seed`.
static Rng big_rng(uint64_t seed) {
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0xb16};
  rng.next();
  return rng;
}

// One of a --big run's write batches: 1,000 random keys of 16 hex digits,
// each with 100 random bytes, given to put(key, value).
template <typename Put>
static void big_batch(Rng& rng, Put put) {
  for (int i = 0; i < 1000; i++) {
    char key[17];
    snprintf(key, sizeof key, "%016llx", (unsigned long long)rng.next());
    char value[100];
    for (int j = 0; j < 100; j += 8) {
      uint64_t x = rng.next();
      memcpy(value + j, &x, std::min(8, 100 - j));
    }
    put(key, value);
  }
}

// The line a --big run ends with: keys, tables, bytes, tables per level,
// seconds since `start`. Each of `tables` has a level and a size.
template <typename Table>
static void print_summary(uint64_t keys, const std::vector<Table>& tables,
                          std::chrono::steady_clock::time_point start) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::map<int, int> per_level;
  uint64_t total = 0;
  for (const Table& t : tables) {
    per_level[t.level]++;
    total += t.size;
  }
  printf("%llu keys written; %zu tables, %llu bytes (%.1f MiB);", (unsigned long long)keys,
         tables.size(), (unsigned long long)total, total / 1048576.0);
  for (auto& [level, n] : per_level) printf(" L%d: %d", level, n);
  printf("; %.1f s\n", secs);
}
