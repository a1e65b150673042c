// The PTX of a kernel family's program, compiled by NVRTC for a virtual architecture with every
// kernel file a named header, as the tuner's compiler builds it: what a kernel's body is made of,
// for tests that check its instructions without a GPU.
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "family.hpp"
#include "kernel_source.hpp"

namespace sgt::test {

struct Ptx {
  bool compiled = false;
  std::string log, ptx;
};

// `expr` names one instance of the program of family `family_id` ("sgemm_warptile<...>");
// `arch` is a virtual architecture ("compute_90a").
inline Ptx ptx_of(const std::string& family_id, const std::string& expr, const std::string& arch) {
  const auto& f = *sgt::find_family(family_id);
  const auto main_file = f.sources().at(0);
  std::vector<std::string> names, texts;
  for (const auto& k : sgt::kernel_sources()) {
    if (k.name == main_file.name) continue;
    names.emplace_back(k.name);
    texts.emplace_back(k.text);
  }
  std::vector<const char*> np, tp;
  for (size_t i = 0; i < names.size(); ++i) {
    np.push_back(names[i].c_str());
    tp.push_back(texts[i].c_str());
  }
  const std::string main_text(main_file.text);
  const std::string main_name(main_file.name);
  nvrtcProgram prog = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&prog, main_text.c_str(), main_name.c_str(),
                               static_cast<int>(np.size()), tp.data(), np.data()),
            NVRTC_SUCCESS);
  EXPECT_EQ(nvrtcAddNameExpression(prog, expr.c_str()), NVRTC_SUCCESS);
  const std::string arch_opt = "-arch=" + arch;
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  Ptx r;
  r.compiled = nvrtcCompileProgram(prog, 3, opts) == NVRTC_SUCCESS;
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  r.log.resize(n);
  nvrtcGetProgramLog(prog, r.log.data());
  if (r.compiled) {
    nvrtcGetPTXSize(prog, &n);
    r.ptx.resize(n);
    nvrtcGetPTX(prog, r.ptx.data());
  }
  nvrtcDestroyProgram(&prog);
  return r;
}

}  // namespace sgt::test
