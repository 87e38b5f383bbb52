// Ribbon filters built by RocksDB 7.8 itself (Debian's librocksdb-dev):
// `NewRibbonFilterPolicy(bits_per_key)`'s builder, fed keys as a table
// builder feeds them, each filter's bytes written out. These are the golden
// vectors of testdata/rocksdb/ribbon.vec; CI makes a fresh set from another
// seed and checks the crate's RibbonBuilder against it.
//
//   g++ -std=c++17 -O2 gen-ribbon.cc -lrocksdb -o gen-ribbon
//   ./gen-ribbon SEED > ribbon.vec
//
// Each line: `BITS_PER_KEY KEYS FILTER`. KEYS names a key set by rule, as
// `+`-joined parts (the tests make the same keys from it):
//   le32:A..B      the 4-byte little-endian numbers A to B-1 (RocksDB's
//                  own tests' `Key(i)`)
//   le32:A..B/D    the same, each number divided by D (repeated keys)
//   ascii:P:A..B   P followed by the decimal numbers A to B-1
//   rand:S:N:L:M   N keys of L to M bytes from splitmix64 seeded with S:
//                  per key, its length L + next() % (M - L + 1), then its
//                  bytes from further next()s, 8 at a time, low byte first
// FILTER is the payload in hex, or `=LEN:CRC` (its length and CRC-32C, as
// 8 hex digits) past 4 KiB. `-` for an empty payload.
//
// The builder is reached as RocksDB's table builder reaches it
// (`FilterPolicy::GetBuilderWithContext`); its class is not in the public
// headers, so its first virtual functions are declared here as 7.8.3's
// table/block_based/filter_policy_internal.h declares them.
#include <rocksdb/filter_policy.h>
#include <rocksdb/status.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace rocksdb {
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}
  virtual void AddKey(const Slice& key) = 0;
  virtual size_t EstimateEntriesAdded() = 0;
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;
};
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}
  virtual bool MayMatch(const Slice& entry) = 0;
};
namespace crc32c {
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);
}
}  // namespace rocksdb

using namespace rocksdb;

struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

static std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; i++) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// One part of a key set, made and named.
static void le32_part(std::vector<std::string>* keys, std::string* name, uint32_t a, uint32_t b,
                      uint32_t d) {
  for (uint32_t i = a; i < b; i++) keys->push_back(le32(i / d));
  *name += (name->empty() ? "" : "+") + std::string("le32:") + std::to_string(a) + ".." +
           std::to_string(b) + (d == 1 ? "" : "/" + std::to_string(d));
}

static void ascii_part(std::vector<std::string>* keys, std::string* name, const std::string& p,
                       uint32_t a, uint32_t b) {
  for (uint32_t i = a; i < b; i++) keys->push_back(p + std::to_string(i));
  *name += (name->empty() ? "" : "+") + std::string("ascii:") + p + ":" + std::to_string(a) + ".." +
           std::to_string(b);
}

static void rand_part(std::vector<std::string>* keys, std::string* name, uint64_t seed, uint32_t n,
                      uint32_t lo, uint32_t hi) {
  SplitMix rng{seed};
  for (uint32_t i = 0; i < n; i++) {
    size_t len = lo + rng.next() % (hi - lo + 1);
    std::string key;
    while (key.size() < len) {
      uint64_t word = rng.next();
      for (int j = 0; j < 8 && key.size() < len; j++) key.push_back(static_cast<char>(word >> (8 * j)));
    }
    keys->push_back(key);
  }
  *name += (name->empty() ? "" : "+") + std::string("rand:") + std::to_string(seed) + ":" +
           std::to_string(n) + ":" + std::to_string(lo) + ":" + std::to_string(hi);
}

