// Writes RocksDB SST files with RocksDB 7.8 itself (Debian's librocksdb-dev),
// one per filter kind and table option, and beside each RocksDB's own
// per-key decisions: the file is ingested into a DB, each probe key is read
// with Get, and the BLOOM_FILTER_USEFUL ticker says whether the filter ruled
// the key out. These are the golden tables of testdata/rocksdb/.
//
//   g++ -std=c++17 -O1 gen-rocksdb.cc -lrocksdb -o gen-rocksdb
//   ./gen-rocksdb OUT_DIR [SEED]
//
// For each table NAME: NAME.sst, and NAME.answers, one line per key, in
// order: `<key hex> written|unwritten may-match|absent`, whether the table
// holds the key, then RocksDB's decision from the filter. The unwritten keys
// lie between the table's first and last keys (RocksDB consults a file's
// filter only for those). And hash64.vec, RocksDB's 64-bit key hash of
// inputs of every length.
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../common/common.h"

using namespace rocksdb;

// RocksDB's 64-bit key hash (util/hash.h, not in the public headers; the
// library exports it): XXPH3, what FastLocalBloom and Ribbon filters hash.
namespace rocksdb {
uint64_t Hash64(const char* data, size_t n);
}

static void check(const Status& s, const std::string& what) {
  if (!s.ok()) {
    fprintf(stderr, "gen-rocksdb: %s: %s\n", what.c_str(), s.ToString().c_str());
    exit(1);
  }
}


struct Spec {
  std::string name;
  std::string policy;  // "bloom" or "ribbon"
  double bits_per_key;
  int format_version;
  bool partitioned;
  ChecksumType checksum;
  CompressionType compression;
  int keys;
  bool varied;  // keys of varying lengths (with bytes >= 0x80), else fixed
  int prefix = 0;  // a fixed prefix extractor of this many bytes, none (0), or the no-op one (-1)
  bool whole = true;  // whole keys in the filter (with a prefix: else prefixes only)
  bool random = false;  // random 8-byte keys (no prefix shared between index separators)
  int restart = 4;  // index_block_restart_interval
  int dict = 0;  // max_dict_bytes: blocks compressed with a dictionary
};

// Key i of a table: even i are written, odd i are probed as absent.
static std::string key_of(const Spec& spec, uint64_t seed, int i) {
  char buf[32];
  snprintf(buf, sizeof buf, "key%08d", i);
  std::string key(buf);
  if (spec.varied) {
    Rng rng{seed * 0x9e3779b97f4a7c15ull + uint64_t(i) * 0x2545f4914f6cdd1dull + 1};
    int extra = int(rng.next() % 24);
    for (int j = 0; j < extra; j++) key.push_back(char(rng.next() & 0xff));
  }
  return key;
}

// A table's keys in order, 2 * spec.keys of them: written (even) and absent (odd).
static std::vector<std::string> keys_of(const Spec& spec, uint64_t seed) {
  std::vector<std::string> keys;
  if (!spec.random) {
    for (int i = 0; i < 2 * spec.keys; i++) keys.push_back(key_of(spec, seed, i));
    return keys;
  }
  // Random 8-byte keys: separators between index blocks share no prefix.
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 3};
  std::set<std::string> set;
  while (set.size() < size_t(2 * spec.keys)) {
    uint64_t x = rng.next();
    set.insert(std::string(reinterpret_cast<const char*>(&x), 8));
  }
  keys.assign(set.begin(), set.end());
  return keys;
}

