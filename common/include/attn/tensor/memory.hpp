// Peak memory, measured two ways (chapters 06 and 11 print both where they differ):
//  * counted: the bytes of working buffers an algorithm allocates, from its own formula
//    (e.g. fast_attention_workspace_bytes). Exact, the same on every run and machine, and it is
//    what the algorithm's memory claim is about (n×n vs tiles).
//  * measured: the process's peak resident set (VmHWM in /proc/self/status) after resetting it
//    (writing "5" to /proc/self/clear_refs, Linux >= 4.0). It includes the allocator's and the
//    libraries' own memory (OpenBLAS buffers, thread stacks) and pages only once touched, so it
//    cross-checks the count; it is unavailable (returns -1) where /proc is not Linux's.
#pragma once

#include <cstddef>

namespace attn {

// VmHWM (peak resident set) of this process in bytes, or -1 when it cannot be read.
long long peak_rss_bytes();
// VmRSS (current resident set) in bytes, or -1.
long long current_rss_bytes();
// Bytes this process can still allocate, as far as Linux says: the least of MemAvailable, the
// cgroup's memory.max minus memory.current, and the address-space / data rlimits (ulimit -v, -d)
// minus what is in use. -1 when none of them can be read. Checked before a huge allocation so
// that the error can say what was needed instead of std::bad_alloc.
long long available_memory_bytes();
// Resets VmHWM to the current VmRSS; false when the kernel does not allow it.
bool reset_peak_rss();

// Runs fn() and returns the growth of the peak resident set over the resident set before it,
// in bytes (-1 when unavailable). Freed memory returned to the OS before fn() is not counted.
template <class Fn>
long long measure_peak_growth(Fn&& fn) {
  const bool ok = reset_peak_rss();
  const long long before = current_rss_bytes();
  fn();
  const long long peak = peak_rss_bytes();
  if (!ok || before < 0 || peak < 0) return -1;
  return peak > before ? peak - before : 0;
}

constexpr double kMiB = 1024.0 * 1024.0;

// While one of these lives, memory that a training step frees stays with the allocator for the
// next step instead of going back to the kernel. glibc hands every block over 128 KiB to mmap and
// returns it on free, so each step's activations and gradients would be fresh pages, faulted in
// and zeroed again (about a fifth of chapter 08's training step on the build machine). Training
// loops and step timers hold one; the resident set then stays at the peak of one step. The
// outermost guard restores glibc's default thresholds and trims the heap, so the peak-memory
// measurements of chapters 06 and 11 (which must see fresh pages) are unaffected.
// active() is false where it cannot work: not glibc, or a sanitizer's own allocator.
class RetainFreedMemory {
 public:
  RetainFreedMemory();
  ~RetainFreedMemory();
  RetainFreedMemory(const RetainFreedMemory&) = delete;
  RetainFreedMemory& operator=(const RetainFreedMemory&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

}  // namespace attn
