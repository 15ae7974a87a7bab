// Base62 digits ("0-9A-Za-z", digit value = index) and the tier capacities of
// the version-1 code format. Internal to lib/codec; header-only, pure.
//
// Thread safety: stateless functions and constant tables.
#ifndef SHORTENER_LIB_CODEC_BASE62_H_
#define SHORTENER_LIB_CODEC_BASE62_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace shortener::codec::internal {

inline constexpr char kBase62Alphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

namespace base62_detail {
constexpr std::array<int8_t, 256> MakeDigitTable() {
  std::array<int8_t, 256> table = {};
  for (auto& v : table) v = -1;
  for (int i = 0; i < 62; ++i) {
    table[static_cast<unsigned char>(kBase62Alphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
inline constexpr std::array<int8_t, 256> kDigitTable = MakeDigitTable();
}  // namespace base62_detail

// The value 0..61 of a base62 digit, or -1 if `c` is not one.
constexpr int Base62DigitValue(char c) {
  return base62_detail::kDigitTable[static_cast<unsigned char>(c)];
}

// Number of version-1 bodies of length L (1..10): 61 * 62^(L-1), because the
// leading digit 61 ('z') is reserved.
constexpr uint64_t TierCapacity(int length) {
  uint64_t capacity = 61;
  for (int i = 1; i < length; ++i) capacity *= 62;
  return capacity;
}

// `value` as exactly `length` base62 digits, most significant first.
// Requires value < 62^length (higher digits would be dropped).
inline std::string ToBase62(uint64_t value, int length) {
  std::string out(length, '0');
  for (int i = length - 1; i >= 0; --i) {
    out[i] = kBase62Alphabet[value % 62];  // % 62, never a bit mask
    value /= 62;
  }
  return out;
}

// The value of base62 `digits`. Requires at most 10 valid digits (so the
// result fits: 62^10 < 2^60).
inline uint64_t FromBase62(absl::string_view digits) {
  uint64_t value = 0;
  for (char c : digits) value = value * 62 + Base62DigitValue(c);
  return value;
}

}  // namespace shortener::codec::internal

#endif  // SHORTENER_LIB_CODEC_BASE62_H_
