// What a tune produces: one Trial per (GPU, problem, config), whatever happened to the candidate,
// plus the GPU fingerprint it ran on and the interface through which trials are stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "problem.hpp"

namespace sgt {

// Stored as text; never renumber or rename a value once released.
enum class TrialStatus { ok, compile_failed, spills, resources, incorrect, crashed, timeout };

std::string_view to_string(TrialStatus s);
std::optional<TrialStatus> status_from_string(std::string_view s);

// Identifies the GPU and the software stack a trial was measured with.
struct GpuFingerprint {
  std::string name;
  std::string uuid;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long long memory_bytes = 0;
  int l2_bytes = 0;
  int smem_optin_bytes = 0;
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  int driver_version = 0;   // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  // cudaRuntimeGetVersion
  int nvrtc_major = 0, nvrtc_minor = 0;

  std::string arch() const;  // "sm_90"
};

struct TimeStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread = 0;  // (max - min) / median
  int repetitions = 0;
};

struct Trial {
  WarpTileConfig config;
  std::string config_name;
  Problem problem;
  TrialStatus status = TrialStatus::ok;
  std::string reason;  // empty when ok
  TimeStats time;
  bool cut_early = false;  // abandoned after its first repetitions were clearly slower
  double gflops = 0;
  double verify_error = -1;  // relative L2 error against cuBLAS; -1 when not verified
  int registers = 0, spill_bytes = 0, stack_bytes = 0, shared_bytes = 0;
  double cublas_median_ms = 0;  // cuBLAS FP32 timed by the same function in the same run
  std::string kernel_template;  // template name
  std::string kernel_hash;      // hash of the kernel sources the config was compiled from
  std::string tuner_version;
  std::string strategy;
  std::uint64_t seed = 0;
  std::string timestamp;  // ISO 8601 UTC
};

void to_json(nlohmann::json& j, const GpuFingerprint& g);
void from_json(const nlohmann::json& j, GpuFingerprint& g);
void to_json(nlohmann::json& j, const TimeStats& t);
void from_json(const nlohmann::json& j, TimeStats& t);
void to_json(nlohmann::json& j, const Trial& t);
void from_json(const nlohmann::json& j, Trial& t);
void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);

std::string utc_timestamp();

// Where a tune writes its trials. The SQLite store implements it; tests use fakes.
class TrialStore {
 public:
  virtual ~TrialStore() = default;
  // Called once before any trial of a run.
  virtual void begin(const GpuFingerprint& gpu, const Problem& problem) = 0;
  // A trial already finished for this config (same GPU, problem, kernel hash), if any: a resumed
  // tune skips it.
  virtual std::optional<Trial> finished(const std::string& config_name,
                                        const std::string& kernel_hash) = 0;
  // Stores one finished trial durably before returning.
  virtual void record(const Trial& trial) = 0;
};

}  // namespace sgt
