// One registration function per subcommand; main calls them all. Each subcommand lives in its own
// file and only calls the library.
#pragma once

#include <cstddef>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "problem.hpp"

namespace sgt::cli {

// --shape checked as it is parsed: "MxNxK" with sizes of at least 1, else parse_shape's message
// (bad input, exit 2), so an empty or malformed shape never reaches a command.
inline CLI::Validator shape_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)parse_shape(text);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "MxNxK");
}

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
void register_capture(CLI::App& app);
void register_serve(CLI::App& app);

// The largest count a counting option takes (--max-evals, --patience): far beyond any space.
inline constexpr std::size_t kMaxCount = 1'000'000'000;

// Refuses, for every whole-number option of `app` and its subcommands, a negative value where the
// option is unsigned and a number too large for 64 bits (CLI11 would wrap or clamp them). Call
// once every command is registered.
void refuse_wrapping_numbers(CLI::App& app);

}  // namespace sgt::cli
