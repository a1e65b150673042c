// NVRTC compilation of one config, the ptxas -v report parser, and the on-disk cache of outcomes
// (<key>.cubin and <key>.json written by atomic rename, <key>.lock serialising writers).
#include "nvrtc_compiler.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <regex>
#include <tuple>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "check.hpp"
#include "error.hpp"
#include "family.hpp"
#include "instance.hpp"
#include "file_util.hpp"
#include "kernel_source.hpp"
#include "parallel.hpp"
#include "sha256.hpp"

namespace sgt::gpu {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Bump when the meaning of a cache entry changes, so that old entries simply stop matching.
// 4: the packing kernel of PACK configs
constexpr int kCacheFormat = 4;  // 2: layouts, knobs, split-K reduction; 3: VEC instances
constexpr const char* kReduceExpression = "sgemm_splitk_reduce<0>";

class Program {
 public:
  Program(const std::string& main_text, const std::string& main_name,
          const std::vector<std::string>& header_texts,
          const std::vector<std::string>& header_names) {
    std::vector<const char*> texts, names;
    for (const auto& t : header_texts) texts.push_back(t.c_str());
    for (const auto& n : header_names) names.push_back(n.c_str());
    SGT_NVRTC_CHECK(nvrtcCreateProgram(&prog_, main_text.c_str(), main_name.c_str(),
                                       static_cast<int>(texts.size()), texts.data(), names.data()));
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  // A destructor cannot throw; a failed destroy leaks one program, worth a warning, not a crash.
  ~Program() {
    if (const nvrtcResult r = nvrtcDestroyProgram(&prog_); r != NVRTC_SUCCESS)
      spdlog::warn("nvrtcDestroyProgram failed: {}", nvrtcGetErrorString(r));
  }
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

int capture_int(const std::string& line, const std::regex& re) {
  std::smatch m;
  return std::regex_search(line, m, re) ? std::stoi(m[1].str()) : 0;
}

// The error lines are what says why ("static assertion failed with "wmiter_divisibility: ...""),
// the instantiation context after each is noise at this level; the full log stays in `log`.
std::string compile_failure_reason(const std::string& log) {
  static const std::regex error_re(R"(\berror\s*:)");
  constexpr size_t kMaxLines = 3;
  std::vector<std::string> picked, fallback;
  for (const auto& line : split_lines(log)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (std::regex_search(line, error_re) && picked.size() < kMaxLines) picked.push_back(line);
    if (fallback.size() < kMaxLines) fallback.push_back(line);
  }
  const auto& lines = picked.empty() ? fallback : picked;
  if (lines.empty()) return "NVRTC reported a compilation error and an empty log";
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot open {}", p.string()));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error(fmt::format("cannot read {}", p.string()));
  return bytes;
}

// Holds flock(LOCK_EX) on a per-key lock file. NVRTC's CUBINs differ from run to run (same
// source, same options), so two writers of one key could leave a json beside the other's cubin;
// the lock serialises lookup, compile and store per key across threads and processes alike
// (flock locks conflict between separate open() calls of one process too). Where the filesystem
// cannot lock, entries are still verified on load and a torn pair is recompiled.
class KeyLock {
 public:
  explicit KeyLock(const fs::path& p) {
    fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    // A read-only cache (shared, pre-filled) can still be locked for reading its entries.
    if (fd_ < 0) fd_ = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      warn(p, "cannot open");
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      warn(p, "cannot lock");
      break;
    }
  }
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  ~KeyLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  static void warn(const fs::path& p, const char* what) {
    spdlog::warn("kernel cache: {} {} ({}); going on unlocked", what, p.string(),
                 std::error_code(errno, std::generic_category()).message());
  }
  int fd_ = -1;
};

bool is_compile_status(TrialStatus s) {
  return s == TrialStatus::ok || s == TrialStatus::compile_failed || s == TrialStatus::spills ||
         s == TrialStatus::resources;
}

}  // namespace

PtxasInfo parse_ptxas_info(std::string_view log, std::string_view entry) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for (\S+))");
  static const std::regex regs_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex stack_re(R"((\d+) bytes stack frame)");
  static const std::regex stores_re(R"((\d+) bytes spill stores)");
  static const std::regex loads_re(R"((\d+) bytes spill loads)");

  PtxasInfo info;
  std::string selected(entry);
  // ptxas reports per function: "Compiling entry function" opens an entry's section (its "Used"
  // line follows), "Function properties for" heads each function's stack/spill line, callees
  // included, so both are tracked to attribute numbers to the right function.
  std::string current_entry, properties_of;
  for (const auto& line : split_lines(log)) {
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) {
      current_entry = m[1].str();
      if (selected.empty()) selected = current_entry;
      continue;
    }
    if (std::regex_search(line, m, props_re)) {
      properties_of = m[1].str();
      continue;
    }
    if (selected.empty()) continue;
    if (line.find("bytes stack frame") != std::string::npos && properties_of == selected) {
      info.stack_bytes = capture_int(line, stack_re);
      info.spill_store_bytes = capture_int(line, stores_re);
      info.spill_load_bytes = capture_int(line, loads_re);
    } else if (!info.found && current_entry == selected && std::regex_search(line, regs_re)) {
      info.found = true;
      info.registers = capture_int(line, regs_re);
      info.shared_bytes = capture_int(line, smem_re);
    }
  }
  return info;
}

