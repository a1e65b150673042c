// The parent's side of the worker protocol: starts the worker process, sends requests, enforces a
// watchdog, and replaces the worker when a candidate crashes it or hangs.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "gpu_select.hpp"
#include "trial.hpp"
#include "worker_protocol.hpp"

namespace sgt::eval {

struct ProblemSetup {
  Problem problem;
  float alpha = 1.0f, beta = 0.0f;
  std::uint64_t seed = 0;
  int cublas_repetitions = 20;
  long long pad = 0;  // extra elements per stored row of A, B, C (padded leading dimensions)
  int offset = 0;     // elements by which A, B, C start past an aligned allocation
};

struct WorkerInfo {
  GpuFingerprint fingerprint;
  int device = 0;
  std::string why;  // why this device was chosen
  nlohmann::json devices;
};

class WorkerClient {
 public:
  // exe: the sgemm-tune binary (it runs `exe __worker`); gpu: which device (--gpu), resolved by
  // the worker; a replaced worker keeps the device the first one chose.
  // Throws sgt::Error when no worker can start or no GPU is usable (or none matches `gpu`).
  WorkerClient(std::filesystem::path exe, GpuSelector gpu);
  // gpu: a device index, or -1 for auto.
  WorkerClient(std::filesystem::path exe, int gpu);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  const WorkerInfo& info() const { return info_; }

  // Allocates and fills the problem in the worker, times cuBLAS; remembered for restarts.
  TimeStats set_problem(const ProblemSetup& setup);
  // Runs one candidate. Never throws for the candidate's own failure: a crash or a hang becomes
  // a crashed/timeout response and the worker is replaced before returning.
  TrialResponse run_trial(const TrialRequest& req, std::chrono::milliseconds timeout);
  TimeStats time_cublas(int repetitions, L2Mode l2 = L2Mode::flush);
  // The current problem's rotation, made now if no rotated timing has made it. Throws Error when
  // it does not fit in the GPU's memory.
  RotationInfo rotation();
  // cuBLASLt's heuristic algorithms for the current problem, each verified and timed.
  LtSearch cublaslt_search(const LtSearchOptions& o);
  // One algorithm of a search, verified and timed again (status incorrect, resources, ... when it
  // fails, with no time).
  TrialResponse time_cublaslt(const LtAlgo& algo, const LtSearchOptions& o);
  // cuBLAS 1xTF32 (the protocol's cublas_tf32) on the current problem: verified against cuBLAS
  // FP32 with `tolerance`, its error ratio against FP64 measured, then timed; a failure is its
  // status (incorrect, resources, crashed, ...) with no time. Throws Error when the worker cannot
  // serve the request (no problem, a rotation or FP64 reference that does not fit).
  TrialResponse time_cublas_tf32(const Tf32Request& r);
  // Runs the candidate of `t` on each case (its own buffers; the problem stays set) and returns
  // the cases with passed/error/reason filled. A crash or hang fails every case and replaces the
  // worker; a request the worker cannot serve throws Error.
  std::vector<EdgeCheck> verify_cases(const TrialRequest& t, const std::vector<EdgeCheck>& cases,
                                      std::uint64_t seed, std::chrono::milliseconds timeout);

  int restarts() const { return restarts_; }
  // Replaces the worker process with a fresh one on the same device, with no problem set (after a
  // failure whose cause is unknown: a hung or confused worker is not asked again). Throws
  // sgt::Error when no worker can start there: the device is gone.
  void reset();

 private:
  void start();
  void stop(bool kill);
  void restart();
  // After a request went unanswered: whether the worker hung (else it died) and a reason naming
  // the timeout, signal or exit status; the worker has been replaced when this returns.
  std::pair<bool, std::string> replace_silent_worker(std::chrono::milliseconds timeout);
  void send(const nlohmann::json& req);
  // nullopt when the worker died or the timeout expired.
  std::optional<nlohmann::json> receive(std::chrono::milliseconds timeout);
  nlohmann::json call(const nlohmann::json& req, std::chrono::milliseconds timeout);
  // call() for a request that runs a library's kernels (cuBLASLt): a worker that dies or hangs on
  // it is replaced, with the problem set again, before the Error is thrown.
  nlohmann::json call_or_replace(const nlohmann::json& req, std::chrono::milliseconds timeout);

  std::filesystem::path exe_;
  GpuSelector gpu_;
  bool started_ = false;  // a worker has answered hello: info_.device is the device
  int pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  std::string buffer_;
  WorkerInfo info_;
  std::optional<ProblemSetup> problem_;
  int restarts_ = 0;
};

}  // namespace sgt::eval
