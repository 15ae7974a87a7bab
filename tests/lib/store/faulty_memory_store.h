// An InMemoryLinkStore behind a FaultyLinkStore: the tests of the store's
// batchers slow down, hold or break its calls through `plan`, read what the
// batchers sent from it (calls, batch sizes, threads), and look at what was
// stored through `memory`.
#ifndef SHORTENER_TESTS_LIB_STORE_FAULTY_MEMORY_STORE_H_
#define SHORTENER_TESTS_LIB_STORE_FAULTY_MEMORY_STORE_H_

#include "lib/store/in_memory_link_store.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_link_store.h"

namespace shortener::store::testing {

struct FaultyMemoryStore {
  InMemoryLinkStore memory;
  shortener::testing::FaultPlan plan;
  shortener::testing::FaultyLinkStore store{&memory, &plan};
};

}  // namespace shortener::store::testing

#endif  // SHORTENER_TESTS_LIB_STORE_FAULTY_MEMORY_STORE_H_
