// Peak and current resident set from /proc/self/status (see attn/tensor/memory.hpp).
#include "attn/tensor/memory.hpp"

#include <cstdio>
#include <cstring>

namespace attn {

namespace {

// The value of "Key:   1234 kB" in /proc/self/status, in bytes, or -1.
long long status_kib_field(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long long value = -1;
  const std::size_t len = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, len) == 0 && line[len] == ':') {
      long long kib = 0;
      if (std::sscanf(line + len + 1, "%lld", &kib) == 1) value = kib * 1024;
      break;
    }
  }
  std::fclose(f);
  return value;
}

}  // namespace

long long peak_rss_bytes() { return status_kib_field("VmHWM"); }
long long current_rss_bytes() { return status_kib_field("VmRSS"); }

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace attn