struct KernelCompiler::Fresh {
  Compiled result;
  std::string cubin;            // only when ok
  bool missing_report = false;  // compiled, but ptxas's report is absent from the log
};

namespace {

// NVRTC keeps the CUDA JIT cache: a program whose PTX it has compiled before (in any process of
// the user) gets its cubin from the cache and no ptxas report, which is what rules out spills, so
// the binary could not be used (seen on the H200 host: the split entries, shared by several
// configs and compiled once per layout, failed with "no resource report" twice in a row, the
// retry's source comment changing no PTX). The tuner has its own cache of checked cubins; the
// JIT cache is turned off for this process before NVRTC first compiles (CUDA_CACHE_DISABLE,
// which NVRTC is documented to honour). That was not enough on the H200 host (2026-12-07: a split
// binary compiled a second time in one test process still came back without a report, twice), so
// a retry also compiles a program no cache has seen (retry_nonce_kernel). The worker loads
// cubins, never PTX.
void disable_jit_cache() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("CUDA_CACHE_DISABLE", "1", 1); });
}

// An empty kernel, appended to a retried program, whose name no earlier program had.
std::string retry_nonce_kernel() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  const std::lock_guard lock(mu);
  return fmt::format("\nextern \"C\" __global__ void sgt_retry_{:016x}() {{}}\n", rng());
}

}  // namespace

KernelCompiler::KernelCompiler(fs::path cache_dir, CompileOptions opts)
    : cache_dir_(std::move(cache_dir)), opts_(std::move(opts)) {
  disable_jit_cache();
  static const std::regex real_arch(R"(sm_(\d+)[a-z]?)");
  std::smatch m;
  if (!std::regex_match(opts_.arch, m, real_arch))
    throw InputError(fmt::format(
        "arch '{}' is not a real architecture like sm_90: NVRTC emits a CUBIN only for those",
        opts_.arch));
  SGT_NVRTC_CHECK(nvrtcVersion(&nvrtc_major_, &nvrtc_minor_));
  int num_archs = 0;
  SGT_NVRTC_CHECK(nvrtcGetNumSupportedArchs(&num_archs));
  std::vector<int> archs(static_cast<size_t>(num_archs));
  SGT_NVRTC_CHECK(nvrtcGetSupportedArchs(archs.data()));
  arch_number_ = std::stoi(m[1].str());
  if (std::find(archs.begin(), archs.end(), arch_number_) == archs.end())
    throw InputError(fmt::format("NVRTC {}.{} cannot compile for {}; it supports sm_{}",
                                 nvrtc_major_, nvrtc_minor_, opts_.arch,
                                 fmt::join(archs, ", sm_")));

  // -v makes ptxas report registers, stack and spills into the program log: the status of a
  // config is decided from it. C++17 is what the nvcc check compiles the same file with.
  // -default-device: the kernel's generic lambdas are device code (NVRTC would otherwise take
  // their call operators for host function templates, which JIT mode refuses).
  options_ = {"-arch=" + opts_.arch, "-std=c++17", "-default-device", "--ptxas-options=-v"};
  options_.insert(options_.end(), opts_.extra_options.begin(), opts_.extra_options.end());

  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec)
    throw Error(fmt::format("cannot create kernel cache directory {}: {}", cache_dir_.string(),
                            ec.message()));
}

