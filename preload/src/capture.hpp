// The capture: a table of the GEMM problems one process called, in plain values (no CUDA type),
// its settings from the environment, and the capture file it writes (docs/preload.md). The
// interposer feeds it; the tests drive it directly.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sgemm_tune/preload/row_major.hpp"

namespace sgt::preload {

// How much the library says on stderr.
enum class LogLevel { Quiet = 0, Summary = 1, Info = 2, Debug = 3 };

// The settings, from the environment (docs/preload.md lists them).
struct Settings {
  bool enabled = true;           // SGT_PRELOAD=off: every call passes through untouched, no capture
  std::string capture_path;      // SGT_CAPTURE, "%p" replaced by the pid; empty: nothing recorded
  std::string capture_template;  // SGT_CAPTURE as given (a forked child expands its own pid)
  double interval_s = 30;        // SGT_CAPTURE_INTERVAL: write at most this often (0: every call)
  bool timing = false;           // SGT_CAPTURE_TIMING=1: time each call with CUDA events
  std::size_t max_problems = 100000;  // SGT_CAPTURE_MAX_PROBLEMS: distinct problems kept
  LogLevel log = LogLevel::Summary;   // SGT_PRELOAD_LOG: quiet, summary, info, debug
  std::vector<std::string> warnings;  // settings that were not understood, for the log
  // Serve mode (serve_plan.hpp): SGT_SERVE names a serve plan; empty: no call is served.
  std::string serve_plan;
  std::string serve_lib;       // SGT_SERVE_LIB: libsgemm_tune_serve.so (default: beside this one)
  bool serve_dry_run = false;  // SGT_SERVE_DRY_RUN=1: decide and count, but let cuBLAS run all
  std::string serve_device;    // SGT_SERVE_DEVICE=NAME@sm_XY/SMS: the device a dry run assumes
  bool serve_verify = false;   // SGT_SERVE_VERIFY=1: compare every served call with cuBLAS

  bool serving() const { return enabled && !serve_plan.empty(); }

  // `get` reads one variable (nullptr when unset); `pid` replaces %p.
  static Settings from_env(const std::function<const char*(const char*)>& get, long pid);
  // `path` with every "%p" replaced by `pid`.
  static std::string expand(std::string path, long pid);
};

// One call as recorded: the entry point, the arguments in cuBLAS's terms, and the classes that
// decide whether sgemm-tune can tune (and later serve) it. The string_views point at string
// literals (static storage), so a key is cheap to copy and compare.
struct CallFacts {
  std::string_view entry;  // "cublasSgemm_v2", "cublasGemmEx", "cublasLtMatmul", ...
  int device = -1;         // the CUDA device ordinal, -1 when unknown
  ColumnMajorGemm call;    // sizes, ops ('N'/'T'), leading dimensions, orders (cuBLASLt)
  bool lt = false;         // a cuBLASLt call: orders, epilogue and D are meaningful
  std::string_view a_type = "f32", b_type = "f32", c_type = "f32";
  std::string_view compute;       // "32F", "32F_FAST_TF32", ...; empty for the S entries
  std::string_view math_mode;     // the handle's math mode; empty for cuBLASLt (it has none)
  std::string_view pointer_mode;  // "host", "device", "device_vector", ...
  ScalarClass alpha = ScalarClass::Unknown, beta = ScalarClass::Unknown;
  std::int64_t batch = 1;
  std::string_view batch_kind = "none";                   // "none", "strided", "pointer_array"
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // cuBLAS's, in elements
  std::string_view epilogue;  // cuBLASLt: "default", "bias", "relu", ...
  bool c_matches_d = true;    // cuBLASLt: C and D have one type, order and leading dimension
  bool in_place = true;       // cuBLASLt: C and D are the same memory

