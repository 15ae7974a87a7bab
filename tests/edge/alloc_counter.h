// Counts heap allocations made by the current thread, so tests can assert
// that a hot-path function allocates nothing. alloc_counter.cc replaces the
// global operator new for the whole edge_test binary.
#ifndef SHORTENER_TESTS_EDGE_ALLOC_COUNTER_H_
#define SHORTENER_TESTS_EDGE_ALLOC_COUNTER_H_

#include <cstddef>

namespace shortener::edge::testing {

// Allocations by this thread since it started.
size_t ThreadAllocations();

}  // namespace shortener::edge::testing

#endif  // SHORTENER_TESTS_EDGE_ALLOC_COUNTER_H_
