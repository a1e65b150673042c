// The datasets shipped with the tool (see recordings.hpp).
#include "recordings.hpp"

#include <algorithm>

#include "plot_util.hpp"

namespace sgt::cli {

namespace fs = std::filesystem;

std::vector<fs::path> shipped_datasets() {
  std::vector<fs::path> roots = {self_exe().parent_path().parent_path() / "share" / "sgemm-tune" /
                                 "datasets"};
#ifdef SGT_SOURCE_DIR
  roots.push_back(fs::path(SGT_SOURCE_DIR) / "datasets");
#endif
  std::vector<fs::path> out;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
      if (e.is_regular_file() && e.path().string().ends_with(".json.gz")) out.push_back(e.path());
    }
    if (!out.empty()) break;  // the installed copy, else the source tree's
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sgt::cli
