// The per-architecture table (CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability"); every rule reads its limits through limits_on().
#include "arch.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "error.hpp"
#include "file_util.hpp"

namespace sgt {

namespace {

constexpr int KiB = 1024;

const std::vector<ArchInfo> kArchs = {
    {7, 0, "V100", 2048, 32, 96 * KiB, 96 * KiB, 65536, 255, false, false},
    {7, 5, "T4, RTX 20", 1024, 16, 64 * KiB, 64 * KiB, 65536, 255, false, false},
    {8, 0, "A100", 2048, 32, 164 * KiB, 163 * KiB, 65536, 255, false, false},
    {8, 6, "A10, RTX 30", 1536, 16, 100 * KiB, 99 * KiB, 65536, 255, false, false},
    {8, 7, "Jetson Orin", 2048, 16, 164 * KiB, 163 * KiB, 65536, 255, false, false},
    {8, 9, "L4, L40, RTX 40", 1536, 24, 100 * KiB, 99 * KiB, 65536, 255, false, false},
    {9, 0, "H100, H200", 2048, 32, 228 * KiB, 227 * KiB, 65536, 255, true, true},
    {10, 0, "B200", 2048, 32, 228 * KiB, 227 * KiB, 65536, 255, true, false},
    {10, 3, "B300", 2048, 32, 228 * KiB, 227 * KiB, 65536, 255, true, false},
    {12, 0, "RTX 50, RTX PRO 6000", 1536, 32, 128 * KiB, 99 * KiB, 65536, 255, true, false},
    {12, 1, "DGX Spark", 1536, 32, 128 * KiB, 99 * KiB, 65536, 255, true, false},
};

}  // namespace

std::string ArchInfo::name() const {
  return fmt::format("sm_{}{}", major, minor);
}

const std::vector<ArchInfo>& arch_table() {
  return kArchs;
}

const ArchInfo* find_arch(int major, int minor) {
  for (const auto& a : kArchs) {
    if (a.major == major && a.minor == minor) return &a;
  }
  return nullptr;
}

const ArchInfo& parse_arch(std::string_view text) {
  auto known = [] {
    std::string s;
    for (const auto& a : kArchs) s += (s.empty() ? "" : ", ") + a.name();
    return s;
  };
  auto bad = [&] {
    return InputError(fmt::format("unknown architecture '{}' (known: {}; also written 8.6)",
                                  terminal_safe(text), known()));
  };
  std::string_view s = text;
  int major = 0, minor = 0;
  if (s.find('.') != std::string_view::npos) {
    const auto dot = s.find('.');
    const auto a = std::from_chars(s.data(), s.data() + dot, major);
    const auto b = std::from_chars(s.data() + dot + 1, s.data() + s.size(), minor);
    if (a.ec != std::errc() || a.ptr != s.data() + dot || b.ec != std::errc() ||
        b.ptr != s.data() + s.size())
      throw bad();
  } else {
    if (s.starts_with("sm_")) {
      s.remove_prefix(3);
    } else if (s.starts_with("compute_")) {
      s.remove_prefix(8);
    } else {
      throw bad();
    }
    // An architecture-specific or family suffix (sm_90a, sm_100f) names the same limits.
    if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.remove_suffix(1);
    int cc = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), cc);
    if (s.size() < 2 || r.ec != std::errc() || r.ptr != s.data() + s.size()) throw bad();
    major = cc / 10;
    minor = cc % 10;
  }
  const auto* a = find_arch(major, minor);
  if (!a) throw bad();
  return *a;
}

Limits limits_on(const ArchInfo& arch, Limits space) {
  Limits l = space;
  l.max_threads_per_block = std::min(l.max_threads_per_block, 1024);
  l.max_static_shared_bytes = std::min(l.max_static_shared_bytes, 48 * KiB);
  l.max_dynamic_shared_bytes = std::min(l.max_dynamic_shared_bytes, arch.shared_per_block);
  l.registers_per_sm = std::min(l.registers_per_sm, arch.registers_per_sm);
  l.max_registers_per_thread = std::min(l.max_registers_per_thread, arch.registers_per_thread);
  l.max_threads_per_sm = std::min(l.max_threads_per_sm, arch.threads_per_sm);
  l.max_blocks_per_sm = std::min(l.max_blocks_per_sm, arch.blocks_per_sm);
  l.tma_kernel = arch.tma_kernel;
  l.compute_capability = arch.major * 10 + arch.minor;
  return l;
}

Limits hardware_limits(const ArchInfo& arch) {
  Limits l;
  l.max_accumulators = kMaxConfigValue;
  return limits_on(arch, l);
}

}  // namespace sgt
