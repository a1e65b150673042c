// Shape parsing, suites and the shape sources they may be read from (captures, TunableOp files,
// cuBLAS logs), and the shape filter.
#include "problem.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "error.hpp"
#include "family.hpp"
#include "file_util.hpp"

namespace sgt {

bool is_layout(std::string_view text) {
  for (const auto l : kLayouts) {
    if (l == text) return true;
  }
  return false;
}

std::string parse_layout(std::string_view text) {
  if (!is_layout(text)) {
    throw InputError(fmt::format(
        "bad layout '{}': expected NN, NT, TN or TT (op(A) op(B) of C = alpha*op(A)*op(B) + "
        "beta*C; N: as stored row-major, T: transposed)",
        text));
  }
  return std::string(text);
}

std::string Problem::shape() const {
  return fmt::format("{}x{}x{}", M, N, K);
}

Problem parse_shape(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InputError(
        fmt::format("bad shape '{}': {} (expected MxNxK, e.g. 4096x4096x4096)", text, why));
  };
  long long dims[3] = {0, 0, 0};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (rest.empty() || (rest.front() != 'x' && rest.front() != 'X')) {
        throw bad("needs three sizes separated by 'x'");
      }
      rest.remove_prefix(1);
    }
    if (rest.empty() || rest.front() < '0' || rest.front() > '9') {
      throw bad("each size must be a positive decimal integer");
    }
    long long v = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec == std::errc::result_out_of_range || v > INT_MAX) throw bad("a size is too large");
    if (ec != std::errc()) throw bad("each size must be a positive decimal integer");
    if (v < 1) throw bad("sizes must be at least 1");
    dims[i] = v;
    rest.remove_prefix(static_cast<size_t>(ptr - rest.data()));
  }
  if (!rest.empty()) throw bad("unexpected text after K");
  Problem p;
  p.M = dims[0];
  p.N = dims[1];
  p.K = dims[2];
  return p;
}

