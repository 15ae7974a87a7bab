// FaultyClickStore: a ClickStore that forwards every call to another one
// through a FaultPlan (tests/support/fault_plan.h): calls can fail, be slow
// or wait at a gate, and are counted per method ("Record", "Stats",
// "HumanTotal"; Record's batch size is its number of rows). Header-only, so
// only the tests that use it link lib/clicks.
//
// An injected failure is returned instead of forwarding: the wrapped store
// never sees the call, so a failed Record wrote nothing (as a store's
// failure before its commit; a retry with the same batch id records it).
//
// Thread safety: as the wrapped store.
#ifndef SHORTENER_TESTS_SUPPORT_FAULTY_CLICK_STORE_H_
#define SHORTENER_TESTS_SUPPORT_FAULTY_CLICK_STORE_H_

#include <string>

#include "lib/clicks/click_store.h"
#include "tests/support/fault_plan.h"

namespace shortener::testing {

class FaultyClickStore final : public clicks::ClickStore {
 public:
  // Both must outlive the wrapper.
  FaultyClickStore(clicks::ClickStore* inner, FaultPlan* plan) : inner_(inner), plan_(plan) {}

  absl::StatusOr<clicks::RecordOutcome> Record(const std::string& batch_id,
                                               absl::Span<const clicks::ClickRow> rows,
                                               bool record_visits) override {
    absl::Status injected = plan_->OnCall("Record", rows.size());
    if (!injected.ok()) return injected;
    return inner_->Record(batch_id, rows, record_visits);
  }
  absl::StatusOr<clicks::ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                           clicks::StatsGranularity granularity) override {
    absl::Status injected = plan_->OnCall("Stats");
    if (!injected.ok()) return injected;
    return inner_->Stats(link_id, start, end, granularity);
  }
  absl::StatusOr<clicks::ClickStats> SubjectStats(const clicks::Subject& subject, absl::Time start,
                                                  absl::Time end,
                                                  clicks::StatsGranularity granularity) override {
    absl::Status injected = plan_->OnCall("SubjectStats");
    if (!injected.ok()) return injected;
    return inner_->SubjectStats(subject, start, end, granularity);
  }
  absl::StatusOr<int64_t> HumanTotal(int64_t link_id) override {
    absl::Status injected = plan_->OnCall("HumanTotal");
    if (!injected.ok()) return injected;
    return inner_->HumanTotal(link_id);
  }
  absl::StatusOr<std::vector<int64_t>> HumanTotals(absl::Span<const int64_t> link_ids) override {
    absl::Status injected = plan_->OnCall("HumanTotals");
    if (!injected.ok()) return injected;
    return inner_->HumanTotals(link_ids);
  }
  absl::Status EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) override {
    absl::Status injected = plan_->OnCall("EraseLinks");
    if (!injected.ok()) return injected;
    return inner_->EraseLinks(link_ids, when);
  }

 private:
  clicks::ClickStore* const inner_;
  FaultPlan* const plan_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_FAULTY_CLICK_STORE_H_
