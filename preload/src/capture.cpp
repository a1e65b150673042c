// The capture table, its settings and its file: see capture.hpp and docs/preload.md.
#include "capture.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#ifndef SGT_PRELOAD_VERSION
#define SGT_PRELOAD_VERSION "0"
#endif

namespace sgt::preload {
namespace {

// Fields stay in the order written: the problem's identity and weight first, for a reader.
using json = nlohmann::ordered_json;

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms.count() % 1000));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The names the file uses for the reasons a call was not recorded.
constexpr const char* kNotRecordedKeys[] = {
    "failed", "empty", "unsupported_op", "lt_descriptor", "lt_order", "table_full", "internal"};
static_assert(std::size(kNotRecordedKeys) == static_cast<size_t>(NotRecorded::kCount));

json null_if_empty(std::string_view s) {
  return s.empty() ? json(nullptr) : json(std::string(s));
}

const char* order_name(Order o) {
  return o == Order::Col ? "col" : "row";
}

json problem_json(const CallFacts& f, const Stats& s, size_t process) {
  const RowMajorGemm rm = to_row_major(f.call);
  json call = {{"transa", std::string(1, f.call.transa)},
               {"transb", std::string(1, f.call.transb)},
               {"m", f.call.m},
               {"n", f.call.n},
               {"k", f.call.k},
               {"lda", f.call.lda},
               {"ldb", f.call.ldb},
               {"ldc", f.call.ldc},
               {"a_type", std::string(f.a_type)},
               {"b_type", std::string(f.b_type)},
               {"c_type", std::string(f.c_type)}};
  if (f.lt) {
    call["order_a"] = order_name(f.call.order_a);
    call["order_b"] = order_name(f.call.order_b);
    call["order_c"] = order_name(f.call.order_c);
  }
  if (f.batch_kind == "strided") {
    call["stride_a"] = f.stride_a;
    call["stride_b"] = f.stride_b;
    call["stride_c"] = f.stride_c;
  }
  json p = {
      {"shape", std::to_string(rm.M) + "x" + std::to_string(rm.N) + "x" + std::to_string(rm.K)},
      {"layout", rm.layout()},
      {"lda", rm.lda},
      {"ldb", rm.ldb},
      {"ldc", rm.ldc},
      {"calls", s.calls},
      {"timed_calls", s.timed_calls},
      {"time_ms", s.timed_calls > 0 ? json(s.time_ms) : json(nullptr)},
      {"precision", std::string(precision(f))},
      {"entry", std::string(f.entry)},
      {"process", process},
      {"device", f.device >= 0 ? json(f.device) : json(nullptr)},
      {"compute", null_if_empty(f.compute)},
      {"math_mode", null_if_empty(f.math_mode)},
      {"pointer_mode", std::string(f.pointer_mode)},
      {"alpha", name(f.alpha)},
      {"beta", name(f.beta)},
      {"batch", f.batch},
      {"batch_kind", std::string(f.batch_kind)}};
  if (f.lt) {
    p["epilogue"] = std::string(f.epilogue);
    p["c_matches_d"] = f.c_matches_d;
    p["in_place"] = f.in_place;
  }
  p["cublas"] = std::move(call);
  return p;
}

// Writes all of `data` to `fd`; false with errno on failure.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