namespace {

// --- Shape sources: a capture of libsgemm_tune_preload, a TunableOp file, a cuBLAS API log ---

// One problem of a shape source in sgemm-tune's terms, with its weight.
struct Found {
  Problem problem;
  long long calls = 0;
  double time_ms = 0;  // the measured time scaled to every call of it (when timed)
  bool timed = false;
  std::string left_out;  // why sgemm-tune cannot tune it (a short reason); empty when it can
};

// cuBLAS's column-major arguments as sgemm-tune's row-major problem: C (m x n) = op(A) op(B) is
// C^T (n x m) = op(B)^T op(A)^T over the same bytes, so M = n, N = m, and the layout is op(B)
// then op(A). preload/include/sgemm_tune/preload/row_major.hpp states the general mapping
// (cuBLASLt's row-major orders too); the preload tests check that the two agree.
Problem from_column_major(char transa, char transb, long long m, long long n, long long k) {
  Problem p;
  p.M = n;
  p.N = m;
  p.K = k;
  p.layout = {transb, transa};
  return p;
}

// Why a problem of these sizes cannot be a Problem (parse_shape's range), or "".
std::string size_refusal(long long m, long long n, long long k) {
  if (m < 1 || n < 1 || k < 1) return "empty";
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return "too large";
  return "";
}

// The first `n` characters of a line, made safe to quote in a message.
std::string quote_line(std::string_view line) {
  constexpr size_t kMax = 160;
  return terminal_safe(line.substr(0, kMax)) + (line.size() > kMax ? "..." : "");
}

std::optional<long long> to_integer(std::string_view text) {
  long long v = 0;
  if (text.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Which text format `head` (a file's first bytes) is: "cublas-log", "tunableop", or nullopt
// for anything else (JSON, or not a shape source at all).
std::optional<std::string> text_shape_source(std::string_view head) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] == '{' || head[first] == '[') {
    return std::nullopt;
  }
  // The logger starts each call with "I! cuBLAS (vX.Y) function ..."; the application's own
  // output may come first when both go to one stream.
  if (head.find("I! cuBLAS (v") != std::string_view::npos) return "cublas-log";
  const auto line = head.substr(first, head.find('\n', first) - first);
  if (line.starts_with("Validator,") || line.find("TunableOp_") != std::string_view::npos) {
    return "tunableop";
  }
  return std::nullopt;
}

// A PyTorch TunableOp file: the untuned GEMMs it recorded (PYTORCH_TUNABLEOP_RECORD_UNTUNED=1,
// one "OP_SIGNATURE,PARAMS_SIGNATURE" line per distinct GEMM, a third field ",BLAS_PARAMS: ..."
// with PYTORCH_TUNABLEOP_BLAS_LOG=1) or its results (Validator lines, then "OP,PARAMS,SOLUTION,
// TIME"). OP is <Kind>TunableOp_<type>_<op(A)><op(B)>, e.g. GemmTunableOp_float_NT (type "tf32"
// when TF32 was allowed); PARAMS is <ta><tb>_<m>_<n>_<k>, then _B_<batch> for strided-batched,
// _ld_<lda>_<ldb>_<ldc> since PyTorch 2.6, and more for scaled GEMMs. The sizes are cuBLAS's
// column-major ones. Nothing says how often a GEMM ran.
std::vector<Found> read_tunableop(const std::string& path, std::istream& in) {
  std::vector<Found> out;
  std::string raw;
  for (size_t no = 1; std::getline(in, raw); ++no) {
    const std::string_view line = trim(raw);
    if (line.empty() || line.starts_with("Validator,") || line.starts_with("#")) continue;
    auto bad = [&](std::string_view why) {
      return InputError(
          fmt::format("{}:{}: {}: '{}' (a TunableOp line is OP,PARAMS, e.g. "
                      "GemmTunableOp_float_NT,nt_4096_4096_64_ld_4096_4096_4096)",
                      path, no, why, quote_line(line)));
    };
    const auto fields = split(line, ',');
    if (fields.size() < 2) throw bad("expected at least two comma-separated fields");
    const std::string_view op = trim(fields[0]);
    const std::string_view params = trim(fields[1]);
    const size_t at = op.find("TunableOp_");
    if (at == std::string_view::npos) throw bad("the first field is not a TunableOp signature");
    const std::string_view kind = op.substr(0, at);
    const std::string_view rest = op.substr(at + std::string_view("TunableOp_").size());
    const size_t last = rest.rfind('_');
    if (last == std::string_view::npos) throw bad("the signature names no type and layout");
    const std::string_view type = rest.substr(0, last);

    const auto tokens = split(params, '_');
    if (tokens.size() < 4 || tokens[0].size() != 2) {
      throw bad("the parameters are not <ta><tb>_<m>_<n>_<k>...");
    }
    char ops[2];
    for (int i = 0; i < 2; ++i) {
      const char c = tokens[0][static_cast<size_t>(i)];
      if (c != 'n' && c != 'N' && c != 't' && c != 'T') throw bad("op(A) and op(B) are n or t");
      ops[i] = (c == 'n' || c == 'N') ? 'N' : 'T';
    }
    const auto m = to_integer(tokens[1]), n = to_integer(tokens[2]), k = to_integer(tokens[3]);
    if (!m || !n || !k) throw bad("m, n and k must be integers");
    long long batch = 1;
    for (size_t i = 4; i + 1 < tokens.size(); ++i) {
      if (tokens[i] == "B") {
        const auto b = to_integer(tokens[i + 1]);
        if (!b) throw bad("the batch count after _B_ must be an integer");
        batch = *b;
      }
    }
    Found f;
    f.problem = from_column_major(ops[0], ops[1], *m, *n, *k);
    if (type == "tf32") {
      f.left_out = "TF32 allowed";
    } else if (type != "float") {
      f.left_out = "not FP32";
    } else if (kind == "GemmStridedBatched") {
      if (batch != 1) f.left_out = "batched";
    } else if (kind == "GemmAndBias") {
      f.left_out = "epilogue";
    } else if (kind != "Gemm") {
      f.left_out = "not a GEMM";
    }
    if (f.left_out.empty()) f.left_out = size_refusal(*m, *n, *k);
    out.push_back(std::move(f));
  }
  return out;
}

// Why a call with these cuBLAS enumerator names cannot be tuned as plain FP32, or "". `types`:
// the data types (CUDA_R_32F, ...), empty for the S entries; `compute`: the compute type
// (CUBLAS_COMPUTE_32F, ..., or a cudaDataType in old logs), empty for the S entries; `math`: the
// handle's math mode.
std::string precision_refusal(const std::vector<std::string>& types, const std::string& compute,
                              const std::string& math) {
  for (const auto& t : types) {
    if (t != "CUDA_R_32F") return "not FP32";
  }
  if (!compute.empty()) {
    if (compute.find("FAST_TF32") != std::string::npos) return "TF32 allowed";
    if (compute.find("FAST_16") != std::string::npos) return "reduced precision";
    if (compute.find("EMULATED") != std::string::npos) return "emulated FP32";
    if (compute != "CUBLAS_COMPUTE_32F" && compute != "CUBLAS_COMPUTE_32F_PEDANTIC" &&
        compute != "CUDA_R_32F") {
      return "not FP32";
    }
  }
  if (math.find("TF32") != std::string::npos) return "TF32 allowed";
  if (math.find("EMULATED") != std::string::npos) return "emulated FP32";
  if (math.find("CUBLAS_TENSOR_OP_MATH") != std::string::npos) return "reduced precision";
  return "";
}

// A cuBLAS API log (CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG=FILE): each call is a line
//   I! cuBLAS (v13.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, ...) called:
// then one line per argument, "i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)", and a
// trailer "i!Process=...; Thread=...; GPU=0; ...; MathMode=CUBLAS_DEFAULT_MATH". Every FP32
// GEMM entry point is read (Sgemm, SgemmEx, GemmEx and their batched and _64 forms); the rest is
// skipped. Scalars behind pointers are not in the log.
using LoggedArgs = std::map<std::string, std::string, std::less<>>;

// One call of a cuBLAS API log, its arguments and the handle's math mode read: a Found when it is
// an FP32 GEMM entry point, else nothing.
void read_logged_call(const std::string& path, const std::string& function, size_t function_line,
                      const LoggedArgs& args, const std::string& math, std::vector<Found>& out) {
  if (function.empty()) return;
  std::string name = function;
  if (name.ends_with("_64")) name.resize(name.size() - 3);
  static const std::set<std::string, std::less<>> kGemms = {
      "cublasSgemm_v2",      "cublasSgemm",
      "cublasSgemmEx",       "cublasGemmEx",
      "cublasSgemmBatched",  "cublasSgemmStridedBatched",
      "cublasGemmBatchedEx", "cublasGemmStridedBatchedEx"};
  if (!kGemms.contains(name)) return;
  auto bad = [&](std::string_view why) {
    return InputError(
        fmt::format("{}:{}: {} call: {}", path, function_line, terminal_safe(function), why));
  };
  // "CUBLAS_OP_N(0)" -> "CUBLAS_OP_N"
  auto enumerator = [&](const char* key) {
    const auto it = args.find(key);
    if (it == args.end()) return std::string();
    return std::string(trim(std::string_view(it->second).substr(0, it->second.find('('))));
  };
  auto integer = [&](const char* key) {
    const auto it = args.find(key);
    if (it == args.end()) throw bad(fmt::format("no argument '{}'", key));
    const auto v = to_integer(trim(it->second));
    if (!v) throw bad(fmt::format("'{}' is not an integer: '{}'", key, quote_line(it->second)));
    return *v;
  };
  auto op = [&](const char* key) -> char {
    if (!args.contains(key)) throw bad(fmt::format("no argument '{}'", key));
    const auto e = enumerator(key);
    // cublasOperation_t, or the legacy API's character.
    if (e == "CUBLAS_OP_N" || e == "N" || e == "n") return 'N';
    if (e == "CUBLAS_OP_T" || e == "CUBLAS_OP_C" || e == "CUBLAS_OP_HERMITAN" || e == "T" ||
        e == "t" || e == "C" || e == "c") {
      return 'T';
    }
    throw bad(fmt::format("'{}' is not an operation: '{}'", key, quote_line(e)));
  };
  Found f;
  const char transa = op("transa"), transb = op("transb");
  const long long m = integer("m"), n = integer("n"), k = integer("k");
  f.problem = from_column_major(transa, transb, m, n, k);
  f.calls = 1;
  std::vector<std::string> types;
  for (const char* t : {"Atype", "Btype", "Ctype"}) {
    if (args.contains(t)) types.push_back(enumerator(t));
  }
  f.left_out = precision_refusal(types, enumerator("computeType"), math);
  if (f.left_out.empty() && args.contains("batchCount") && integer("batchCount") != 1) {
    f.left_out = "batched";
  }
  // A scalar is logged by value only when cuBLAS prints one; a pointer says nothing.
  if (f.left_out.empty() && args.contains("alpha")) {
    const auto v = trim(args.at("alpha"));
    if (v == "0" || v == "0.000000" || v == "-0.000000") f.left_out = "alpha = 0";
  }
  if (f.left_out.empty()) f.left_out = size_refusal(m, n, k);
  out.push_back(std::move(f));
}

std::vector<Found> read_cublas_log(const std::string& path, std::istream& in) {
  std::vector<Found> out;
  std::string function;
  size_t function_line = 0;
  LoggedArgs args;
  std::string math;
  auto finish = [&] { read_logged_call(path, function, function_line, args, math, out); };
  std::string raw;
  for (size_t no = 1; std::getline(in, raw); ++no) {
    const std::string_view line = trim(raw);
    if (line.starts_with("I! cuBLAS")) {
      finish();
      function.clear();
      args.clear();
      math.clear();
      // "... function cublasStatus_t [__cdecl ]NAME(...) called:"
      const size_t fn = line.find(" function ");
      const size_t paren = line.find('(', fn == std::string_view::npos ? 0 : fn);
      if (fn == std::string_view::npos || paren == std::string_view::npos) continue;
      const std::string_view decl = trim(line.substr(fn + 10, paren - fn - 10));
      const size_t space = decl.rfind(' ');
      function = std::string(space == std::string_view::npos ? decl : decl.substr(space + 1));
      function_line = no;
    } else if (!function.empty() && line.starts_with("i!")) {
      const std::string_view body = trim(line.substr(2));
      // "name: type=T; val=V"
      const size_t colon = body.find(": type=");
      const size_t val = body.find("; val=");
      if (colon != std::string_view::npos && val != std::string_view::npos && colon < val) {
        args[std::string(body.substr(0, colon))] = std::string(body.substr(val + 6));
        continue;
      }
      // "Process=...; Thread=...; GPU=0; ...; MathMode=CUBLAS_DEFAULT_MATH"
      const size_t mm = body.find("MathMode=");
      if (body.starts_with("Process=") && mm != std::string_view::npos) {
        math = std::string(trim(body.substr(mm + 9)));
      }
    }
  }
  finish();
  return out;
}

// Checks a capture's format and version, and that it holds a list of problems.
void check_capture_format(const std::string& path, const nlohmann::json& j) {
  const auto format = j.at("format");
  if (!format.is_string() || format.get<std::string>() != "sgemm-tune-capture") {
    throw InputError(
        fmt::format("{}: unknown format {} (expected \"sgemm-tune-capture\", or a list of shapes)",
                    path, format.dump()));
  }
  const auto version = j.value("format_version", nlohmann::json());
  if (!version.is_number_integer()) {
    throw InputError(fmt::format("{}: a capture needs an integer format_version", path));
  }
  if (version.get<long long>() != 1) {
    throw InputError(
        fmt::format("{}: capture format_version {}, and this sgemm-tune reads version 1", path,
                    version.dump()));
  }
  if (!j.contains("problems") || !j.at("problems").is_array()) {
    throw InputError(fmt::format("{}: a capture needs a list 'problems'", path));
  }
}

// Why a captured FP32-sized problem cannot be tuned as plain FP32 (precision, batch, epilogue,
// scalars, C and D layouts), or "".
std::string capture_refusal(const nlohmann::json& e, const std::string& precision, long long batch,
                            const std::string& alpha, const std::string& beta) {
  if (precision != "fp32") {
    return precision == "tf32"       ? "TF32 allowed"
           : precision == "reduced"  ? "reduced precision"
           : precision == "emulated" ? "emulated FP32"
                                     : "not FP32";
  } else if (batch != 1) {
    return "batched";
  } else if (e.contains("epilogue") && e.at("epilogue") != "default") {
    return "epilogue";
  } else if (alpha == "vector" || beta == "vector") {
    return "alpha vector";
  } else if (alpha == "zero") {
    return "alpha = 0";
  } else if (e.contains("c_matches_d") && e.at("c_matches_d") == false && beta != "zero") {
    return "C and D layouts differ";
  }
  return "";
}

// Problem #i of a capture.
Found read_captured_problem(const std::string& path, size_t i, const nlohmann::json& e) {
  auto where = [&](const std::string& what) {
    return InputError(fmt::format("{}: problem #{}: {}", path, i, what));
  };
  if (!e.is_object()) throw where("expected an object");
  auto text = [&](const char* key) {
    if (!e.contains(key) || !e.at(key).is_string()) {
      throw where(fmt::format("'{}' must be a string", key));
    }
    return e.at(key).get<std::string>();
  };
  auto count = [&](const char* key) {
    if (!e.contains(key) || !e.at(key).is_number_integer() || e.at(key).get<long long>() < 0) {
      throw where(fmt::format("'{}' must be a whole number", key));
    }
    return e.at(key).get<long long>();
  };
  Found f;
  const std::string shape = text("shape");
  try {
    f.problem.layout = parse_layout(text("layout"));
    // The 64-bit entry points can record sizes beyond what sgemm-tune tunes: left out, not
    // an error in the file.
    const auto dims = split(shape, 'x');
    const auto m = dims.size() == 3 ? to_integer(dims[0]) : std::nullopt;
    const auto n = dims.size() == 3 ? to_integer(dims[1]) : std::nullopt;
    const auto k = dims.size() == 3 ? to_integer(dims[2]) : std::nullopt;
    if (m && n && k && size_refusal(*m, *n, *k) == "too large") {
      f.problem.M = *m;
      f.problem.N = *n;
      f.problem.K = *k;
      f.left_out = "too large";
    } else {
      const std::string layout = f.problem.layout;
      f.problem = parse_shape(shape);
      f.problem.layout = layout;
    }
  } catch (const InputError& err) {
    throw where(err.what());
  }
  f.calls = count("calls");
  const long long batch = count("batch");
  const std::string precision = text("precision");
  const std::string alpha = text("alpha"), beta = text("beta");
  if (e.contains("time_ms") && e.at("time_ms").is_number() && e.contains("timed_calls")) {
    const long long timed = count("timed_calls");
    if (timed > 0) {
      f.timed = true;
      f.time_ms =
          e.at("time_ms").get<double>() * static_cast<double>(f.calls) / static_cast<double>(timed);
    }
  }
  if (f.left_out.empty()) f.left_out = capture_refusal(e, precision, batch, alpha, beta);
  return f;
}

// A capture of libsgemm_tune_preload (docs/preload.md, docs/schemas/captured.schema.json).
std::vector<Found> read_capture(const std::string& path, const nlohmann::json& j) {
  check_capture_format(path, j);
  std::vector<Found> out;
  const auto& problems = j.at("problems");
  for (size_t i = 0; i < problems.size(); ++i)
    out.push_back(read_captured_problem(path, i, problems[i]));
  return out;
}

// A shape source's problems as a suite: each problem once (its calls and time summed over
// processes, devices, entry points and leading dimensions), the tunable ones ordered by weight,
// what was left out counted in `src` and logged.
std::vector<SuiteEntry> weigh(const std::string& path, std::vector<Found> found, SuiteSource& src) {
  std::vector<Found> rows;
  std::map<std::tuple<long long, long long, long long, std::string, std::string>, size_t> at;
  for (auto& f : found) {
    const auto key =
        std::make_tuple(f.problem.M, f.problem.N, f.problem.K, f.problem.layout, f.left_out);
    const auto it = at.find(key);
    if (it == at.end()) {
      at.emplace(key, rows.size());
      rows.push_back(std::move(f));
      continue;
    }
    auto& row = rows[it->second];
    row.calls += f.calls;
    row.time_ms += f.time_ms;
    row.timed = row.timed || f.timed;
  }
  src.problems = rows.size();
  std::map<std::string, size_t> reasons;
  std::vector<const Found*> tunable;
  for (const auto& r : rows) {
    src.calls += r.calls;
    if (r.left_out.empty()) {
      tunable.push_back(&r);
    } else {
      ++reasons[r.left_out];
    }
  }
  // Most measured time first (a timed problem before any untimed one), then most calls, then the
  // largest; the shape's text breaks the last ties, so the order never depends on the file's.
  std::sort(tunable.begin(), tunable.end(), [](const Found* a, const Found* b) {
    if (a->timed != b->timed) return a->timed;
    if (a->time_ms != b->time_ms) return a->time_ms > b->time_ms;
    if (a->calls != b->calls) return a->calls > b->calls;
    if (a->problem.flops() != b->problem.flops()) return a->problem.flops() > b->problem.flops();
    return std::tie(a->problem.M, a->problem.N, a->problem.K, a->problem.layout) <
           std::tie(b->problem.M, b->problem.N, b->problem.K, b->problem.layout);
  });
  src.left_out.assign(reasons.begin(), reasons.end());
  std::stable_sort(src.left_out.begin(), src.left_out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string left;
  size_t left_count = 0;
  for (const auto& [why, n] : src.left_out) {
    left += fmt::format("{}{} {}", left.empty() ? "" : ", ", n, why);
    left_count += n;
  }
  const bool any_time =
      std::any_of(tunable.begin(), tunable.end(), [](const Found* f) { return f->timed; });
  src.note = fmt::format(
      "{}: {} problem{}{} ({}), {} to tune, {}{}", path, src.problems, src.problems == 1 ? "" : "s",
      src.calls > 0 ? fmt::format(", {} calls", src.calls) : "", src.format, tunable.size(),
      any_time        ? "most time first"
      : src.calls > 0 ? "most calls first"
                      : "largest first",
      left_count ? fmt::format("; left out {}: {}", left_count, left) : "");
  if (tunable.empty()) {
    throw InputError(fmt::format("{}: no problem sgemm-tune can tune ({})", path,
                                 src.problems ? "left out " + left : "the file lists none"));
  }
  if (left_count) {
    spdlog::warn("{}", terminal_safe(src.note));
  } else {
    spdlog::info("{}", terminal_safe(src.note));
  }
  std::vector<SuiteEntry> out;
  for (const auto* f : tunable) out.push_back({f->problem, ""});
  return out;
}

// A list of shapes (the original suite format), already parsed.
std::vector<SuiteEntry> json_suite(const std::string& path, nlohmann::json j,
                                   const std::string& fallback_layout) {
  if (j.is_object()) {
    if (!j.contains("shapes") || j.size() != 1) {
      throw InputError(
          fmt::format("{}: expected a list of shapes, or an object with only the key "
                      "'shapes'",
                      path));
    }
    j = j.at("shapes");
  }
  if (!j.is_array() || j.empty()) {
    throw InputError(fmt::format("{}: expected a non-empty list of shapes", path));
  }
  std::vector<SuiteEntry> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    auto where = [&](const std::string& what) {
      return InputError(fmt::format("{}: shape #{} {}: {}", path, i, e.dump(), what));
    };
    auto parse = [&](const std::string& text) {
      try {
        return parse_shape(text);
      } catch (const InputError& err) {
        throw InputError(fmt::format("{}: shape #{}: {}", path, i, err.what()));
      }
    };
    Problem p;
    std::string space;
    if (e.is_string()) {
      p = parse(e.get<std::string>());
      p.layout = fallback_layout;
    } else if (e.is_object() && e.contains("shape") && e.at("shape").is_string()) {
      for (const auto& [k, v] : e.items()) {
        if (k != "shape" && k != "layout" && k != "space") {
          throw where("unknown key '" + k + "' (expected shape, layout, space)");
        }
      }
      if (e.contains("space")) {
        const auto& sp = e.at("space");
        if (!sp.is_string() || sp.get<std::string>().empty()) {
          throw where("space must be a non-empty string: a search-space file or a built-in name");
        }
        space = sp.get<std::string>();
        // A relative path is read beside the suite file when such a file is there, so that a
        // suite and its spaces move together; anything else is a built-in name or a path from
        // the current directory, as for --space.
        const std::filesystem::path beside = std::filesystem::path(path).parent_path() / space;
        std::error_code ec;
        if (std::filesystem::path(space).is_relative() &&
            std::filesystem::is_regular_file(beside, ec)) {
          space = beside.string();
        }
      }
      p = parse(e.at("shape").get<std::string>());
      p.layout = fallback_layout;
      if (e.contains("layout")) {
        const auto& l = e.at("layout");
        if (!l.is_string()) throw where("layout must be a string: NN, NT, TN or TT");
        try {
          p.layout = parse_layout(l.get<std::string>());
        } catch (const InputError& err) {
          throw where(err.what());
        }
      }
    } else {
      throw where(
          "expected \"MxNxK\" or {\"shape\": \"MxNxK\", \"layout\": \"NN\", \"space\": "
          "\"default\"}");
    }
    for (const auto& q : out) {
      if (q.problem == p) throw where("listed twice");
    }
    out.push_back({p, std::move(space)});
  }
  return out;
}

}  // namespace

