// Compiles the warp-tiling kernel for one config with NVRTC into a CUBIN, classifies the result
// from ptxas' own report, and keeps every outcome in an on-disk cache shared by threads and
// processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "error.hpp"
#include "trial.hpp"

namespace sgt::gpu {

struct CompileOptions {
  // A real architecture (sm_XY): only for those does NVRTC emit a CUBIN and run ptxas, whose
  // register and spill report decides a config's fate.
  std::string arch = "sm_90";
  // Appended after the compiler's own options; part of the cache key.
  std::vector<std::string> extra_options;
};

struct Compiled {
  std::string config_name;
  TrialStatus status = TrialStatus::ok;  // ok, compile_failed, spills or resources
  std::string reason;                    // why, when not ok
  std::string log;                       // NVRTC program log, ptxas -v report included
  std::string layout = "NN";             // the operand layout the kernel was instantiated for
  bool vec_loads = true;                 // VEC: float4 main-loop loads, else single floats
  std::string lowered_name;              // mangled kernel name, for cuModuleGetFunction
  std::string reduce_lowered_name;       // the split-K reduction kernel in the same cubin
  std::string pack_lowered_name;         // PACK configs: the packing kernel in the same cubin
  std::filesystem::path cubin_path;      // in the cache dir; empty when not ok
  std::string cubin_sha256;              // empty when not ok
  int registers = 0, spill_store_bytes = 0, spill_load_bytes = 0, stack_bytes = 0, shared_bytes = 0;
  bool from_cache = false;
  double compile_seconds = 0;  // of the NVRTC compilation that produced it, cached or not
  // compile_all(keep_going): the CacheError that left this entry without an outcome; status and
  // binary are then meaningless. Empty otherwise.
  std::string cache_error;
  // A replay: the kernel hash the recorded trial was measured with, which its replayed trial keeps
  // (a measurement of older kernel sources must stay stale). Empty for a real build.
  std::string recorded_kernel_hash;
};

// One cache entry could not be written (a read-only directory, a directory where the entry's
// file belongs): that entry's trouble, not necessarily the run's.
class CacheError : public Error {
 public:
  using Error::Error;
};

// What ptxas -v reported for one entry function.
struct PtxasInfo {
  bool found = false;  // the function's "Used N registers" line was present
  int registers = 0, spill_store_bytes = 0, spill_load_bytes = 0, stack_bytes = 0, shared_bytes = 0;
};

// Reads the ptxas -v lines of an NVRTC or nvcc log. With `entry` (a mangled name), only that entry
// function's lines count; without, the first entry function's.
PtxasInfo parse_ptxas_info(std::string_view log, std::string_view entry = {});

class KernelCompiler {
 public:
  // Creates cache_dir if needed. Throws InputError for a virtual arch or one this NVRTC cannot
  // target, Error when the directory cannot be created or NVRTC cannot be queried.
  KernelCompiler(std::filesystem::path cache_dir, CompileOptions opts = {});
  KernelCompiler(const KernelCompiler&) = delete;
  KernelCompiler& operator=(const KernelCompiler&) = delete;

  // Thread- and process-safe: a lock file per cache key makes whoever comes second for a config
  // wait and then read the first one's entry. A bad config is a result (compile_failed, spills,
  // resources), never an exception; Error is thrown only when NVRTC or the cache directory fails.
  // `layout` ("NN", "NT", "TN", "TT") picks the TRANS_A/TRANS_B instance, `vec` the main loop's
  // loads (VEC: float4s; false: single floats, for operands that refuse float4s; a problem's is
  // kernel_vec_loads(problem)). SPLIT_K is a launch parameter: configs differing only in it share
  // one compilation (and cache entry). A PACK config always gets its TN float4 instance (see
  // instance()), whatever layout and loads are asked for.
  Compiled compile(const WarpTileConfig& c, std::string_view layout = "NN", bool vec = true);

  // Compiles all on `threads` std::threads (0 = hardware_concurrency), calling on_done (never
  // concurrently) as each finishes. Results in input order. The first exception stops the pool
  // and is rethrown; with keep_going, a CacheError only marks its entry (Compiled::cache_error)
  // and the others go on, since a cache that refuses one entry may take the next.
  std::vector<Compiled> compile_all(const std::vector<WarpTileConfig>& cs, unsigned threads,
                                    std::function<void(const Compiled&)> on_done = {},
                                    std::string_view layout = "NN", bool vec = true,
                                    bool keep_going = false);

  // The cubin bytes at p, after checking they hash to sha256; throws Error when the file is
  // missing, empty or different.
  static std::string load_verified_cubin(const std::filesystem::path& p, const std::string& sha256);

  // SHA-256 over the kernel source hash, the instantiated expression (config, layout, loads),
  // arch, NVRTC version and NVRTC options.
  std::string cache_key(const WarpTileConfig& c, std::string_view layout = "NN",
                        bool vec = true) const;

  // The template-id NVRTC instantiates and lowers, e.g.
  // sgemm_warptile<128,64,16,64,32,2,4,4,128,1,1,0,1,0,0,0,false,false,true>: every config field
  // but SPLIT_K (a launch parameter), then TRANS_A and TRANS_B from the layout, then VEC. Throws
  // InputError for a layout other than NN, NT, TN, TT.
  static std::string name_expression(const WarpTileConfig& c, std::string_view layout = "NN",
                                     bool vec = true);
  // The instance (layout, float4 loads) a config runs as for a problem of `layout` whose operands
  // allow float4s or not (`vec`): that one, except for PACK configs, which run their TN float4
  // instance on the packed panels, and TMA configs, whose one instance per layout reads by copies.
  static std::pair<std::string_view, bool> instance(const WarpTileConfig& c,
                                                    std::string_view layout, bool vec);
  static constexpr std::string_view kPackedLayout = "TN";
  // The config a kernel binary stands for: SPLIT_K reset to its default.
  static WarpTileConfig kernel_config(const WarpTileConfig& c);

  int nvrtc_major() const { return nvrtc_major_; }
  int nvrtc_minor() const { return nvrtc_minor_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  // Every option passed to nvrtcCompileProgram, the tuner's own first.
  const std::vector<std::string>& nvrtc_options() const { return options_; }
  // NVRTC compilations this object ran, i.e. cache misses.
  std::size_t compilations() const { return compilations_.load(); }

 private:
  struct Fresh;
  Fresh compile_uncached(const WarpTileConfig& c, std::string_view layout, bool vec,
                         int attempt = 0);
  bool load_cached(const WarpTileConfig& c, std::string_view layout, bool vec,
                   const std::string& key, Compiled& out) const;
  void store(const WarpTileConfig& c, std::string_view layout, bool vec, const std::string& key,
             Compiled& r, const std::string& cubin) const;
  // The NVRTC options of one config's compilation: ws_tma takes the architecture-specific target.
  std::vector<std::string> options_for(const WarpTileConfig& c) const;

  std::filesystem::path cache_dir_;
  CompileOptions opts_;
  std::vector<std::string> options_;
  int nvrtc_major_ = 0, nvrtc_minor_ = 0;
  int arch_number_ = 0;  // of opts_.arch: 90 for sm_90 and sm_90a
  std::atomic<std::size_t> compilations_{0};
};

// $SGT_CACHE_DIR, else $XDG_CACHE_HOME/sgemm-tune/kernels, else $HOME/.cache/sgemm-tune/kernels.
// Throws Error when none of the three is set.
std::filesystem::path default_cache_dir();

}  // namespace sgt::gpu
