// Moving trials between databases (JSON export/import, merge) and keeping the file healthy
// (vacuum, info, integrity check). Import and merge share one ingest path.
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "config.hpp"
#include "file_util.hpp"
#include "problem.hpp"
#include "schema.hpp"
#include "store.hpp"
#include "store_internal.hpp"

namespace sgt::db {

namespace {

constexpr std::string_view kFormat = "sgemm-tune-trials";
// 2: each trial has its phase and source as keys of their own, and its strategy is the strategy's
// name alone; in a version-1 file both are in the strategy ("replay/<strategy>/final"), which an
// older reader would take for a strategy's name, so it must refuse version 2 rather than read
// every finalist as a screening trial. A version-1 file reads as it is.
constexpr int kFormatVersion = 2;

nlohmann::json to_json(const GpuIdentity& g) {
  return {{"name", g.name},
          {"cc_major", g.cc_major},
          {"cc_minor", g.cc_minor},
          {"sm_count", g.sm_count}};
}

GpuIdentity identity_from_json(const nlohmann::json& j) {
  GpuIdentity g;
  j.at("name").get_to(g.name);
  j.at("cc_major").get_to(g.cc_major);
  j.at("cc_minor").get_to(g.cc_minor);
  j.at("sm_count").get_to(g.sm_count);
  return g;
}

// JSON has no NaN or infinity: nlohmann writes them as null. A trial that was never timed has NaN
// times, so null reads back as NaN (infinity therefore comes back as NaN too).
void nulls_to_nan(nlohmann::json& trial) {
  constexpr const char* kTimes[] = {"median_ms", "min_ms", "max_ms", "spread"};
  constexpr const char* kReals[] = {"gflops", "verify_error", "cublas_median_ms"};
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  if (!trial.is_object()) return;
  if (auto t = trial.find("time"); t != trial.end() && t->is_object()) {
    for (const char* k : kTimes) {
      if (auto v = t->find(k); v != t->end() && v->is_null()) *v = nan;
    }
  }
  for (const char* k : kReals) {
    if (auto v = trial.find(k); v != trial.end() && v->is_null()) *v = nan;
  }
}

// The fields a tune writes as integers, in the trial's JSON.
std::optional<std::string> invalid_integer_field(const nlohmann::json& tj) {
  auto integer = [&](const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() || it->is_number_integer();
  };
  for (const char* key : {"registers", "spill_bytes", "stack_bytes", "shared_bytes", "seed"}) {
    if (!integer(tj, key)) return fmt::format("{} {} is not an integer", key, tj.at(key).dump());
  }
  if (!integer(tj.at("time"), "repetitions")) {
    return fmt::format("time.repetitions {} is not an integer",
                       tj.at("time").at("repetitions").dump());
  }
  for (const char* key : {"M", "N", "K"}) {
    if (!integer(tj.at("problem"), key)) {
      return fmt::format("problem.{} {} is not an integer", key, tj.at("problem").at(key).dump());
    }
  }
  return std::nullopt;
}

// Times, rates, error ratios, counts and the timestamp of a trial: what a measurement can give.
std::optional<std::string> invalid_measurement(const Trial& t) {
  // Times and rates: never negative or infinite; NaN only where nothing was timed.
  auto bad_real = [](double v) { return !std::isnan(v) && (v < 0 || std::isinf(v)); };
  const std::pair<const char*, double> reals[] = {{"time.median_ms", t.time.median_ms},
                                                  {"time.min_ms", t.time.min_ms},
                                                  {"time.max_ms", t.time.max_ms},
                                                  {"time.spread", t.time.spread},
                                                  {"gflops", t.gflops},
                                                  {"cublas_median_ms", t.cublas_median_ms},
                                                  {"compile_s", t.compile_s},
                                                  {"measure_s", t.measure_s}};
  for (const auto& [key, v] : reals) {
    if (bad_real(v)) return fmt::format("{} {} is negative or infinite", key, v);
  }
  // verify_error: a relative error, or -1 for a trial that was never verified.
  if (t.verify_error != -1 && bad_real(t.verify_error)) {
    return fmt::format("verify_error {} is neither an error (0 or more) nor -1 (not verified)",
                       t.verify_error);
  }
  // Error ratios against FP64: measured ones are 0 or more (1e300 for a result with NaN or Inf).
  const std::pair<const char*, std::optional<double>> ratios[] = {{"error_ratio", t.error_ratio},
                                                                  {"stress_ratio", t.stress_ratio}};
  for (const auto& [key, v] : ratios) {
    if (v && !(*v >= 0 && std::isfinite(*v)))
      return fmt::format("{} {} is not an error ratio (a number, 0 or more)", key, *v);
  }
  if (t.stress_ratio && t.stress_case.empty())
    return "stress_ratio without its stress_case (the case it was measured on)";
  if (t.status == TrialStatus::ok && !(t.time.median_ms > 0)) {
    return fmt::format("status ok with time.median_ms {}: an ok trial was timed", t.time.median_ms);
  }
  const std::pair<const char*, long long> counts[] = {{"registers", t.registers},
                                                      {"spill_bytes", t.spill_bytes},
                                                      {"stack_bytes", t.stack_bytes},
                                                      {"shared_bytes", t.shared_bytes},
                                                      {"time.repetitions", t.time.repetitions}};
  for (const auto& [key, v] : counts) {
    if (v < 0) return fmt::format("{} {} is negative", key, v);
  }
  if (t.registers > 255) return fmt::format("registers {} is above 255 per thread", t.registers);
  static const std::regex utc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z)");
  if (!std::regex_match(t.timestamp, utc)) {
    return fmt::format("timestamp '{}' is not a UTC time like 2026-12-01T12:00:00Z", t.timestamp);
  }
  return std::nullopt;
}

// The trial's config against the rules a tune enforces, and its edge checks' problems.
std::optional<std::string> invalid_config(const Trial& t) {
  // The config: every rule the index simulation proves (a tune never measures a config that breaks
  // one), and the shape rules of its problem.
  for (const auto& v : check(t.config)) {
    for (const auto& r : rules()) {
      if (r.name == v.rule && r.structural) {
        return fmt::format("config {} breaks rule {}: {}", t.config_name, v.rule, v.reason);
      }
    }
  }
  for (const auto& v : check_shape(t.config, t.problem)) {
    return fmt::format("config {} breaks shape rule {} for {} {}: {}", t.config_name, v.rule,
                       t.problem.shape(), t.problem.layout, v.reason);
  }
  for (std::size_t k = 0; k < t.edge_checks.size(); ++k) {
    const auto& e = t.edge_checks[k];
    if (!is_layout(e.problem.layout) || e.problem.dtype != "f32") {
      return fmt::format("edge check {} ('{}') has layout '{}' and dtype '{}'", k, e.label,
                         e.problem.layout, e.problem.dtype);
    }
  }
  return std::nullopt;
}

// What a tune could have written, field by field: the first field that no tune writes, named with
// why, or nothing. `tj` is the trial's JSON (its number types), `t` the trial read from it.
std::optional<std::string> invalid_trial_field(const nlohmann::json& tj, const Trial& t) {
  if (auto why = invalid_integer_field(tj)) return why;
  if (!is_layout(t.problem.layout)) {
    return fmt::format("problem.layout '{}' is not one of NN, NT, TN, TT", t.problem.layout);
  }
  if (t.problem.dtype != "f32") {
    return fmt::format("problem.dtype '{}' is not f32", t.problem.dtype);
  }
  if (auto why = invalid_measurement(t)) return why;
  return invalid_config(t);
}

long long file_size_or_zero(const std::filesystem::path& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : static_cast<long long>(n);
}

}  // namespace