std::vector<SuiteEntry> load_suite(const std::string& path, std::string_view default_layout,
                                   SuiteSource* source) {
  const std::string fallback_layout = parse_layout(default_layout);
  SuiteSource local;
  SuiteSource& src = source ? *source : local;
  src = SuiteSource{};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read shape list '{}'", path));
  // The text formats are recognised by their first bytes, and read a line at a time: a cuBLAS log
  // can be far larger than the shapes it holds.
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const auto text_format = text_shape_source(head);
  if (text_format) {
    in.clear();
    in.seekg(0);
    src.format = *text_format;
    auto found =
        *text_format == "cublas-log" ? read_cublas_log(path, in) : read_tunableop(path, in);
    return weigh(path, std::move(found), src);
  }
  const auto text = read_file(path);
  if (!text) throw InputError(fmt::format("cannot read shape list '{}'", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format(
        "{}: invalid JSON: {} (a shape list is JSON, a capture of libsgemm_tune_preload, a "
        "PyTorch TunableOp file or a cuBLAS API log)",
        path, e.what()));
  }
  if (j.is_object() && j.contains("format")) {
    src.format = "capture";
    return weigh(path, read_capture(path, j), src);
  }
  src.format = "suite";
  auto out = json_suite(path, std::move(j), fallback_layout);
  src.problems = out.size();
  return out;
}

