// Opening the tuning database and the TrialStore side of SqliteStore: begin, finished, record, and
// the row mapping of trials that every other part reads through.
#include "store.hpp"

#include <cstdlib>
#include <system_error>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include "error.hpp"
#include "schema.hpp"
#include "store_internal.hpp"

namespace sgt::db {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v && *v) return std::string(v);
  return std::nullopt;
}

// Every scalar Trial field and its column. Insert and select both iterate this one list, so a
// field cannot be written and forgotten on the way back.
struct TrialColumn {
  const char* name;
  void (*bind)(Stmt&, int, const Trial&);
  void (*read)(const Stmt&, int, Trial&);
};

TrialStatus read_status(const Stmt& s, int col) {
  const auto text = s.text(col);
  auto st = status_from_string(text);
  if (!st) {
    throw Error(
        fmt::format("trial has unknown status '{}' (written by a newer sgemm-tune?)", text));
  }
  return *st;
}

TrialPhase read_phase(const Stmt& s, int col) {
  const auto text = s.text(col);
  auto p = phase_from_string(text);
  if (!p) {
    throw Error(fmt::format("trial has unknown phase '{}' (written by a newer sgemm-tune?)", text));
  }
  return *p;
}

TrialSource read_source(const Stmt& s, int col) {
  const auto text = s.text(col);
  auto o = source_from_string(text);
  if (!o) {
    throw Error(
        fmt::format("trial has unknown source '{}' (written by a newer sgemm-tune?)", text));
  }
  return *o;
}

