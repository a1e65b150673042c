// Which path serves an SGEMM call: the device matched against the embedded table, then the exact
// tuned shape, the nearest tuned shape whose tile fits, the GPU's default, else cuBLAS. Pure C++
// (no CUDA), so the CPU tests run the very selection and wording that sgemm() and explain() use.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sgemm_tuned_table.hpp"
#include "tma_geometry.h"
#include "warptile_geometry.h"

namespace sgemm_tuned::detail {

namespace table = ::sgt_tuned_table;

enum class Path { kernel, cublas, invalid, noop };
enum class Source { none, exact, nearest, gpu_default };

struct DeviceIdentity {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
};

struct Call {
  int M = 0, N = 0, K = 0;
  int lda = 0, ldb = 0, ldc = 0;
  std::uintptr_t A = 0, B = 0, C = 0;
  bool trans_a = false, trans_b = false;

  const char* layout() const {
    static const char* const kLayouts[] = {"NN", "NT", "TN", "TT"};
    return kLayouts[(trans_a ? 2 : 0) + (trans_b ? 1 : 0)];
  }
  // The stored row lengths, i.e. the smallest legal leading dimensions.
  int min_lda() const { return std::max(1, trans_a ? M : K); }
  int min_ldb() const { return std::max(1, trans_b ? K : N); }
  int min_ldc() const { return std::max(1, N); }
};

struct Choice {
  Path path = Path::cublas;
  Source source = Source::none;
  int gpu = -1;     // into table::kGpus; -1 when the device is not in the table
  int shape = -1;   // into table::kShapes: the tuned shape whose winner runs
  int config = -1;  // into table::kConfigs
  bool vec = true;  // the kernel instance: float4 main-loop loads, else single floats
  double distance = 0;
  std::string why;  // cuBLAS or invalid: the reason; kernel: what was passed over, if anything
};

inline std::string strf(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// The tuner's sgt::db::shape_distance: sqrt(sum over M, N, K of log2(a/b)^2), so the dispatcher
// picks the nearest shape exactly as `sgemm-tune query` does.
inline double shape_distance(long long M, long long N, long long K, const table::Shape& s) {
  auto d = [](long long x, long long y) {
    const double l = std::log2(static_cast<double>(x) / static_cast<double>(y));
    return l * l;
  };
  return std::sqrt(d(M, s.M) + d(N, s.N) + d(K, s.K));
}

inline std::string shape_text(long long M, long long N, long long K) {
  return strf("%lldx%lldx%lld", M, N, K);
}

inline int find_gpu(const DeviceIdentity& d) {
  for (int i = 0; i < table::kGpuCount; ++i) {
    const auto& g = table::kGpus[i];
    if (d.name == g.name && d.cc_major == g.cc_major && d.cc_minor == g.cc_minor &&
        d.sm_count == g.sm_count) {
      return i;
    }
  }
  return -1;
}

// Why a TMA-fed kernel's tensor copies cannot read an operand; nullptr when they can. The rule of
// sgt_kernel::tma_operand (tma_maps.h, which needs the CUDA headers; the export tests check that
// the two agree): a 16-byte aligned base and rows a multiple of 16 bytes apart.
inline const char* tma_refusal(std::uintptr_t p, int ld) {
  if (p % 16 != 0) return "pointer not 16-byte aligned";
  if (ld <= 0 || ld % 4 != 0) return "leading dimension not a multiple of 4";
  return nullptr;
}

// The opt-in shared memory of a compute-capability 9.0 block, which every kernel the library
// launches runs within (the tuner's Limits::max_dynamic_shared_bytes).
constexpr int kTmaSharedLimit = 227 * 1024;

// The layout a TMA-fed config's kernel runs as for a call: TN on the panels with PACK.
inline bool tma_runs_trans_a(const table::Config& c, const Call& call) {
  return c.PACK ? true : call.trans_a;
}
inline bool tma_runs_trans_b(const table::Config& c, const Call& call) {
  return c.PACK ? false : call.trans_b;
}

// A TMA-fed config's shared memory in one layout: its stages (staging boxes where that layout
// has them) and three 8-byte barriers per stage, as the tuner's tma_shared_bytes.
inline long long tma_block_bytes(const table::Config& c, bool trans_a, bool trans_b) {
  const auto g = sgt_kernel::make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN,
                                           c.NUM_THREADS, c.STAGES, c.PAD_A, c.PAD_B);
  return sgt_kernel::make_tma_layout(g, trans_a, trans_b, c.MIN_BLOCKS).SMEM_BYTES +
         3LL * 8 * c.STAGES;
}

// How a config's kernel is launched: by the argument list of its family (tensor maps, or the
// warp-tiling kernel's pointers), with its block, its shared memory in each call layout (NN, NT,
// TN, TT) and the architecture it has a body for.
struct LaunchFacts {
  bool tensor_maps = false;
  // Launched after the split prepass on four maps of its panels (split_maps: the split-TF32 wgmma
  // kernel); any operands.
  bool split_maps = false;
  int threads = 0;
  int dynamic_smem[4] = {};
  long long block_bytes[4] = {};
  int arch_only = 0;           // the one compute capability it runs on (90); 0: any
  bool arch_specific = false;  // its body is in the architecture-specific image only (sm_90a)
};

// A config as the two families of table formats 6 and 7 launch it, derived from its fields: the
// TMA-fed family's (tensor maps) or the warp-tiling one's. Those tables tell the two apart by
// their field TMA; later ones name each config's launch (kConfigLaunch).
inline LaunchFacts derive_launch_facts(const table::Config& c, bool tma_family) {
  LaunchFacts f;
  f.threads = c.NUM_THREADS;
  for (int layout = 0; layout < 4; ++layout) {
    const bool ta = c.PACK ? true : layout >= 2, tb = c.PACK ? false : layout % 2 == 1;
    if (tma_family) {
      const auto g = sgt_kernel::make_geometry(c.BM, c.BN, c.BK, c.WM, c.WN, c.WNITER, c.TM, c.TN,
                                               c.NUM_THREADS, c.STAGES, c.PAD_A, c.PAD_B);
      const auto t = sgt_kernel::make_tma_layout(g, ta, tb, c.MIN_BLOCKS);
      f.threads = t.THREADS;
      f.dynamic_smem[layout] = t.SMEM_BYTES;
      f.block_bytes[layout] = tma_block_bytes(c, ta, tb);
    } else {
      f.block_bytes[layout] = 4LL * c.STAGES * ((c.BM + c.PAD_A) + (c.BN + c.PAD_B)) * c.BK;
    }
  }
  if (tma_family) f.tensor_maps = true, f.arch_only = 90, f.arch_specific = true;
  return f;
}

// Config i of the table: from format 8 on, as its family says (kConfigLaunch), so that the
// library serves any family the tuner registers.
inline LaunchFacts launch_facts(int config) {
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 8
  const auto& l = table::kConfigLaunch[config];
  LaunchFacts f;
  f.tensor_maps = l.abi == 1;
  f.split_maps = l.abi == 2;
  f.threads = l.threads;
  for (int layout = 0; layout < 4; ++layout) {
    f.dynamic_smem[layout] = l.dynamic_smem[layout];
    f.block_bytes[layout] = l.block_bytes[layout];
  }
  f.arch_only = l.arch_only;
  f.arch_specific = l.arch_specific;
  return f;
#else
  return derive_launch_facts(table::kConfigs[config], table::kConfigs[config].TMA == 1);
#endif
}

inline int layout_index(bool trans_a, bool trans_b) {
  return (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
}

// Empty when a config may serve the call as the winner of `tuned` (null: of no tuned shape, a
// GPU's default); else why not. A non-strict config's accuracy against FP64 was measured at its
// tuned shape (table format 10), against cuBLAS's there: it serves no other shape, since its error
// ratio moves with K (both ways) and with M and N, where cuBLAS changes algorithm.
inline std::string off_measured_shape(bool non_strict, const table::Shape* tuned,
                                      const Call& call) {
  if (!non_strict) return {};
  if (!tuned) return "its accuracy against FP64 was measured at no shape";
  if (tuned->M == call.M && tuned->N == call.N && tuned->K == call.K) return {};
  return strf("its accuracy against FP64 was measured at %s only",
              shape_text(tuned->M, tuned->N, tuned->K).c_str());
}

// Empty when config `c`, launched as `f` says, can compute the call; else why not. A kernel that
// reads its operands through pointers serves any shape, layout, leading dimension and alignment;
// only the grid has a limit. One that reads A and B through tensor copies needs tma_refusal's
// alignment (with K = 0 it copies nothing and needs none).
inline std::string misfit(const table::Config& c, const LaunchFacts& f, const Call& call) {
  const long long blocks = (static_cast<long long>(call.M) + c.BM - 1) / c.BM *
                           ((static_cast<long long>(call.N) + c.BN - 1) / c.BN);
  if (blocks > 0x7fffffffLL) {
    return strf("%lld blocks exceed the grid limit of 2^31-1", blocks);
  }
  // A config tuned in one layout may not fit another's staging boxes (the tuner's shape rule
  // shape_tma_shared_memory); a default or nearest shape must not send it there.
  const long long bytes = f.block_bytes[layout_index(call.trans_a, call.trans_b)];
  if (bytes > kTmaSharedLimit) {
    return strf(
        "its %sstages need %lld bytes of shared memory in this layout, over the %d a block may "
        "have",
        f.tensor_maps ? "TMA " : "", bytes, kTmaSharedLimit);
  }
  // The split prepass runs a block per 32 rows of each operand, on a grid's y (at most 65535).
  if (f.split_maps && call.K > 0 &&
      (static_cast<long long>(call.M) > 65535LL * 32 ||
       static_cast<long long>(call.N) > 65535LL * 32)) {
    return strf("its split prepass takes at most %lld rows of an operand", 65535LL * 32);
  }
  // With PACK the copies read the panels, which any operands give.
  if (f.tensor_maps && c.PACK == 0 && call.K > 0) {
    if (const char* why = tma_refusal(call.A, call.lda)) {
      return strf("its TMA tensor copies cannot read A (%s)", why);
    }
    if (const char* why = tma_refusal(call.B, call.ldb)) {
      return strf("its TMA tensor copies cannot read B (%s)", why);
    }
  }
  return {};
}

// The kernel instance a tuned shape's winner was tuned, verified and is launched as: the tuner's
// sgt::kernel_vec_loads for that shape's operands stored at their row lengths. float4 main-loop
// loads when both allow them, else the instance that reads single floats.
inline bool tuned_vec_loads(const table::Shape& s) {
  const bool ta = s.layout[0] == 'T', tb = s.layout[1] == 'T';
  // Only the remainders mod 4 matter, and narrowing keeps them.
  const auto i = [](long long v) { return static_cast<int>(v & 0xffff); };
  return sgt_kernel::float4_operand(true, i(ta ? s.M : s.K), !ta, i(s.M)) &&
         sgt_kernel::float4_operand(true, i(tb ? s.K : s.N), tb, i(s.N));
}

// C's stores, as both kernels decide them: float4 in whole tiles when C's rows are 16-byte aligned.
inline std::string store_text(const Call& call) {
  if (call.C % 16 != 0) return "C scalar (pointer not 16-byte aligned) in whole tiles";
  if (call.ldc % 4 != 0) return "C scalar (leading dimension not a multiple of 4) in whole tiles";
  return "C float4 in whole tiles";
}

// Which accesses of a call are 128-bit, as the kernel decides them. Loads of the float4 instance
// (vec): both operands' k-slices are read as float4s, in every block (tiles past the matrix edge
// read from rows clamped inside it), when each operand's pointer and leading dimension keep its
// rows 16-byte aligned and, where a float4 runs along M (A^T) or N (B), that extent is a multiple
// of 4; otherwise both take the element-by-element loop. The other instance reads single floats in
// the same pipelined loop, for any operands. The last partial k-slice is always element by
// element. Stores: float4 in whole tiles when C's rows are 16-byte aligned.
inline std::string access_text(const Call& call, bool vec = true) {
  auto why_not = [](std::uintptr_t p, int ld, bool extent_ok, const char* extent) -> const char* {
    if (p % 16 != 0) return "pointer not 16-byte aligned";
    if (ld % 4 != 0) return "leading dimension not a multiple of 4";
    if (!extent_ok) return extent;
    return nullptr;
  };
  const char* a = why_not(call.A, call.lda, !call.trans_a || call.M % 4 == 0,
                          "M not a multiple of 4, along which A^T's float4s run");
  const char* b = why_not(call.B, call.ldb, call.trans_b || call.N % 4 == 0,
                          "N not a multiple of 4, along which B's float4s run");
  auto one = [](const char* name, const char* own, const char* other) {
    if (own) return strf("%s scalar (%s)", name, own);
    if (other) return strf("%s scalar (with the other operand)", name);
    return strf("%s float4", name);
  };
  const std::string loads =
      vec ? one("A", a, b) + ", " + one("B", b, a)
          : std::string("A and B single floats (the instance tuned for operands without float4s)");
  return loads + ", " + store_text(call);
}

// The same for a TMA-fed kernel: the slices arrive by tensor copies (zeros past the matrix), and C
// is stored as by the warp-tiling kernel.
// The same for the split-TF32 wgmma kernel: a prepass splits both operands into panels.
inline std::string split_access_text(const Call& call) {
  const bool pairs = call.C % 8 == 0 && call.ldc % 2 == 0;
  return std::string(
             "A and B split into k-contiguous TF32 panels by a prepass (any layout and "
             "alignment), read by TMA tensor copies, ") +
         (pairs ? "C float2 pairs" : "C single floats (C not 8-byte aligned or ldc odd)");
}

inline std::string tma_access_text(const Call& call) {
  return "A and B by TMA tensor copies (zero-filled past the matrix), " + store_text(call);
}

inline std::string not_in_table(const DeviceIdentity& d) {
  if (table::kGpuCount == 0) {
    return "the embedded table is empty (exported from a database with no GPUs)";
  }
  std::string out = strf("%s (sm_%d%d, %d SMs) is not in the embedded table, which holds ",
                         d.name.c_str(), d.cc_major, d.cc_minor, d.sm_count);
  constexpr int kShown = 4;
  for (int i = 0; i < table::kGpuCount && i < kShown; ++i) {
    const auto& g = table::kGpus[i];
    out +=
        strf("%s'%s' (sm_%d%d, %d SMs)", i ? ", " : "", g.name, g.cc_major, g.cc_minor, g.sm_count);
  }
  if (table::kGpuCount > kShown) out += strf(" and %d more", table::kGpuCount - kShown);
  return out + "; tuning results are kept per GPU name, compute capability and SM count";
}

// `usable(config)` is empty when this build can launch that config on the device (it holds a
// kernel image for it), else the reason it cannot.
template <class Usable>
Choice choose(const DeviceIdentity& dev, const Call& call, const Usable& usable) {
  Choice c;
  auto give_up = [&](Path p, std::string why) {
    c.path = p;
    c.source = Source::none;
    c.shape = c.config = -1;
    c.why = std::move(why);
    return c;
  };
  if (call.M < 0 || call.N < 0 || call.K < 0) {
    return give_up(Path::invalid, strf("negative size %dx%dx%d", call.M, call.N, call.K));
  }
  if (call.lda < call.min_lda() || call.ldb < call.min_ldb() || call.ldc < call.min_ldc()) {
    return give_up(
        Path::invalid,
        strf("row-major %s leading dimensions need lda >= %s, ldb >= %s, ldc >= N (and >= 1), "
             "i.e. %d, %d, %d; got lda %d, ldb %d, ldc %d",
             call.layout(), call.trans_a ? "M" : "K", call.trans_b ? "K" : "N", call.min_lda(),
             call.min_ldb(), call.min_ldc(), call.lda, call.ldb, call.ldc));
  }
  c.gpu = find_gpu(dev);
  if (call.M == 0 || call.N == 0) {
    return give_up(Path::noop, "M or N is 0: C has no elements, nothing runs");
  }
  if (c.gpu < 0) return give_up(Path::cublas, not_in_table(dev));

  const auto& g = table::kGpus[c.gpu];
  auto why_not = [&](int config) {
    std::string why = misfit(table::kConfigs[config], launch_facts(config), call);
    return why.empty() ? std::string(usable(config)) : why;
  };
  std::string passed;  // the closest candidate passed over, for explain()
  int passed_count = 0;
  auto pass_over = [&](const std::string& what, int config, const std::string& why) {
    if (passed_count++ == 0) {
      passed = strf("%s (winner %s: ", what.c_str(), table::kConfigNames[config]) + why + ")";
    }
  };

  std::vector<int> candidates;  // same-layout shapes other than the exact one, nearest first
  int exact = -1;
  for (int i = g.first_shape; i < g.first_shape + g.shape_count; ++i) {
    const auto& s = table::kShapes[i];
    if (std::strcmp(s.layout, call.layout()) != 0) continue;
    if (s.M == call.M && s.N == call.N && s.K == call.K) {
      exact = i;
    } else {
      candidates.push_back(i);
    }
  }
  if (exact >= 0) {
    const std::string why = why_not(table::kShapes[exact].config);
    if (why.empty()) {
      c.path = Path::kernel;
      c.source = Source::exact;
      c.shape = exact;
      c.config = table::kShapes[exact].config;
      c.vec = tuned_vec_loads(table::kShapes[exact]);
      return c;
    }
    pass_over("the exact tuned shape", table::kShapes[exact].config, why);
  }
  // Ties go to the earlier shape of the table (ordered by M, N, K).
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return shape_distance(call.M, call.N, call.K, table::kShapes[a]) <
           shape_distance(call.M, call.N, call.K, table::kShapes[b]);
  });
  auto too_deep = [&](int config, int shape) -> std::string {
#if SGT_TUNED_TABLE_FORMAT_VERSION >= 10
    return off_measured_shape(table::kConfigNonStrict[config],
                              shape >= 0 ? &table::kShapes[shape] : nullptr, call);
#else
    (void)config, (void)shape;
#endif
    return {};
  };
  for (const int i : candidates) {
    const auto& s = table::kShapes[i];
    std::string why = why_not(s.config);
    if (why.empty()) why = too_deep(s.config, i);
    if (why.empty()) {
      c.path = Path::kernel;
      c.source = Source::nearest;
      c.shape = i;
      c.config = s.config;
      c.vec = tuned_vec_loads(s);
      c.distance = shape_distance(call.M, call.N, call.K, s);
      if (passed_count > 0) {
        c.why = strf("passed over %d closer tuned shape%s, the closest being ", passed_count,
                     passed_count == 1 ? "" : "s") +
                passed;
      }
      return c;
    }
    pass_over(strf("the tuned shape %s", shape_text(s.M, s.N, s.K).c_str()), s.config, why);
  }
  // The GPU's default for this layout (the winner with the best % of cuBLAS among the layout's
  // tuned shapes), else its NN default.
  int default_config = g.default_config, default_shape = g.default_shape;
  for (int i = 0; i < table::kLayoutDefaultCount; ++i) {
    const auto& d = table::kLayoutDefaults[i];
    if (d.gpu == c.gpu && std::strcmp(d.layout, call.layout()) == 0) {
      default_config = d.config;
      default_shape = d.shape;
    }
  }
  std::string why = why_not(default_config);
  if (why.empty()) why = too_deep(default_config, default_shape);
  if (why.empty()) {
    c.path = Path::kernel;
    c.source = Source::gpu_default;
    c.shape = default_shape;
    c.config = default_config;
    if (default_shape >= 0) c.vec = tuned_vec_loads(table::kShapes[default_shape]);
    if (passed_count > 0) {
      c.why =
          strf("no tuned shape's winner fits (%d passed over, the closest being ", passed_count) +
          passed + ")";
    }
    return c;
  }
  std::string reason =
      strf("no tuned kernel of this GPU can run it: the default config %s cannot (",
           table::kConfigNames[default_config]) +
      why + ")";
  if (passed_count > 0) {
    reason += strf(", nor can the winners of %d tuned shape%s, the closest being ", passed_count,
                   passed_count == 1 ? "" : "s") +
              passed;
  }
  return give_up(Path::cublas, reason);
}

