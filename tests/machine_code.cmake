# Machine-code identity (tools/machine_code/): a sample of the configs whose .text sections were
# recorded before a change compiles to the same bytes after it, so every figure measured on the
# GPU still holds. CI checks the first two configs of every instance of the manifest; the whole
# manifest is `tools/machine_code/text_hashes.py check` without --limit.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND AND TARGET sgemm-tune)
  add_test(NAME MachineCode.SampleIsByteIdenticalToTheManifest
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/machine_code/text_hashes.py
                   check --bin $<TARGET_FILE:sgemm-tune>
                   --manifest ${PROJECT_SOURCE_DIR}/tools/machine_code/manifest-sm_90.json
                   --limit 2)
  set_tests_properties(MachineCode.SampleIsByteIdenticalToTheManifest PROPERTIES LABELS cpu
                       TIMEOUT 900)
  # The check can fail: with one recorded hash altered, that config and only it is reported.
  add_test(NAME MachineCode.AnAlteredHashIsReported
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/machine_code/text_hashes.py
                   check --bin $<TARGET_FILE:sgemm-tune>
                   --manifest ${PROJECT_SOURCE_DIR}/tools/machine_code/manifest-sm_90.json
                   --limit 1 --tamper)
  set_tests_properties(MachineCode.AnAlteredHashIsReported PROPERTIES LABELS cpu TIMEOUT 600)
  # The split-TF32 wgmma family (sm_90a, class fp32-accurate): every config of its space, whose
  # unsplit configs are the code its H200 figures were measured with; a few seconds to compile.
  add_test(NAME MachineCode.Tf32x3WgIsByteIdenticalToTheManifest
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/machine_code/text_hashes.py
                   check --bin $<TARGET_FILE:sgemm-tune>
                   --manifest ${PROJECT_SOURCE_DIR}/tools/machine_code/manifest-sm_90a-tf32x3_wg.json)
  add_test(NAME MachineCode.Tf32x3WgAlteredHashIsReported
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/machine_code/text_hashes.py
                   check --bin $<TARGET_FILE:sgemm-tune>
                   --manifest ${PROJECT_SOURCE_DIR}/tools/machine_code/manifest-sm_90a-tf32x3_wg.json
                   --limit 2 --tamper)
  set_tests_properties(MachineCode.Tf32x3WgIsByteIdenticalToTheManifest
                       MachineCode.Tf32x3WgAlteredHashIsReported PROPERTIES LABELS cpu TIMEOUT 600)
  # Family warptile_ring: its H200 winners (TN, the ring on k-major buffers) and the k-contiguous
  # instances of the other layouts; a few seconds to compile.
  add_test(NAME MachineCode.RingIsByteIdenticalToTheManifest
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/machine_code/text_hashes.py
                   check --bin $<TARGET_FILE:sgemm-tune>
                   --manifest ${PROJECT_SOURCE_DIR}/tools/machine_code/manifest-sm_90-ring.json)
  set_tests_properties(MachineCode.RingIsByteIdenticalToTheManifest PROPERTIES LABELS cpu
                       TIMEOUT 600)
endif()
