// Serve mode's plan, rules and counts: see serve_plan.hpp and docs/preload.md.
#include "serve_plan.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace sgt::preload {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kFallThroughText[][2] = {
    {"tf32", "TF32 allowed"},
    {"reduced", "reduced precision allowed"},
    {"emulated", "emulated FP32"},
    {"not_fp32", "not FP32"},
    {"batched", "batched"},
    {"epilogue", "cuBLASLt epilogue"},
    {"device_pointers", "alpha and beta in device memory"},
    {"alpha_vector", "alpha vector"},
    {"alpha_zero", "alpha = 0"},
    {"c_not_d", "D is not C"},
    {"unsupported_op", "unsupported op"},
    {"lt_descriptor", "unreadable cuBLASLt descriptor"},
    {"lt_order", "cuBLASLt order"},
    {"empty", "empty (m, n or k is 0)"},
    {"invalid", "invalid arguments"},
    {"too_large", "beyond 32-bit sizes"},
    {"no_device", "no current device"},
    {"gpu_not_in_plan", "no winners for this GPU"},
    {"not_tuned", "not tuned"},
    {"alignment", "alignment unlike the tuned one"},
    {"slower", "slower than cuBLAS when tuned"},
    {"kernel_unavailable", "winner without a kernel"},
    {"graph_capture", "stream capturing a graph"},
    {"server_unavailable", "serve plan or library unavailable"},
    {"load_failed", "kernel load failed"},
    {"launch_failed", "launch failed"},
    {"internal", "internal error"},
};
static_assert(std::size(kFallThroughText) == static_cast<size_t>(FallThrough::kCount));

bool rows_aligned(std::uintptr_t p, long long ld) {
  return p % 16 == 0 && ld % 4 == 0;
}

// A field of an object, of the JSON type asked for, or a message naming it.
const json& field(const json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw std::runtime_error(where + ": missing field '" + name + "'");
  return j.at(name);
}

std::string str(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if (!v.is_string()) throw std::runtime_error(where + ": '" + name + "' is not a string");
  return v.get<std::string>();
}