StoreDump SqliteStore::dump() const {
  // One read transaction: a tune writing meanwhile cannot leave a trial without its GPU.
  Transaction tx(impl_->conn, Transaction::Kind::read);
  StoreDump d;
  d.gpus = gpus();
  d.trials = trials();
  tx.commit();
  return d;
}

nlohmann::json export_dump_json(const StoreDump& d, int schema_version) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : d.gpus) {
    nlohmann::json j = g.fingerprint;
    j["last_seen"] = g.last_seen;
    gpus.push_back(std::move(j));
  }
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : d.trials) {
    trials.push_back({{"gpu", to_json(t.gpu)},
                      {"driver_version", t.driver_version},
                      {"nvrtc_major", t.nvrtc_major},
                      {"trial", t.trial}});
  }
  return {{"format", kFormat},
          {"format_version", kFormatVersion},
          {"schema_version", schema_version},
          {"tuner_version", SGT_VERSION},
          {"exported_at", utc_timestamp()},
          {"gpus", std::move(gpus)},
          {"trials", std::move(trials)}};
}

nlohmann::json SqliteStore::export_json() const {
  return export_dump_json(dump(), schema_version());
}

long long SqliteStore::export_json(const std::filesystem::path& file) const {
  const auto j = export_json();
  // Atomic: a failed export never leaves half a file in its place.
  write_file_atomically_maybe_gzip(file, j.dump(2) + "\n");
  return static_cast<long long>(j.at("trials").size());
}

