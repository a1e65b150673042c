// One registration function per subcommand; main calls them all. Each subcommand lives in its own
// file and only calls the library.
#pragma once

#include <CLI/CLI.hpp>

namespace sgt::cli {

void register_space(CLI::App& app);
void register_check(CLI::App& app);
void register_tune(CLI::App& app);
void register_bench(CLI::App& app);
void register_compile(CLI::App& app);
void register_worker(CLI::App& app);
void register_query(CLI::App&);
void register_list(CLI::App&);
void register_db(CLI::App&);
void register_export(CLI::App& app);
void register_dataset(CLI::App& app);
void register_strategy_bench(CLI::App& app);

}  // namespace sgt::cli
