#include "tests/edge/alloc_counter.h"

#include <cstdlib>
#include <new>

namespace {
thread_local size_t allocations = 0;
}  // namespace

namespace shortener::edge::testing {
size_t ThreadAllocations() { return allocations; }
}  // namespace shortener::edge::testing

void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
