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
#include "instance.hpp"
#include "compiled.hpp"
#include "trial.hpp"

namespace sgt::gpu {

using eval::Compiled;

struct CompileOptions {
  // A real architecture (sm_XY): only for those does NVRTC emit a CUBIN and run ptxas, whose
  // register and spill report decides a config's fate.
  std::string arch = "sm_90";
  // Appended after the compiler's own options; part of the cache key.
  std::vector<std::string> extra_options;
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
  // one compilation (and cache entry), or two where a family's split configs run an entry of their
  // own (binary_split_k). The binary is the instance resolve() makes (instance.hpp):
  // a PACK config always gets its TN float4 instance, whatever layout and loads are asked for.
  Compiled compile(const WarpTileConfig& c, std::string_view layout = "NN", bool vec = true);

  // Compiles all on `threads` std::threads (0 = hardware_concurrency), calling on_done (never
  // concurrently) as each finishes. Results in input order. The first exception stops the pool
  // and is rethrown; with keep_going, a CacheError only marks its entry (Compiled::cache_error)
  // and the others go on, since a cache that refuses one entry may take the next.
  std::vector<Compiled> compile_all(const std::vector<WarpTileConfig>& cs, unsigned threads,
                                    std::function<void(const Compiled&)> on_done = {},
                                    std::string_view layout = "NN", bool vec = true,
                                    bool keep_going = false);

  // Compiles c as the retry after a missing ptxas report does: the program with an empty kernel of
  // a random name appended, so that no cache can have seen its PTX. The kernel cache is neither
  // read nor written. For tests and diagnosis.
  Compiled compile_as_retry(const WarpTileConfig& c, std::string_view layout = "NN",
                            bool vec = true);

  // The cubin bytes at p, after checking they hash to sha256; throws Error when the file is
  // missing, empty or different.
  static std::string load_verified_cubin(const std::filesystem::path& p, const std::string& sha256);

  // SHA-256 over the kernel source hash, the instantiated expression (config, layout, loads, of
  // the instance resolve() makes), arch, NVRTC version and NVRTC options.
  std::string cache_key(const WarpTileConfig& c, std::string_view layout = "NN",
                        bool vec = true) const;

  int nvrtc_major() const { return nvrtc_major_; }
  int nvrtc_minor() const { return nvrtc_minor_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }
  // Every option passed to nvrtcCompileProgram, the tuner's own first.
  const std::vector<std::string>& nvrtc_options() const { return options_; }
  // NVRTC compilations this object ran, i.e. cache misses.
  std::size_t compilations() const { return compilations_.load(); }

 private:
  struct Fresh;
  std::string cache_key(const KernelInstance& in) const;
  Fresh compile_uncached(const KernelInstance& in, int attempt = 0);
  bool load_cached(const KernelInstance& in, const std::string& key, Compiled& out) const;
  void store(const KernelInstance& in, const std::string& key, Compiled& r,
             const std::string& cubin) const;
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
