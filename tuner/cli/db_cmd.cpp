// `sgemm-tune db ...`: maintenance of the tuning database: export, import, merge, vacuum, info.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "json_output.hpp"
#include "error.hpp"
#include "file_util.hpp"
#include "store.hpp"

namespace sgt::cli {

namespace {

constexpr const char* kDbHelp =
    "Tuning database (default: $SGT_DB, else $XDG_CACHE_HOME/sgemm-tune/tuning.db, else "
    "~/.cache/sgemm-tune/tuning.db)";

std::filesystem::path db_path(const std::string& opt) {
  return opt.empty() ? db::default_db_path() : std::filesystem::path(opt);
}

// Writing commands other than import/merge have nothing to do on a database that does not exist;
// opening one read-write would create it.
void require_exists(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) {
    throw Error(
        fmt::format("no tuning database at '{}' (nothing tuned yet? run `sgemm-tune "
                    "tune`, or point --db / SGT_DB at one)",
                    p.string()));
  }
}

void print_ingest(const char* verb, const std::string& from, const db::IngestResult& r,
                  const std::filesystem::path& into, bool json) {
  if (json) {
    nlohmann::json j = r;
    j["from"] = from;
    j["database"] = into.string();
    print_json(std::move(j));
    return;
  }
  fmt::print("{} {} into {}: {} trial{} added, {} already present, {} new GPU{}{}\n", verb, from,
             into.string(), r.trials_added, r.trials_added == 1 ? "" : "s", r.trials_skipped,
             r.gpus_added, r.gpus_added == 1 ? "" : "s",
             r.edge_checks_added > 0 ? fmt::format(", {} edge check{} added", r.edge_checks_added,
                                                   r.edge_checks_added == 1 ? "" : "s")
                                     : "");
}

// Each problem's trials, as a source brought them: "  1024x1024x1024 NN: 12 added, 3 already
// present".
void print_problems(const db::IngestResult& r) {
  for (const auto& [key, n] : r.problems) {
    fmt::print("  {} {}: {} added, {} already present\n", terminal_safe(key.first),
               terminal_safe(key.second), n.added, n.skipped);
  }
}

// What `db merge` did, source by source and in all; with one source, the line `db import`
// prints and the same JSON object (with "sources" beside it).
void print_merge(const std::vector<std::pair<std::string, db::IngestResult>>& per_source,
                 const db::IngestResult& total, const std::filesystem::path& into, bool json) {
  if (json) {
    nlohmann::json j = total;
    j["database"] = into.string();
    if (per_source.size() == 1) j["from"] = per_source.front().first;
    auto& sj = j["sources"] = nlohmann::json::array();
    for (const auto& [from, r] : per_source) {
      nlohmann::json one = r;
      one["from"] = from;
      sj.push_back(std::move(one));
    }
    print_json(std::move(j));
    return;
  }
  for (const auto& [from, r] : per_source) {
    print_ingest("merged", from, r, into, false);
    print_problems(r);
  }
  if (per_source.size() > 1) {
    fmt::print(
        "in all, from {} databases: {} trials added, {} already present, {} new GPU{}, {} "
        "problem{}\n",
        per_source.size(), total.trials_added, total.trials_skipped, total.gpus_added,
        total.gpus_added == 1 ? "" : "s", total.problems.size(),
        total.problems.size() == 1 ? "" : "s");
  }
}

// One function per `db` subcommand: its options and what it runs.

void add_db_export(CLI::App& dbc) {
  struct Opts {
    std::string db, file;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dbc.add_subcommand("export", "Write every GPU and trial to a JSON file");
  sub->add_option("--json", o->file, "Output file ('-' for stdout); replaced atomically")
      ->required();
  sub->add_option("--db", o->db, std::string(kDbHelp) + ". Opened read-only");
  sub->callback([o] {
    const auto path = db_path(o->db);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
    if (o->file == "-") {
      std::puts(store.export_json().dump(2).c_str());
      return;
    }
    const auto n = store.export_json(std::filesystem::path(o->file));
    fmt::print("exported {} trial{} from {} to {}\n", n, n == 1 ? "" : "s", path.string(), o->file);
  });
}

void add_db_import(CLI::App& dbc) {
  struct Opts {
    std::string db, file;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub =
      dbc.add_subcommand("import",
                         "Add the trials of a JSON export; trials already present are skipped, so "
                         "importing twice changes nothing. A bad file imports nothing");
  sub->add_option("FILE", o->file, "JSON file written by `db export`")->required();
  sub->add_option("--db", o->db, std::string(kDbHelp) + ". Created if missing");
  sub->add_flag("--json", o->json, "Machine-readable summary on stdout");
  sub->callback([o] {
    const auto path = db_path(o->db);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(o->file, ec)) {
      throw InputError(fmt::format("cannot read import file '{}'", o->file));
    }
    // The whole file is read and checked before the database is opened: a bad file leaves no
    // trace, not even a new empty database.
    const auto dump = db::read_export_file(o->file);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    print_ingest("imported", o->file, store.import_dump(dump), path, o->json);
  });
}

void add_db_merge(CLI::App& dbc) {
  struct Opts {
    std::string db;
    std::vector<std::string> others;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dbc.add_subcommand(
      "merge",
      "Add every trial of other tuning databases (read, never modified), e.g. the shards of a\n"
      "`tune --shard` run, all or nothing: every source is read before any trial is added, so a\n"
      "missing or damaged source leaves the database as it was. Trials already present (same "
      "GPU, problem, config, kernel hash,\n"
      "timestamp, seed, strategy) are skipped: merging twice changes nothing. Winners are "
      "derived, so\n"
      "they follow. Prints, per source, the trials added and already present, problem by\n"
      "problem, and the totals");
  sub->add_option("OTHER", o->others, "The other tuning databases, merged in this order")
      ->required();
  sub->add_option("--db", o->db, std::string(kDbHelp) + ". Created if missing");
  sub->add_flag("--json", o->json,
                "Machine-readable summary on stdout: the totals, and \"sources\" with each "
                "source's");
  sub->callback([o] {
    const auto path = db_path(o->db);
    // Every source is there before any is merged: a missing shard merges nothing.
    std::error_code ec;
    for (const auto& other : o->others) {
      if (!std::filesystem::exists(other, ec)) {
        throw InputError(fmt::format("no database to merge at '{}'", other));
      }
    }
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    // All or nothing: a damaged source in the middle adds nothing from the ones before it.
    const auto results =
        store.merge(std::vector<std::filesystem::path>(o->others.begin(), o->others.end()));
    std::vector<std::pair<std::string, db::IngestResult>> per_source;
    db::IngestResult total;
    for (size_t i = 0; i < results.size(); ++i) {
      per_source.emplace_back(o->others[i], results[i]);
      total += results[i];
    }
    print_merge(per_source, total, path, o->json);
  });
}

void add_db_vacuum(CLI::App& dbc) {
  struct Opts {
    std::string db;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dbc.add_subcommand(
      "vacuum", "Compact the file (and upgrade an older schema); keeps every trial");
  sub->add_option("--db", o->db, kDbHelp);
  sub->add_flag("--json", o->json, "Machine-readable summary on stdout");
  sub->callback([o] {
    const auto path = db_path(o->db);
    require_exists(path);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_write);
    const auto before = store.info();
    store.vacuum();
    const auto after = store.info();
    if (o->json) {
      print_json({{"database", path.string()},
                  {"bytes_before", before.file_bytes + before.wal_bytes},
                  {"bytes_after", after.file_bytes + after.wal_bytes}});
      return;
    }
    fmt::print("vacuumed {}: {} -> {} bytes\n", path.string(), before.file_bytes + before.wal_bytes,
               after.file_bytes + after.wal_bytes);
  });
}

void add_db_info(CLI::App& dbc) {
  struct Opts {
    std::string db;
    bool json = false, check = false;
  };
  auto o = std::make_shared<Opts>();
  auto* sub = dbc.add_subcommand(
      "info", "Schema version, row counts (trials, winners' edge checks, ...) and file size");
  sub->add_option("--db", o->db, std::string(kDbHelp) + ". Opened read-only");
  sub->add_flag("--check", o->check, "Also run PRAGMA integrity_check (reads the whole file)");
  sub->add_flag("--json", o->json, "Machine-readable output on stdout");
  sub->callback([o] {
    const auto path = db_path(o->db);
    auto store = db::SqliteStore::open(path, db::OpenMode::read_only);
    const auto info = store.info(o->check);
    if (o->json) {
      print_json(nlohmann::json(info));
    } else {
      fmt::print("database        {}\n", info.path.string());
      fmt::print("schema version  {} (this sgemm-tune knows {})\n", info.schema_version,
                 info.binary_schema_version);
      fmt::print("journal mode    {}\n", info.journal_mode);
      fmt::print("size            {} bytes (+ {} bytes of WAL)\n", info.file_bytes, info.wal_bytes);
      for (const auto& [table, n] : info.rows) fmt::print("{:<15} {} rows\n", table, n);
      if (info.integrity) fmt::print("integrity       {}\n", *info.integrity);
    }
    if (info.integrity && *info.integrity != "ok") {
      throw Error(fmt::format("integrity check of '{}' failed", path.string()));
    }
  });
}

}  // namespace

void register_db(CLI::App& app) {
  auto* dbc = app.add_subcommand("db",
                                 "Maintain the tuning database: export, import, merge, "
                                 "vacuum, info");
  dbc->require_subcommand(1);
  dbc->footer(
      "The busy timeout (how long a write waits for another process's lock) is "
      "$SGT_DB_BUSY_TIMEOUT_MS, default 10000 ms.");
  add_db_export(*dbc);
  add_db_import(*dbc);
  add_db_merge(*dbc);
  add_db_vacuum(*dbc);
  add_db_info(*dbc);
}

}  // namespace sgt::cli