Settings Settings::from_env(const std::function<const char*(const char*)>& get, long pid) {
  Settings s;
  auto value = [&](const char* name) -> std::string {
    const char* v = get(name);
    return v ? std::string(v) : std::string();
  };
  const std::string enabled = lower(value("SGT_PRELOAD"));
  if (enabled == "off" || enabled == "0" || enabled == "false" || enabled == "no") {
    s.enabled = false;
  } else if (!enabled.empty() && enabled != "on" && enabled != "1" && enabled != "true" &&
             enabled != "yes") {
    s.warnings.push_back("SGT_PRELOAD='" + printable(enabled) + "' is not off or on; taken as on");
  }
  s.capture_template = value("SGT_CAPTURE");
  s.capture_path = expand(s.capture_template, pid);
  if (const std::string v = value("SGT_CAPTURE_INTERVAL"); !v.empty()) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (end && *end == '\0' && d >= 0 && d < 1e9) {
      s.interval_s = d;
    } else {
      s.warnings.push_back("SGT_CAPTURE_INTERVAL='" + printable(v) +
                           "' is not a number of seconds; 30 taken");
    }
  }
  const std::string timing = lower(value("SGT_CAPTURE_TIMING"));
  s.timing = timing == "1" || timing == "on" || timing == "true" || timing == "yes";
  if (const std::string v = value("SGT_CAPTURE_MAX_PROBLEMS"); !v.empty()) {
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (end && *end == '\0' && n > 0) {
      s.max_problems = static_cast<size_t>(n);
    } else {
      s.warnings.push_back("SGT_CAPTURE_MAX_PROBLEMS='" + printable(v) +
                           "' is not a positive number; 100000 taken");
    }
  }
  auto flag = [&](const char* name) {
    const std::string v = lower(value(name));
    if (v.empty() || v == "0" || v == "off" || v == "false" || v == "no") return false;
    if (v != "1" && v != "on" && v != "true" && v != "yes")
      s.warnings.push_back(std::string(name) + "='" + printable(v) +
                           "' is not on or off; taken as on");
    return true;
  };
  s.serve_plan = value("SGT_SERVE");
  s.serve_lib = value("SGT_SERVE_LIB");
  s.serve_dry_run = flag("SGT_SERVE_DRY_RUN");
  s.serve_device = value("SGT_SERVE_DEVICE");
  s.serve_verify = flag("SGT_SERVE_VERIFY");
  if (!s.serve_device.empty() && !s.serve_dry_run)
    s.warnings.push_back("SGT_SERVE_DEVICE is only for a dry run (SGT_SERVE_DRY_RUN=1); ignored");
  if (const std::string v = lower(value("SGT_PRELOAD_LOG")); !v.empty()) {
    if (v == "quiet" || v == "off" || v == "0") {
      s.log = LogLevel::Quiet;
    } else if (v == "summary") {
      s.log = LogLevel::Summary;
    } else if (v == "info") {
      s.log = LogLevel::Info;
    } else if (v == "debug") {
      s.log = LogLevel::Debug;
    } else {
      s.warnings.push_back("SGT_PRELOAD_LOG='" + printable(v) +
                           "' is not quiet, summary, info or debug; summary taken");
    }
  }
  return s;
}

std::string Settings::expand(std::string path, long pid) {
  const std::string id = std::to_string(pid);
  for (size_t at = 0; (at = path.find("%p", at)) != std::string::npos; at += id.size()) {
    path.replace(at, 2, id);
  }
  return path;
}

ProcessInfo ProcessInfo::current() {
  ProcessInfo p;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  p.pid = static_cast<long>(getpid());
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  while (!args.empty() && args.back() == '\0') args.pop_back();
  std::replace(args.begin(), args.end(), '\0', ' ');
  if (args.size() > 200) args = args.substr(0, 197) + "...";
  p.command = args;
  p.started = utc_now();
  if (const char* v = std::getenv("NVIDIA_TF32_OVERRIDE")) p.tf32_override = v;
  return p;
}

std::string_view precision(const CallFacts& f) {
  if (f.a_type != "f32" || f.b_type != "f32" || f.c_type != "f32") return "other";
  if (!f.compute.empty()) {
    if (f.compute == "32F_FAST_TF32") return "tf32";
    if (f.compute == "32F_FAST_16F" || f.compute == "32F_FAST_16BF") return "reduced";
    if (f.compute == "32F_EMULATED_16BFX9") return "emulated";
    if (f.compute != "32F" && f.compute != "32F_PEDANTIC") return "other";
  }
  // The handle's math mode applies to the classic entries, GemmEx included.
  if (f.math_mode == "tf32") return "tf32";
  if (f.math_mode == "tensor_op") return "reduced";
  if (f.math_mode == "bf16x9") return "emulated";
  return "fp32";
}

const char* describe(NotRecorded why) {
  switch (why) {
    case NotRecorded::Failed:
      return "failed";
    case NotRecorded::Empty:
      return "empty (m, n or k is 0)";
    case NotRecorded::UnsupportedOp:
      return "unsupported op";
    case NotRecorded::LtDescriptor:
      return "unreadable cuBLASLt descriptor";
    case NotRecorded::LtOrder:
      return "cuBLASLt order other than COL or ROW";
    case NotRecorded::TableFull:
      return "over SGT_CAPTURE_MAX_PROBLEMS";
    case NotRecorded::Internal:
    case NotRecorded::kCount:
      break;
  }
  return "internal error";
}