// Where the embedded table came from.
inline std::string table_text() {
  return strf("Table: %d GPU%s, exported by sgemm-tune %s from database %s on %s.",
              table::kGpuCount, table::kGpuCount == 1 ? "" : "s", table::kToolVersion,
              table::kDatabase, table::kGeneratedUtc);
}

// One paragraph: the call, the device, the path taken and why, and where the table came from.
inline std::string describe(const DeviceIdentity& dev, const Call& call, const Choice& c) {
  std::string out =
      strf("sgemm %s %s (lda %d, ldb %d, ldc %d) on %s (sm_%d%d, %d SMs): ", call.layout(),
           shape_text(call.M, call.N, call.K).c_str(), call.lda, call.ldb, call.ldc,
           dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count);
  auto measured = [](const table::Shape& s) {
    return s.pct_of_cublas > 0
               ? strf("median %.4f ms, %.1f%% of cuBLAS when tuned", s.median_ms, s.pct_of_cublas)
               : strf("median %.4f ms when tuned, cuBLAS not timed", s.median_ms);
  };
  switch (c.path) {
    case Path::kernel: {
      out += strf("tuned kernel %s, ", table::kConfigNames[c.config]);
      if (c.source == Source::exact) {
        out += "the winner of exactly this tuned shape (" + measured(table::kShapes[c.shape]) + ")";
      } else if (c.source == Source::nearest) {
        const auto& s = table::kShapes[c.shape];
        out += strf("the winner of the nearest tuned shape %s (log2 distance %.3f; %s)",
                    shape_text(s.M, s.N, s.K).c_str(), c.distance, measured(s).c_str());
      } else if (c.shape >= 0) {
        const auto& s = table::kShapes[c.shape];
        out += strf(
            "this GPU's default config, its winner with the best %% of cuBLAS across "
            "its tuned shapes (on %s: %s)",
            shape_text(s.M, s.N, s.K).c_str(), measured(s).c_str());
      } else {
        out += "this GPU's default config (built-in: nothing is tuned for this GPU)";
      }
      if (!c.why.empty()) out += "; " + c.why;
      const auto& cfg = table::kConfigs[c.config];
      std::string accesses = access_text(call, c.vec);
      if (launch_facts(c.config).split_maps) {
        accesses = split_access_text(call);
      } else if (launch_facts(c.config).tensor_maps) {
        accesses = tma_access_text(call);
        if (cfg.PACK) accesses = "operands packed into k-major panels, then " + accesses;
      }
      out += "; accesses: " + accesses;
      if (call.K == 0) out += "; K = 0, so C = beta * C";
      break;
    }
    case Path::noop:
      out += "nothing to do (" + c.why + ")";
      break;
    case Path::cublas:
      out += "cuBLAS (cublasSgemm, FP32 with CUBLAS_PEDANTIC_MATH, no TF32), since " + c.why;
      break;
    case Path::invalid:
      out += "invalid arguments, nothing runs (cudaErrorInvalidValue): " + c.why;
      break;
  }
  return out + ". " + table_text();
}

}  // namespace sgemm_tuned::detail
