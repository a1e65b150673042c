// The versioned request/response protocol between the tuner and its GPU worker process: one JSON
// object per line on the worker's stdin (requests) and stdout (responses). The parent owns the
// store; the worker may die at any moment and is replaced.
//
// Requests ("op"):
//   hello   {protocol, gpu (-1 = auto)}          -> {ok, protocol, fingerprint, device, why,
//   devices} problem {problem, alpha, beta, seed, reps}    -> {ok, cublas: TimeStats} trial {name,
//   cubin, sha256, kernel, grid, block, warmup, reps, cut_after, cut_ratio,
//            best_ms, tolerance, checksum?}       -> {status, reason, verify_error, time, cut,
//                                                    checksum?}
//   cublas  {reps}                                -> {ok, cublas: TimeStats}
//   bye     {}                                    -> (exit)
// Every response carries "ok" (false with "error" when the request itself failed). A trial that
// poisons the CUDA context answers status "crashed" and the worker exits.
#pragma once

#include <array>
#include <string>

#include "trial.hpp"

namespace sgt::gpu {

constexpr int kWorkerProtocol = 1;

struct TrialRequest {
  std::string name;
  std::string cubin_path;
  std::string cubin_sha256;
  std::string kernel;  // lowered (mangled) name
  std::array<unsigned, 2> grid{1, 1};
  unsigned block = 0;
  int warmup = 1;
  int repetitions = 5;
  int cut_after = 2;
  double cut_ratio = 1.25;
  double best_ms = 0;
  double tolerance = 1e-4;  // relative L2 error against cuBLAS
  bool checksum = false;    // also return the SHA-256 of the verified C (for tests)
};

struct TrialResponse {
  TrialStatus status = TrialStatus::ok;
  std::string reason;
  double verify_error = -1;
  TimeStats time;
  bool cut = false;
  std::string checksum;
};

}  // namespace sgt::gpu
