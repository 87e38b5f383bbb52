// RocksDB's own filter builders and readers, timed for
// benches/rocksdb_filters.rs on the keys that bench times this crate on.
// Built by scripts/rocksdb-peers twice: against Debian's RocksDB 7.8.3
// (-DPEER_ROCKSDB_7) and against RocksDB 11.12 built for this CPU.
//
//   PEER KIND KEYS ROUNDS BATCH
//
// KIND: fastbloom (NewBloomFilterPolicy(10) at format_version 5), ribbon
// (NewRibbonFilterPolicy(10, -1)) or legacybloom (NewBloomFilterPolicy(10)
// at format_version 4). Keys: KEYS random 16-byte keys (the key set
// `rand:1:KEYS:16:16` of oracle/rocksdb-7.8/gen-ribbon.cc); queries: those,
// then as many absent ones (`rand:2:KEYS:16:16`). Each figure is the best of
// ROUNDS: build (AddKey of every key, then Finish), single (MayMatch of each
// query), batch (MayMatch(num_keys, ...) over BATCH queries at a time, as
// MultiGet calls it). One line:
//
//   build_ns=... single_ns=... batch_ns=... filter=LEN:FNV answers=COUNT:FNV
//
// in nanoseconds per key (build) or per query, the filter's length and
// FNV-1a 64 of its bytes, and the answers' count and FNV-1a 64 of the
// answers in order (single and batch must agree, or the program fails).
//
// The builder and reader classes are not in RocksDB's public headers: their
// first virtual functions are declared here as each version declares them
// (table/block_based/filter_policy_internal.h).
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace rocksdb {
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() {}
  virtual void AddKey(const Slice& key) = 0;
#ifndef PEER_ROCKSDB_7
  virtual void AddKeyAndAlt(const Slice& key, const Slice& alt) = 0;
#endif
  virtual size_t EstimateEntriesAdded() = 0;
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;
};
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() {}
  virtual bool MayMatch(const Slice& entry) = 0;
  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) = 0;
};
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

static std::vector<std::string> rand_keys(uint64_t seed, uint32_t n, uint32_t lo, uint32_t hi) {
  SplitMix rng{seed};
  std::vector<std::string> keys;
  for (uint32_t i = 0; i < n; i++) {
    size_t len = lo + rng.next() % (hi - lo + 1);
    std::string key;
    while (key.size() < len) {
      uint64_t word = rng.next();
      for (int j = 0; j < 8 && key.size() < len; j++) key.push_back(static_cast<char>(word >> (8 * j)));
    }
    keys.push_back(key);
  }
  return keys;
}

static uint64_t fnv(const char* data, size_t n, uint64_t h = 0xcbf29ce484222325ULL) {
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ULL;
  return h;
}

static double now_ns() {
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s fastbloom|ribbon|legacybloom KEYS ROUNDS BATCH\n", argv[0]);
    return 2;
  }
  std::string kind = argv[1];
  uint32_t n = static_cast<uint32_t>(atol(argv[2]));
  int rounds = atoi(argv[3]);
  int batch = atoi(argv[4]);
  std::shared_ptr<const FilterPolicy> policy;
  BlockBasedTableOptions options;
  if (kind == "fastbloom") {
    policy.reset(NewBloomFilterPolicy(10));
    options.format_version = 5;
  } else if (kind == "legacybloom") {
    policy.reset(NewBloomFilterPolicy(10));
    options.format_version = 4;
  } else if (kind == "ribbon") {
    policy.reset(NewRibbonFilterPolicy(10, -1));
    options.format_version = 5;
  } else {
    fprintf(stderr, "unknown filter kind %s\n", kind.c_str());
    return 2;
  }
  if (n == 0 || rounds <= 0 || batch <= 0) {
    fprintf(stderr, "KEYS, ROUNDS and BATCH must be positive\n");
    return 2;
  }
  options.filter_policy = policy;
  FilterBuildingContext context(options);

  std::vector<std::string> queries = rand_keys(1, n, 16, 16);
  std::vector<std::string> absent = rand_keys(2, n, 16, 16);
  queries.insert(queries.end(), absent.begin(), absent.end());
  std::vector<Slice> slices(queries.begin(), queries.end());
  std::vector<Slice*> pointers;
  for (auto& s : slices) pointers.push_back(&s);
  std::unique_ptr<bool[]> single(new bool[queries.size()]);
  std::unique_ptr<bool[]> batched(new bool[queries.size()]);

  double build = 1e300, one = 1e300, many = 1e300;
  std::unique_ptr<const char[]> kept;
  Slice filter;
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    std::unique_ptr<FilterBitsBuilder> builder(policy->GetBuilderWithContext(context));
    for (uint32_t i = 0; i < n; i++) builder->AddKey(slices[i]);
    std::unique_ptr<const char[]> buf;
    Slice built = builder->Finish(&buf);
    double t1 = now_ns();
    build = std::min(build, (t1 - t0) / n);
    kept = std::move(buf);
    filter = built;
  }
  std::unique_ptr<FilterBitsReader> reader(policy->GetFilterBitsReader(filter));
  for (int r = 0; r < rounds; r++) {
    double t0 = now_ns();
    for (size_t i = 0; i < slices.size(); i++) single[i] = reader->MayMatch(slices[i]);
    double t1 = now_ns();
    for (size_t i = 0; i < slices.size(); i += batch) {
      int len = static_cast<int>(std::min<size_t>(batch, slices.size() - i));
      reader->MayMatch(len, &pointers[i], &batched[i]);
    }
    double t2 = now_ns();
    one = std::min(one, (t1 - t0) / slices.size());
    many = std::min(many, (t2 - t1) / slices.size());
  }
  uint64_t answers = 0xcbf29ce484222325ULL;
  size_t count = 0;
  for (size_t i = 0; i < slices.size(); i++) {
    if (single[i] != batched[i]) {
      fprintf(stderr, "query %zu: MayMatch says %d, the batch %d\n", i, single[i], batched[i]);
      return 1;
    }
    char c = single[i] ? 1 : 0;
    answers = fnv(&c, 1, answers);
    count += single[i];
  }
  printf("build_ns=%.3f single_ns=%.3f batch_ns=%.3f filter=%zu:%016llx answers=%zu:%016llx\n",
         build, one, many, filter.size(),
         static_cast<unsigned long long>(fnv(filter.data(), filter.size())), count,
         static_cast<unsigned long long>(answers));
  return 0;
}
