// The store a tune writes through: the SQLite tuning cache at --db (default under the user's
// cache directory).
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "gpu_select.hpp"
#include "problem.hpp"
#include "space.hpp"
#include "trial.hpp"

namespace sgt::cli {

void add_db_option(CLI::App& sub, std::string& db);
// --gpu: for the commands that run on one GPU, parse it with parse_gpu. With `several` (tune,
// bench: what the command does on a GPU set, after "or several GPUs of one model, 'all' or device
// indices '0,2,3':"), also 'all' or a list of indices, parsed with parse_gpu_set.
void add_gpu_option(CLI::App& sub, std::string& gpu, const std::string& several = "");
void add_cache_dir_option(CLI::App& sub, std::string& cache_dir);
// --precision (precision.hpp): the class of kernels a command tunes, serves, lists or exports;
// `what` says what it selects for this command. parse_precision_option: InputError otherwise.
void add_precision_option(CLI::App& sub, std::string& precision, const std::string& what);
Precision parse_precision_option(const std::string& s);
std::unique_ptr<TrialStore> open_tune_store(const std::string& db);

// --gpu (gpu_select.hpp): InputError naming the text when it is empty or a negative index.
GpuSelector parse_gpu(const std::string& s);

// A suite entry with its search space resolved: the entry's own, else the command's --space.
struct PlannedShape {
  Problem problem;
  std::string space_arg;   // the file or built-in name, as the suite or --space gave it
  std::string space_name;  // the space's own name
  Enumeration enumeration;
  Precision precision = Precision::fp32;  // the class the enumeration admitted
};

// Loads each distinct space of the suite once and enumerates it for every entry that uses it; a
// union of spaces ("default+tma", split_space_union) enumerates as one (merge_enumerations).
// Throws InputError for a space that cannot be loaded, naming the suite file (`origin`, when
// there is one) and the shape that asked for it.
std::vector<PlannedShape> plan_suite(const std::vector<SuiteEntry>& entries,
                                     const std::string& default_space,
                                     const std::string& origin = "",
                                     Precision precision = Precision::fp32);

}  // namespace sgt::cli