std::string KernelCompiler::cache_key(const WarpTileConfig& c, std::string_view layout,
                                      bool vec) const {
  return cache_key(resolve(c, layout, vec));
}

std::string KernelCompiler::cache_key(const KernelInstance& in) const {
  const WarpTileConfig& c = in.config;
  std::string text = fmt::format(
      "sgemm-tune kernel cache {}\nkernel {}\nexpression {}\nconfig {}\narch {}\n"
      "nvrtc {}.{}\n",
      kCacheFormat, kernel_source_hash(c), in.name_expression, to_name(in.binary_config),
      opts_.arch, nvrtc_major_, nvrtc_minor_);
  for (const auto& o : options_for(c)) text += "option " + o + "\n";
  return sha256_hex(text);
}

std::string KernelCompiler::load_verified_cubin(const fs::path& p, const std::string& sha256) {
  if (sha256.empty()) throw Error(fmt::format("no expected SHA-256 for cubin {}", p.string()));
  std::string bytes = read_file(p);
  if (bytes.empty()) throw Error(fmt::format("cubin {} is empty", p.string()));
  const std::string got = sha256_hex(bytes);
  if (got != sha256)
    throw Error(fmt::format("cubin {} has SHA-256 {}, expected {}", p.string(), got, sha256));
  return bytes;
}

namespace {

// The mangled names of the kernels a program compiled: the tile kernel's, and the split-K
// reduction's and the pack's where the family has them.
void read_lowered_names(const Program& prog, const KernelFamily& family, const std::string& expr,
                        const std::string& pack_expr, Compiled& r) {
  const char* lowered = nullptr;
  SGT_NVRTC_CHECK(nvrtcGetLoweredName(prog.get(), expr.c_str(), &lowered));
  r.lowered_name = lowered;
  if (family.has_split_k_reduce()) {
    SGT_NVRTC_CHECK(nvrtcGetLoweredName(prog.get(), kReduceExpression, &lowered));
    r.reduce_lowered_name = lowered;
  }
  if (!pack_expr.empty()) {
    SGT_NVRTC_CHECK(nvrtcGetLoweredName(prog.get(), pack_expr.c_str(), &lowered));
    r.pack_lowered_name = lowered;
  }
}

// The status of a compiled program from ptxas's report (the log in r.log): resources,
// compile_failed, spills or ok, with the reason; an ok program's CUBIN goes to `cubin`.
// Returns whether the report was missing from a successful compilation.
bool judge_compiled(const Program& prog, nvrtcResult rc,
                    const std::vector<std::string>& nvrtc_options, Compiled& r,
                    std::string& cubin) {
  bool missing_report = false;
  const PtxasInfo info = parse_ptxas_info(r.log, r.lowered_name);
  r.registers = info.registers;
  r.spill_store_bytes = info.spill_store_bytes;
  r.spill_load_bytes = info.spill_load_bytes;
  r.stack_bytes = info.stack_bytes;
  r.shared_bytes = info.shared_bytes;

  const Limits limits;
  // NVRTC fails a kernel whose static shared memory is over 48 KB with no error text at all,
  // after ptxas reported the size; the report then says more than "compile failed" would.
  if (info.found && (info.registers > limits.max_registers_per_thread ||
                     info.shared_bytes > limits.max_static_shared_bytes)) {
    r.status = TrialStatus::resources;
    r.reason = fmt::format(
        "ptxas: {} registers (limit {}), {} bytes static shared memory (limit {})", info.registers,
        limits.max_registers_per_thread, info.shared_bytes, limits.max_static_shared_bytes);
  } else if (rc != NVRTC_SUCCESS) {
    r.status = TrialStatus::compile_failed;
    r.reason = compile_failure_reason(r.log);
  } else if (!info.found) {
    // Seen on the GPU host: NVRTC 13.0 occasionally returns a cubin with an empty log. Without
    // the report, spills cannot be ruled out, so the binary is not used.
    missing_report = true;
    r.status = TrialStatus::compile_failed;
    r.reason = fmt::format("ptxas printed no resource report for {} (options: {})", r.lowered_name,
                           fmt::join(nvrtc_options, " "));
  } else if (info.spill_store_bytes > 0 || info.spill_load_bytes > 0 || info.stack_bytes > 0) {
    // A stack frame without spills still means local memory: the accumulators were not kept in
    // registers, which costs as much as spilling.
    r.status = TrialStatus::spills;
    r.reason = fmt::format(
        "ptxas: {} bytes stack frame, {} bytes spill stores, {} bytes spill loads ({} registers)",
        info.stack_bytes, info.spill_store_bytes, info.spill_load_bytes, info.registers);
  } else {
    r.status = TrialStatus::ok;
    size_t size = 0;
    SGT_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &size));
    if (size == 0) throw Error(fmt::format("NVRTC produced an empty CUBIN for {}", r.config_name));
    cubin.resize(size);
    SGT_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), cubin.data()));
  }
  return missing_report;
}

}  // namespace