const TrialColumn kTrialColumns[] = {
    {"status", [](Stmt& s, int i, const Trial& t) { s.bind(i, to_string(t.status)); },
     [](const Stmt& s, int c, Trial& t) { t.status = read_status(s, c); }},
    {"reason", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.reason); },
     [](const Stmt& s, int c, Trial& t) { t.reason = s.text(c); }},
    {"median_ms", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.time.median_ms); },
     [](const Stmt& s, int c, Trial& t) { t.time.median_ms = s.real(c); }},
    {"min_ms", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.time.min_ms); },
     [](const Stmt& s, int c, Trial& t) { t.time.min_ms = s.real(c); }},
    {"max_ms", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.time.max_ms); },
     [](const Stmt& s, int c, Trial& t) { t.time.max_ms = s.real(c); }},
    {"spread", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.time.spread); },
     [](const Stmt& s, int c, Trial& t) { t.time.spread = s.real(c); }},
    {"repetitions", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.time.repetitions); },
     [](const Stmt& s, int c, Trial& t) { t.time.repetitions = s.int32(c); }},
    {"cut_early", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.cut_early); },
     [](const Stmt& s, int c, Trial& t) { t.cut_early = s.int64(c) != 0; }},
    {"gflops", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.gflops); },
     [](const Stmt& s, int c, Trial& t) { t.gflops = s.real(c); }},
    {"verify_error", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.verify_error); },
     [](const Stmt& s, int c, Trial& t) { t.verify_error = s.real(c); }},
    {"registers", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.registers); },
     [](const Stmt& s, int c, Trial& t) { t.registers = s.int32(c); }},
    {"spill_bytes", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.spill_bytes); },
     [](const Stmt& s, int c, Trial& t) { t.spill_bytes = s.int32(c); }},
    {"stack_bytes", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.stack_bytes); },
     [](const Stmt& s, int c, Trial& t) { t.stack_bytes = s.int32(c); }},
    {"shared_bytes", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.shared_bytes); },
     [](const Stmt& s, int c, Trial& t) { t.shared_bytes = s.int32(c); }},
    {"cublas_median_ms", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.cublas_median_ms); },
     [](const Stmt& s, int c, Trial& t) { t.cublas_median_ms = s.real(c); }},
    // Schema 3: absent from older files (selected as NULL there, read as 0: not recorded).
    {"compile_s", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.compile_s); },
     [](const Stmt& s, int c, Trial& t) { t.compile_s = s.is_null(c) ? 0 : s.real(c); }},
    {"measure_s", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.measure_s); },
     [](const Stmt& s, int c, Trial& t) { t.measure_s = s.is_null(c) ? 0 : s.real(c); }},
    // Schema 6: NULL where not measured (and in older files, where the column is absent).
    {"error_ratio",
     [](Stmt& s, int i, const Trial& t) {
       if (t.error_ratio) {
         s.bind(i, *t.error_ratio);
       } else {
         s.bind_null(i);
       }
     },
     [](const Stmt& s, int c, Trial& t) {
       t.error_ratio = s.is_null(c) ? std::nullopt : std::optional(s.real(c));
     }},
    {"stress_ratio",
     [](Stmt& s, int i, const Trial& t) {
       if (t.stress_ratio) {
         s.bind(i, *t.stress_ratio);
       } else {
         s.bind_null(i);
       }
     },
     [](const Stmt& s, int c, Trial& t) {
       t.stress_ratio = s.is_null(c) ? std::nullopt : std::optional(s.real(c));
     }},
    {"stress_case",
     [](Stmt& s, int i, const Trial& t) {
       if (t.stress_ratio) {
         s.bind(i, t.stress_case);
       } else {
         s.bind_null(i);
       }
     },
     [](const Stmt& s, int c, Trial& t) { t.stress_case = s.is_null(c) ? "" : s.text(c); }},
    {"tuner_version", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.tuner_version); },
     [](const Stmt& s, int c, Trial& t) { t.tuner_version = s.text(c); }},
    {"strategy", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.strategy); },
     [](const Stmt& s, int c, Trial& t) { t.strategy = s.text(c); }},
    // Schema 7: absent from older files (selected as NULL there; read_trial takes both from the
    // strategy as those releases wrote it).
    {"phase", [](Stmt& s, int i, const Trial& t) { s.bind(i, to_string(t.phase)); },
     [](const Stmt& s, int c, Trial& t) {
       if (!s.is_null(c)) t.phase = read_phase(s, c);
     }},
    {"source", [](Stmt& s, int i, const Trial& t) { s.bind(i, to_string(t.source)); },
     [](const Stmt& s, int c, Trial& t) {
       if (!s.is_null(c)) t.source = read_source(s, c);
     }},
    // SQLite integers are signed 64-bit: the seed is stored as its two's-complement bit pattern.
    {"seed", [](Stmt& s, int i, const Trial& t) { s.bind(i, static_cast<long long>(t.seed)); },
     [](const Stmt& s, int c, Trial& t) { t.seed = static_cast<std::uint64_t>(s.int64(c)); }},
    {"timestamp", [](Stmt& s, int i, const Trial& t) { s.bind(i, t.timestamp); },
     [](const Stmt& s, int c, Trial& t) { t.timestamp = s.text(c); }},
};

// Columns of trial_select before kTrialColumns; the config fields follow kTrialColumns.
enum FixedCol {
  kId,
  kGpuName,
  kGpuCcMajor,
  kGpuCcMinor,
  kGpuSms,
  kDriver,
  kNvrtcMajor,
  kM,
  kN,
  kK,
  kLayout,
  kDtype,
  kConfigName,
  kTemplateName,
  kTemplateHash,
  kFixedCount
};

constexpr int kTrialColumnCount = static_cast<int>(std::size(kTrialColumns));

}  // namespace

// ---------------------------------------------------------------------------------------------
// Paths and identities

std::filesystem::path default_db_path() {
  if (auto p = env("SGT_DB")) return *p;
  if (auto p = env("XDG_CACHE_HOME")) return std::filesystem::path(*p) / "sgemm-tune" / "tuning.db";
  if (auto p = env("HOME")) {
    return std::filesystem::path(*p) / ".cache" / "sgemm-tune" / "tuning.db";
  }
  throw Error("no tuning database path: set SGT_DB (or XDG_CACHE_HOME or HOME), or pass --db");
}

