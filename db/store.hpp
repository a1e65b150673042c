// The SQLite tuning cache: every trial of every tune, keyed by GPU, problem, config and kernel
// source; winners derived from them, nearest-shape fallback, export/import/merge.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config.hpp"
#include "family.hpp"
#include "kernel_source.hpp"
#include "problem.hpp"
#include "trial.hpp"

namespace sgt::db {

// Defined in store_internal.hpp; opaque outside db/.
struct StoreImpl;
// Served when nothing is tuned for the GPU (or no tuned shape exists): the seed config, kernel 8 of
// the warp-tiling SGEMM tutorial. It is valid on every supported GPU; it is not tuned for any.
inline constexpr std::string_view kDefaultConfigName = "wt_128x64x16_w64x32_wn2_t4x4_n128_mb1";

// $SGT_DB if set, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, else
// $HOME/.cache/sgemm-tune/tuning.db. Throws sgt::Error when none of the three is set.
std::filesystem::path default_db_path();
// $SGT_DB_BUSY_TIMEOUT_MS if set (milliseconds), else 10000: how long a write waits for another
// process's write lock before failing.
int default_busy_timeout_ms();

enum class OpenMode { read_only, read_write };

// What makes two GPUs "the same" for tuning results. Driver, runtime, NVRTC and UUID are not part
// of it: the latest seen are kept on the GPU's row, and each trial keeps its own driver/NVRTC.
struct GpuIdentity {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;

  static GpuIdentity of(const GpuFingerprint& g);
  std::string key() const;    // "NVIDIA H200@sm_90/132": unambiguous, accepted by `query --gpu`
  std::string label() const;  // "NVIDIA H200 (sm_90, 132 SMs)"
  friend bool operator==(const GpuIdentity&, const GpuIdentity&) = default;
};

struct GpuRecord {
  GpuFingerprint fingerprint;  // the latest seen
  std::string last_seen;       // ISO 8601 UTC of the latest begin() (or of the merged source)
  long long trials = 0;
  GpuIdentity identity() const { return GpuIdentity::of(fingerprint); }
};

// For error messages after "known GPUs:": each GPU on a line of its own (every line begins with
// the newline), "\n  <label>  (--gpu '<key>')"; " (none)" when `gpus` is empty.
std::string describe_gpus(const std::vector<GpuRecord>& gpus);

struct ShapeRecord {
  Problem problem;
  long long trials = 0;
  long long gpus = 0;  // GPUs with at least one trial of this problem
};

// A trial as stored: the Trial itself plus what the store keeps around it.
struct StoredTrial {
  long long id = 0;  // row id in this database (not stable across export/import)
  GpuIdentity gpu;
  Trial trial;
  int driver_version = 0;  // of the run that measured the trial
  int nvrtc_major = 0;
};

// What "fresh" means for a query. A trial is stale when its kernel hash, driver major
// (driver_version / 1000) or NVRTC major differs from the reference; stale trials are kept but
// not served unless allowed.
struct Reference {
  // Family id -> that family's current source hash, for every registered family (the registry is
  // the only list): a trial is fresh when its hash is the current hash of its config's family.
  std::map<std::string, std::string> family_hashes = current_family_hashes();
  std::optional<int> driver_major;  // unset: the GPU's latest fingerprint in the database
  std::optional<int> nvrtc_major;   // unset: likewise
};

struct StaleCounts {
  long long total = 0;  // stale ok trials (one trial may be stale for several reasons)
  long long kernel_hash = 0, driver = 0, nvrtc = 0;
};

struct QueryOptions {
  bool allow_stale = false;
  // Only trials of the families this class admits (precision.hpp): a strict (fp32) query never
  // returns a split-TF32 winner.
  Precision precision = Precision::fp32;
  std::string kernel_template = std::string(kKernelTemplateName);
  Reference reference;
};

// The best ok trial of one GPU x problem x kernel template: one that passed the edge-shape suite
// before any that was not verified, then the lowest median. Derived from trials on every call,
// never stored, so merges and new trials change it with nothing to recompute.
struct Winner {
  StoredTrial best;
  bool stale = false;       // only ever true when stale trials were allowed
  long long ok_trials = 0;  // ok trials it was chosen from
  // cuBLAS median / winner median (above 1: faster than cuBLAS); 0 when unknown.
  double ratio() const;
};

enum class Source { exact, nearest, default_config };
std::string_view to_string(Source s);

// log2 distance between shapes: sqrt(sum over M, N, K of log2(a/b)^2). Doubling one dimension is 1.
double shape_distance(const Problem& a, const Problem& b);

struct QueryResult {
  Source source = Source::default_config;
  GpuIdentity gpu;
  Problem requested;
  Problem served;       // the tuned shape whose winner is served (requested, for exact/default)
  double distance = 0;  // shape_distance(requested, served)
  std::string config_name;
  WarpTileConfig config;
  std::optional<Winner> winner;  // empty for default_config
  // Stale ok trials skipped: of the requested shape when served exactly, else of every shape of
  // this GPU, layout and dtype (all of them were candidates).
  StaleCounts stale_skipped;
  // Shape rules the served config breaks for the requested shape (a nearest or default config
  // need not divide it).
  std::vector<RuleViolation> shape_violations;
  // Nearer winners passed over because they cannot run the requested shape, nearest first.
  struct Skipped {
    std::string config_name;
    Problem served;  // the tuned shape it won
    double distance = 0;
    std::vector<RuleViolation> violations;
  };
  std::vector<Skipped> skipped;
};

struct IngestResult {
  long long trials_added = 0;
  long long trials_skipped = 0;  // already present (same GPU, problem, config, kernel, time, seed)
  long long gpus_added = 0;
  // Edge checks written: those of added trials, and those of already present trials that had none
  // (a present trial's stored checks are never replaced, so ingesting twice adds nothing).
  long long edge_checks_added = 0;
  // The trials of each problem (shape, layout), added and already present: what a source brought.
  struct ProblemCounts {
    long long added = 0, skipped = 0;
  };
  std::map<std::pair<std::string, std::string>, ProblemCounts> problems;