KernelCompiler::Fresh KernelCompiler::compile_uncached(const KernelInstance& in, int attempt) {
  const WarpTileConfig& c = in.config;
  const std::string_view layout = in.layout;
  const bool vec = in.vec;
  Fresh fresh;
  Compiled& r = fresh.result;
  r.config_name = to_name(c);
  r.layout = std::string(layout);
  r.vec_loads = vec;

  const KernelFamily& family = family_of(c);
  // A family without a body for this architecture would compile to a stub (the TMA kernel's
  // traps) and ptxas report a few registers, an "ok" for a kernel that does nothing.
  if (!family.implemented_for(arch_number_)) {
    r.status = TrialStatus::compile_failed;
    r.reason = family.refusal_on(opts_.arch);
    return fresh;
  }
  // The family's main file is the program; every other kernel file is a named header.
  const auto main_file = family.sources().at(0);
  std::vector<std::string> header_texts, header_names;
  for (const auto& f : kernel_sources()) {
    if (f.name == main_file.name) continue;
    header_names.emplace_back(f.name);
    header_texts.emplace_back(f.text);
  }
  // The main file is a template only; nvrtcAddNameExpression instantiates it, so the program
  // text is the kernel file byte for byte and error lines point into it.
  std::string text(main_file.text);
  // A retry appends an empty kernel of a name drawn at random: its PTX, unlike that of a comment,
  // is a program no cache has seen, so ptxas runs and reports (measured on the H200 host: turning
  // the JIT cache off by setting CUDA_CACHE_DISABLE in the process did not stop the second compile
  // of a program coming back without a report). The tile kernel's code is unchanged, and error
  // lines still point into the kernel file (the kernel is appended after its last line).
  if (attempt > 0) text += retry_nonce_kernel();
  Program prog(std::move(text), std::string(main_file.name), header_texts, header_names);
  const std::string expr = in.name_expression;
  SGT_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), expr.c_str()));
  if (family.has_split_k_reduce())
    SGT_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), kReduceExpression));
  // The kernel run before the tile kernel (PACK's packing, a split_maps family's prepass).
  const std::string pack_expr = family.pack_expression(c);
  if (!pack_expr.empty()) SGT_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), pack_expr.c_str()));

  const std::vector<std::string> options = options_for(c);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const nvrtcResult rc =
      nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  r.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++compilations_;

  size_t log_size = 0;
  SGT_NVRTC_CHECK(nvrtcGetProgramLogSize(prog.get(), &log_size));
  r.log.assign(log_size, '\0');
  if (log_size > 0) SGT_NVRTC_CHECK(nvrtcGetProgramLog(prog.get(), r.log.data()));
  while (!r.log.empty() && r.log.back() == '\0') r.log.pop_back();

  // Only a compilation error belongs to the config; anything else (bad option, out of memory,
  // broken install) would fail every config alike and must not be cached as the config's fault.
  if (rc != NVRTC_SUCCESS && rc != NVRTC_ERROR_COMPILATION)
    throw Error(fmt::format("NVRTC call failed: nvrtcCompileProgram({}) -> {} ({})\n{}",
                            r.config_name, nvrtcGetErrorString(rc), static_cast<int>(rc), r.log));

  if (rc == NVRTC_SUCCESS) read_lowered_names(prog, family, expr, pack_expr, r);
  fresh.missing_report = judge_compiled(prog, rc, options, r, fresh.cubin);
  return fresh;
}

