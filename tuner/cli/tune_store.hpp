// The store a tune writes through: the SQLite tuning cache at --db (default under the user's
// cache directory).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "trial.hpp"

namespace sgt::cli {

void add_db_option(CLI::App& sub, std::string& db);
std::unique_ptr<TrialStore> open_tune_store(const std::string& db);

// --gpu: "auto" -> -1, else a device index >= 0; InputError naming the text otherwise.
int parse_gpu(const std::string& s);

}  // namespace sgt::cli
