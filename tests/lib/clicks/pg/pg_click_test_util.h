// The PgClickStore of the click store tests: a short acquire timeout (a
// stopped database fails fast) and a stand-in for the codec ("g" + id) so
// that notified codes are predictable.
#ifndef SHORTENER_TESTS_LIB_CLICKS_PG_PG_CLICK_TEST_UTIL_H_
#define SHORTENER_TESTS_LIB_CLICKS_PG_PG_CLICK_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"

namespace shortener::clicks {

inline std::string TestGeneratedCode(int64_t id) { return absl::StrCat("g", id); }

inline std::unique_ptr<PgClickStore> NewTestClickStore(
    const std::string& conninfo, const std::string& channel = "shortener_invalidations") {
  PgClickStoreOptions options;
  options.conninfo = conninfo;
  options.acquire_timeout = absl::Seconds(2);
  options.invalidation_channel = channel;
  options.generated_code = [](int64_t id) -> absl::StatusOr<std::string> {
    return TestGeneratedCode(id);
  };
  auto store = PgClickStore::Create(options);
  REQUIRE(store.ok());
  return std::move(store).value();
}

}  // namespace shortener::clicks

#endif  // SHORTENER_TESTS_LIB_CLICKS_PG_PG_CLICK_TEST_UTIL_H_