static void write_table(const std::string& dir, const Spec& spec, uint64_t seed) {
  BlockBasedTableOptions table;
  if (spec.policy == "ribbon") {
    table.filter_policy.reset(NewRibbonFilterPolicy(spec.bits_per_key));
  } else {
    table.filter_policy.reset(NewBloomFilterPolicy(spec.bits_per_key));
  }
  table.format_version = spec.format_version;
  table.whole_key_filtering = spec.whole;
  table.checksum = spec.checksum;
  table.block_size = 1024;
  // Index entries that share key prefixes and (format_version >= 4) hold
  // size deltas instead of whole handles between restart points.
  table.index_block_restart_interval = spec.restart;
  if (spec.partitioned) {
    table.partition_filters = true;
    table.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 256;
  }
  Options options;
  options.table_factory.reset(NewBlockBasedTableFactory(table));
  options.compression = spec.compression;
  if (spec.prefix > 0) options.prefix_extractor.reset(NewFixedPrefixTransform(spec.prefix));
  if (spec.prefix < 0) options.prefix_extractor.reset(NewNoopTransform());
  if (spec.dict > 0) {
    options.compression_opts.max_dict_bytes = spec.dict;
    options.bottommost_compression_opts = options.compression_opts;
    options.bottommost_compression_opts.enabled = true;
  }
  options.create_if_missing = true;
  options.statistics = CreateDBStatistics();

  std::string sst = dir + "/" + spec.name + ".sst";
  SstFileWriter writer(EnvOptions(), options);
  check(writer.Open(sst), "open " + sst);
  std::vector<std::string> keys = keys_of(spec, seed);
  for (int i = 0; i < 2 * spec.keys; i += 2) {
    check(writer.Put(keys[i], "v" + std::to_string(i)), "put");
  }
  check(writer.Finish(), "finish " + sst);

  // RocksDB's own answers: ingest a copy, Get each probe key.
  std::string db_dir = dir + "/.db-" + spec.name;
  DestroyDB(db_dir, options);
  DB* raw = nullptr;
  check(DB::Open(options, db_dir, &raw), "open db");
  std::unique_ptr<DB> db(raw);
  IngestExternalFileOptions ingest;
  ingest.move_files = false;
  check(db->IngestExternalFile({sst}, ingest), "ingest " + sst);
  std::ofstream answers(dir + "/" + spec.name + ".answers");
  ReadOptions read;
  for (int i = 0; i < 2 * spec.keys - 1; i++) {
    const std::string& key = keys[i];
    uint64_t before = options.statistics->getTickerCount(BLOOM_FILTER_USEFUL);
    std::string value;
    Status s = db->Get(read, key, &value);
    if (!s.ok() && !s.IsNotFound()) check(s, "get");
    bool ruled_out = options.statistics->getTickerCount(BLOOM_FILTER_USEFUL) > before;
    if (i % 2 == 0 && (ruled_out || !s.ok())) {
      fprintf(stderr, "gen-rocksdb: %s: a written key was not found\n", spec.name.c_str());
      exit(1);
    }
    answers << hex(key) << (i % 2 == 0 ? " written" : " unwritten")
            << (ruled_out ? " absent" : " may-match") << "\n";
  }
  db.reset();
  DestroyDB(db_dir, options);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gen-rocksdb OUT_DIR [SEED]\n");
    return 2;
  }
  std::string dir = argv[1];
  uint64_t seed = argc > 2 ? strtoull(argv[2], nullptr, 10) : 1;
  std::vector<Spec> specs = {
      {"fastbloom-fv5-xxh3", "bloom", 10, 5, false, kXXH3, kNoCompression, 600, false},
      {"fastbloom-fv5-bpk6.5-crc32c", "bloom", 6.5, 5, false, kCRC32c, kNoCompression, 500, true},
      {"legacybloom-fv4-crc32c", "bloom", 10, 4, false, kCRC32c, kNoCompression, 600, true},
      {"legacybloom-fv2-xxhash64", "bloom", 10, 2, false, kxxHash64, kNoCompression, 600, false},
      {"ribbon-fv5-xxh3", "ribbon", 10, 5, false, kXXH3, kNoCompression, 500, true},
      {"ribbon-fv5-xxhash", "ribbon", 8, 5, false, kxxHash, kNoCompression, 700, false},
      {"fastbloom-fv5-partitioned-xxh3", "bloom", 10, 5, true, kXXH3, kNoCompression, 800, false},
      {"legacybloom-fv3-partitioned-crc32c", "bloom", 10, 3, true, kCRC32c, kNoCompression, 500, true},
      {"ribbon-fv4-partitioned-xxh3", "ribbon", 10, 4, true, kXXH3, kNoCompression, 600, true},
      {"fastbloom-fv5-none", "bloom", 10, 5, false, kNoChecksum, kNoCompression, 500, false},
      // Each codec, and the framings of format_version 1 (none before zlib,
      // 8 bytes of size before LZ4) and >= 2 (a varint32 size).
      {"fastbloom-fv5-snappy-xxh3", "bloom", 10, 5, false, kXXH3, kSnappyCompression, 300, true},
      {"fastbloom-fv5-partitioned-zstd-xxh3", "bloom", 10, 5, true, kXXH3, kZSTD, 600, false},
      {"legacybloom-fv4-lz4-crc32c", "bloom", 10, 4, false, kCRC32c, kLZ4Compression, 300, true},
      {"legacybloom-fv3-zlib-xxhash", "bloom", 10, 3, false, kxxHash, kZlibCompression, 300, false},
      {"legacybloom-fv2-partitioned-lz4hc-crc32c", "bloom", 10, 2, true, kCRC32c, kLZ4HCCompression, 400, true},
      {"legacybloom-fv0-snappy-crc32c", "bloom", 10, 0, false, kCRC32c, kSnappyCompression, 300, false},
      {"legacybloom-fv1-zlib-crc32c", "bloom", 10, 1, false, kCRC32c, kZlibCompression, 300, false},
      {"legacybloom-fv1-lz4-crc32c", "bloom", 10, 1, false, kCRC32c, kLZ4Compression, 300, true},
      {"ribbon-fv5-zstd-xxh3", "ribbon", 10, 5, false, kXXH3, kZSTD, 500, true},
      {"fastbloom-fv5-bzip2-xxh3", "bloom", 10, 5, false, kXXH3, kBZip2Compression, 300, true},
      {"legacybloom-fv1-bzip2-crc32c", "bloom", 10, 1, false, kCRC32c, kBZip2Compression, 300, false},
      // Whole keys and their first 4 bytes in the filter.
      {"fastbloom-fv5-prefix4-snappy-xxh3", "bloom", 10, 5, false, kXXH3, kSnappyCompression, 300, true, 4},
      // Prefixes alone (a Get probes the key's first 11 bytes: "key" and
      // its number), full and partitioned; and whole keys with prefixes in
      // partitions.
      {"fastbloom-fv5-prefixonly11-xxh3", "bloom", 10, 5, false, kXXH3, kNoCompression, 300, true, 11, false},
      {"fastbloom-fv5-partitioned-prefixonly11-xxh3", "bloom", 10, 5, true, kXXH3, kNoCompression, 500, true, 11, false},
      {"legacybloom-fv4-partitioned-prefix10-crc32c", "bloom", 10, 4, true, kCRC32c, kNoCompression, 600, true, 10},
      // Prefixes by the no-op extractor (the whole key) alone.
      {"fastbloom-fv5-prefixonlynoop-xxh3", "bloom", 10, 5, false, kXXH3, kNoCompression, 300, false, -1, false},
  };
  // Index blocks of random 8-byte keys, whose separators share no prefix:
  // with delta-encoded values (format_version >= 4), entries between
  // restart points that share nothing hold whole handles.
  for (int restart : {2, 16}) {
    std::string r = "-r" + std::to_string(restart) + "-random8";
    Spec full{"fastbloom-fv5" + r + "-xxh3", "bloom", 10, 5, false, kXXH3, kNoCompression, 600, false};
    Spec parted{"legacybloom-fv4-partitioned" + r + "-crc32c", "bloom", 10, 4, true, kCRC32c, kSnappyCompression, 600, false};
    for (Spec spec : {full, parted}) {
      spec.random = true;
      spec.restart = restart;
      specs.push_back(spec);
    }
  }
  // Data blocks compressed with a dictionary (rocksdb.compression_dict).
  for (auto [name, compression] : {std::make_pair("zstd", kZSTD), std::make_pair("lz4", kLZ4Compression),
                                   std::make_pair("zlib", kZlibCompression)}) {
    Spec spec{std::string("fastbloom-fv5-dict-") + name + "-xxh3", "bloom", 10, 5, false, kXXH3, compression, 400, true};
    spec.dict = 4096;
    specs.push_back(spec);
  }
  // RocksDB's sizing and probe counts across bits per key: small tables
  // whose full filters the builders must reproduce byte for byte.
  for (double bpk : {1.0, 2.5, 4.2, 8.0, 9.9, 12.3, 16.0, 20.5, 26.0, 33.3, 51.0}) {
    char bits[16];
    snprintf(bits, sizeof bits, "%g", bpk);
    specs.push_back({std::string("fastbloom-fv5-bpk") + bits + "-xxh3", "bloom", bpk, 5, false,
                     kXXH3, kNoCompression, 60, false});
    specs.push_back({std::string("legacybloom-fv4-bpk") + bits + "-crc32c", "bloom", bpk, 4,
                     false, kCRC32c, kNoCompression, 60, true});
  }
  for (const Spec& spec : specs) write_table(dir, spec, seed);
  // hash64.vec: `<input hex> <Hash64 as 16 hex digits>`, every length 0..=1100
  // (every path of XXPH3: short, mid-size, stripes, blocks of 1024).
  std::ofstream vec(dir + "/hash64.vec");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 7};
  for (int len = 0; len <= 1100; len += (len < 300 ? 1 : 37)) {
    std::string input;
    for (int j = 0; j < len; j++) input.push_back(char(rng.next() & 0xff));
    char digits[17];
    snprintf(digits, sizeof digits, "%016llx",
             (unsigned long long)Hash64(input.data(), input.size()));
    vec << hex(input) << " " << digits << "\n";
  }
  return 0;
}
