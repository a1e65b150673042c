// Running helper programs from the CLI: the Python that draws plots, and the plot scripts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sgt::cli {

std::filesystem::path self_exe();

// Runs argv (argv[0] looked up on PATH), its stdout and stderr going to ours unless quiet (a
// script's chatter goes to stderr: our stdout carries results only). The exit status, or -1 when
// it could not be started (errno_out tells why).
int run_program(const std::vector<std::string>& args, bool quiet, int* errno_out = nullptr);

// The Python that draws the plot: $SGT_PYTHON when set, else the first of `python3` on PATH and
// the system's /usr/bin/python3 that can import matplotlib. nullopt, with why, when none can.
std::optional<std::string> find_python(std::string& why);

// A plot script (e.g. plot_bench.py): `given` (--plot-script) when set, else beside the installed
// binary (<prefix>/share/sgemm-tune/NAME), else tools/NAME in the source tree it was built from.
std::filesystem::path find_plot_script(const std::string& given, const std::string& name);

}  // namespace sgt::cli
