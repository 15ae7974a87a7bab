// Link cache memory: the per-entry byte estimate against the heap really
// used (glibc's mallinfo2), and a hidden 1 M-entry measurement for the
// numbers in the header and docs/benchmarks.md:
//   build/.../bin/edge_cache_test "[memory]"
#include <malloc.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "edge/cache/link_cache.h"
#include "tests/edge/cache/link_cache_test_util.h"

namespace shortener::edge {
namespace {

using testing::Active;
using testing::Fill;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRealMalloc = false;  // the sanitizer's allocator: mallinfo2 says nothing
#else
constexpr bool kRealMalloc = true;
#endif

size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

struct Measurement {
  size_t entries = 0;
  double heap_per_entry = 0;      // measured
  double estimate_per_entry = 0;  // LinkCache's estimate
  size_t resident_growth = 0;
};

// Fills `n` distinct 8-character codes mapped to one 60-byte URL.
Measurement FillAndMeasure(size_t n, LinkCacheOptions options) {
  const std::string url = "https://example.com/landing/" + std::string(32, 'p');
  std::string key = "00000000";
  const size_t heap_before = HeapInUse();
  const size_t resident_before = ResidentBytes();
  auto cache = std::make_unique<LinkCache>(options);
  for (size_t i = 0; i < n; ++i) {
    size_t v = i;
    for (char& c : key) {
      c = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[v % 62];
      v /= 62;
    }
    Fill(*cache, key, Active(url), 0);
  }
  Measurement m;
  const LinkCacheStats stats = cache->Stats();
  m.entries = stats.entries;
  m.heap_per_entry = static_cast<double>(HeapInUse() - heap_before) / stats.entries;
  m.estimate_per_entry = static_cast<double>(stats.bytes) / stats.entries;
  m.resident_growth = ResidentBytes() - resident_before;
  return m;
}

TEST_CASE("cache: the byte estimate is within a fifth of the heap really used", "[edge/cache]") {
  if (!kRealMalloc) {
    WARN("sanitizer allocator: heap use not measurable, nothing checked");
    return;
  }
  LinkCacheOptions options;
  options.max_entries = 200'000;
  options.negative_share = 0;  // every entry for the links measured
  const Measurement m = FillAndMeasure(200'000, options);
  INFO("heap/entry " << m.heap_per_entry << ", estimate/entry " << m.estimate_per_entry);
  CHECK(m.entries > 190'000);
  CHECK(m.heap_per_entry <= 1.2 * m.estimate_per_entry);
  CHECK(m.heap_per_entry >= 0.8 * m.estimate_per_entry);
}

TEST_CASE("cache: memory for a million entries with 60-byte URLs", "[edge/cache][.][memory]") {
  const Measurement m = FillAndMeasure(1'000'000, LinkCacheOptions{});
  std::printf(
      "entries %zu, heap %.1f bytes/entry, estimate %.1f bytes/entry, resident growth %.1f MB\n",
      m.entries, m.heap_per_entry, m.estimate_per_entry, m.resident_growth / 1e6);
  CHECK(m.resident_growth < 250'000'000);
}

}  // namespace
}  // namespace shortener::edge