nlohmann::json read_json_file(const std::filesystem::path& file, std::string_view what) {
  // A dataset or an export written as FILE.json.gz reads as its JSON.
  const auto text = read_file_maybe_gzip(file);
  if (!text) throw InputError(fmt::format("cannot read {} '{}'", what, file.string()));
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{} '{}' is not valid JSON: {}", what, file.string(), e.what()));
  }
}

IngestResult SqliteStore::import_json(const std::filesystem::path& file) {
  impl_->require_writable("import");
  return import_json(read_json_file(file, "import file"), file.string());
}

namespace {

// An error in an import file: nothing of it is imported.
struct ImportError {
  std::string_view origin;
  InputError operator()(const std::string& why) const {
    return InputError(fmt::format("import file '{}': {}; nothing was imported", origin, why));
  }
};

// Trial #i of an export, read and checked: its GPU among the listed ones (known_gpus), its name,
// sizes and fields what a tune writes.
StoredTrial read_export_trial(const nlohmann::json& entry, size_t i,
                              const std::map<std::string, bool>& known_gpus,
                              const ImportError& bad) {
  StoredTrial st;
  std::optional<std::string> invalid;
  try {
    st.gpu = identity_from_json(entry.at("gpu"));
    entry.at("driver_version").get_to(st.driver_version);
    entry.at("nvrtc_major").get_to(st.nvrtc_major);
    auto trial = entry.at("trial");
    nulls_to_nan(trial);
    trial.get_to(st.trial);
    invalid = invalid_trial_field(trial, st.trial);
  } catch (const std::exception& e) {
    throw bad(fmt::format("trial {}: {}", i, e.what()));
  }
  if (!known_gpus.count(st.gpu.key())) {
    throw bad(fmt::format("trial {}: GPU {} is not listed in \"gpus\"", i, st.gpu.key()));
  }
  const auto& t = st.trial;
  if (t.config_name != to_name(t.config)) {
    throw bad(fmt::format("trial {}: config_name '{}' does not match its config ({})", i,
                          t.config_name, to_name(t.config)));
  }
  if (t.problem.M < 1 || t.problem.N < 1 || t.problem.K < 1) {
    throw bad(fmt::format("trial {}: problem {} has a size below 1", i, t.problem.shape()));
  }
  if (invalid) throw bad(fmt::format("trial {} ({}): {}", i, t.config_name, *invalid));
  for (std::size_t k = 0; k < t.edge_checks.size(); ++k) {
    const auto& e = t.edge_checks[k];
    if (e.problem.M < 0 || e.problem.N < 0 || e.problem.K < 0) {
      throw bad(fmt::format("trial {}: edge check {} ('{}') has a negative size: {}", i, k, e.label,
                            e.problem.shape()));
    }
  }
  return st;
}

// A trial's identity in the store (the unique index of schema 7).
std::string trial_identity(const StoredTrial& st) {
  const auto& t = st.trial;
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", st.gpu.key(), t.problem.shape(),
                     t.problem.layout, t.problem.dtype, t.config_name, t.kernel_template,
                     t.kernel_hash, t.timestamp, t.seed) +
         fmt::format("|{}|{}|{}", t.strategy, to_string(t.phase), to_string(t.source));
}

}  // namespace