int default_busy_timeout_ms() {
  if (auto v = env("SGT_DB_BUSY_TIMEOUT_MS")) {
    char* end = nullptr;
    const long ms = std::strtol(v->c_str(), &end, 10);
    if (end && *end == '\0' && ms >= 0 && ms <= 3'600'000) return static_cast<int>(ms);
    throw InputError(fmt::format(
        "SGT_DB_BUSY_TIMEOUT_MS='{}' is not a number of milliseconds (0 .. 3600000)", *v));
  }
  return 10'000;
}

GpuIdentity GpuIdentity::of(const GpuFingerprint& g) {
  return GpuIdentity{g.name, g.cc_major, g.cc_minor, g.sm_count};
}

std::string GpuIdentity::key() const {
  return fmt::format("{}@sm_{}{}/{}", name, cc_major, cc_minor, sm_count);
}

std::string GpuIdentity::label() const {
  return fmt::format("{} (sm_{}{}, {} SMs)", name, cc_major, cc_minor, sm_count);
}

std::string describe_gpus(const std::vector<GpuRecord>& gpus) {
  if (gpus.empty()) return " (none)";
  std::string out;
  for (const auto& g : gpus) {
    out += fmt::format("\n  {}  (--gpu '{}')", g.identity().label(), g.identity().key());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Impl: rows

StoreImpl::StoreImpl(const std::filesystem::path& path, int flags, int busy_timeout_ms, OpenMode m,
                     std::string_view uri_query)
    : conn(path, flags, busy_timeout_ms, uri_query), mode(m) {}

void StoreImpl::prepare_sql() {
  config_present = config_columns_present(conn);
  family_present = column_names(conn, "configs").contains("family");
  edge_table = has_table(conn, "edge_checks");
  std::string cols =
      "t.id, g.name, g.cc_major, g.cc_minor, g.sm_count, t.driver_version, t.nvrtc_major, "
      "p.M, p.N, p.K, p.layout, p.dtype, c.name, k.name, k.source_hash";
  // A file from an older binary may lack a later migration's trial column: select NULL.
  const auto trial_cols = column_names(conn, "trials");
  roles_present = trial_cols.contains("phase") && trial_cols.contains("source");
  for (const auto& col : kTrialColumns) {
    cols += trial_cols.contains(col.name) ? fmt::format(", t.{}", col.name) : ", NULL";
  }
  // A file from an older binary may lack a newer knob's column: select NULL and let read_trial
  // fall back to the canonical name.
  for (size_t i = 0; i < kConfigFields.size(); ++i) {
    cols += config_present[i] ? fmt::format(", c.\"{}\"", kConfigFields[i].name) : ", NULL";
  }
  // Then the config's family (schema 4 on; before, its name says it).
  cols += family_present ? ", c.family" : ", NULL";
  trial_select = "SELECT " + cols +
                 " FROM trials t"
                 " JOIN gpus g ON g.id = t.gpu_id"
                 " JOIN problems p ON p.id = t.problem_id"
                 " JOIN configs c ON c.id = t.config_id"
                 " JOIN kernel_templates k ON k.id = t.template_id";
}

void StoreImpl::require_writable(std::string_view what) const {
  if (mode != OpenMode::read_write) {
    throw Error(fmt::format("tuning database '{}' was opened read-only; cannot {}",
                            conn.path().string(), what));
  }
}

std::optional<long long> StoreImpl::gpu_id(const GpuIdentity& id) const {
  Stmt s(conn,
         "SELECT id FROM gpus WHERE name = :name AND cc_major = :ccmaj AND cc_minor = :ccmin "
         "AND sm_count = :sms");
  s.bind(":name", id.name).bind(":ccmaj", id.cc_major).bind(":ccmin", id.cc_minor);
  s.bind(":sms", id.sm_count);
  if (!s.step()) return std::nullopt;
  return s.int64(0);
}

std::optional<long long> StoreImpl::problem_id(const Problem& p) const {
  Stmt s(conn,
         "SELECT id FROM problems WHERE M = :M AND N = :N AND K = :K AND layout = :layout "
         "AND dtype = :dtype");
  s.bind(":M", p.M).bind(":N", p.N).bind(":K", p.K).bind(":layout", p.layout);
  s.bind(":dtype", p.dtype);
  if (!s.step()) return std::nullopt;
  return s.int64(0);
}

long long StoreImpl::upsert_gpu(const GpuRecord& rec, bool only_if_newer) {
  const auto& g = rec.fingerprint;
  // The identity columns stay; everything that can change with a driver or firmware update is
  // refreshed to the latest seen.
  std::string sql =
      "INSERT INTO gpus (name, cc_major, cc_minor, sm_count, uuid, memory_bytes, l2_bytes,"
      " smem_optin_bytes, sm_clock_khz, mem_clock_khz, driver_version, runtime_version,"
      " nvrtc_major, nvrtc_minor, last_seen)"
      " VALUES (:name, :ccmaj, :ccmin, :sms, :uuid, :mem, :l2, :smem, :smclk, :memclk, :drv,"
      " :rt, :nvmaj, :nvmin, :seen)"
      " ON CONFLICT (name, cc_major, cc_minor, sm_count) DO UPDATE SET"
      " uuid = excluded.uuid, memory_bytes = excluded.memory_bytes,"
      " l2_bytes = excluded.l2_bytes, smem_optin_bytes = excluded.smem_optin_bytes,"
      " sm_clock_khz = excluded.sm_clock_khz, mem_clock_khz = excluded.mem_clock_khz,"
      " driver_version = excluded.driver_version, runtime_version = excluded.runtime_version,"
      " nvrtc_major = excluded.nvrtc_major, nvrtc_minor = excluded.nvrtc_minor,"
      " last_seen = excluded.last_seen";
  if (only_if_newer) sql += " WHERE excluded.last_seen > gpus.last_seen";
  Stmt s(conn, sql);
  s.bind(":name", g.name).bind(":ccmaj", g.cc_major).bind(":ccmin", g.cc_minor);
  s.bind(":sms", g.sm_count).bind(":uuid", g.uuid).bind(":mem", g.memory_bytes);
  s.bind(":l2", g.l2_bytes).bind(":smem", g.smem_optin_bytes).bind(":smclk", g.sm_clock_khz);
  s.bind(":memclk", g.mem_clock_khz).bind(":drv", g.driver_version);
  s.bind(":rt", g.runtime_version).bind(":nvmaj", g.nvrtc_major).bind(":nvmin", g.nvrtc_minor);
  s.bind(":seen", rec.last_seen);
  s.run();
  return *gpu_id(rec.identity());
}

long long StoreImpl::upsert_problem(const Problem& p) {
  if (auto id = problem_id(p)) return *id;
  Stmt s(conn,
         "INSERT INTO problems (M, N, K, layout, dtype) VALUES (:M, :N, :K, :layout, :dtype)");
  s.bind(":M", p.M).bind(":N", p.N).bind(":K", p.K).bind(":layout", p.layout);
  s.bind(":dtype", p.dtype);
  s.run();
  return *problem_id(p);
}

long long StoreImpl::upsert_config(const std::string& name, const WarpTileConfig& c) {
  {
    Stmt s(conn, "SELECT id FROM configs WHERE name = :name");
    s.bind(":name", name);
    if (s.step()) return s.int64(0);
  }
  // Column names come from kConfigFields (compile time); values are bound.
  std::string cols = "name", params = "?";
  if (family_present) {
    cols += ", family";
    params += ", ?";
  }
  for (size_t i = 0; i < kConfigFields.size(); ++i) {
    if (!config_present[i]) continue;
    cols += fmt::format(", \"{}\"", kConfigFields[i].name);
    params += ", ?";
  }
  Stmt s(conn, fmt::format("INSERT INTO configs ({}) VALUES ({})", cols, params));
  int idx = 1;
  s.bind(idx++, name);
  if (family_present) s.bind(idx++, c.family);
  for (size_t i = 0; i < kConfigFields.size(); ++i) {
    if (config_present[i]) s.bind(idx++, c.*kConfigFields[i].member);
  }
  s.run();
  return sqlite3_last_insert_rowid(conn.get());
}

long long StoreImpl::upsert_template(const std::string& name, const std::string& hash) {
  Stmt find(conn, "SELECT id FROM kernel_templates WHERE name = :name AND source_hash = :hash");
  find.bind(":name", name).bind(":hash", hash);
  if (find.step()) return find.int64(0);
  Stmt s(conn, "INSERT INTO kernel_templates (name, source_hash) VALUES (:name, :hash)");
  s.bind(":name", name).bind(":hash", hash);
  s.run();
  return sqlite3_last_insert_rowid(conn.get());
}

namespace {

constexpr const char* kEdgeColumns =
    "seq, label, M, N, K, layout, dtype, lda, ldb, ldc, offset_elems, alpha, beta, passed, error, "
    "reason";

void write_edge_checks(const Connection& conn, long long trial_id,
                       const std::vector<EdgeCheck>& checks) {
  Stmt s(conn, fmt::format("INSERT INTO edge_checks (trial_id, {}) VALUES (:trial, :seq, :label, "
                           ":M, :N, :K, :layout, :dtype, :lda, :ldb, :ldc, :offset, :alpha, :beta, "
                           ":passed, :error, :reason)",
                           kEdgeColumns));
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const auto& e = checks[i];
    s.reset();
    s.bind(":trial", trial_id).bind(":seq", static_cast<long long>(i)).bind(":label", e.label);
    s.bind(":M", e.problem.M).bind(":N", e.problem.N).bind(":K", e.problem.K);
    s.bind(":layout", e.problem.layout).bind(":dtype", e.problem.dtype);
    s.bind(":lda", e.lda).bind(":ldb", e.ldb).bind(":ldc", e.ldc).bind(":offset", e.offset);
    s.bind(":alpha", static_cast<double>(e.alpha)).bind(":beta", static_cast<double>(e.beta));
    s.bind(":passed", e.passed).bind(":error", e.error).bind(":reason", e.reason);
    s.run();
  }
}

// Reads the kEdgeColumns of a row starting at column `first`.
EdgeCheck read_edge_check(const Stmt& s, int first) {
  EdgeCheck e;
  int c = first + 1;  // after seq
  e.label = s.text(c++);
  e.problem.M = s.int64(c++);
  e.problem.N = s.int64(c++);
  e.problem.K = s.int64(c++);
  e.problem.layout = s.text(c++);
  e.problem.dtype = s.text(c++);
  e.lda = s.int64(c++);
  e.ldb = s.int64(c++);
  e.ldc = s.int64(c++);
  e.offset = s.int32(c++);
  e.alpha = static_cast<float>(s.real(c++));
  e.beta = static_cast<float>(s.real(c++));
  e.passed = s.int64(c++) != 0;
  e.error = s.real(c++);
  e.reason = s.text(c++);
  return e;
}

}  // namespace

std::vector<EdgeCheck> StoreImpl::load_edge_checks(long long trial_id) const {
  std::vector<EdgeCheck> out;
  if (!edge_table) return out;
  Stmt s(conn, fmt::format("SELECT {} FROM edge_checks WHERE trial_id = :trial ORDER BY seq",
                           kEdgeColumns));
  s.bind(":trial", trial_id);
  while (s.step()) out.push_back(read_edge_check(s, 0));
  return out;
}

std::map<long long, std::vector<EdgeCheck>> StoreImpl::load_all_edge_checks() const {
  std::map<long long, std::vector<EdgeCheck>> out;
  if (!edge_table) return out;
  Stmt s(conn,
         fmt::format("SELECT trial_id, {} FROM edge_checks ORDER BY trial_id, seq", kEdgeColumns));
  while (s.step()) out[s.int64(0)].push_back(read_edge_check(s, 1));
  return out;
}

StoreImpl::Inserted StoreImpl::insert_trial(long long gpu, const StoredTrial& st) {
  const Trial& t = st.trial;
  const long long problem = upsert_problem(t.problem);
  const std::string config_name = t.config_name.empty() ? to_name(t.config) : t.config_name;
  const long long config = upsert_config(config_name, t.config);
  const std::string template_name =
      t.kernel_template.empty() ? std::string(kKernelTemplateName) : t.kernel_template;
  const long long tmpl = upsert_template(template_name, t.kernel_hash);

  std::string cols = "gpu_id, problem_id, config_id, template_id, driver_version, nvrtc_major";
  std::string params = "?, ?, ?, ?, ?, ?";
  for (const auto& col : kTrialColumns) {
    cols += fmt::format(", {}", col.name);
    params += ", ?";
  }
  // The same measurement arriving twice (merge, import, a retried record) is not a new trial.
  Stmt s(conn, fmt::format("INSERT INTO trials ({}) VALUES ({}) ON CONFLICT (gpu_id, problem_id,"
                           " config_id, template_id, timestamp, seed, strategy, phase, source)"
                           " DO NOTHING",
                           cols, params));
  s.bind(1, gpu).bind(2, problem).bind(3, config).bind(4, tmpl);
  s.bind(5, st.driver_version).bind(6, st.nvrtc_major);
  int idx = 7;
  for (const auto& col : kTrialColumns) col.bind(s, idx++, t);
  s.run();
  Inserted r;
  r.added = conn.changes() == 1;
  if (t.edge_checks.empty()) return r;
  long long trial_id = 0;
  if (r.added) {
    trial_id = sqlite3_last_insert_rowid(conn.get());
  } else {
    // Already stored: its edge checks may be what is new (a winner recorded again once verified,
    // or a database that verified it merged into one that did not). Checks already stored stay.
    Stmt find(conn,
              "SELECT t.id, (SELECT count(*) FROM edge_checks e WHERE e.trial_id = t.id)"
              " FROM trials t WHERE t.gpu_id = :gpu AND t.problem_id = :problem"
              " AND t.config_id = :config AND t.template_id = :tmpl AND t.timestamp = :ts"
              " AND t.seed = :seed AND t.strategy = :strategy AND t.phase = :phase"
              " AND t.source = :source");
    find.bind(":gpu", gpu).bind(":problem", problem).bind(":config", config);
    find.bind(":tmpl", tmpl).bind(":ts", t.timestamp);
    find.bind(":seed", static_cast<long long>(t.seed)).bind(":strategy", t.strategy);
    find.bind(":phase", to_string(t.phase)).bind(":source", to_string(t.source));
    if (!find.step() || find.int64(1) > 0) return r;
    trial_id = find.int64(0);
  }
  write_edge_checks(conn, trial_id, t.edge_checks);
  r.edge_checks = static_cast<long long>(t.edge_checks.size());
  return r;
}

StoredTrial StoreImpl::read_trial(const Stmt& s) const {
  StoredTrial st;
  st.id = s.int64(kId);
  st.gpu =
      GpuIdentity{s.text(kGpuName), s.int32(kGpuCcMajor), s.int32(kGpuCcMinor), s.int32(kGpuSms)};
  st.driver_version = s.int32(kDriver);
  st.nvrtc_major = s.int32(kNvrtcMajor);
  Trial& t = st.trial;
  t.problem.M = s.int64(kM);
  t.problem.N = s.int64(kN);
  t.problem.K = s.int64(kK);
  t.problem.layout = s.text(kLayout);
  t.problem.dtype = s.text(kDtype);
  t.config_name = s.text(kConfigName);
  t.kernel_template = s.text(kTemplateName);
  t.kernel_hash = s.text(kTemplateHash);
  for (int i = 0; i < kTrialColumnCount; ++i) kTrialColumns[i].read(s, kFixedCount + i, t);
  // A file of schema 6 or older, read as it is: its strategy still carries both.
  if (!roles_present) split_legacy_strategy(t);
  const auto parsed = from_name(t.config_name);
  for (size_t i = 0; i < kConfigFields.size(); ++i) {
    const int col = kFixedCount + kTrialColumnCount + static_cast<int>(i);
    auto member = kConfigFields[i].member;
    // NULL: the column was added after this config was stored (or the file lacks it). The
    // canonical name states every knob that differs from its default; else the default.
    if (!s.is_null(col)) {
      t.config.*member = s.int32(col);
    } else if (parsed) {
      t.config.*member = (*parsed).*member;
    } else if (kConfigFields[i].default_value != kRequired) {
      t.config.*member = kConfigFields[i].default_value;
    }
  }
  // The family: its column, or (a row older than the column, not yet labelled) the one the name
  // says, whose suffix is how earlier releases wrote it (_m1, the field TMA = 1); else the
  // default, as TMA = 0 was.
  const int family_col = kFixedCount + kTrialColumnCount + static_cast<int>(kConfigFields.size());
  if (!s.is_null(family_col))
    t.config.family = s.text(family_col);
  else if (parsed)
    t.config.family = parsed->family;
  else
    t.config.family = std::string(kDefaultFamily);
  return st;
}

std::optional<StoredTrial> StoreImpl::load_trial(long long id) const {
  Stmt s(conn, trial_select + " WHERE t.id = :id");
  s.bind(":id", id);
  if (!s.step()) return std::nullopt;
  auto st = read_trial(s);
  st.trial.edge_checks = load_edge_checks(st.id);
  return st;
}

// ---------------------------------------------------------------------------------------------
// Opening

int SqliteStore::schema_version() {
  return latest_schema_version();
}

SqliteStore SqliteStore::open(const std::filesystem::path& path, OpenMode mode,
                              int busy_timeout_ms) {
  int flags = 0;
  std::string uri_query;
  if (mode == OpenMode::read_only) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      throw Error(
          fmt::format("no tuning database at '{}' (nothing tuned yet? run `sgemm-tune "
                      "tune`, or point --db / SGT_DB at one)",
                      path.string()));
    }
    flags = SQLITE_OPEN_READONLY;
    // A WAL database that no process has open has no -wal file: its main file is the whole
    // database. Read as immutable, SQLite then needs no -shm or -wal beside it, so a read-only
    // command works on a read-only filesystem and leaves nothing behind. With a -wal present (a
    // tune is writing, or one was killed), the normal read path sees its committed pages.
    std::filesystem::path wal = path;
    wal += "-wal";
    if (!std::filesystem::exists(wal, ec)) uri_query = "mode=ro&immutable=1";
  } else {
    if (path.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(path.parent_path(), ec);
      if (ec) {
        throw Error(fmt::format("cannot create directory '{}' for the tuning database: {}",
                                path.parent_path().string(), ec.message()));
      }
    }
    flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }
  auto impl = std::make_unique<StoreImpl>(path, flags, busy_timeout_ms, mode, uri_query);
  auto& conn = impl->conn;
  // Only reads until the file is known to be ours, not newer, and undamaged: a refused file must
  // keep every byte, so even the switch to WAL waits.
  check_version(conn, mode == OpenMode::read_write);
  if (mode == OpenMode::read_write) {
    if (conn.read_only()) {
      throw Error(fmt::format(
          "tuning database '{}' is not writable (file permissions); nothing was written. Make it "
          "writable, or use a read-only command (query, list, db info, db export)",
          path.string()));
    }
    // WAL: readers (query, list) never block a tune's writes, and a commit is one append.
    Stmt jm(conn, "PRAGMA journal_mode = WAL");
    if (jm.step() && jm.text(0) != "wal") {
      spdlog::warn("tuning database '{}' stays in journal mode {} (WAL not available here)",
                   path.string(), jm.text(0));
    }
    jm.reset();
    // A trial must survive a power cut once record() returns: the tune will not measure it again.
    conn.exec_script("PRAGMA synchronous = FULL");
  }
  conn.exec_script("PRAGMA foreign_keys = ON");
  if (mode == OpenMode::read_write) migrate(conn);
  impl->prepare_sql();
  return SqliteStore(std::move(impl));
}

