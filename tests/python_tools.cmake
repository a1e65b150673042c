# Tests written in Python (Debian's python3, matplotlib, jsonschema and numpy, from tools/install-deps.sh)
# that run the real sgemm-tune: the plot script on each kind of CSV, and every --json output
# against its schema in docs/schemas. Exit code 77 (a module missing) is reported as a skip.
# Debian's packages install into the system interpreter: prefer it to another python3 on PATH.
find_program(SGT_TEST_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT SGT_TEST_PYTHON3)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(SGT_TEST_PYTHON3 ${Python3_EXECUTABLE})
  endif()
endif()
if(SGT_TEST_PYTHON3 AND TARGET sgemm-tune)
  add_test(NAME python.plot_bench
           COMMAND ${SGT_TEST_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/tools/plot_bench_test.py
                   $<TARGET_FILE:sgemm-tune> ${PROJECT_SOURCE_DIR})
  set_tests_properties(python.plot_bench PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
  add_test(NAME python.json_schemas
           COMMAND ${SGT_TEST_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/schemas/validate_outputs.py
                   $<TARGET_FILE:sgemm-tune> ${PROJECT_SOURCE_DIR})
  set_tests_properties(python.json_schemas PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endif()
# The split kernels' CPU emulations (tools/tf32x3/), which their predictions rest on: numpy only.
if(SGT_TEST_PYTHON3)
  add_test(NAME python.emulate_split
           COMMAND ${SGT_TEST_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/tools/emulate_split_test.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(python.emulate_split PROPERTIES LABELS cpu SKIP_RETURN_CODE 77)
endif()
