// Peak and current resident set from /proc/self/status (see attn/tensor/memory.hpp).
#include "attn/tensor/memory.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

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

// MemAvailable in /proc/meminfo, in bytes, or -1.
long long meminfo_available() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return -1;
}

// A cgroup v2 limit minus what the group uses already, or -1 when unlimited or unknown.
long long cgroup_available() {
  std::ifstream maxf("/sys/fs/cgroup/memory.max"), curf("/sys/fs/cgroup/memory.current");
  std::string max;
  long long cur = 0;
  if (!(maxf >> max) || max == "max" || !(curf >> cur)) return -1;
  try {
    return std::max(0LL, std::stoll(max) - cur);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

long long available_memory_bytes() {
  long long best = -1;
  auto take = [&](long long v) {
    if (v >= 0) best = best < 0 ? v : std::min(best, v);
  };
  take(meminfo_available());
  take(cgroup_available());
  for (int which : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit lim{};
    if (::getrlimit(which, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
      const long long used = status_kib_field(which == RLIMIT_AS ? "VmSize" : "VmData");
      if (used >= 0) take(std::max(0LL, static_cast<long long>(lim.rlim_cur) - used));
    }
  }
  return best;
}

long long peak_rss_bytes() { return status_kib_field("VmHWM"); }
long long current_rss_bytes() { return status_kib_field("VmRSS"); }

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace attn