  IngestResult& operator+=(const IngestResult& o);
};

struct DbInfo {
  std::filesystem::path path;
  int schema_version = 0;
  int binary_schema_version = 0;
  std::string journal_mode;
  long long file_bytes = 0, wal_bytes = 0;
  std::vector<std::pair<std::string, long long>> rows;  // table, row count
  std::optional<std::string> integrity;                 // PRAGMA integrity_check, when asked
};

// JSON forms for scripts (`--json` output).
void to_json(nlohmann::json& j, const GpuIdentity& g);  // fields plus "key" and "label"
void to_json(nlohmann::json& j, const GpuRecord& g);
void to_json(nlohmann::json& j, const ShapeRecord& s);
void to_json(nlohmann::json& j, const StaleCounts& s);
void to_json(nlohmann::json& j, const Winner& w);
void to_json(nlohmann::json& j, const QueryResult& r);
void to_json(nlohmann::json& j, const IngestResult& r);
void to_json(nlohmann::json& j, const DbInfo& i);

// One connection; use a SqliteStore from one thread at a time (processes may share the file).
// Every GPU and trial of a database, or of an export file.
struct StoreDump {
  std::vector<GpuRecord> gpus;
  std::vector<StoredTrial> trials;
};

// Reads and validates an export file (plain or gzip) without opening any database: the whole
// dump, or sgt::InputError naming the file, the trial and its first bad field.
StoreDump read_export_file(const std::filesystem::path& file);

class SqliteStore final : public TrialStore {
 public:
  // The newest schema version this binary knows.
  static int schema_version();

  // read_write creates the file and its parent directories if needed, converts it to WAL and
  // migrates it. read_only never creates or writes; the file must exist. Either refuses (with
  // sgt::Error, before writing anything) a newer schema, another program's database, a damaged
  // file, or (read_write) a file it can only read.
  static SqliteStore open(const std::filesystem::path& path, OpenMode mode,
                          int busy_timeout_ms = default_busy_timeout_ms());

  SqliteStore(SqliteStore&&) noexcept;
  SqliteStore& operator=(SqliteStore&&) noexcept;
  ~SqliteStore() override;

  const std::filesystem::path& path() const;
  OpenMode mode() const;