SqliteStore::SqliteStore(std::unique_ptr<StoreImpl> impl) : impl_(std::move(impl)) {}
SqliteStore::SqliteStore(SqliteStore&&) noexcept = default;
SqliteStore& SqliteStore::operator=(SqliteStore&&) noexcept = default;
SqliteStore::~SqliteStore() = default;

const std::filesystem::path& SqliteStore::path() const {
  return impl_->conn.path();
}
OpenMode SqliteStore::mode() const {
  return impl_->mode;
}

// ---------------------------------------------------------------------------------------------
// TrialStore

void SqliteStore::begin(const GpuFingerprint& gpu, const Problem& problem) {
  impl_->require_writable("record a tune");
  Transaction tx(impl_->conn, Transaction::Kind::write);
  const long long id = impl_->upsert_gpu(GpuRecord{gpu, utc_timestamp(), 0}, false);
  impl_->upsert_problem(problem);
  tx.commit();
  impl_->run_gpu = gpu;
  impl_->run_problem = problem;
  impl_->run_gpu_id = id;
}

std::vector<Trial> SqliteStore::screening_order() {
  if (!impl_->run_gpu) throw Error("SqliteStore::screening_order() called before begin()");
  const auto& p = *impl_->run_problem;
  Stmt s(impl_->conn, impl_->trial_select +
                          " WHERE t.gpu_id = :gpu AND p.M = :M AND p.N = :N AND p.K = :K"
                          " AND p.layout = :layout AND p.dtype = :dtype"
                          " AND t.phase <> :final AND t.driver_version / 1000 = :drv"
                          " AND t.nvrtc_major = :nvrtc ORDER BY t.id");
  s.bind(":final", to_string(TrialPhase::final));
  s.bind(":gpu", impl_->run_gpu_id).bind(":M", p.M).bind(":N", p.N).bind(":K", p.K);
  s.bind(":layout", p.layout).bind(":dtype", p.dtype);
  s.bind(":drv", impl_->run_gpu->driver_version / 1000);
  s.bind(":nvrtc", impl_->run_gpu->nvrtc_major);
  std::vector<Trial> out;
  while (s.step()) out.push_back(std::move(impl_->read_trial(s).trial));
  return out;
}