long long integer(const json& j, const char* name, const std::string& where, long long lo,
                  long long hi) {
  const json& v = field(j, name, where);
  if (!v.is_number_integer())
    throw std::runtime_error(where + ": '" + name + "' is not a whole number");
  const long long x = v.get<long long>();
  if (x < lo || x > hi)
    throw std::runtime_error(where + ": '" + name + "' = " + std::to_string(x) + " is outside " +
                             std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

bool boolean(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if (!v.is_boolean()) throw std::runtime_error(where + ": '" + name + "' is not true or false");
  return v.get<bool>();
}

double number(const json& j, const char* name, const std::string& where) {
  const json& v = field(j, name, where);
  if (!v.is_number()) throw std::runtime_error(where + ": '" + name + "' is not a number");
  return v.get<double>();
}

bool is_layout(std::string_view s) {
  return s.size() == 2 && (s[0] == 'N' || s[0] == 'T') && (s[1] == 'N' || s[1] == 'T');
}

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

AlignClass parse_align(const json& j, const std::string& where) {
  AlignClass a;
  a.a = boolean(j, "a", where);
  a.b = boolean(j, "b", where);
  a.c = boolean(j, "c", where);
  return a;
}

}  // namespace

std::string AlignClass::text() const {
  auto one = [](char name, bool wide) { return std::string(1, name) + (wide ? "16" : "4"); };
  return one('A', a) + " " + one('B', b) + " " + one('C', c);
}

AlignClass tuned_align(long long M, long long N, long long K, std::string_view layout) {
  const bool ta = layout.size() == 2 && layout[0] == 'T';
  const bool tb = layout.size() == 2 && layout[1] == 'T';
  return {(ta ? M : K) % 4 == 0, (tb ? K : N) % 4 == 0, N % 4 == 0};
}

AlignClass call_align(const RowMajorGemm& g, std::uintptr_t A, std::uintptr_t B, std::uintptr_t C) {
  return {rows_aligned(A, g.lda), rows_aligned(B, g.ldb), rows_aligned(C, g.ldc)};
}

const char* describe(FallThrough why) {
  return kFallThroughText[static_cast<int>(why)][1];
}

const char* key(FallThrough why) {
  return kFallThroughText[static_cast<int>(why)][0];
}

namespace {

// kernels[i] of a plan (where: "kernels[i]").
PlanKernel parse_kernel(const json& k, const std::string& where, long long version) {
  PlanKernel out;
  out.config_name = str(k, "config_name", where);
  out.family = str(k, "family", where);
  const std::string launch = str(k, "launch", where);
  if (launch != "pointers" && launch != "tensor_maps")
    throw std::runtime_error(where + ": launch '" + launch +
                             "' is neither pointers nor tensor_maps");
  out.tensor_maps = launch == "tensor_maps";
  out.arch = str(k, "arch", where);
  out.instance = str(k, "instance", where);
  if (!is_layout(out.instance))
    throw std::runtime_error(where + ": instance '" + out.instance + "' is not a layout");
  out.vec = boolean(k, "vec", where);
  out.cubin = str(k, "cubin", where);
  if (out.cubin.empty() || out.cubin[0] != '/')
    throw std::runtime_error(where + ": cubin is not an absolute path");
  out.sha256 = str(k, "sha256", where);
  if (!is_hex64(out.sha256))
    throw std::runtime_error(where + ": sha256 is not 64 lower-case hex digits");
  out.kernel = str(k, "kernel", where);
  if (out.kernel.empty()) throw std::runtime_error(where + ": empty kernel name");
  out.reduce = str(k, "reduce", where);
  out.pack = str(k, "pack", where);
  const json& t = field(k, "tile", where);
  out.BM = static_cast<int>(integer(t, "BM", where + ".tile", 1, 4096));
  out.BN = static_cast<int>(integer(t, "BN", where + ".tile", 1, 4096));
  out.BK = static_cast<int>(integer(t, "BK", where + ".tile", 1, 4096));
  out.split_k = static_cast<int>(integer(t, "split_k", where + ".tile", 1, 4096));
  out.pad_a = static_cast<int>(integer(t, "pad_a", where + ".tile", 0, 4096));
  out.pad_b = static_cast<int>(integer(t, "pad_b", where + ".tile", 0, 4096));
  out.smem = static_cast<int>(integer(t, "smem", where + ".tile", 0, 1 << 24));
  out.block = static_cast<int>(integer(k, "block", where, 1, 1024));
  // Version 2: the wave-aware tail, absent where a kernel has none.
  if (t.contains("tail")) {
    if (version < 2)
      throw std::runtime_error(where + ".tile: 'tail' in a plan of format_version " +
                               std::to_string(version) + " (it came with version 2)");
    out.tail = integer(t, "tail", where + ".tile", 0, 1) == 1;
    out.group_m = static_cast<int>(integer(t, "group_m", where + ".tile", 1, 4096));
    if (out.tail && out.reduce.empty())
      throw std::runtime_error(where + ": a tail without a reduction kernel");
    if (out.tail && out.split_k > 1)
      throw std::runtime_error(where + ": a tail with split_k " + std::to_string(out.split_k));
  }
  if (out.split_k > 1 && out.reduce.empty())
    throw std::runtime_error(where + ": split_k " + std::to_string(out.split_k) +
                             " without a reduction kernel");
  return out;
}

// A problem of a GPU's list (w: "gpus[g].problems[i]"), its kernel an index into `kernels`.
PlanProblem parse_problem(const json& pj, const std::string& w,
                          const std::vector<PlanKernel>& kernels) {
  PlanProblem pr;
  pr.M = integer(pj, "M", w, 1, INT_MAX);
  pr.N = integer(pj, "N", w, 1, INT_MAX);
  pr.K = integer(pj, "K", w, 1, INT_MAX);
  pr.layout = str(pj, "layout", w);
  if (!is_layout(pr.layout))
    throw std::runtime_error(w + ": layout '" + pr.layout + "' is not NN, NT, TN or TT");
  pr.align = parse_align(field(pj, "align", w), w + ".align");
  pr.config_name = str(pj, "config_name", w);
  pr.kernel =
      static_cast<int>(integer(pj, "kernel", w, -1, static_cast<long long>(kernels.size()) - 1));
  if (pr.kernel < 0) {
    pr.refused = str(pj, "refused", w);
  } else if (kernels[static_cast<size_t>(pr.kernel)].config_name != pr.config_name) {
    throw std::runtime_error(w + ": config " + pr.config_name + " but kernel " +
                             std::to_string(pr.kernel) + " is " +
                             kernels[static_cast<size_t>(pr.kernel)].config_name);
  }
  pr.median_ms = number(pj, "median_ms", w);
  pr.ratio = number(pj, "ratio", w);
  return pr;
}

}  // namespace

ServePlan ServePlan::parse(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kPlanFormat)
    throw std::runtime_error("not a serve plan (its \"format\" is not \"" +
                             std::string(kPlanFormat) + "\"); `sgemm-tune serve` writes them");
  const long long version = integer(j, "format_version", "plan", 1, INT_MAX);
  if (version > kPlanFormatVersion)
    throw std::runtime_error("plan format_version " + std::to_string(version) +
                             ", this library reads 1 to " + std::to_string(kPlanFormatVersion) +
                             ": prepare it again with the matching sgemm-tune");
  ServePlan p;
  p.writer = j.contains("writer") && j["writer"].is_string() ? j["writer"].get<std::string>() : "";
  p.source = j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "";
  if (j.contains("min_ratio")) {
    if (!j["min_ratio"].is_number() || !(j["min_ratio"].get<double>() >= 0))
      throw std::runtime_error("min_ratio is not a number of 0 or more");
    p.min_ratio = j["min_ratio"].get<double>();
  }
  const json& kernels = field(j, "kernels", "plan");
  if (!kernels.is_array()) throw std::runtime_error("plan: 'kernels' is not an array");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json& k = kernels[i];
    const std::string where = "kernels[" + std::to_string(i) + "]";
    p.kernels.push_back(parse_kernel(k, where, version));
  }
  const json& gpus = field(j, "gpus", "plan");
  if (!gpus.is_array()) throw std::runtime_error("plan: 'gpus' is not an array");
  for (size_t g = 0; g < gpus.size(); ++g) {
    const json& gj = gpus[g];
    const std::string where = "gpus[" + std::to_string(g) + "]";
    PlanGpu out;
    out.name = str(gj, "name", where);
    out.cc_major = static_cast<int>(integer(gj, "cc_major", where, 0, 1000));
    out.cc_minor = static_cast<int>(integer(gj, "cc_minor", where, 0, 1000));
    out.sm_count = static_cast<int>(integer(gj, "sm_count", where, 0, 1 << 20));
    const json& problems = field(gj, "problems", where);
    if (!problems.is_array()) throw std::runtime_error(where + ": 'problems' is not an array");
    for (size_t i = 0; i < problems.size(); ++i) {
      const json& pj = problems[i];
      const std::string w = where + ".problems[" + std::to_string(i) + "]";
      PlanProblem pr = parse_problem(pj, w, p.kernels);
      for (const auto& other : out.problems) {
        if (other.M == pr.M && other.N == pr.N && other.K == pr.K && other.layout == pr.layout)
          throw std::runtime_error(w + ": the problem is listed twice");
      }
      out.problems.push_back(std::move(pr));
    }
    p.gpus.push_back(std::move(out));
  }
  return p;
}

