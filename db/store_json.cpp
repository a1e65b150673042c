// JSON forms of what the store reports, for the CLI's --json output and for scripts.
#include <nlohmann/json.hpp>

#include "store.hpp"

namespace sgt::db {

void to_json(nlohmann::json& j, const GpuIdentity& g) {
  j = {{"name", g.name},         {"cc_major", g.cc_major}, {"cc_minor", g.cc_minor},
       {"sm_count", g.sm_count}, {"key", g.key()},         {"label", g.label()}};
}

void to_json(nlohmann::json& j, const GpuRecord& g) {
  j = {{"identity", g.identity()},
       {"fingerprint", g.fingerprint},
       {"last_seen", g.last_seen},
       {"trials", g.trials}};
}

void to_json(nlohmann::json& j, const ShapeRecord& s) {
  j = {
      {"problem", s.problem}, {"shape", s.problem.shape()}, {"trials", s.trials}, {"gpus", s.gpus}};
}

void to_json(nlohmann::json& j, const StaleCounts& s) {
  j = {
      {"total", s.total}, {"kernel_hash", s.kernel_hash}, {"driver", s.driver}, {"nvrtc", s.nvrtc}};
}

void to_json(nlohmann::json& j, const Winner& w) {
  j = {{"gpu", w.best.gpu},
       {"shape", w.best.trial.problem.shape()},
       {"config_name", w.best.trial.config_name},
       {"median_ms", w.best.trial.time.median_ms},
       {"gflops", w.best.trial.gflops},
       {"cublas_median_ms", w.best.trial.cublas_median_ms},
       // cuBLAS time / winner time, as bench and tune name it (0 when cuBLAS was not timed).
       {"ratio", w.ratio()},
       {"stale", w.stale},
       {"ok_trials", w.ok_trials},
       {"driver_version", w.best.driver_version},
       {"nvrtc_major", w.best.nvrtc_major},
       {"edge_check_summary", edge_check_tally_json(w.best.trial.edge_checks)},
       {"trial", w.best.trial}};
  // A kernel of a non-strict precision class: its error against FP64 over cuBLAS FP32's.
  if (w.best.trial.error_ratio) j["error_ratio"] = *w.best.trial.error_ratio;
}

void to_json(nlohmann::json& j, const QueryResult& r) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.shape_violations) {
    violations.push_back({{"rule", v.rule}, {"reason", v.reason}});
  }
  j = {{"source", to_string(r.source)},
       {"config_name", r.config_name},
       {"config", r.config},
       {"gpu", r.gpu},
       {"requested", r.requested},
       {"served", r.served},
       {"distance", r.distance},
       {"stale_skipped", r.stale_skipped},
       {"shape_violations", violations},
       {"winner", r.winner ? nlohmann::json(*r.winner) : nlohmann::json(nullptr)}};
  // The served winner's verification on edge shapes: the tally and every check (empty for the
  // default config and for trials recorded before edge checks existed).
  const std::vector<EdgeCheck> none;
  const auto& checks = r.winner ? r.winner->best.trial.edge_checks : none;
  j["edge_checks"] = checks;
  j["edge_check_summary"] = edge_check_tally_json(checks);
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& k : r.skipped) {
    nlohmann::json why = nlohmann::json::array();
    for (const auto& v : k.violations) why.push_back({{"rule", v.rule}, {"reason", v.reason}});
    skipped.push_back({{"config_name", k.config_name},
                       {"served", k.served},
                       {"distance", k.distance},
                       {"shape_violations", why}});
  }
  j["skipped"] = skipped;
}

void to_json(nlohmann::json& j, const IngestResult& r) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& [key, n] : r.problems) {
    problems.push_back({{"shape", key.first},
                        {"layout", key.second},
                        {"trials_added", n.added},
                        {"trials_skipped", n.skipped}});
  }
  j = {{"trials_added", r.trials_added},
       {"trials_skipped", r.trials_skipped},
       {"gpus_added", r.gpus_added},
       {"edge_checks_added", r.edge_checks_added},
       {"problems", problems}};
}

void to_json(nlohmann::json& j, const DbInfo& i) {
  nlohmann::json rows = nlohmann::json::object();
  for (const auto& [table, n] : i.rows) rows[table] = n;
  j = {{"path", i.path.string()},
       {"schema_version", i.schema_version},
       {"binary_schema_version", i.binary_schema_version},
       {"journal_mode", i.journal_mode},
       {"file_bytes", i.file_bytes},
       {"wal_bytes", i.wal_bytes},
       {"rows", rows}};
  if (i.integrity) j["integrity"] = *i.integrity;
}

}  // namespace sgt::db
