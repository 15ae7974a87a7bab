// EntryTable (a shard's storage): random inserts, erases and evictions
// checked against a std::map model, so slot moves and index re-pointing are
// exercised in every order.
#include "edge/cache/entry_table.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "edge/cache/link_cache.h"

namespace shortener::edge::internal {
namespace {

ResolveResult ActiveResult() {
  ResolveResult r;
  r.outcome = ResolveOutcome::kActive;
  return r;
}

TEST_CASE("cache: entry table agrees with a model through random inserts erases and evictions",
          "[edge/cache]") {
  EntryTable table;
  std::map<std::string, std::string> model;  // key -> location
  std::mt19937 rng(42);
  int evictions = 0;
  int mismatches = 0;
  for (int op = 0; op < 20'000; ++op) {
    const std::string key = absl::StrCat("key", rng() % 300);
    const HashedKey k = HashedKey::Of(key);
    const unsigned action = rng() % 10;
    if (action < 4) {
      if (model.count(key) == 0) {
        const std::string location = absl::StrCat("https://example.com/", key, "/", op);
        table.Insert(k, ActiveResult(), location, 100, 200);
        model[key] = location;
      }
    } else if (action < 6) {
      if (table.Erase(k) != (model.erase(key) == 1)) ++mismatches;
    } else if (action < 7) {
      if (table.size() > 0) {
        table.EvictOne(0);
        ++evictions;
        for (auto it = model.begin(); it != model.end();) {
          it = table.Find(HashedKey::Of(it->first)) == nullptr ? model.erase(it) : std::next(it);
        }
      }
    } else {
      Entry* e = table.Find(k);
      auto m = model.find(key);
      if ((e == nullptr) != (m == model.end())) {
        ++mismatches;
      } else if (e != nullptr) {
        if (e->location() != m->second || e->key() != key) ++mismatches;
        if (rng() % 2 == 0) e->referenced = true;
      }
    }
    if (table.size() != model.size()) ++mismatches;
    if (op % 97 == 0) {
      const absl::Status status = table.CheckConsistency();
      INFO(status.ToString());
      REQUIRE(status.ok());
    }
  }
  CHECK(mismatches == 0);
  CHECK(evictions > 1000);
  size_t bytes = 0;
  for (const auto& [key, location] : model) bytes += LinkCache::EstimatedEntryBytes(key, location);
  CHECK(table.bytes() == bytes);
  CHECK(table.CheckConsistency().ok());
  table.Clear();
  CHECK(table.size() == 0);
  CHECK(table.bytes() == 0);
}

TEST_CASE("cache: entry table evicts a dead entry even when it is referenced", "[edge/cache]") {
  EntryTable table;
  for (const char* key : {"a", "b", "c"}) {
    table.Insert(HashedKey::Of(key), ActiveResult(), "https://x.example/", 10,
                 key[0] == 'b' ? 20 : 99);
    table.Find(HashedKey::Of(key))->referenced = true;
  }
  CHECK(table.EvictOne(20));  // dead
  CHECK(table.Find(HashedKey::Of("b")) == nullptr);
  CHECK_FALSE(table.EvictOne(20));  // a live one, after a turn clearing bits
  CHECK(table.size() == 1);
}

}  // namespace
}  // namespace shortener::edge::internal
