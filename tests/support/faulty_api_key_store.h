// FaultyApiKeyStore: an ApiKeyStore that forwards every call to another one
// through a FaultPlan (tests/support/fault_plan.h): calls can fail, be slow
// or wait at a gate, and are counted per method ("Create", "FindByHash",
// "List", "Revoke"). Header-only, so only the tests that use it link
// lib/auth.
//
// Thread safety: as the wrapped store.
#ifndef SHORTENER_TESTS_SUPPORT_FAULTY_API_KEY_STORE_H_
#define SHORTENER_TESTS_SUPPORT_FAULTY_API_KEY_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/auth/api_key_store.h"
#include "tests/support/fault_plan.h"

namespace shortener::testing {

class FaultyApiKeyStore final : public auth::ApiKeyStore {
 public:
  // Both must outlive the wrapper.
  FaultyApiKeyStore(auth::ApiKeyStore* inner, FaultPlan* plan) : inner_(inner), plan_(plan) {}

  absl::StatusOr<auth::ApiKeyRecord> Create(const auth::NewApiKey& key) override {
    absl::Status injected = plan_->OnCall("Create");
    if (!injected.ok()) return injected;
    return inner_->Create(key);
  }
  absl::StatusOr<auth::ApiKeyRecord> FindByHash(const std::string& key_hash) override {
    absl::Status injected = plan_->OnCall("FindByHash");
    if (!injected.ok()) return injected;
    return inner_->FindByHash(key_hash);
  }
  absl::StatusOr<std::vector<auth::ApiKeyRecord>> List() override {
    absl::Status injected = plan_->OnCall("List");
    if (!injected.ok()) return injected;
    return inner_->List();
  }
  absl::StatusOr<auth::ApiKeyRecord> Revoke(int64_t id, absl::Time when) override {
    absl::Status injected = plan_->OnCall("Revoke");
    if (!injected.ok()) return injected;
    return inner_->Revoke(id, when);
  }

 private:
  auth::ApiKeyStore* const inner_;
  FaultPlan* const plan_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_FAULTY_API_KEY_STORE_H_
