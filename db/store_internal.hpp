// Private to db/: the state behind SqliteStore and the row-level helpers its three source files
// (store, store_query, store_transfer) share.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sqlite.hpp"
#include "store.hpp"

namespace sgt::db {

// The export format (`db export --json`) of a dump, and back: parse_export validates every entry
// and throws InputError naming `origin` and the first bad one.
nlohmann::json export_dump_json(const StoreDump& d, int schema_version);
// A JSON file, plain or gzip; InputError naming `what` and the file when unreadable or not JSON.
nlohmann::json read_json_file(const std::filesystem::path& file, std::string_view what);
StoreDump parse_export(const nlohmann::json& j, std::string_view origin);

struct StoreImpl {
  StoreImpl(const std::filesystem::path& path, int flags, int busy_timeout_ms, OpenMode mode,
            std::string_view uri_query = {});

  Connection conn;
  OpenMode mode;
  // Built at open from the config columns the file has: SELECT <every trial column> FROM trials
  // JOIN gpus, problems, configs, kernel_templates (aliases t, g, p, c, k), no WHERE.
  std::string trial_select;
  std::vector<bool> config_present;
  // configs.family (schema 4): written with every new config row.
  bool family_present = false;
  // False only for a file of schema 1 opened read-only: it has no edge checks.
  bool edge_table = false;
  // trials.phase and trials.source (schema 7). False only for an older file opened read-only:
  // read_trial then takes them from the strategy, as those releases wrote them.
  bool roles_present = false;

  // State of the current tune, set by begin().
  std::optional<GpuFingerprint> run_gpu;
  std::optional<Problem> run_problem;
  long long run_gpu_id = 0;

  void prepare_sql();
  // Throws sgt::Error naming the file and `what` unless the store was opened read_write.
  void require_writable(std::string_view what) const;

  std::optional<long long> gpu_id(const GpuIdentity& id) const;
  std::optional<long long> problem_id(const Problem& p) const;
  // Inserts or refreshes the GPU's row; with only_if_newer, an existing row is refreshed only when
  // rec.last_seen is later than its own (merge/import), else always (a live begin()).
  long long upsert_gpu(const GpuRecord& rec, bool only_if_newer);
  long long upsert_problem(const Problem& p);
  long long upsert_config(const std::string& name, const WarpTileConfig& c);
  long long upsert_template(const std::string& name, const std::string& hash);
  struct Inserted {
    bool added = false;         // false: the same trial (unique identity) was already stored
    long long edge_checks = 0;  // edge checks written (a new trial's, or attached to the stored
                                // one when it had none)
  };
  // Inserts the trial and its edge checks (the caller holds the write transaction).
  Inserted insert_trial(long long gpu_id, const StoredTrial& st);

  // Reads one row of trial_select; edge checks are not part of the row (see load_trial).
  StoredTrial read_trial(const Stmt& s) const;
  // One trial with its edge checks.
  std::optional<StoredTrial> load_trial(long long id) const;
  std::vector<EdgeCheck> load_edge_checks(long long trial_id) const;
  // Every trial's edge checks, by trial id, in seq order.
  std::map<long long, std::vector<EdgeCheck>> load_all_edge_checks() const;
};

}  // namespace sgt::db