std::optional<Trial> SqliteStore::finished(const std::string& config_name,
                                           const std::string& kernel_hash) {
  if (!impl_->run_gpu) throw Error("SqliteStore::finished() called before begin()");
  const auto& p = *impl_->run_problem;
  Stmt s(impl_->conn, impl_->trial_select +
                          " WHERE t.gpu_id = :gpu AND p.M = :M AND p.N = :N AND p.K = :K"
                          " AND p.layout = :layout AND p.dtype = :dtype AND c.name = :config"
                          " AND k.source_hash = :hash AND t.driver_version / 1000 = :drv"
                          " AND t.nvrtc_major = :nvrtc ORDER BY t.id DESC LIMIT 1");
  s.bind(":gpu", impl_->run_gpu_id).bind(":M", p.M).bind(":N", p.N).bind(":K", p.K);
  s.bind(":layout", p.layout).bind(":dtype", p.dtype).bind(":config", config_name);
  s.bind(":hash", kernel_hash).bind(":drv", impl_->run_gpu->driver_version / 1000);
  s.bind(":nvrtc", impl_->run_gpu->nvrtc_major);
  if (!s.step()) return std::nullopt;
  auto st = impl_->read_trial(s);
  st.trial.edge_checks = impl_->load_edge_checks(st.id);
  return std::move(st.trial);
}

void SqliteStore::record(const Trial& trial) {
  if (!impl_->run_gpu) throw Error("SqliteStore::record() called before begin()");
  impl_->require_writable("record a trial");
  StoredTrial st;
  st.trial = trial;
  st.gpu = GpuIdentity::of(*impl_->run_gpu);
  st.driver_version = impl_->run_gpu->driver_version;
  st.nvrtc_major = impl_->run_gpu->nvrtc_major;
  // The trial and its edge checks in one transaction: never a trial with half its checks.
  Transaction tx(impl_->conn, Transaction::Kind::write);
  const auto r = impl_->insert_trial(impl_->run_gpu_id, st);
  if (!r.added) {
    spdlog::debug("trial {} at {} (seed {}) was already stored{}", trial.config_name,
                  trial.timestamp, trial.seed,
                  r.edge_checks ? fmt::format("; attached its {} edge checks", r.edge_checks) : "");
  }
  tx.commit();
}

}  // namespace sgt::db
