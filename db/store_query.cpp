// Reading the tuning database: GPUs, shapes, winners (derived from trials on every call), staleness
// and the exact -> nearest shape -> default fallback that `query` serves.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family.hpp"
#include "gpu_select.hpp"
#include "store.hpp"
#include "store_internal.hpp"

namespace sgt::db {

namespace {

// Every ok trial with the reasons it might be stale and whether it passed an edge-shape suite,
// except those of a config that gave a wrong or inaccurate result on this GPU and problem with
// this kernel source (a screening trial is ok on the problem alone; the same config failing the
// edge suite afterwards is recorded incorrect, and must not be served through the screening trial;
// a config recorded inaccurate once is not served through another trial either). The
// reference is the binary's kernel hash and, unless overridden, the latest driver and NVRTC majors
// recorded for the trial's GPU. Filters are optional: a NULL parameter means "any". VERIFIED is
// replaced by verified_sql().
constexpr const char* kCandidatesCte = R"sql(
WITH cand AS (
  SELECT t.id AS id, t.gpu_id AS gpu_id, t.problem_id AS problem_id, k.name AS template_name,
         t.median_ms AS median_ms, VERIFIED AS verified,
         STALE_HASH AS stale_hash,
         t.driver_version / 1000 <> COALESCE(:driver_major, g.driver_version / 1000)
           AS stale_driver,
         t.nvrtc_major <> COALESCE(:nvrtc_major, g.nvrtc_major) AS stale_nvrtc
  FROM trials t
  JOIN gpus g ON g.id = t.gpu_id
  JOIN problems p ON p.id = t.problem_id
  JOIN kernel_templates k ON k.id = t.template_id
  JOIN configs c ON c.id = t.config_id
  WHERE t.status = :ok AND t.median_ms > 0
    AND NOT EXISTS (SELECT 1 FROM trials f
                    WHERE f.gpu_id = t.gpu_id AND f.problem_id = t.problem_id
                      AND f.template_id = t.template_id AND f.config_id = t.config_id
                      AND f.status IN (:incorrect, :inaccurate))
    AND (:gpu_id IS NULL OR t.gpu_id = :gpu_id)
    AND (:problem_id IS NULL OR t.problem_id = :problem_id)
    AND (:template IS NULL OR k.name = :template)
    AND (:layout IS NULL OR p.layout = :layout)
    AND (:dtype IS NULL OR p.dtype = :dtype)
    AND FAMILY_FILTER
)
)sql";

// The winner of each GPU x problem x template: a trial verified on the edge-shape suite before any
// that is not (a tune verifies its finalists in rank order, and a faster screening trial of a
// config it never verified must not overtake the one it did), then lowest median, ties to the
// earliest trial.
constexpr const char* kWinnersSql = R"sql(
SELECT id, stale, ok_trials FROM (
  SELECT id, gpu_id, problem_id, template_name,
         (stale_hash OR stale_driver OR stale_nvrtc) AS stale,
         row_number() OVER w AS rank,
         count(*) OVER (PARTITION BY gpu_id, problem_id, template_name) AS ok_trials
  FROM cand
  WHERE :allow_stale OR NOT (stale_hash OR stale_driver OR stale_nvrtc)
  WINDOW w AS (PARTITION BY gpu_id, problem_id, template_name
               ORDER BY verified DESC, median_ms, id)
)
WHERE rank = 1
ORDER BY gpu_id, problem_id, template_name
)sql";

constexpr const char* kStaleSql = R"sql(
SELECT count(*), COALESCE(sum(stale_hash), 0), COALESCE(sum(stale_driver), 0),
       COALESCE(sum(stale_nvrtc), 0)
FROM cand WHERE stale_hash OR stale_driver OR stale_nvrtc
)sql";

struct Filter {
  std::optional<long long> gpu_id, problem_id;
  std::optional<std::string> template_name, layout, dtype;
  // The precision class asked for: only trials of the families it admits (precision.hpp).
  Precision precision = Precision::fp32;
};

// The ids of the registered families a request of class `p` admits, as a JSON array.
std::string admitted_families(Precision p) {
  nlohmann::json ids = nlohmann::json::array();
  for (const auto* f : families())
    if (admits(p, f->precision())) ids.push_back(std::string(f->id()));
  return ids.dump();
}

template <class T>
void bind_opt(Stmt& s, const char* name, const std::optional<T>& v) {
  if (v) {
    s.bind(name, *v);
  } else {
    s.bind_null(name);
  }
}

