// Peak and current resident set from /proc/self/status (see attn/tensor/memory.hpp).
#include "attn/tensor/memory.hpp"

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
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

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif
#else
constexpr bool kSanitizerAllocator = false;
#endif

// Guards alive (training may run on several threads); only the outermost changes the allocator.
std::mutex g_retain_mutex;
int g_retain_depth = 0;

}  // namespace

RetainFreedMemory::RetainFreedMemory() {
#if defined(__GLIBC__)
  if (kSanitizerAllocator) return;
  active_ = true;
  const std::lock_guard<std::mutex> lock(g_retain_mutex);
  if (g_retain_depth++ > 0) return;
  // Blocks up to 256 MiB come from the heap, and up to 1 GiB of free heap stays mapped.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

RetainFreedMemory::~RetainFreedMemory() {
#if defined(__GLIBC__)
  if (!active_) return;
  const std::lock_guard<std::mutex> lock(g_retain_mutex);
  if (--g_retain_depth > 0) return;
  mallopt(M_MMAP_THRESHOLD, 128 << 10);  // glibc's defaults
  mallopt(M_TRIM_THRESHOLD, 128 << 10);
  malloc_trim(0);
#endif
}

}  // namespace attn
