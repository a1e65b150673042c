// The tune command's store: the SQLite tuning cache, opened for writing.
#include "tune_store.hpp"

#include "store.hpp"

namespace sgt::cli {

void add_db_option(CLI::App& sub, std::string& db) {
  sub.add_option("--db", db,
                 "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, "
                 "else ~/.cache/sgemm-tune/tuning.db)");
}

std::unique_ptr<TrialStore> open_tune_store(const std::string& db) {
  const auto path = db.empty() ? db::default_db_path() : std::filesystem::path(db);
  return std::make_unique<db::SqliteStore>(db::SqliteStore::open(path, db::OpenMode::read_write));
}

}  // namespace sgt::cli