std::size_t FactsHash::operator()(const CallFacts& f) const {
  std::size_t h = 0;
  auto mix = [&](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  const std::hash<std::string_view> sv;
  const std::hash<std::int64_t> i64;
  mix(sv(f.entry));
  mix(i64(f.device));
  mix(i64(f.call.transa * 256 + f.call.transb));
  for (const auto v : {f.call.m, f.call.n, f.call.k, f.call.lda, f.call.ldb, f.call.ldc, f.batch,
                       f.stride_a, f.stride_b, f.stride_c}) {
    mix(i64(v));
  }
  mix(i64(static_cast<int>(f.call.order_a) * 4 + static_cast<int>(f.call.order_b) * 2 +
          static_cast<int>(f.call.order_c)));
  for (const auto s : {f.a_type, f.b_type, f.c_type, f.compute, f.math_mode, f.pointer_mode,
                       f.batch_kind, f.epilogue}) {
    mix(sv(s));
  }
  mix(i64(static_cast<int>(f.alpha) * 8 + static_cast<int>(f.beta)));
  mix(i64((f.lt ? 4 : 0) + (f.c_matches_d ? 2 : 0) + (f.in_place ? 1 : 0)));
  return h;
}

Recorder::Recorder(Settings settings, ProcessInfo process)
    : settings_(std::move(settings)), process_(std::move(process)) {
  last_write_ns_ = now_ns();
}

Stats* Recorder::record(const CallFacts& f, bool* first) {
  std::lock_guard lock(table_mutex_);
  auto it = table_.find(f);
  if (it == table_.end()) {
    if (table_.size() >= settings_.max_problems) {
      skip(NotRecorded::TableFull);
      return nullptr;
    }
    it = table_.emplace(f, Stats{}).first;
  }
  if (first) *first = it->second.calls == 0;
  ++it->second.calls;
  recorded_.fetch_add(1, std::memory_order_relaxed);
  return &it->second;
}

void Recorder::add_time(Stats* stats, double ms) {
  if (!stats) return;
  std::lock_guard lock(table_mutex_);
  stats->time_ms += ms;
  ++stats->timed_calls;
  timed_.fetch_add(1, std::memory_order_relaxed);
}

void Recorder::add_device(DeviceInfo d) {
  std::lock_guard lock(table_mutex_);
  devices_[d.index] = std::move(d);
}

bool Recorder::knows_device(int index) const {
  std::lock_guard lock(table_mutex_);
  return devices_.contains(index);
}

std::size_t Recorder::problems() const {
  std::lock_guard lock(table_mutex_);
  return table_.size();
}

bool Recorder::write_due() const {
  return now_ns() - last_write_ns_.load(std::memory_order_relaxed) >=
         static_cast<long long>(settings_.interval_s * 1e9);
}

struct Recorder::Snapshot {
  std::vector<std::pair<CallFacts, Stats>> rows;
  std::map<int, DeviceInfo> devices;
};

Recorder::Snapshot Recorder::snapshot() const {
  Snapshot s;
  std::lock_guard lock(table_mutex_);
  s.rows.assign(table_.begin(), table_.end());
  s.devices = devices_;
  return s;
}

namespace {

// What a capture file already holds that stays: every other process's entries, and their
// problems renumbered (this process's, by its host, pid and start, are replaced). Nothing when the
// file is blank; an error, leaving it as it is, when it is not a capture of format_version 1.
void keep_other_processes(std::string_view existing, const ProcessInfo& process, json& processes,
                          std::vector<json>& problems) {
  const auto blank = existing.find_first_not_of(" \t\r\n") == std::string_view::npos;
  if (!blank) {
    json old;
    try {
      old = json::parse(existing);
    } catch (const json::parse_error&) {
      throw std::runtime_error("the file there is not JSON, so not a capture: left as it is");
    }
    if (!old.is_object() || !old.contains("format") || old["format"] != "sgemm-tune-capture") {
      throw std::runtime_error("the file there is not a capture: left as it is");
    }
    if (old.value("format_version", json()) != 1) {
      throw std::runtime_error("the file there is a capture of format_version " +
                               old.value("format_version", json()).dump() +
                               ", not 1: left as it is");
    }
    const json old_processes = old.value("processes", json::array());
    const json old_problems = old.value("problems", json::array());
    if (!old_processes.is_array() || !old_problems.is_array()) {
      throw std::runtime_error("the file there is not a well-formed capture: left as it is");
    }
    // Every other process's entries stay; this process's (its host, pid and start) are replaced.
    std::map<size_t, size_t> renumber;
    for (size_t i = 0; i < old_processes.size(); ++i) {
      const auto& p = old_processes[i];
      if (p.is_object() && p.value("host", "") == process.host &&
          p.value("pid", 0L) == process.pid && p.value("started", "") == process.started) {
        continue;
      }
      renumber[i] = processes.size();
      processes.push_back(p);
    }
    for (const auto& p : old_problems) {
      if (!p.is_object() || !p.contains("process") || !p["process"].is_number_unsigned()) continue;
      const auto it = renumber.find(p["process"].get<size_t>());
      if (it == renumber.end()) continue;
      json copy = p;
      copy["process"] = it->second;
      problems.push_back(std::move(copy));
    }
  }
}

// One line of JSON, invalid UTF-8 replaced.
std::string json_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// One process or problem per line: readable, and a diff shows what changed.
std::string capture_text(const json& processes, const std::vector<json>& problems,
                         const std::vector<std::string>& rows) {
  std::string out = "{\n \"format\": \"sgemm-tune-capture\",\n \"format_version\": 1,\n";
  out += " \"writer\": \"libsgemm_tune_preload " SGT_PRELOAD_VERSION "\",\n \"processes\": [";
  for (size_t i = 0; i < processes.size(); ++i) {
    out += (i ? ",\n  " : "\n  ") + json_line(processes[i]);
  }
  out += "\n ],\n \"problems\": [";
  size_t n = 0;
  for (const auto& p : problems) out += (n++ ? ",\n  " : "\n  ") + json_line(p);
  for (const auto& r : rows) out += (n++ ? ",\n  " : "\n  ") + r;
  out += n == 0 ? "]\n}\n" : "\n ]\n}\n";
  return out;
}

}  // namespace

std::string Recorder::render(std::string_view existing) const {
  json processes = json::array();
  std::vector<json> problems;
  keep_other_processes(existing, process_, processes, problems);

  const Snapshot s = snapshot();
  const size_t me = processes.size();
  json devices = json::array();
  for (const auto& [index, d] : s.devices) {
    devices.push_back(
        {{"index", index}, {"name", null_if_empty(d.name)}, {"uuid", null_if_empty(d.uuid)}});
  }
  json not_recorded = json::object();
  for (int i = 0; i < static_cast<int>(NotRecorded::kCount); ++i) {
    if (const long long n = not_recorded_[i].load()) not_recorded[kNotRecordedKeys[i]] = n;
  }
  processes.push_back({{"pid", process_.pid},
                       {"host", process_.host},
                       {"command", process_.command},
                       {"started", process_.started},
                       {"written", utc_now()},
                       {"calls_seen", seen_.load()},
                       {"calls_recorded", recorded_.load()},
                       {"not_recorded", std::move(not_recorded)},
                       {"devices", std::move(devices)},
                       {"timing", settings_.timing},
                       {"tf32_override", null_if_empty(process_.tf32_override)}});
  // This process's problems most time first, then most calls (the order a tune takes them in),
  // then by their text, so that the same table always writes the same file.
  struct Row {
    double time_ms;
    long long calls;
    std::string text;
  };
  std::vector<Row> rows;
  rows.reserve(s.rows.size());
  for (const auto& [f, st] : s.rows) {
    rows.push_back(
        {st.timed_calls > 0 ? st.time_ms : -1.0, st.calls, json_line(problem_json(f, st, me))});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.time_ms != b.time_ms) return a.time_ms > b.time_ms;
    if (a.calls != b.calls) return a.calls > b.calls;
    return a.text < b.text;
  });

  std::vector<std::string> texts;
  texts.reserve(rows.size());
  for (auto& r : rows) texts.push_back(std::move(r.text));
  return capture_text(processes, problems, texts);
}

