// The ClickStore contract suite (click_store_contract*.cc) is written once
// and compiled into one test binary per implementation: clicks_test
// (InMemoryClickStore) and clicks_pg_test (PgClickStore on a private
// PostgreSQL). Each such binary defines NewContractClickStore(); this header
// also holds the test data helpers the click store tests share.
//
// Test data is unique per process (link ids and batch ids from counters),
// so tests may share one database.
#ifndef SHORTENER_TESTS_LIB_CLICKS_CLICK_STORE_CONTRACT_H_
#define SHORTENER_TESTS_LIB_CLICKS_CLICK_STORE_CONTRACT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/clicks/click_stats.h"
#include "lib/clicks/click_store.h"
#include "lib/clicks/clicks.h"

namespace shortener::clicks::testing {

// Defined by each binary that links click_store_contract.cc. Every call
// gives a store of its own; PgClickStore's share the test database.
std::unique_ptr<ClickStore> NewContractClickStore();
// Defined by each such binary too: from now on, link `link_id` carries the
// labels `label_ids` for every store of NewContractClickStore
// (PgClickStore: its links row's label_ids, the row made if missing).
void SetLinkLabels(int64_t link_id, const std::vector<int64_t>& label_ids);

// An RFC 3339 time ("2030-01-05T10:15:00Z"); REQUIREs that it parses.
absl::Time At(const char* text);

// A link id no other test of this process uses (none of the fixed ids of
// the Postgres-only tests either).
int64_t NextLinkId();
// "<prefix>-<n>", unique in this process.
std::string UniqueBatchId(absl::string_view prefix);

// A click of client 192.0.2.7 with "Mozilla/5.0": Chrome 120 on Android 14,
// mobile, from example.com; a bot's is Googlebot 2 on Android, device bot.
ClickRow Click(int64_t link_id, absl::Time time, bool bot = false);
// A human click of `client` (an IP, hashed with "Mozilla/5.0" into the
// client id) with the given browser, os, device, referrer and country.
ClickRow Human(int64_t link_id, const char* time, const std::string& client,
               const std::string& browser, const std::string& os, const std::string& device,
               const std::string& referrer, const std::string& country);
// A bot click (Googlebot, device bot) of 203.0.113.9.
ClickRow Bot(int64_t link_id, const char* time);

// A top list as (value, clicks) pairs, for comparisons that print well.
using Top = std::vector<std::pair<std::string, int64_t>>;
Top Pairs(const std::vector<CountedValue>& list);

}  // namespace shortener::clicks::testing

#endif  // SHORTENER_TESTS_LIB_CLICKS_CLICK_STORE_CONTRACT_H_
