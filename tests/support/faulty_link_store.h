// FaultyLinkStore: a LinkStore that forwards every call to another one
// through a FaultPlan (tests/support/fault_plan.h): calls can fail, be slow
// or wait at a gate, and are counted per method with their batch sizes.
// Header-only, so only the tests that use it link lib/store.
//
// An injected failure of CreateLinks fails every item with it (as a
// whole-batch failure does); the lookups and Revoke return it.
//
// Thread safety: as the wrapped store.
#ifndef SHORTENER_TESTS_SUPPORT_FAULTY_LINK_STORE_H_
#define SHORTENER_TESTS_SUPPORT_FAULTY_LINK_STORE_H_

#include <string>
#include <vector>

#include "lib/store/link_store.h"
#include "tests/support/fault_plan.h"

namespace shortener::testing {

class FaultyLinkStore final : public store::LinkStore {
 public:
  // Both must outlive the wrapper.
  FaultyLinkStore(store::LinkStore* inner, FaultPlan* plan) : inner_(inner), plan_(plan) {}

  std::vector<absl::StatusOr<store::CreateOutcome>> CreateLinks(
      absl::Span<const store::NewLink> links) override {
    absl::Status injected = plan_->OnCall("CreateLinks", links.size());
    if (!injected.ok()) {
      return std::vector<absl::StatusOr<store::CreateOutcome>>(links.size(), injected);
    }
    return inner_->CreateLinks(links);
  }
  absl::StatusOr<store::Link> GetById(int64_t id) override {
    absl::Status injected = plan_->OnCall("GetById");
    if (!injected.ok()) return injected;
    return inner_->GetById(id);
  }
  absl::StatusOr<store::Link> GetByAlias(const std::string& alias) override {
    absl::Status injected = plan_->OnCall("GetByAlias");
    if (!injected.ok()) return injected;
    return inner_->GetByAlias(alias);
  }
  absl::StatusOr<std::vector<absl::StatusOr<store::Link>>> GetByIds(
      absl::Span<const int64_t> ids) override {
    absl::Status injected = plan_->OnCall("GetByIds", ids.size());
    if (!injected.ok()) return injected;
    return inner_->GetByIds(ids);
  }
  absl::StatusOr<std::vector<absl::StatusOr<store::Link>>> GetByAliases(
      absl::Span<const std::string> aliases) override {
    absl::Status injected = plan_->OnCall("GetByAliases", aliases.size());
    if (!injected.ok()) return injected;
    return inner_->GetByAliases(aliases);
  }
  absl::StatusOr<store::Link> Revoke(int64_t id, absl::Time when,
                                     const std::string& code) override {
    absl::Status injected = plan_->OnCall("Revoke");
    if (!injected.ok()) return injected;
    return inner_->Revoke(id, when, code);
  }
  absl::StatusOr<int64_t> FindLabelId(const std::string& tenant, const std::string& key,
                                      const std::string& value) override {
    absl::Status injected = plan_->OnCall("FindLabelId");
    if (!injected.ok()) return injected;
    return inner_->FindLabelId(tenant, key, value);
  }
  absl::StatusOr<store::LinkPage> ListLinks(const store::LinkListQuery& query) override {
    absl::Status injected = plan_->OnCall("ListLinks");
    if (!injected.ok()) return injected;
    return inner_->ListLinks(query);
  }
  absl::StatusOr<store::Link> UpdateLink(const store::LinkUpdate& update) override {
    absl::Status injected = plan_->OnCall("UpdateLink");
    if (!injected.ok()) return injected;
    return inner_->UpdateLink(update);
  }
  absl::StatusOr<std::vector<store::LinkChange>> LinkHistory(int64_t id) override {
    absl::Status injected = plan_->OnCall("LinkHistory");
    if (!injected.ok()) return injected;
    return inner_->LinkHistory(id);
  }
  absl::StatusOr<std::vector<store::Link>> DeleteLinks(
      const store::LinkDeletion& deletion) override {
    absl::Status injected = plan_->OnCall("DeleteLinks");
    if (!injected.ok()) return injected;
    return inner_->DeleteLinks(deletion);
  }
  absl::StatusOr<std::vector<store::Link>> RevokeLinks(absl::Span<const store::LinkRef> links,
                                                       absl::Time when) override {
    absl::Status injected = plan_->OnCall("RevokeLinks");
    if (!injected.ok()) return injected;
    return inner_->RevokeLinks(links, when);
  }
  absl::StatusOr<std::vector<int64_t>> LinksToErase(int limit) override {
    absl::Status injected = plan_->OnCall("LinksToErase");
    if (!injected.ok()) return injected;
    return inner_->LinksToErase(limit);
  }
  absl::Status MarkErased(absl::Span<const int64_t> ids, absl::Time when) override {
    absl::Status injected = plan_->OnCall("MarkErased");
    if (!injected.ok()) return injected;
    return inner_->MarkErased(ids, when);
  }
  absl::StatusOr<int64_t> ReleaseDeletedLinks(absl::Time now) override {
    absl::Status injected = plan_->OnCall("ReleaseDeletedLinks");
    if (!injected.ok()) return injected;
    return inner_->ReleaseDeletedLinks(now);
  }

 private:
  store::LinkStore* const inner_;
  FaultPlan* const plan_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_FAULTY_LINK_STORE_H_