bool KernelCompiler::load_cached(const KernelInstance& in, const std::string& key,
                                 Compiled& out) const {
  const WarpTileConfig& c = in.config;
  const fs::path json_path = cache_dir_ / (key + ".json");
  std::error_code ec;
  if (!fs::exists(json_path, ec)) return false;
  try {
    const json j = json::parse(read_file(json_path));
    if (j.at("format").get<int>() != kCacheFormat || j.at("key").get<std::string>() != key)
      throw Error("format or key does not match");
    Compiled r;
    r.config_name = j.at("config_name").get<std::string>();
    if (r.config_name != to_name(in.binary_config))
      throw Error(fmt::format("entry is for config {}", r.config_name));
    r.config_name = to_name(c);
    r.layout = j.at("layout").get<std::string>();
    if (r.layout != in.layout) throw Error(fmt::format("entry is for layout {}", r.layout));
    r.vec_loads = j.at("vec_loads").get<bool>();
    if (r.vec_loads != in.vec) throw Error("entry is for the other main-loop loads");
    r.reduce_lowered_name = j.at("reduce_lowered_name").get<std::string>();
    r.pack_lowered_name = j.at("pack_lowered_name").get<std::string>();
    const auto status = status_from_string(j.at("status").get<std::string>());
    if (!status || !is_compile_status(*status)) throw Error("bad status");
    r.status = *status;
    r.reason = j.at("reason").get<std::string>();
    r.log = j.at("log").get<std::string>();
    r.lowered_name = j.at("lowered_name").get<std::string>();
    r.registers = j.at("registers").get<int>();
    r.spill_store_bytes = j.at("spill_store_bytes").get<int>();
    r.spill_load_bytes = j.at("spill_load_bytes").get<int>();
    r.stack_bytes = j.at("stack_bytes").get<int>();
    r.shared_bytes = j.at("shared_bytes").get<int>();
    r.compile_seconds = j.at("compile_seconds").get<double>();
    if (r.status == TrialStatus::ok) {
      if (r.lowered_name.empty()) throw Error("no lowered name");
      if (!family_of(c).pack_expression(c).empty() && r.pack_lowered_name.empty())
        throw Error("no packing kernel");
      // The path is derived from the key, never taken from the file.
      r.cubin_path = cache_dir_ / (key + ".cubin");
      r.cubin_sha256 = j.at("cubin_sha256").get<std::string>();
      load_verified_cubin(r.cubin_path, r.cubin_sha256);
    }
    r.from_cache = true;
    out = std::move(r);
    return true;
  } catch (const std::exception& e) {
    spdlog::warn("kernel cache: ignoring entry {} for {}: {}; recompiling", json_path.string(),
                 to_name(c), e.what());
    return false;
  }
}

std::vector<std::string> KernelCompiler::options_for(const WarpTileConfig& c) const {
  std::vector<std::string> o = options_;
  // The family's target for this GPU (the TMA kernel's: sm_90 -> sm_90a).
  const std::string target = family_of(c).target_arch(opts_.arch);
  if (target != opts_.arch) o.front() = "-arch=" + target;
  return o;
}

