// `sgemm-tune tune`: placeholder until the GPU side lands.
#include "commands.hpp"
#include "error.hpp"

namespace sgt::cli {
void register_tune(CLI::App& app) {
  auto* sub = app.add_subcommand("tune", "Tune a search space on the GPU");
  sub->allow_extras();
  sub->callback([] { throw Error("tune: the GPU side is not built yet"); });
}
void register_worker(CLI::App&) {}
}  // namespace sgt::cli
