// A large RocksDB table for measuring what verifying it costs: written by
// RocksDB 7.8.3's SstFileWriter, keys "key%012llu" in order, values of
// incompressible bytes, no compression, format_version 5, a 10-bit-per-key
// Bloom filter (full, or partitioned with a two-level index).
//
//   g++ -O2 -std=c++17 oracle/rocksdb-7.8/gen-rocksdb-big.cc -lrocksdb -o /tmp/gen-rocksdb-big
//   /tmp/gen-rocksdb-big OUT.sst MIB full|partitioned [VALUE_LEN]

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>

int main(int argc, char** argv) {
  if (argc < 4 || (strcmp(argv[3], "full") != 0 && strcmp(argv[3], "partitioned") != 0)) {
    fprintf(stderr, "usage: %s OUT.sst MIB full|partitioned [VALUE_LEN]\n", argv[0]);
    return 2;
  }
  const unsigned long long target = strtoull(argv[2], nullptr, 10) << 20;
  const size_t value_len = argc > 4 ? strtoul(argv[4], nullptr, 10) : 1000;
  const bool partitioned = strcmp(argv[3], "partitioned") == 0;

  rocksdb::BlockBasedTableOptions table;
  table.format_version = 5;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  if (partitioned) {
    table.partition_filters = true;
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  }
  rocksdb::Options options;
  options.compression = rocksdb::kNoCompression;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(argv[1]);
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", argv[1], s.ToString().c_str());
    return 1;
  }
  std::mt19937_64 random(20261128);
  std::string value(value_len, '\0');
  char key[32];
  unsigned long long written = 0;
  for (unsigned long long i = 0; written < target; i++) {
    for (size_t j = 0; j < value_len; j += 8) {
      uint64_t r = random();
      memcpy(&value[j], &r, std::min<size_t>(8, value_len - j));
    }
    int n = snprintf(key, sizeof key, "key%012llu", i);
    s = writer.Put(rocksdb::Slice(key, n), value);
    if (!s.ok()) {
      fprintf(stderr, "%s: %s\n", argv[1], s.ToString().c_str());
      return 1;
    }
    written += n + value_len;
  }
  rocksdb::ExternalSstFileInfo info;
  s = writer.Finish(&info);
  if (!s.ok()) {
    fprintf(stderr, "%s: %s\n", argv[1], s.ToString().c_str());
    return 1;
  }
  printf("%s: %llu keys, %llu bytes\n", argv[1], (unsigned long long)info.num_entries,
         (unsigned long long)info.file_size);
  return 0;
}
