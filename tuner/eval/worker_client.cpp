// Starting, talking to, watching and replacing the GPU worker process.
#include "worker_client.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "error.hpp"

extern char** environ;

namespace sgt::eval {

namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// Starting a worker initialises CUDA and cuBLAS and compiles the verification kernel.
constexpr auto kStartTimeout = 120s;
// Filling a large problem and timing cuBLAS.
constexpr auto kProblemTimeout = 300s;
}  // namespace

WorkerClient::WorkerClient(std::filesystem::path exe, GpuSelector gpu)
    : exe_(std::move(exe)), gpu_(std::move(gpu)) {
  // A worker that dies mid-write must not kill the tuner.
  std::signal(SIGPIPE, SIG_IGN);
  start();
}

WorkerClient::WorkerClient(std::filesystem::path exe, int gpu)
    : WorkerClient(
          std::move(exe),
          gpu < 0 ? GpuSelector{} : GpuSelector{GpuSelector::Kind::index, gpu, std::string()}) {}

WorkerClient::~WorkerClient() {
  stop(false);
}

void WorkerClient::start() {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot create pipes for the worker: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], STDOUT_FILENO);
  const std::string exe = exe_.string();
  char arg1[] = "__worker";
  char* argv[] = {const_cast<char*>(exe.c_str()), arg1, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    throw Error(fmt::format("cannot start the worker '{}': {}", exe, std::strerror(rc)));
  }
  pid_ = pid;
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  buffer_.clear();

  json req = {{"op", "hello"}, {"protocol", kWorkerProtocol}, {"gpu", -1}};
  if (started_) {
    req["gpu"] = info_.device;  // a replacement keeps the device the first worker chose
  } else if (gpu_.kind == GpuSelector::Kind::index) {
    req["gpu"] = gpu_.index;
  } else if (gpu_.kind == GpuSelector::Kind::name) {
    req["gpu_name"] = gpu_.name;
  }
  const json hello = call(req, kStartTimeout);
  if (!hello.value("ok", false)) {
    const auto msg = hello.value("error", std::string("unknown error"));
    stop(true);
    throw Error("GPU worker: " + msg);
  }
  // A worker that answered without checking the protocol would misread what comes next.
  if (hello.value("protocol", -1) != kWorkerProtocol) {
    stop(true);
    throw Error(fmt::format(
        "GPU worker: protocol mismatch: the worker '{}' speaks protocol {}, this sgemm-tune {}",
        exe, hello.value("protocol", -1), kWorkerProtocol));
  }
  info_.fingerprint = hello.at("fingerprint").get<GpuFingerprint>();
  info_.device = hello.at("device");
  if (!started_) info_.why = hello.at("why");  // a replacement keeps the first worker's reason
  info_.devices = hello.at("devices");
  started_ = true;
}

void WorkerClient::stop(bool kill_it) {
  if (pid_ <= 0) return;
  if (!kill_it && to_worker_ >= 0) {
    const std::string bye = json{{"op", "bye"}}.dump() + "\n";
    [[maybe_unused]] auto n = write(to_worker_, bye.data(), bye.size());
  }
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (kill_it) kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

void WorkerClient::restart() {
  stop(true);
  ++restarts_;
  spdlog::info("restarting the GPU worker (restart #{})", restarts_);
  start();
  if (problem_) {
    const auto p = *problem_;
    set_problem(p);
  }
}

void WorkerClient::reset() {
  stop(true);
  buffer_.clear();
  problem_.reset();
  ++restarts_;
  spdlog::info("replacing the GPU worker after a failure (restart #{})", restarts_);
  start();
}

void WorkerClient::send(const json& req) {
  const std::string line = req.dump() + "\n";
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = write(to_worker_, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the worker is gone; receive() reports it
    }
    off += static_cast<size_t>(n);
  }
}