void bind_candidates(Stmt& s, const Filter& f, const Reference& ref) {
  s.bind(":hashes", nlohmann::json(ref.family_hashes).dump());
  bind_opt(s, ":driver_major", ref.driver_major);
  bind_opt(s, ":nvrtc_major", ref.nvrtc_major);
  s.bind(":ok", to_string(TrialStatus::ok));
  s.bind(":incorrect", to_string(TrialStatus::incorrect));
  s.bind(":inaccurate", to_string(TrialStatus::inaccurate));
  bind_opt(s, ":gpu_id", f.gpu_id);
  bind_opt(s, ":problem_id", f.problem_id);
  bind_opt(s, ":template", f.template_name);
  bind_opt(s, ":layout", f.layout);
  bind_opt(s, ":dtype", f.dtype);
  s.bind(":families", admitted_families(f.precision));
}

// The candidates CTE for this database: a trial is verified when it has edge checks and passed them
// all; a database from before edge checks (no table) has none.
std::string candidates_cte(const StoreImpl& impl) {
  std::string cte = kCandidatesCte;
  const std::string verified =
      impl.edge_table ? "(EXISTS (SELECT 1 FROM edge_checks e WHERE e.trial_id = t.id) AND NOT "
                        "EXISTS (SELECT 1 FROM edge_checks e WHERE e.trial_id = t.id AND "
                        "e.passed = 0))"
                      : "0";
  cte.replace(cte.find("VERIFIED"), std::string_view("VERIFIED").size(), verified);
  // Fresh: the trial's hash is the current one of its config's family (:hashes, a JSON object
  // of family id -> hash). A config row without a family (a schema-3 file opened read-only, never
  // migrated) is fresh under any family's current hash.
  const std::string any = "k.source_hash NOT IN (SELECT value FROM json_each(:hashes))";
  const std::string stale =
      impl.family_present
          ? "(CASE WHEN c.family IS NULL THEN " + any +
                " ELSE k.source_hash IS NOT json_extract(:hashes, '$.\"' || c.family || '\"') END)"
          : any;
  cte.replace(cte.find("STALE_HASH"), std::string_view("STALE_HASH").size(), stale);
  // Precision: a config row without a family is the default family's (every trial of a database
  // from before families is an FFMA one).
  const std::string family_filter = impl.family_present
                                        ? "COALESCE(c.family, '" + std::string(kDefaultFamily) +
                                              "') IN (SELECT value FROM json_each(:families))"
                                        : "(:families IS NOT NULL)";
  cte.replace(cte.find("FAMILY_FILTER"), std::string_view("FAMILY_FILTER").size(), family_filter);
  return cte;
}

std::vector<Winner> run_winners(const StoreImpl& impl, const Filter& f, const Reference& ref,
                                bool allow_stale) {
  Stmt s(impl.conn, candidates_cte(impl) + kWinnersSql);
  bind_candidates(s, f, ref);
  s.bind(":allow_stale", allow_stale);
  std::vector<std::tuple<long long, bool, long long>> rows;
  while (s.step()) rows.emplace_back(s.int64(0), s.int64(1) != 0, s.int64(2));
  s.reset();
  std::vector<Winner> out;
  for (const auto& [id, stale, ok_trials] : rows) {
    auto st = impl.load_trial(id);
    if (!st) continue;
    out.push_back(Winner{std::move(*st), stale, ok_trials});
  }
  return out;
}

}  // namespace

std::string_view to_string(Source s) {
  switch (s) {
    case Source::exact:
      return "exact";
    case Source::nearest:
      return "nearest";
    case Source::default_config:
      return "default";
  }
  return "unknown";
}

double shape_distance(const Problem& a, const Problem& b) {
  auto d = [](long long x, long long y) {
    const double l = std::log2(static_cast<double>(x) / static_cast<double>(y));
    return l * l;
  };
  return std::sqrt(d(a.M, b.M) + d(a.N, b.N) + d(a.K, b.K));
}

double Winner::ratio() const {
  const auto& t = best.trial;
  if (!(t.cublas_median_ms > 0) || !(t.time.median_ms > 0)) return 0;
  return t.cublas_median_ms / t.time.median_ms;
}