std::vector<Problem> load_shape_list(const std::string& path, std::string_view default_layout) {
  std::vector<Problem> out;
  for (auto& e : load_suite(path, default_layout)) out.push_back(std::move(e.problem));
  return out;
}

bool kernel_vec_loads(bool trans_a, bool trans_b, long long M, long long N, long long K) {
  // Only the remainders mod 4 matter, and narrowing keeps them.
  const auto i = [](long long v) { return static_cast<int>(v & 0xffff); };
  return sgt_kernel::float4_operand(true, i(trans_a ? M : K), !trans_a, i(M)) &&
         sgt_kernel::float4_operand(true, i(trans_b ? K : N), trans_b, i(N));
}

bool kernel_vec_loads(const Problem& p) {
  return kernel_vec_loads(p.layout.size() == 2 && p.layout[0] == 'T',
                          p.layout.size() == 2 && p.layout[1] == 'T', p.M, p.N, p.K);
}

std::vector<RuleViolation> check_shape(const WarpTileConfig& c, const Problem& p,
                                       const Limits& limits) {
  // Every valid config of a family without shape rules serves every shape of a supported layout;
  // the TMA family's only operands its tensor copies can read.
  std::vector<RuleViolation> out;
  if (!is_layout(p.layout)) {
    out.push_back(
        {"shape_layout", fmt::format("layout '{}' is not one of NN, NT, TN, TT", p.layout)});
  } else if (p.dtype != "f32") {
    out.push_back({"shape_layout",
                   fmt::format("data type '{}' is not served by this kernel (f32 only)", p.dtype)});
  }
  if (is_layout(p.layout)) family_of(c).check_shape(c, p, limits, out);
  return out;
}

}  // namespace sgt