std::optional<json> WorkerClient::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      try {
        return json::parse(line);
      } catch (const json::parse_error& e) {
        throw Error(fmt::format("GPU worker sent a malformed response: {}", e.what()));
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{from_worker_, POLLIN, 0};
    const int r = poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // timeout: the loop re-checks the deadline
    char buf[65536];
    const ssize_t n = read(from_worker_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // EOF: the worker died
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

json WorkerClient::call(const json& req, std::chrono::milliseconds timeout) {
  send(req);
  auto resp = receive(timeout);
  if (!resp) {
    throw Error(fmt::format("GPU worker did not answer '{}' (died or timed out after {} ms)",
                            req.value("op", ""), timeout.count()));
  }
  return *resp;
}

json WorkerClient::call_or_replace(const json& req, std::chrono::milliseconds timeout) {
  send(req);
  auto resp = receive(timeout);
  if (!resp) {
    const auto [hung, why] = replace_silent_worker(timeout);
    throw Error(fmt::format("GPU worker failed on '{}': {}", req.value("op", ""), why));
  }
  return *resp;
}

std::pair<bool, std::string> WorkerClient::replace_silent_worker(
    std::chrono::milliseconds timeout) {
  // Tell a hang from a death: a live process past the deadline is a hang.
  int status = 0;
  const bool alive = pid_ > 0 && waitpid(pid_, &status, WNOHANG) == 0;
  std::string why =
      alive ? fmt::format("no answer within {} ms; worker killed", timeout.count())
            : fmt::format("worker died ({})", WIFSIGNALED(status)
                                                  ? fmt::format("signal {}", WTERMSIG(status))
                                                  : fmt::format("exit {}", WEXITSTATUS(status)));
  if (!alive && pid_ > 0) {  // already reaped by waitpid above
    close(to_worker_);
    close(from_worker_);
    to_worker_ = from_worker_ = -1;
    pid_ = -1;
  }
  restart();
  return {alive, std::move(why)};
}

std::vector<EdgeCheck> WorkerClient::verify_cases(const TrialRequest& t,
                                                  const std::vector<EdgeCheck>& cases,
                                                  std::uint64_t seed,
                                                  std::chrono::milliseconds timeout) {
  json req = candidate_request_json("verify", t);
  req["seed"] = seed;
  req["cases"] = cases;
  send(req);
  const auto resp = receive(timeout);
  if (!resp) {
    // The candidate crashed or hung the worker: every case is a failure, and a new worker serves
    // whatever comes next.
    const auto [hung, why] = replace_silent_worker(timeout);
    auto out = cases;
    for (auto& c : out) {
      c.passed = false;
      c.reason = why;
    }
    return out;
  }
  if (!resp->value("ok", false)) {
    throw Error(fmt::format("GPU worker could not verify {}: {}", t.name,
                            resp->value("error", std::string())));
  }
  auto out = resp->at("cases").get<std::vector<EdgeCheck>>();
  if (out.size() != cases.size()) throw Error("GPU worker answered a different number of cases");
  // A case that lost the context took the worker with it.
  for (const auto& c : out) {
    if (c.reason.find("context lost") != std::string::npos) {
      restart();
      break;
    }
  }
  return out;
}

TimeStats WorkerClient::set_problem(const ProblemSetup& s) {
  const json resp = call({{"op", "problem"},
                          {"problem", s.problem},
                          {"alpha", s.alpha},
                          {"beta", s.beta},
                          {"seed", s.seed},
                          {"pad", s.pad},
                          {"offset", s.offset},
                          {"reps", s.cublas_repetitions}},
                         kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not set up the problem: " + resp.value("error", std::string()));
  }
  problem_ = s;
  return resp.at("cublas").get<TimeStats>();
}

TimeStats WorkerClient::time_cublas(int repetitions, L2Mode l2) {
  const json resp =
      call({{"op", "cublas"}, {"reps", repetitions}, {"l2", to_string(l2)}}, kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not time cuBLAS: " + resp.value("error", std::string()));
  }
  return resp.at("cublas").get<TimeStats>();
}

RotationInfo WorkerClient::rotation() {
  const json resp = call({{"op", "rotation"}}, kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not rotate the operands: " + resp.value("error", std::string()));
  }
  RotationInfo r;
  r.copies = resp.at("copies");
  r.set_bytes = resp.at("set_bytes");
  r.l2_bytes = resp.at("l2_bytes");
  return r;
}

namespace {

json lt_request(const char* op, const LtSearchOptions& o) {
  return {{"op", op},
          {"workspace", o.workspace_bytes},
          {"warmup", o.warmup},
          {"reps", o.repetitions},
          {"tolerance", o.tolerance},
          {"l2", to_string(o.l2)}};
}

TrialResponse lt_response(const json& j) {
  TrialResponse r;
  r.status = status_from_string(j.at("status").get<std::string>()).value();
  r.reason = j.value("reason", "");
  r.verify_error = j.value("verify_error", -1.0);
  if (j.contains("time")) r.time = j.at("time").get<TimeStats>();
  r.cut = j.value("cut", false);
  return r;
}

}  // namespace

LtSearch WorkerClient::cublaslt_search(const LtSearchOptions& o) {
  json req = lt_request("cublaslt_search", o);
  req["max_algos"] = o.max_algos;
  req["cut_after"] = o.cut_after;
  req["cut_ratio"] = o.cut_ratio;
  const json resp = call_or_replace(req, kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not search cuBLASLt's algorithms: " +
                resp.value("error", std::string()));
  }
  LtSearch s;
  s.requested = resp.at("requested");
  s.best = resp.at("best");
  s.workspace_bytes = o.workspace_bytes;
  for (const auto& j : resp.at("algos")) {
    LtAlgo a;
    const auto data = j.at("algo").get<std::vector<std::uint64_t>>();
    if (data.size() != a.data.size()) throw Error("GPU worker sent a malformed cuBLASLt algorithm");
    std::copy(data.begin(), data.end(), a.data.begin());
    a.desc = j.value("desc", "");
    a.workspace = j.value("workspace", std::size_t{0});
    const auto r = lt_response(j);
    a.status = r.status;
    a.reason = r.reason;
    a.verify_error = r.verify_error;
    a.time = r.time;
    a.cut = r.cut;
    s.algos.push_back(std::move(a));
  }
  // A worker that lost its context on an algorithm answered what it had, then exited.
  if (std::any_of(s.algos.begin(), s.algos.end(),
                  [](const LtAlgo& a) { return a.status == TrialStatus::crashed; }))
    restart();
  return s;
}

TrialResponse WorkerClient::time_cublaslt(const LtAlgo& algo, const LtSearchOptions& o) {
  json req = lt_request("cublaslt", o);
  req["algo"] = algo.data;
  const json resp = call_or_replace(req, kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not time cuBLASLt: " + resp.value("error", std::string()));
  }
  auto r = lt_response(resp);
  if (r.status == TrialStatus::crashed) restart();
  return r;
}

TrialResponse WorkerClient::time_cublas_tf32(const Tf32Request& r) {
  const json resp = call_or_replace(tf32_request_json(r), kProblemTimeout);
  if (!resp.value("ok", false)) {
    throw Error("GPU worker could not time cuBLAS 1xTF32: " + resp.value("error", std::string()));
  }
  auto out = trial_response_from_json(resp);
  if (out.status == TrialStatus::crashed) restart();
  return out;
}

TrialResponse WorkerClient::run_trial(const TrialRequest& t, std::chrono::milliseconds timeout) {
  send(trial_request_json(t));
  const auto resp = receive(timeout);
  TrialResponse out;
  if (!resp) {
    const auto [hung, why] = replace_silent_worker(timeout);
    out.status = hung ? TrialStatus::timeout : TrialStatus::crashed;
    out.reason = why;
    return out;
  }
  if (!resp->value("ok", false)) {
    throw Error(
        fmt::format("GPU worker failed on {}: {}", t.name, resp->value("error", std::string())));
  }
  out = trial_response_from_json(*resp);
  if (out.status == TrialStatus::crashed) restart();
  return out;
}

}  // namespace sgt::eval
