// The LinkStore contract suite (link_store_contract*.cc) is written once and
// compiled into one test binary per implementation. Each such binary defines
// NewContractStore(); this header also holds the test-data helpers the store
// tests share.
//
// Test data is unique per process (ids, owners, aliases from counters), so
// tests may share one database.
#ifndef SHORTENER_TESTS_LIB_STORE_LINK_STORE_CONTRACT_H_
#define SHORTENER_TESTS_LIB_STORE_LINK_STORE_CONTRACT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/store/link.h"
#include "lib/store/link_store.h"

namespace shortener::store::testing {

// Defined by each binary that links link_store_contract.cc.
std::unique_ptr<LinkStore> NewContractStore();
// Makes `store` (one NewContractStore returned) rank link `link_id` of
// `owner` with `human` clicks under LinkOrder::kMostClicked, as the click
// store's merge would. Defined by each binary too.
void SetRankedClicks(LinkStore& store, int64_t link_id, const std::string& owner, int64_t human);
// Makes link `link_id` count `human` human clicks, as the click store's
// counts would (what UpdateLink judges a budget against). Defined by each
// binary too.
void SetCountedClicks(LinkStore& store, int64_t link_id, int64_t human);

// A fixed time with sub-microsecond digits (...123456789 ns), to check that
// stores keep microseconds.
absl::Time T0();

// A link id no other test of this process uses.
int64_t NextId();
// "<prefix>-<n>", unique in this process.
std::string UniqueName(absl::string_view prefix);
// SHA-256 of `text` (32 raw bytes).
std::string Sha256(absl::string_view text);

// A NewLink with a fresh id, its URL's hash, create_time T0(), dedupe on.
NewLink MakeNewLink(const std::string& owner, const std::string& long_url);

// store.CreateLinks(links).
std::vector<absl::StatusOr<CreateOutcome>> Create(LinkStore& store, std::vector<NewLink> links);
// The result of creating `link` alone (REQUIREs one result).
absl::StatusOr<CreateOutcome> CreateOne(LinkStore& store, NewLink link);
// CHECKs every field.
void CheckSameLink(const Link& got, const Link& want);

}  // namespace shortener::store::testing

#endif  // SHORTENER_TESTS_LIB_STORE_LINK_STORE_CONTRACT_H_