  // --- TrialStore: what a tune uses ---
  // Registers (or refreshes: uuid, driver, runtime, NVRTC, clocks) the GPU and registers the
  // problem. Required before finished() and record().
  void begin(const GpuFingerprint& gpu, const Problem& problem) override;
  // TrialStore::screening_order(), under the driver and NVRTC majors finished() serves.
  std::vector<Trial> screening_order() override;
  // The latest stored trial of this GPU, problem, config and kernel hash that was measured under
  // the same driver major and NVRTC major as the GPU passed to begin(), whatever its status. A
  // trial from another driver/NVRTC major is not served, so a resumed tune measures it again.
  std::optional<Trial> finished(const std::string& config_name,
                                const std::string& kernel_hash) override;
  // One transaction per trial, committed (synchronous=FULL) before returning. Uses trial.problem,
  // the GPU from begin(), and to_name(trial.config) when config_name is empty. Recording the same
  // trial again (same GPU, problem, config, kernel, timestamp, seed, strategy) is a no-op.
  void record(const Trial& trial) override;

  // --- Reading ---
  std::vector<GpuRecord> gpus() const;
  std::optional<GpuRecord> gpu(const GpuIdentity& id) const;
  // GPUs whose name equals `name_or_key` ignoring case, or whose key() equals it exactly; failing
  // that, those whose name contains it ignoring case (match_gpu_names).
  std::vector<GpuRecord> find_gpus(std::string_view name_or_key) const;
  std::vector<ShapeRecord> shapes() const;
  // Every trial in insertion order.
  std::vector<StoredTrial> trials() const;

  // The best fresh (or, when allowed, any) ok trial for exactly this GPU and problem.
  std::optional<Winner> winner(const GpuIdentity& gpu, const Problem& problem,
                               const QueryOptions& opts = {}) const;
  // Winners of every GPU x problem x kernel template, ordered by GPU, shape, template.
  std::vector<Winner> winners(bool allow_stale = false,
                              Precision precision = Precision::fp32) const;
  // Stale ok trials of this GPU and template; of one problem, or of all problems when unset.
  StaleCounts stale_trials(const GpuIdentity& gpu, const std::optional<Problem>& problem,
                           const QueryOptions& opts = {}) const;
  // exact winner -> winner of the nearest tuned shape (same layout and dtype) ->
  // kDefaultConfigName.
  QueryResult query(const GpuIdentity& gpu, const Problem& problem,
                    const QueryOptions& opts = {}) const;

  // --- Maintenance ---
  // Every GPU and trial (with its edge checks) as JSON (format "sgemm-tune-trials", version 1;
  // "edge_checks" is an optional trial key, so older sgemm-tune versions still read the file).
  nlohmann::json export_json() const;
  // Writes export_json() to `file` through a temporary file and a rename: never half a file.
  // Returns the number of trials written.
  long long export_json(const std::filesystem::path& file) const;
  // Validates the whole file first (sgt::InputError naming the file and trial), then adds it in one
  // transaction. Trials already present are skipped, so importing twice changes nothing.
  IngestResult import_json(const std::filesystem::path& file);
  IngestResult import_json(const nlohmann::json& j, std::string_view origin);
  // Adds a dump read by read_export_file(), as import_json does.
  IngestResult import_dump(const StoreDump& d);
  // Adds every trial of another tuning database (opened read-only), skipping those already
  // present. A GPU's fingerprint is taken from the other database when it was seen there later.
  IngestResult merge(const std::filesystem::path& other_db);
  // Merges several databases all or nothing: every source is opened and read before any trial is
  // added (a missing, damaged or non-database source adds nothing from any), and the trials go in
  // in one transaction. Returns one result per source, in order.
  std::vector<IngestResult> merge(const std::vector<std::filesystem::path>& other_dbs);
  // Checkpoints the WAL and rebuilds the file compactly.
  void vacuum();
  DbInfo info(bool check_integrity = false) const;
  // PRAGMA integrity_check: "ok", or SQLite's report.
  std::string integrity_check() const;

 private:
  explicit SqliteStore(std::unique_ptr<StoreImpl> impl);
  StoreDump dump() const;
  IngestResult ingest(const StoreDump& d);
  // ingest() inside a transaction the caller holds.
  IngestResult ingest_in_transaction(const StoreDump& d);
  // A source of merge(), checked and read whole.
  StoreDump read_merge_source(const std::filesystem::path& other_db) const;
  std::unique_ptr<StoreImpl> impl_;
};

}  // namespace sgt::db