std::vector<GpuRecord> SqliteStore::gpus() const {
  Stmt s(impl_->conn,
         "SELECT name, uuid, cc_major, cc_minor, sm_count, memory_bytes, l2_bytes,"
         " smem_optin_bytes, sm_clock_khz, mem_clock_khz, driver_version, runtime_version,"
         " nvrtc_major, nvrtc_minor, last_seen,"
         " (SELECT count(*) FROM trials t WHERE t.gpu_id = g.id)"
         " FROM gpus g ORDER BY name, cc_major, cc_minor, sm_count");
  std::vector<GpuRecord> out;
  while (s.step()) {
    GpuRecord r;
    auto& g = r.fingerprint;
    g.name = s.text(0);
    g.uuid = s.text(1);
    g.cc_major = s.int32(2);
    g.cc_minor = s.int32(3);
    g.sm_count = s.int32(4);
    g.memory_bytes = s.int64(5);
    g.l2_bytes = s.int32(6);
    g.smem_optin_bytes = s.int32(7);
    g.sm_clock_khz = s.int32(8);
    g.mem_clock_khz = s.int32(9);
    g.driver_version = s.int32(10);
    g.runtime_version = s.int32(11);
    g.nvrtc_major = s.int32(12);
    g.nvrtc_minor = s.int32(13);
    r.last_seen = s.text(14);
    r.trials = s.int64(15);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<GpuRecord> SqliteStore::gpu(const GpuIdentity& id) const {
  for (auto& g : gpus()) {
    if (g.identity() == id) return g;
  }
  return std::nullopt;
}

std::vector<GpuRecord> SqliteStore::find_gpus(std::string_view name_or_key) const {
  auto all = gpus();
  std::vector<std::string> names, keys;
  for (const auto& g : all) {
    names.push_back(g.fingerprint.name);
    keys.push_back(g.identity().key());
  }
  std::vector<GpuRecord> out;
  for (const size_t i : match_gpu_names(names, keys, name_or_key)) out.push_back(std::move(all[i]));
  return out;
}

std::vector<ShapeRecord> SqliteStore::shapes() const {
  Stmt s(impl_->conn,
         "SELECT p.M, p.N, p.K, p.layout, p.dtype, count(t.id), count(DISTINCT t.gpu_id)"
         " FROM problems p LEFT JOIN trials t ON t.problem_id = p.id"
         " GROUP BY p.id ORDER BY p.M, p.N, p.K, p.layout, p.dtype");
  std::vector<ShapeRecord> out;
  while (s.step()) {
    ShapeRecord r;
    r.problem.M = s.int64(0);
    r.problem.N = s.int64(1);
    r.problem.K = s.int64(2);
    r.problem.layout = s.text(3);
    r.problem.dtype = s.text(4);
    r.trials = s.int64(5);
    r.gpus = s.int64(6);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<StoredTrial> SqliteStore::trials() const {
  Stmt s(impl_->conn, impl_->trial_select + " ORDER BY t.id");
  std::vector<StoredTrial> out;
  while (s.step()) out.push_back(impl_->read_trial(s));
  s.reset();
  auto checks = impl_->load_all_edge_checks();
  for (auto& st : out) {
    if (auto it = checks.find(st.id); it != checks.end())
      st.trial.edge_checks = std::move(it->second);
  }
  return out;
}

std::optional<Winner> SqliteStore::winner(const GpuIdentity& gpu, const Problem& problem,
                                          const QueryOptions& opts) const {
  const auto gid = impl_->gpu_id(gpu);
  const auto pid = impl_->problem_id(problem);
  if (!gid || !pid) return std::nullopt;
  Filter f;
  f.gpu_id = gid;
  f.problem_id = pid;
  f.template_name = opts.kernel_template;
  f.precision = opts.precision;
  auto w = run_winners(*impl_, f, opts.reference, opts.allow_stale);
  if (w.empty()) return std::nullopt;
  return std::move(w.front());
}

std::vector<Winner> SqliteStore::winners(bool allow_stale, Precision precision) const {
  Filter f;
  f.precision = precision;
  return run_winners(*impl_, f, Reference{}, allow_stale);
}

StaleCounts SqliteStore::stale_trials(const GpuIdentity& gpu, const std::optional<Problem>& problem,
                                      const QueryOptions& opts) const {
  StaleCounts c;
  const auto gid = impl_->gpu_id(gpu);
  if (!gid) return c;
  Filter f;
  f.gpu_id = gid;
  f.template_name = opts.kernel_template;
  f.precision = opts.precision;
  if (problem) {
    f.problem_id = impl_->problem_id(*problem);
    if (!f.problem_id) return c;
  }
  Stmt s(impl_->conn, candidates_cte(*impl_) + kStaleSql);
  bind_candidates(s, f, opts.reference);
  if (s.step()) {
    c.total = s.int64(0);
    c.kernel_hash = s.int64(1);
    c.driver = s.int64(2);
    c.nvrtc = s.int64(3);
  }
  return c;
}

namespace {

// The winners of every tuned shape of the filter's GPU, layout and dtype in its precision class,
// and, for a wider class, each shape's strict winner too.
std::vector<Winner> nearest_candidates(const StoreImpl& impl, const Filter& f,
                                       const QueryOptions& opts) {
  auto candidates = run_winners(impl, f, opts.reference, opts.allow_stale);
  // A wider class's winner of a shape may not reach the requested shape (precision_shape):
  // each shape's strict winner stands behind it, at the same distance.
  if (f.precision != Precision::fp32) {
    Filter strict = f;
    strict.precision = Precision::fp32;
    for (auto& w : run_winners(impl, strict, opts.reference, opts.allow_stale)) {
      const bool listed = std::any_of(candidates.begin(), candidates.end(),
                                      [&](const Winner& c) { return c.best.id == w.best.id; });
      if (!listed) candidates.push_back(std::move(w));
    }
  }
  return candidates;
}

// The nearest of the candidates that can run `problem`, as r's winner (source nearest); the
// nearer ones that cannot are listed in r.skipped.
void choose_nearest(QueryResult& r, const std::vector<Winner>& candidates, const Problem& problem) {
  std::vector<std::pair<double, size_t>> by_distance;
  for (size_t i = 0; i < candidates.size(); ++i) {
    by_distance.emplace_back(shape_distance(problem, candidates[i].best.trial.problem), i);
  }
  // Ties go to the earlier-recorded shape (candidates come ordered by problem id).
  std::stable_sort(by_distance.begin(), by_distance.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // The nearest winner that can run the requested shape: a nearer one that cannot (a TMA
  // config at 1x1x1) is passed over and named, as the dispatch library does.
  for (const auto& [d, i] : by_distance) {
    const auto& t = candidates[i].best.trial;
    auto violations = check_shape(t.config, problem);
    // A non-strict kernel's accuracy against FP64 was measured at the shape it was tuned for,
    // against cuBLAS's there: its error ratio moves with K (both ways: the split's windows cost
    // more at small K) and with M and N (cuBLAS's own algorithm changes), so no other shape is
    // what it was admitted for.
    if (family_of(t.config).precision() != Precision::fp32 &&
        (problem.M != t.problem.M || problem.N != t.problem.N || problem.K != t.problem.K))
      violations.push_back(
          {"precision_shape",
           fmt::format("its accuracy against FP64 was measured at {} only, not at {}",
                       t.problem.shape(), problem.shape())});
    if (!violations.empty()) {
      r.skipped.push_back({t.config_name, t.problem, d, std::move(violations)});
      continue;
    }
    r.winner = candidates[i];
    r.source = Source::nearest;
    r.served = t.problem;
    r.distance = d;
    break;
  }
}

}  // namespace

QueryResult SqliteStore::query(const GpuIdentity& gpu, const Problem& problem,
                               const QueryOptions& opts) const {
  QueryResult r;
  r.gpu = gpu;
  r.requested = problem;
  r.served = problem;

  if (auto w = winner(gpu, problem, opts)) {
    r.source = Source::exact;
    r.winner = std::move(w);
    r.stale_skipped = opts.allow_stale ? StaleCounts{} : stale_trials(gpu, problem, opts);
  } else if (const auto gid = impl_->gpu_id(gpu)) {
    // Every tuned shape of this GPU with the same layout and dtype is a candidate.
    Filter f;
    f.gpu_id = gid;
    f.template_name = opts.kernel_template;
    f.layout = problem.layout;
    f.dtype = problem.dtype;
    f.precision = opts.precision;
    const auto candidates = nearest_candidates(*impl_, f, opts);
    choose_nearest(r, candidates, problem);
    if (!opts.allow_stale) {
      Filter sf = f;
      Stmt s(impl_->conn, candidates_cte(*impl_) + kStaleSql);
      bind_candidates(s, sf, opts.reference);
      if (s.step()) {
        r.stale_skipped = StaleCounts{s.int64(0), s.int64(1), s.int64(2), s.int64(3)};
      }
    }
  }

  if (r.winner) {
    r.config = r.winner->best.trial.config;
    r.config_name = r.winner->best.trial.config_name;
  } else {
    r.source = Source::default_config;
    r.config_name = std::string(kDefaultConfigName);
    r.config = *from_name(kDefaultConfigName);
  }
  r.shape_violations = check_shape(r.config, problem);
  return r;
}

}  // namespace sgt::db