bool Recorder::write(bool wait) {
  std::unique_lock lock(write_mutex_, std::defer_lock);
  if (wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return true;  // another thread is writing: this call's data goes in the next write
  }
  last_write_ns_ = now_ns();
  if (!recording() || seen_.load() == 0) return true;
  const std::string& path = settings_.capture_path;
  int lock_fd = -1;
  std::string tmp;
  try {
    // Processes sharing the file take turns: read, merge, replace. The lock file stays.
    const std::string lock_path = path + ".lock";
    lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0) throw std::runtime_error("cannot open " + lock_path + ": " + errno_text());
    while (::flock(lock_fd, LOCK_EX) != 0) {
      if (errno != EINTR)
        throw std::runtime_error("cannot lock " + lock_path + ": " + errno_text());
    }
    std::string existing;
    {
      std::ifstream in(path, std::ios::binary);
      if (in) {
        std::ostringstream ss;
        ss << in.rdbuf();
        existing = ss.str();
      }
    }
    const std::string text = render(existing);
    static std::atomic<unsigned> counter{0};
    tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + errno_text());
    const bool ok = write_all(fd, text);
    const std::string why = ok ? "" : errno_text();
    if (::close(fd) != 0 || !ok) {
      throw std::runtime_error("cannot write " + tmp + ": " + (ok ? errno_text() : why));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + errno_text());
    }
    tmp.clear();
    ::close(lock_fd);
    writes_.fetch_add(1);
    if (settings_.log >= LogLevel::Info) {
      std::fprintf(stderr, "sgemm-tune preload: wrote %zu problems to '%s'\n", problems(),
                   printable(path).c_str());
    }
    return true;
  } catch (const std::exception& e) {
    if (!tmp.empty()) ::unlink(tmp.c_str());
    if (lock_fd >= 0) ::close(lock_fd);
    write_failures_.fetch_add(1);
    last_write_error_ = e.what();
    if (settings_.log >= LogLevel::Info) {
      std::fprintf(stderr, "sgemm-tune preload: cannot write the capture '%s': %s\n",
                   printable(path).c_str(), printable(e.what()).c_str());
    }
    return false;
  }
}

