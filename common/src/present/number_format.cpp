// Counts and byte sizes for display (see attn/present/number_format.hpp).
#include "attn/present/number_format.hpp"

#include <fmt/format.h>

namespace attn {

std::string format_count(std::size_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

std::string format_bytes(double b) {
  constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024;
  if (b >= GiB) return fmt::format("{:.2f} GiB", b / GiB);
  if (b >= MiB) return fmt::format("{:.2f} MiB", b / MiB);
  if (b >= KiB) return fmt::format("{:.1f} KiB", b / KiB);
  return fmt::format("{:.0f} B", b);
}

}  // namespace attn
