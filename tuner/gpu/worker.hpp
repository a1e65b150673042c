// Entry point of the GPU worker process (the hidden `__worker` subcommand).
#pragma once

namespace sgt::gpu {

// Serves the worker protocol on stdin/stdout until EOF or "bye"; returns the exit code.
int run_worker();

}  // namespace sgt::gpu
