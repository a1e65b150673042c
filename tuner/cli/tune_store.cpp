// The tune command's store: the SQLite tuning cache, opened for writing.
#include "tune_store.hpp"

#include <exception>
#include <map>

#include <fmt/format.h>

#include "error.hpp"
#include "store.hpp"

namespace sgt::cli {

void add_db_option(CLI::App& sub, std::string& db) {
  sub.add_option("--db", db,
                 "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                 "else ~/.cache/sgemm-tune/tuning.db)");
}

void add_gpu_option(CLI::App& sub, std::string& gpu, const std::string& several) {
  const std::string one =
      "'auto' (most SMs x clock), a device index, or a name (the device's name, "
      "case-insensitive, or a part of it that names one device: 'h200')";
  sub.add_option("--gpu", gpu,
                 several.empty() ? "Which GPU: " + one
                                 : "Which GPUs: " + one +
                                       "; or several GPUs of one model, 'all' or device indices "
                                       "'0,2,3': " +
                                       several)
      ->capture_default_str();
}

void add_cache_dir_option(CLI::App& sub, std::string& cache_dir) {
  sub.add_option("--cache-dir", cache_dir,
                 "Compiled-kernel cache (default: $SGT_CACHE_DIR, else the user cache dir)");
}

void add_precision_option(CLI::App& sub, std::string& precision, const std::string& what) {
  sub.add_option("--precision", precision,
                 "Precision class: fp32 (the default: FFMA kernels, numerically what cuBLAS FP32 "
                 "pedantic computes) or fp32-accurate (also kernels whose error against FP64 was "
                 "measured no worse than cuBLAS FP32's, such as split-TF32 on the tensor cores); " +
                     what)
      ->check(CLI::IsMember({"fp32", "fp32-accurate"}))
      ->capture_default_str();
}

Precision parse_precision_option(const std::string& s) {
  if (auto p = parse_precision(s)) return *p;
  throw InputError(fmt::format("--precision '{}': expected fp32 or fp32-accurate", s));
}

std::unique_ptr<TrialStore> open_tune_store(const std::string& db) {
  const auto path = db.empty() ? db::default_db_path() : std::filesystem::path(db);
  return std::make_unique<db::SqliteStore>(db::SqliteStore::open(path, db::OpenMode::read_write));
}

GpuSelector parse_gpu(const std::string& s) {
  return parse_gpu_selector(s);
}

std::vector<PlannedShape> plan_suite(const std::vector<SuiteEntry>& entries,
                                     const std::string& default_space, const std::string& origin,
                                     Precision precision) {
  std::map<std::string, SearchSpace> loaded;
  std::vector<PlannedShape> out;
  for (const auto& e : entries) {
    const std::string& arg = e.space.empty() ? default_space : e.space;
    // A union ("default+tma") tunes the survivors of every part.
    std::vector<std::pair<std::string, Enumeration>> parts;
    std::string name;
    try {
      for (const auto& part : split_space_union(arg)) {
        auto it = loaded.find(part);
        if (it == loaded.end()) it = loaded.emplace(part, load_space(part)).first;
        parts.emplace_back(it->second.name, enumerate(it->second, e.problem, precision));
        name += (name.empty() ? "" : "+") + it->second.name;
      }
    } catch (const InputError& err) {
      if (e.space.empty()) throw;
      throw InputError(fmt::format("{}{}shape {} {}: {}", origin, origin.empty() ? "" : ": ",
                                   e.problem.shape(), e.problem.layout, err.what()));
    }
    out.push_back({e.problem, arg, name,
                   parts.size() == 1 ? std::move(parts[0].second) : merge_enumerations(parts),
                   precision});
  }
  return out;
}

}  // namespace sgt::cli
