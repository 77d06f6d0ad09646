// Numbers as the lessons print them: counts with thousands separators ("1,554", "997,760") and
// byte sizes in the largest binary unit that keeps them ≥ 1 ("640 B", "1.2 KiB", "20.00 MiB").
#pragma once

#include <cstddef>
#include <string>

namespace attn {

std::string format_count(std::size_t n);
std::string format_bytes(double bytes);

}  // namespace attn