void KernelCompiler::store(const KernelInstance& in, const std::string& key, Compiled& r,
                           const std::string& cubin) const {
  const WarpTileConfig& c = in.config;
  auto write = [&](const fs::path& p, std::string_view bytes) {
    try {
      write_file_atomically(p, bytes);
    } catch (const Error& e) {
      throw CacheError(fmt::format("kernel cache: {} ({})", e.what(), r.config_name));
    }
  };
  if (r.status == TrialStatus::ok) {
    r.cubin_path = cache_dir_ / (key + ".cubin");
    r.cubin_sha256 = sha256_hex(cubin);
    // The cubin goes first: a reader that sees the json finds its cubin already in place.
    write(r.cubin_path, cubin);
  }
  json inputs = {{"kernel_source_hash", kernel_source_hash(c)},
                 {"kernel_template", kKernelTemplateName},
                 {"name_expression", in.name_expression},
                 {"config", in.binary_config},
                 {"arch", opts_.arch},
                 {"nvrtc_version", fmt::format("{}.{}", nvrtc_major_, nvrtc_minor_)},
                 {"options", options_for(c)}};
  const json j = {{"format", kCacheFormat},
                  {"key", key},
                  {"inputs", std::move(inputs)},
                  {"config_name", to_name(in.binary_config)},
                  {"layout", in.layout},
                  {"vec_loads", in.vec},
                  {"reduce_lowered_name", r.reduce_lowered_name},
                  {"pack_lowered_name", r.pack_lowered_name},
                  {"status", to_string(r.status)},
                  {"reason", r.reason},
                  {"log", r.log},
                  {"lowered_name", r.lowered_name},
                  {"cubin_file", r.cubin_path.empty() ? "" : r.cubin_path.filename().string()},
                  {"cubin_sha256", r.cubin_sha256},
                  {"cubin_bytes", cubin.size()},
                  {"registers", r.registers},
                  {"spill_store_bytes", r.spill_store_bytes},
                  {"spill_load_bytes", r.spill_load_bytes},
                  {"stack_bytes", r.stack_bytes},
                  {"shared_bytes", r.shared_bytes},
                  {"compile_seconds", r.compile_seconds},
                  {"created", utc_timestamp()}};
  write(cache_dir_ / (key + ".json"), j.dump(2) + "\n");
}

Compiled KernelCompiler::compile(const WarpTileConfig& c, std::string_view layout, bool vec) {
  const KernelInstance in = resolve(c, layout, vec);
  const std::string key = cache_key(in);
  const KeyLock lock(cache_dir_ / (key + ".lock"));
  Compiled cached;
  if (load_cached(in, key, cached)) return cached;
  Fresh fresh = compile_uncached(in);
  if (fresh.missing_report) {
    spdlog::warn("{}: {}; compiling once more", fresh.result.config_name, fresh.result.reason);
    fresh = compile_uncached(in, 1);
    // A second miss is recorded for this run but not cached: it is not the config's fault.
    if (fresh.missing_report) return std::move(fresh.result);
  }
  store(in, key, fresh.result, fresh.cubin);
  spdlog::debug("compiled {} in {:.2f} s: {}", fresh.result.config_name,
                fresh.result.compile_seconds, to_string(fresh.result.status));
  return std::move(fresh.result);
}

Compiled KernelCompiler::compile_as_retry(const WarpTileConfig& c, std::string_view layout,
                                          bool vec) {
  return std::move(compile_uncached(resolve(c, layout, vec), 1).result);
}

std::vector<Compiled> KernelCompiler::compile_all(const std::vector<WarpTileConfig>& cs,
                                                  unsigned threads,
                                                  std::function<void(const Compiled&)> on_done,
                                                  std::string_view layout, bool vec,
                                                  bool keep_going) {
  std::vector<Compiled> results(cs.size());
  std::mutex done_mu;
  parallel_for(cs.size(), threads, [&](size_t i) {
    try {
      results[i] = compile(cs[i], layout, vec);
    } catch (const CacheError& e) {
      if (!keep_going) throw;
      results[i] = Compiled{};
      results[i].config_name = to_name(cs[i]);
      const KernelInstance in = resolve(cs[i], layout, vec);
      results[i].layout = in.layout;
      results[i].vec_loads = in.vec;
      // Not ok, so that nothing takes it for a usable binary.
      results[i].status = TrialStatus::compile_failed;
      results[i].cache_error = e.what();
    }
    if (on_done) {
      std::lock_guard lock(done_mu);
      on_done(results[i]);
    }
  });
  return results;
}

fs::path default_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (auto d = env("SGT_CACHE_DIR"); !d.empty()) return d;
  if (auto d = env("XDG_CACHE_HOME"); !d.empty()) return fs::path(d) / "sgemm-tune" / "kernels";
  if (auto d = env("HOME"); !d.empty()) return fs::path(d) / ".cache" / "sgemm-tune" / "kernels";
  throw Error("no kernel cache directory: set SGT_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

}  // namespace sgt::gpu