std::string Recorder::summary() const {
  const long long seen = seen_.load(), recorded = recorded_.load();
  std::string out =
      "sgemm-tune preload: " + std::to_string(seen) + " GEMM call" + (seen == 1 ? "" : "s");
  if (!recording()) return out + " passed through (SGT_CAPTURE is not set: nothing recorded)";
  out += ", " + std::to_string(recorded) + " recorded as " + std::to_string(problems()) +
         " problem" + (problems() == 1 ? "" : "s") + " in '" + printable(settings_.capture_path) +
         "'";
  long long skipped = 0;
  std::string why;
  for (int i = 0; i < static_cast<int>(NotRecorded::kCount); ++i) {
    if (const long long n = not_recorded_[i].load()) {
      skipped += n;
      why += (why.empty() ? "" : ", ") + std::to_string(n) + " " +
             describe(static_cast<NotRecorded>(i));
    }
  }
  out += skipped ? "; " + std::to_string(skipped) + " not recorded (" + why + ")"
                 : "; every call recorded";
  if (settings_.timing) out += "; " + std::to_string(timed_.load()) + " timed";
  if (const long long failed = write_failures_.load()) {
    out += "; " + std::to_string(failed) + " write" + (failed == 1 ? "" : "s") + " failed";
    // A thread still writing holds the last error: then it goes unsaid.
    if (std::unique_lock lock(write_mutex_, std::try_to_lock); lock) {
      out += ", the last: " + printable(last_write_error_);
    }
  }
  return out;
}

void Recorder::lock_for_fork() {
  write_mutex_.lock();
  table_mutex_.lock();
}

void Recorder::unlock_after_fork() {
  table_mutex_.unlock();
  write_mutex_.unlock();
}

void Recorder::reset_after_fork(long pid) {
  // Called in the child, single-threaded, before anything else can use the recorder: the same
  // host and command line, a new identity. glibc keeps malloc usable after fork, and nothing here
  // reads a file.
  process_.pid = pid;
  process_.started = utc_now();
  settings_.capture_path = Settings::expand(settings_.capture_template, process_.pid);
  table_.clear();
  devices_.clear();
  seen_ = 0;
  recorded_ = 0;
  timed_ = 0;
  for (auto& n : not_recorded_) n = 0;
  writes_ = 0;
  write_failures_ = 0;
  last_write_error_.clear();
  last_write_ns_ = now_ns();
}

}  // namespace sgt::preload
