// Invariant checks for the fuzz targets of tests/fuzz.
//
// A target that finds a memory error or UB crashes under ASan/UBSan on its
// own; FUZZ_CHECK makes a broken contract (a result the function's header
// promises cannot happen) crash the same way, so libFuzzer saves the input.
// It prints the condition and where it failed to stderr, then traps.
#ifndef SHORTENER_TESTS_FUZZ_FUZZ_CHECK_H_
#define SHORTENER_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>

#define FUZZ_CHECK(condition)                                                                     \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      __builtin_trap();                                                                           \
    }                                                                                             \
  } while (false)

#endif  // SHORTENER_TESTS_FUZZ_FUZZ_CHECK_H_