  friend bool operator==(const CallFacts&, const CallFacts&) = default;
};

// "fp32" when the call computes plain FP32 (FP32 data and compute, no TF32 or reduced-precision
// math allowed), else "tf32", "reduced", "emulated" or "other": what sgemm-tune can tune, and what
// a server must pass through.
std::string_view precision(const CallFacts& f);

// Why a call seen was not recorded; each is counted.
enum class NotRecorded {
  Failed,         // cuBLAS returned an error: nothing ran
  Empty,          // m, n or k is 0
  UnsupportedOp,  // CUBLAS_OP_CONJG or an unknown value
  LtDescriptor,   // a cuBLASLt descriptor could not be read
  LtOrder,        // a cuBLASLt order other than COL and ROW (the int8 tile orders)
  TableFull,      // more distinct problems than SGT_CAPTURE_MAX_PROBLEMS
  Internal,       // the recorder failed (out of memory, ...): swallowed
  kCount
};
const char* describe(NotRecorded why);

// Calls and time of one problem.
struct Stats {
  long long calls = 0;
  long long timed_calls = 0;
  double time_ms = 0;
};

// A device seen, for the file's process entry.
struct DeviceInfo {
  int index = -1;
  std::string name;  // empty when unknown
  std::string uuid;  // "GPU-...", empty when unknown
};

// Who wrote a capture: one process (a forked child is a process of its own).
struct ProcessInfo {
  std::string host;
  long pid = 0;
  std::string command;        // the command line, cut to 200 characters
  std::string started;        // UTC, ISO 8601 with milliseconds: with host and pid, the identity
  std::string tf32_override;  // NVIDIA_TF32_OVERRIDE as set, empty when unset
  static ProcessInfo current();
};

struct FactsHash {
  std::size_t operator()(const CallFacts& f) const;
};

// The table and its file. Thread-safe: one mutex around the table; writing the file takes a
// second one (and a lock file shared with other processes), never the table's.
class Recorder {
 public:
  Recorder(Settings settings, ProcessInfo process);

  const Settings& settings() const { return settings_; }
  bool recording() const { return settings_.enabled && !settings_.capture_path.empty(); }

  // A GEMM call reached this library (nested calls, made by cuBLAS itself, are not counted).
  void seen() { seen_.fetch_add(1, std::memory_order_relaxed); }
  // A call that was not recorded, and why.
  void skip(NotRecorded why) {
    not_recorded_[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
  }
  // Records a successful call; returns its problem's stats (stable for the recorder's life, for
  // a time measured later) or nullptr when it was not recorded (the table is full). `first` is
  // set when this was the problem's first call.
  Stats* record(const CallFacts& f, bool* first = nullptr);
  // Adds a time measured for one call of `stats`.
  void add_time(Stats* stats, double ms);
  // A device seen for the first time (index, name, uuid).
  void add_device(DeviceInfo d);
  bool knows_device(int index) const;

  // Whether the periodic write is due (after a recorded call).
  bool write_due() const;
  // Writes the capture (merged with other processes' entries in the file). `wait`: block on a
  // write in progress (at exit) instead of skipping this one. Never throws; false on failure,
  // which is counted and logged.
  bool write(bool wait);

  // The file's contents for this process alone, and merged into `existing` (a capture's JSON
  // text, or empty): what write() puts in the file. Throws std::runtime_error when `existing` is
  // not a capture this version may rewrite.
  std::string render(std::string_view existing) const;

  // The one line printed at exit.
  std::string summary() const;

  // Around fork() (pthread_atfork): the mutexes are taken before it, so that the child does not
  // inherit one held by a thread it does not have, and released after it in both processes. In
  // the child, reset_after_fork() then makes it a process of its own (this pid, started now, its
  // own file when the name has %p) with an empty table: the parent's calls are the parent's.
  void lock_for_fork();
  void unlock_after_fork();
  void reset_after_fork(long pid);

  long long calls_seen() const { return seen_.load(); }
  long long calls_recorded() const { return recorded_.load(); }
  std::size_t problems() const;

 private:
  struct Snapshot;
  Snapshot snapshot() const;

  Settings settings_;
  ProcessInfo process_;
  mutable std::mutex table_mutex_;
  std::unordered_map<CallFacts, Stats, FactsHash> table_;
  std::map<int, DeviceInfo> devices_;
  std::atomic<long long> seen_{0}, recorded_{0};
  std::atomic<long long> not_recorded_[static_cast<int>(NotRecorded::kCount)] = {};
  std::atomic<long long> timed_{0};

  mutable std::mutex write_mutex_;
  std::atomic<long long> last_write_ns_{0};
  std::atomic<long long> writes_{0}, write_failures_{0};
  std::string last_write_error_;  // guarded by write_mutex_
};

// Text safe for a terminal: bytes outside printable ASCII become \xNN (the library cannot use
// the tuner's terminal_safe, it links no part of it).
std::string printable(std::string_view text);

}  // namespace sgt::preload