std::string ServePlan::render() const {
  json kernels = json::array();
  for (const auto& k : this->kernels) {
    kernels.push_back({{"config_name", k.config_name},
                       {"family", k.family},
                       {"launch", k.tensor_maps ? "tensor_maps" : "pointers"},
                       {"arch", k.arch},
                       {"instance", k.instance},
                       {"vec", k.vec},
                       {"cubin", k.cubin},
                       {"sha256", k.sha256},
                       {"kernel", k.kernel},
                       {"reduce", k.reduce},
                       {"pack", k.pack},
                       {"tile",
                        {{"BM", k.BM},
                         {"BN", k.BN},
                         {"BK", k.BK},
                         {"split_k", k.split_k},
                         {"pad_a", k.pad_a},
                         {"pad_b", k.pad_b},
                         {"smem", k.smem}}},
                       {"block", k.block}});
    if (k.tail) {
      kernels.back()["tile"]["tail"] = 1;
      kernels.back()["tile"]["group_m"] = k.group_m;
    }
  }
  json gpus = json::array();
  for (const auto& g : this->gpus) {
    json problems = json::array();
    for (const auto& p : g.problems) {
      json pj = {{"M", p.M},
                 {"N", p.N},
                 {"K", p.K},
                 {"layout", p.layout},
                 {"align", {{"a", p.align.a}, {"b", p.align.b}, {"c", p.align.c}}},
                 {"config_name", p.config_name},
                 {"kernel", p.kernel},
                 {"median_ms", p.median_ms},
                 {"ratio", p.ratio}};
      if (p.kernel < 0) pj["refused"] = p.refused;
      problems.push_back(std::move(pj));
    }
    gpus.push_back({{"name", g.name},
                    {"cc_major", g.cc_major},
                    {"cc_minor", g.cc_minor},
                    {"sm_count", g.sm_count},
                    {"problems", std::move(problems)}});
  }
  // Version 1 while no kernel has a tail: a library of the release before reads the plan.
  const bool any_tail =
      std::any_of(this->kernels.begin(), this->kernels.end(), [](const auto& k) { return k.tail; });
  json j = {{"format", kPlanFormat},  {"format_version", any_tail ? kPlanFormatVersion : 1},
            {"writer", writer},       {"source", source},
            {"min_ratio", min_ratio}, {"kernels", std::move(kernels)},
            {"gpus", std::move(gpus)}};
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

const PlanGpu* ServePlan::gpu(const DeviceIdentity& d) const {
  for (const auto& g : gpus) {
    if (g.name == d.name && g.cc_major == d.cc_major && g.cc_minor == d.cc_minor &&
        g.sm_count == d.sm_count)
      return &g;
  }
  return nullptr;
}

std::optional<FallThrough> precheck(const CallFacts& f, std::optional<NotRecorded> described) {
  if (described) {
    switch (*described) {
      case NotRecorded::UnsupportedOp:
        return FallThrough::UnsupportedOp;
      case NotRecorded::LtDescriptor:
        return FallThrough::LtDescriptor;
      case NotRecorded::LtOrder:
        return FallThrough::LtOrder;
      case NotRecorded::Empty:
        return FallThrough::Empty;
      default:
        return FallThrough::Internal;
    }
  }
  const std::string_view prec = precision(f);
  if (prec == "tf32") return FallThrough::Tf32;
  if (prec == "reduced") return FallThrough::Reduced;
  if (prec == "emulated") return FallThrough::Emulated;
  if (prec != "fp32") return FallThrough::NotFp32;
  // A strided batch of one is one GEMM; a pointer array lives in device memory.
  if (f.batch != 1 || f.batch_kind == "pointer_array") return FallThrough::Batched;
  if (f.lt && f.epilogue != "default") return FallThrough::Epilogue;
  if (f.alpha == ScalarClass::Vector) return FallThrough::AlphaVector;
  if (f.pointer_mode == "device") return FallThrough::DevicePointers;
  if (f.pointer_mode != "host") return FallThrough::Internal;
  // Host mode with a null alpha or beta: cuBLAS refuses it.
  if (f.alpha == ScalarClass::Unknown || f.beta == ScalarClass::Unknown)
    return FallThrough::Invalid;
  if (f.alpha == ScalarClass::Zero) return FallThrough::AlphaZero;
  // The kernels read and write one C: D must be C, unless C is not read (beta = 0).
  if (f.lt && !f.c_matches_d) return FallThrough::CNotD;
  if (f.lt && !f.in_place && f.beta != ScalarClass::Zero) return FallThrough::CNotD;
  return std::nullopt;
}

Decision decide(const ServePlan& plan, const DeviceIdentity* device, const CallFacts& f,
                std::optional<NotRecorded> described, std::uintptr_t A, std::uintptr_t B,
                std::uintptr_t C) {
  Decision d;
  d.gemm = to_row_major(f.call);
  if ((d.why = precheck(f, described))) return d;
  const RowMajorGemm& g = d.gemm;
  if (g.M < 0 || g.N < 0 || g.K < 0) return d.why = FallThrough::Invalid, d;
  if (g.M == 0 || g.N == 0 || g.K == 0) return d.why = FallThrough::Empty, d;
  const long long min_lda = std::max<long long>(1, g.trans_a == 'T' ? g.M : g.K);
  const long long min_ldb = std::max<long long>(1, g.trans_b == 'T' ? g.K : g.N);
  if (g.lda < min_lda || g.ldb < min_ldb || g.ldc < std::max<long long>(1, g.N))
    return d.why = FallThrough::Invalid, d;
  for (const long long v : {g.M, g.N, g.K, g.lda, g.ldb, g.ldc}) {
    if (v > INT_MAX) return d.why = FallThrough::TooLarge, d;
  }
  if (!device) return d.why = FallThrough::NoDevice, d;
  const PlanGpu* gpu = plan.gpu(*device);
  if (!gpu) return d.why = FallThrough::GpuNotInPlan, d;
  const std::string layout = g.layout();
  for (const auto& p : gpu->problems) {
    if (p.M == g.M && p.N == g.N && p.K == g.K && p.layout == layout) d.problem = &p;
  }
  if (!d.problem) return d.why = FallThrough::NotTuned, d;
  const std::uintptr_t a = g.swapped ? B : A, b = g.swapped ? A : B;
  const AlignClass align = call_align(g, a, b, C);
  if (align != d.problem->align) return d.why = FallThrough::Alignment, d;
  if (d.problem->ratio > 0 && d.problem->ratio < plan.min_ratio)
    return d.why = FallThrough::Slower, d;
  if (d.problem->kernel < 0) return d.why = FallThrough::KernelUnavailable, d;
  d.kernel_index = d.problem->kernel;
  d.kernel = &plan.kernels[static_cast<size_t>(d.kernel_index)];
  // Tensor copies read A and B directly unless the config packs them into panels first.
  if (d.kernel->tensor_maps && d.kernel->pack.empty() && !(align.a && align.b))
    return d.why = FallThrough::Alignment, d;
  return d;
}

ServeStats::ServeStats(std::size_t) {}

void ServeStats::served(const PlanProblem* p) {
  served_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  ++per_problem_[p];
}

void ServeStats::verified(bool ok, double error) {
  verified_.fetch_add(1, std::memory_order_relaxed);
  if (!ok) mismatches_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  max_error_ = std::max(max_error_, error);
}

long long ServeStats::through_calls() const {
  long long n = 0;
  for (const auto& c : through_) n += c.load();
  return n;
}

std::size_t ServeStats::problems_served() const {
  std::lock_guard lock(mutex_);
  return per_problem_.size();
}

std::string ServeStats::summary(long long seen, bool dry_run) const {
  const long long served = served_calls(), through = through_calls();
  const size_t problems = problems_served();
  std::string out = "sgemm-tune preload: serve" + std::string(dry_run ? " (dry run)" : "") + ": " +
                    std::to_string(seen) + " GEMM call" + (seen == 1 ? "" : "s") + ", " +
                    std::to_string(served) + (dry_run ? " would be served" : " served") +
                    " by tuned kernels (" + std::to_string(problems) + " problem" +
                    (problems == 1 ? "" : "s") + "), " + std::to_string(through) +
                    " passed to cuBLAS";
  // Most first, ties in the enumeration's order.
  std::vector<std::pair<long long, int>> reasons;
  for (int i = 0; i < static_cast<int>(FallThrough::kCount); ++i) {
    if (const long long n = through_[static_cast<size_t>(i)].load()) reasons.push_back({-n, i});
  }
  std::sort(reasons.begin(), reasons.end());
  for (size_t i = 0; i < reasons.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + std::to_string(-reasons[i].first) + " " +
           describe(static_cast<FallThrough>(reasons[i].second));
  }
  if (const long long late = failed_late_.load())
    out += "; " + std::to_string(late) + " failed after launching (reported to the caller)";
  if (const long long n = verified_.load()) {
    char buf[64];
    {
      std::lock_guard lock(mutex_);
      std::snprintf(buf, sizeof buf, "%.3g", max_error_);
    }
    out += "; verified " + std::to_string(n) +
           " against cuBLAS: " + std::to_string(mismatches_.load()) +
           " mismatched (largest relative error " + buf + ")";
  }
  return out;
}

std::optional<DeviceIdentity> parse_device(std::string_view text) {
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const std::string_view rest = text.substr(at + 1);
  const size_t slash = rest.find('/');
  if (rest.size() < 5 || rest.substr(0, 3) != "sm_" || slash == std::string_view::npos)
    return std::nullopt;
  const std::string_view arch = rest.substr(3, slash - 3), sms = rest.substr(slash + 1);
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 6 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (arch.size() < 2 || !digits(arch) || !digits(sms)) return std::nullopt;
  DeviceIdentity d;
  d.name = std::string(text.substr(0, at));
  d.cc_major = std::stoi(std::string(arch.substr(0, arch.size() - 1)));
  d.cc_minor = arch.back() - '0';
  d.sm_count = std::stoi(std::string(sms));
  return d;
}

}  // namespace sgt::preload