static void emit(double bits_per_key, const std::vector<std::string>& keys, const std::string& name) {
  std::shared_ptr<const FilterPolicy> policy(NewRibbonFilterPolicy(bits_per_key, -1));
  BlockBasedTableOptions options;
  options.filter_policy = policy;
  FilterBuildingContext context(options);
  std::unique_ptr<FilterBitsBuilder> builder(policy->GetBuilderWithContext(context));
  for (const auto& key : keys) builder->AddKey(key);
  std::unique_ptr<const char[]> buf;
  Slice filter = builder->Finish(&buf);
  std::string out;
  if (filter.size() == 0) {
    out = "-";
  } else if (filter.size() > 4096) {
    char text[40];
    snprintf(text, sizeof text, "=%zu:%08x", filter.size(),
             crc32c::Extend(0, filter.data(), filter.size()));
    out = text;
  } else {
    static const char* digits = "0123456789abcdef";
    for (size_t i = 0; i < filter.size(); i++) {
      unsigned char c = static_cast<unsigned char>(filter.data()[i]);
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 15]);
    }
  }
  printf("%.17g %s %s\n", bits_per_key, name.c_str(), out.c_str());
}

int main(int argc, char** argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], nullptr, 10) : 1;
  printf("# RocksDB 7.8.3 NewRibbonFilterPolicy(bits_per_key, bloom_before_level -1), seed %llu\n",
         static_cast<unsigned long long>(seed));
  // RocksDB's own FullBloomTest.Schema cases, then its edges: the Bloom
  // fallbacks of few slots, seeds that fail, sizes at the table's steps,
  // repeated keys, every column count up to the 32-column cap.
  for (double b : {5.0, 2.0, 3.0, 8.0, 9.0, 11.0, 14.0, 16.0, 10.0}) {
    std::vector<std::string> keys;
    std::string name;
    le32_part(&keys, &name, 0, b == 5.0 ? 87 : 2087, 1);
    emit(b, keys, name);
  }
  for (auto [b, from, to] : std::vector<std::tuple<double, uint32_t, uint32_t>>{
           {10, 1, 2087}, {10, 1, 2088}, {9.5, 1, 2088}, {10.499, 1, 2088}, {10, 2000, 3000},
           {10, 11000, 14000}, {10, 0, 200}, {10, 0, 300}, {10, 0, 1000}, {1, 0, 5000},
           {6.667, 0, 5000}, {23.5, 0, 5000}, {60, 0, 5000}, {80, 0, 5000}}) {
    std::vector<std::string> keys;
    std::string name;
    le32_part(&keys, &name, from, to, 1);
    emit(b, keys, name);
  }
  {
    std::vector<std::string> keys;
    std::string name;
    le32_part(&keys, &name, 0, 6000, 3);
    le32_part(&keys, &name, 0, 1, 1);
    emit(10, keys, name);
  }
  {
    std::vector<std::string> keys;
    std::string name;
    ascii_part(&keys, &name, "k", 0, 5000);
    emit(10, keys, name);
  }
  // Key counts at the steps of RocksDB's slot table and around the Bloom
  // comparison, then random sets, at bits per key from 0.5 to 99.
  const uint32_t counts[] = {1,   2,    3,    10,   100,  181,  182,   248,   249,    250,
                             500, 1000, 1001, 2003, 4006, 8000, 15967, 31829, 126507, 1000000};
  const double bits[] = {0.5, 1, 1.5, 2, 3.3, 4, 5, 6.667, 7.5, 8, 9.5, 10, 12.25, 16, 20, 23.5, 30, 44, 50, 69, 70, 99};
  SplitMix rng{seed};
  for (uint32_t n : counts) {
    for (int i = 0; i < (n >= 100000 ? 1 : 3); i++) {
      double b = bits[rng.next() % (sizeof bits / sizeof bits[0])];
      std::vector<std::string> keys;
      std::string name;
      uint32_t lo = static_cast<uint32_t>(rng.next() % 24);
      rand_part(&keys, &name, rng.next() % 1000000, n, lo, lo + static_cast<uint32_t>(rng.next() % 24));
      emit(b, keys, name);
    }
  }
  return 0;
}
