# `cmake --install --strip` into a fresh prefix: the installed binary carries no debug sections,
# runs from there, and finds the datasets and plot scripts installed beside it.
find_program(SGT_READELF readelf)
if(TARGET sgemm-tune AND SGT_READELF)
  set(_prefix ${CMAKE_CURRENT_BINARY_DIR}/install_test)
  add_test(NAME Install.StripLeavesNoDebugInfoAndTheBinaryRuns
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DPREFIX=${_prefix}
                   -DREADELF=${SGT_READELF} -P ${CMAKE_CURRENT_SOURCE_DIR}/support/install_check.cmake)
  set_tests_properties(Install.StripLeavesNoDebugInfoAndTheBinaryRuns PROPERTIES LABELS cpu
                       TIMEOUT 300)
endif()
