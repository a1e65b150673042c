// One candidate's binary as an evaluator built it (NVRTC into the kernel cache, or a replay's
// record of that): the outcome, the ptxas figures and the names the worker loads.
#pragma once

#include <filesystem>
#include <string>

#include "trial.hpp"

namespace sgt::eval {

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

}  // namespace sgt::eval