StoreDump parse_export(const nlohmann::json& j, std::string_view origin) {
  const ImportError bad{origin};
  if (!j.is_object() || j.value("format", "") != kFormat) {
    throw bad(fmt::format("not an sgemm-tune export (expected \"format\": \"{}\")", kFormat));
  }
  const auto version = j.value("format_version", 0);
  if (version < 1 || version > kFormatVersion) {
    throw bad(
        fmt::format("format_version {} is not one this sgemm-tune reads (1 .. {}); a newer "
                    "sgemm-tune wrote it?",
                    version, kFormatVersion));
  }
  if (!j.contains("gpus") || !j["gpus"].is_array()) throw bad("\"gpus\" must be an array");
  if (!j.contains("trials") || !j["trials"].is_array()) throw bad("\"trials\" must be an array");

  // Validate everything before the first write: a bad entry anywhere imports nothing.
  StoreDump d;
  std::map<std::string, bool> known_gpus;
  try {
    for (const auto& g : j.at("gpus")) {
      GpuRecord r;
      r.fingerprint = g.get<GpuFingerprint>();
      g.at("last_seen").get_to(r.last_seen);
      known_gpus[r.identity().key()] = true;
      d.gpus.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    throw bad(fmt::format("bad \"gpus\" entry: {}", e.what()));
  }
  const auto& trials = j["trials"];
  // A trial's identity in the store (the unique index of schema 7): two entries with the same one
  // but other results would be answered one way by a replay and another by an import.
  std::map<std::string, size_t> identities;
  for (size_t i = 0; i < trials.size(); ++i) {
    StoredTrial st = read_export_trial(trials[i], i, known_gpus, bad);
    const auto& t = st.trial;
    const auto identity = trial_identity(st);
    const auto [first, fresh] = identities.emplace(identity, i);
    if (!fresh && trials[first->second] != trials[i]) {
      throw bad(fmt::format(
          "trials {} and {} are the same measurement of {} ({} {}, {}, seed {}, strategy '{}', "
          "phase {}, source {}) with different results; remove the wrong one (trials count from 0, "
          "one per line after the header in a file sgemm-tune wrote)",
          first->second, i, t.config_name, t.problem.shape(), t.problem.layout, t.timestamp, t.seed,
          t.strategy, to_string(t.phase), to_string(t.source)));
    }
    d.trials.push_back(std::move(st));
  }
  return d;
}

StoreDump read_export_file(const std::filesystem::path& file) {
  return parse_export(read_json_file(file, "import file"), file.string());
}

IngestResult SqliteStore::import_dump(const StoreDump& d) {
  impl_->require_writable("import");
  return ingest(d);
}

IngestResult SqliteStore::import_json(const nlohmann::json& j, std::string_view origin) {
  impl_->require_writable("import");
  return ingest(parse_export(j, origin));
}

IngestResult SqliteStore::ingest(const StoreDump& d) {
  impl_->require_writable("add trials");
  Transaction tx(impl_->conn, Transaction::Kind::write);
  auto r = ingest_in_transaction(d);
  tx.commit();
  return r;
}

IngestResult SqliteStore::ingest_in_transaction(const StoreDump& d) {
  IngestResult r;
  std::map<std::string, long long> gpu_ids;
  for (const auto& g : d.gpus) {
    const bool existed = impl_->gpu_id(g.identity()).has_value();
    gpu_ids[g.identity().key()] = impl_->upsert_gpu(g, true);
    if (!existed) ++r.gpus_added;
  }
  for (const auto& st : d.trials) {
    auto it = gpu_ids.find(st.gpu.key());
    if (it == gpu_ids.end()) {
      throw Error(fmt::format("trial {} refers to GPU {} which is not in the source",
                              st.trial.config_name, st.gpu.key()));
    }
    const auto in = impl_->insert_trial(it->second, st);
    auto& per_problem = r.problems[{st.trial.problem.shape(), st.trial.problem.layout}];
    if (in.added) {
      ++r.trials_added;
      ++per_problem.added;
    } else {
      ++r.trials_skipped;
      ++per_problem.skipped;
    }
    r.edge_checks_added += in.edge_checks;
  }
  return r;
}

IngestResult& IngestResult::operator+=(const IngestResult& o) {
  trials_added += o.trials_added;
  trials_skipped += o.trials_skipped;
  gpus_added += o.gpus_added;
  edge_checks_added += o.edge_checks_added;
  for (const auto& [key, n] : o.problems) {
    problems[key].added += n.added;
    problems[key].skipped += n.skipped;
  }
  return *this;
}

IngestResult SqliteStore::merge(const std::filesystem::path& other_db) {
  impl_->require_writable("merge");
  return ingest(read_merge_source(other_db));
}

std::vector<IngestResult> SqliteStore::merge(const std::vector<std::filesystem::path>& other_dbs) {
  impl_->require_writable("merge");
  std::vector<StoreDump> dumps;
  dumps.reserve(other_dbs.size());
  for (const auto& other : other_dbs) {
    try {
      dumps.push_back(read_merge_source(other));
    } catch (const Error& e) {
      throw InputError(fmt::format("{}; nothing was merged (of {} sources, {} read before it)",
                                   e.what(), other_dbs.size(), dumps.size()));
    }
  }
  std::vector<IngestResult> out;
  Transaction tx(impl_->conn, Transaction::Kind::write);
  for (const auto& d : dumps) out.push_back(ingest_in_transaction(d));
  tx.commit();
  return out;
}

StoreDump SqliteStore::read_merge_source(const std::filesystem::path& other_db) const {
  std::error_code ec;
  if (!std::filesystem::exists(other_db, ec)) {
    throw InputError(fmt::format("no database to merge at '{}'", other_db.string()));
  }
  if (std::filesystem::is_directory(other_db, ec)) {
    throw InputError(
        fmt::format("'{}' is a directory, not a tuning database to merge", other_db.string()));
  }
  if (std::filesystem::equivalent(other_db, path(), ec)) {
    throw InputError(fmt::format("cannot merge '{}' into itself", other_db.string()));
  }
  auto other = open(other_db, OpenMode::read_only, impl_->conn.busy_timeout_ms());
  return other.dump();
}

void SqliteStore::vacuum() {
  impl_->require_writable("vacuum");
  impl_->conn.exec_script("VACUUM");
  // Fold the WAL back into the file so its size on disk is the compacted size.
  impl_->conn.exec_script("PRAGMA wal_checkpoint(TRUNCATE)");
}

std::string SqliteStore::integrity_check() const {
  Stmt s(impl_->conn, "PRAGMA integrity_check");
  std::string out;
  while (s.step()) {
    if (!out.empty()) out += "\n";
    out += s.text(0);
  }
  return out;
}

DbInfo SqliteStore::info(bool check_integrity) const {
  DbInfo i;
  i.path = path();
  i.schema_version = read_user_version(impl_->conn);
  i.binary_schema_version = schema_version();
  {
    Stmt s(impl_->conn, "PRAGMA journal_mode");
    if (s.step()) i.journal_mode = s.text(0);
  }
  i.file_bytes = file_size_or_zero(path());
  i.wal_bytes = file_size_or_zero(path().string() + "-wal");
  // Table names cannot be bound; one constant statement per table.
  const std::pair<const char*, const char*> counts[] = {
      {"gpus", "SELECT count(*) FROM gpus"},
      {"problems", "SELECT count(*) FROM problems"},
      {"kernel_templates", "SELECT count(*) FROM kernel_templates"},
      {"configs", "SELECT count(*) FROM configs"},
      {"trials", "SELECT count(*) FROM trials"},
  };
  for (const auto& [table, sql] : counts) {
    Stmt s(impl_->conn, sql);
    s.step();
    i.rows.emplace_back(table, s.int64(0));
  }
  // A schema-1 file opened read-only has no such table: none stored.
  long long edge_checks = 0;
  if (impl_->edge_table) {
    Stmt s(impl_->conn, "SELECT count(*) FROM edge_checks");
    s.step();
    edge_checks = s.int64(0);
  }
  i.rows.emplace_back("edge_checks", edge_checks);
  if (check_integrity) i.integrity = integrity_check();
  return i;
}

}  // namespace sgt::db
