# Export tests beyond the gtest suite: the fixture database and table (for the selection tests, the
# in-tree sgemm_tuned library and the GPU dispatch test), and a ctest that installs the package and
# builds examples/embed against it with nvcc. include()d to add them; run with -P as that ctest.

if(CMAKE_SCRIPT_MODE_FILE)
  # -P mode. Inputs: BUILD_DIR (this build), EXAMPLE_DIR, WORK_DIR (emptied), DB and TABLE (the
  # fixture database and the table the build exported from it), NVCC, GENERATOR, EPOCH; MODE
  # picks a configure-only test (below), else the example is built.
  function(run what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    message("${out}${err}")
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${what} failed (exit ${rc})")
    endif()
  endfunction()

  # The configure-only tests share one installed package, PREFIX (MODE install: the fixture that
  # installs it). Each configures with nvcc but compiles no kernel.
  if(MODE STREQUAL "install")
    file(REMOVE_RECURSE ${PREFIX})
    run("installing the package" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
    return()
  endif()
  if(MODE)
    file(REMOVE_RECURSE ${WORK_DIR})
    # Configures <source> into <build> with the arguments; <out> gets its rc and output.
    function(configure out source build)
      execute_process(COMMAND ${CMAKE_COMMAND} -S ${source} -B ${build} -G ${GENERATOR}
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CUDA_COMPILER=${NVCC}
        ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
      set(${out}_rc ${rc} PARENT_SCOPE)
      set(${out} "${o}${e}" PARENT_SCOPE)
    endfunction()
    # The configs of the fixture table whose kernels exist only in an sm_90a image (its TMA ones).
    file(STRINGS ${TABLE} lines REGEX ", 90, true},  // ")
    set(sm90a_configs "")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE ".*  // " "" name "${line}")
      list(APPEND sm90a_configs ${name})
    endforeach()
    if(NOT sm90a_configs)
      message(FATAL_ERROR "${TABLE} holds no sm_90a config; these tests need one")
    endif()
    # What one configure must have said about them: each one named, and the way out.
    function(names_them what text)
      foreach(name IN LISTS sm90a_configs)
        string(FIND "${text}" "${name} (needs an sm_90a image)" at)
        if(at EQUAL -1)
          message(FATAL_ERROR "${what} does not name ${name}:\n${text}")
        endif()
      endforeach()
      # The option itself, not the example's SGEMM_EMBED_ALLOW_UNRUNNABLE.
      if(NOT text MATCHES "[ \n]ALLOW_UNRUNNABLE[ \n]")
        message(FATAL_ERROR "${what} does not name ALLOW_UNRUNNABLE:\n${text}")
      endif()
    endfunction()
  endif()

  if(MODE STREQUAL "architectures")
    # Every form of the architectures that holds 9.0 gains the sm_90a image, and keeps the rest of
    # its list: 90 itself, and all and all-major, which CMake expands (native is the same list
    # code, with the GPU of the machine; untestable without one). One build directory, so nvcc is
    # identified once.
    set(build ${WORK_DIR}/example)
    foreach(archs 90 all-major all)
      file(REMOVE ${build}/build.ninja ${build}/Makefile)
      configure(out ${EXAMPLE_DIR} ${build} -DCMAKE_CUDA_ARCHITECTURES=${archs}
                -DSGEMM_EMBED_DB=${DB})
      if(NOT out_rc EQUAL 0)
        message(FATAL_ERROR "configuring examples/embed for ${archs} failed:\n${out}")
      endif()
      file(GLOB_RECURSE rules ${build}/build.ninja ${build}/*flags.make)
      set(text "")
      foreach(f IN LISTS rules)
        file(READ ${f} t)
        string(APPEND text "${t}")
      endforeach()
      if(NOT text MATCHES "arch=compute_90a,code=\\[sm_90a\\]" OR
         NOT text MATCHES "SGT_TUNED_SM90A=1")
        message(FATAL_ERROR "examples/embed configured for ${archs} has no sm_90a image:\n${out}")
      endif()
      if(NOT archs STREQUAL "90" AND NOT text MATCHES "arch=compute_80,code=\\[sm_80\\]")
        message(FATAL_ERROR "examples/embed configured for ${archs} lost sm_80 of its list")
      endif()
      message(STATUS "${archs}: sm_90a image added")
    endforeach()
    return()
  endif()

  if(MODE STREQUAL "unrunnable")
    # Architectures that cannot run the table's TMA winners: configuring fails and names them,
    # or warns with ALLOW_UNRUNNABLE. The example embeds the DB (exported when configuring).
    set(build ${WORK_DIR}/example)
    configure(out ${EXAMPLE_DIR} ${build} -DCMAKE_CUDA_ARCHITECTURES=80 -DSGEMM_EMBED_DB=${DB}
              -DSGEMM_EMBED_ALLOW_UNRUNNABLE=OFF)
    if(out_rc EQUAL 0)
      message(FATAL_ERROR "examples/embed for 80 configured, with TMA winners it cannot run:"
                          "\n${out}")
    endif()
    names_them("configuring for 80" "${out}")
    configure(out ${EXAMPLE_DIR} ${build} -DCMAKE_CUDA_ARCHITECTURES=80 -DSGEMM_EMBED_DB=${DB}
              -DSGEMM_EMBED_ALLOW_UNRUNNABLE=ON)
    if(NOT out_rc EQUAL 0 OR NOT out MATCHES "CMake Warning at [^\n]*SgemmTuneEmbed.cmake")
      message(FATAL_ERROR "with ALLOW_UNRUNNABLE, configuring for 80 must warn and succeed "
                          "(exit ${out_rc}):\n${out}")
    endif()
    names_them("the warning of ALLOW_UNRUNNABLE" "${out}")

    # CMake's default architectures (nvcc's, none of them 9.0), a HEADER table.
    set(project ${WORK_DIR}/default_arch)
    file(WRITE ${project}/main.cpp "int main() { return 0; }\n")
    file(WRITE ${project}/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(default_arch LANGUAGES CXX CUDA)
find_package(SgemmTune 0.1 REQUIRED)
add_executable(app main.cpp)
sgemm_tune_embed(TARGET app HEADER ${TABLE_HEADER})
]=])
    set(build ${WORK_DIR}/default_arch_build)
    configure(out ${project} ${build} -DTABLE_HEADER=${TABLE})
    if(out_rc EQUAL 0)
      message(FATAL_ERROR "configured with CMake's default architectures, with TMA winners they "
                          "cannot run:\n${out}")
    endif()
    names_them("configuring with CMake's default architectures" "${out}")

    # A table that exists only once the build writes it is checked by the build, which fails and
    # leaves no table behind to be taken as up to date.
    if(GENERATOR MATCHES "Ninja")
      set(later ${WORK_DIR}/later.hpp)
      configure(out ${project} ${build} -DTABLE_HEADER=${later} -DCMAKE_CUDA_ARCHITECTURES=80)
      if(NOT out_rc EQUAL 0)
        message(FATAL_ERROR "configuring with a table still to be written failed:\n${out}")
      endif()
      file(COPY_FILE ${TABLE} ${later})
      set(table app_sgemm_tuned_table/sgemm_tuned_table.hpp)
      execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} --target ${table}
        RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
      if(rc EQUAL 0)
        message(FATAL_ERROR "the build wrote a table with TMA winners 80 cannot run:\n${o}${e}")
      endif()
      names_them("the build's check" "${o}${e}")
      if(EXISTS ${build}/${table})
        message(FATAL_ERROR "the build's check left ${build}/${table} behind")
      endif()
    endif()
    return()
  endif()

  file(REMOVE_RECURSE ${WORK_DIR})
  set(prefix ${WORK_DIR}/prefix)
  set(build ${WORK_DIR}/build)
  run("installing the package" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
  run("configuring examples/embed" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${build} -G ${GENERATOR}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CUDA_COMPILER=${NVCC}
      -DCMAKE_CUDA_ARCHITECTURES=90 -DSGEMM_EMBED_DB=${DB})
  # The same epoch as the build's own export, so the two tables must match byte for byte.
  run("building examples/embed" ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${EPOCH}
      ${CMAKE_COMMAND} --build ${build} -j 2)

  # Configured for 90 alone, the library is compiled for sm_90a too (the TMA winners' image).
  file(GLOB_RECURSE build_rules ${build}/build.ninja ${build}/*flags.make)
  set(sm90a_seen FALSE)
  foreach(f IN LISTS build_rules)
    file(READ ${f} text)
    if(text MATCHES "SGT_TUNED_SM90A=1" AND text MATCHES "sm_90a")
      set(sm90a_seen TRUE)
    endif()
  endforeach()
  if(NOT sm90a_seen)
    message(FATAL_ERROR "examples/embed configured with CUDA architectures 90 has no sm_90a image")
  endif()

  # The installed sgemm-tune, run by the example's build, exported what this build's one did.
  set(generated ${build}/embed_example_sgemm_tuned_table/sgemm_tuned_table.hpp)
  file(READ ${generated} got)
  file(READ ${TABLE} want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${generated} differs from ${TABLE}")
  endif()

  # nvcc instantiated exactly the table's configs: the kernels in the binary are its X-list.
  # Matched in the text: as list items, the rows' trailing backslashes would escape the ';'.
  string(REGEX MATCHALL "\n  X\\([0-9]+, [0-9, ]+\\)" rows "${want}")
  # Each row's family: kConfigFamilies, in the rows' order (table format 9 on; TMA was a field).
  string(REGEX MATCH "kConfigFamilies\\[\\] = {[^}]*}" families_block "${want}")
  string(REGEX MATCHALL "\"[a-z_0-9]+\"" families "${families_block}")
  set(expected "")
  set(row_index 0)
  foreach(row IN LISTS rows)
    string(REGEX REPLACE "^\n  X\\([0-9]+, ([0-9, ]+)\\)$" "\\1" values "${row}")
    string(REPLACE ", " ";" values "${values}")
    list(GET families ${row_index} family)
    math(EXPR row_index "${row_index} + 1")
    if(family STREQUAL "\"ws_tma\"")
      list(APPEND values 1)
    else()
      list(APPEND values 0)
    endif()
    # The family (appended as a 20th value, 1 for ws_tma) picks the kernel. TMA = 0: sgemm_warptile, whose template
    # arguments are every field but SPLIT_K (the 14th: a launch parameter), TAIL (the 19th, another)
    # and TMA, then TRANS_A,
    # TRANS_B and VEC: each config in the four layouts, each with float4 and with single-float
    # main-loop loads. TMA = 1: sgemm_ws_tma, whose arguments leave PACK and STAGE_C (the 17th and
    # 18th) out as well, then TRANS_A and TRANS_B: the four layouts. A PACK config (the 17th) runs
    # one instance whatever the call's layout, TN with float4 loads on the panels (its family's
    # KernelFamily::instance), so that is all the table names.
    list(GET values 19 tma)
    list(GET values 16 pack)
    set(layouts "Lb0ELb0E" "Lb0ELb1E" "Lb1ELb0E" "Lb1ELb1E")
    set(loads "Lb0E" "Lb1E")
    if(pack EQUAL 1)
      set(layouts "Lb1ELb0E")
      set(loads "Lb1E")
    endif()
    set(skip 13 18 19)
    if(tma EQUAL 1)
      list(APPEND skip 16 17)
    endif()
    set(mangled "")
    set(i 0)
    foreach(v IN LISTS values)
      list(FIND skip ${i} skipped)  # not IN_LIST: -P mode sets no policies
      if(skipped EQUAL -1)
        string(APPEND mangled "Li${v}E")
      endif()
      math(EXPR i "${i} + 1")
    endforeach()
    foreach(layout IN LISTS layouts)
      if(tma EQUAL 1)
        list(APPEND expected "_Z12sgemm_ws_tmaI${mangled}${layout}Ev")
      else()
        foreach(vec IN LISTS loads)
          list(APPEND expected "_Z14sgemm_warptileI${mangled}${layout}${vec}Ev")
        endforeach()
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES expected)  # configs that differ only in SPLIT_K share their kernels
  file(STRINGS ${build}/embed_example found REGEX "_Z1(4sgemm_warptile|2sgemm_ws_tma)I")
  set(kernels "")
  foreach(s IN LISTS found)
    string(REGEX MATCHALL "_Z1(4sgemm_warptile|2sgemm_ws_tma)I(Li[0-9]+E)+(Lb[01]E)+Ev" m "${s}")
    list(APPEND kernels ${m})
  endforeach()
  list(REMOVE_DUPLICATES kernels)
  list(SORT kernels)
  list(SORT expected)
  if(NOT kernels STREQUAL expected OR NOT expected)
    message(FATAL_ERROR "kernels in the example: ${kernels}\nexpected from the table: ${expected}")
  endif()

  # Without a GPU the example says so and exits 2; with one it must match cuBLAS (exit 0).
  execute_process(COMMAND ${build}/embed_example RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT (rc EQUAL 0 OR (rc EQUAL 2 AND "${out}${err}" MATCHES "no CUDA device")))
    message(FATAL_ERROR "embed_example exited ${rc}")
  endif()
  return()
endif()

if(NOT TARGET sgt_export_tests)
  return()
endif()

set(_sgt_fixture_dir ${CMAKE_CURRENT_BINARY_DIR}/export_fixture)
set(_sgt_fixture_db ${_sgt_fixture_dir}/tuning.db)
set(_sgt_fixture_table ${_sgt_fixture_dir}/sgemm_tuned_table.hpp)
# A fixed date keeps the fixture table reproducible, so the example's own export can be compared.
set(_sgt_fixture_epoch 1735732800)

add_executable(sgt_export_fixture_db ${CMAKE_CURRENT_SOURCE_DIR}/export/fixture/make_fixture_db.cpp)
target_link_libraries(sgt_export_fixture_db PRIVATE sgt_db)
add_custom_command(OUTPUT ${_sgt_fixture_db}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_sgt_fixture_dir}
  COMMAND sgt_export_fixture_db ${_sgt_fixture_db}
  DEPENDS sgt_export_fixture_db
  COMMENT "export tests: fixture tuning database"
  VERBATIM)
add_custom_command(OUTPUT ${_sgt_fixture_table}
  COMMAND ${CMAKE_COMMAND} -E env SOURCE_DATE_EPOCH=${_sgt_fixture_epoch}
          $<TARGET_FILE:sgemm-tune> export --format cpp --db ${_sgt_fixture_db}
          -o ${_sgt_fixture_table}
  DEPENDS ${_sgt_fixture_db} sgemm-tune
  COMMENT "export tests: fixture table"
  VERBATIM)
add_custom_target(sgt_export_fixture DEPENDS ${_sgt_fixture_db} ${_sgt_fixture_table})

add_dependencies(sgt_export_tests sgt_export_fixture)
target_include_directories(sgt_export_tests PRIVATE ${_sgt_fixture_dir}
  ${CMAKE_CURRENT_SOURCE_DIR}/export/fixture ${PROJECT_SOURCE_DIR}/sgemm_tuned/src)
target_compile_definitions(sgt_export_tests PRIVATE
  SGT_CXX_COMPILER="${CMAKE_CXX_COMPILER}"
  SGT_NVCC="${CUDAToolkit_NVCC_EXECUTABLE}"
  SGT_EXPORT_FIXTURE_DB="${_sgt_fixture_db}")

# sgemm_tuned/ (configured after tests/) builds the in-tree library from this table.
set_property(GLOBAL PROPERTY SGT_TUNED_FIXTURE_HEADER ${_sgt_fixture_table})
set_property(GLOBAL PROPERTY SGT_TUNED_FIXTURE_TARGET sgt_export_fixture)

# The library exists only once sgemm_tuned/ found nvcc; the GPU test skips its cases without it.
if(TARGET sgt_gpu_tests)
  target_link_libraries(sgt_gpu_tests PRIVATE $<TARGET_NAME_IF_EXISTS:sgemm_tuned>)
  # The calls that reach the fixture's TMA = 1 winners (plain C++, shared with the CPU tests).
  target_include_directories(sgt_gpu_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/export/fixture)
  target_compile_definitions(sgt_gpu_tests PRIVATE
    $<$<TARGET_EXISTS:sgemm_tuned>:SGT_HAVE_SGEMM_TUNED=1>)
endif()

if(CUDAToolkit_NVCC_EXECUTABLE)
  add_test(NAME ExportEmbedExample.builds_against_installed_package
    COMMAND ${CMAKE_COMMAND}
      -DBUILD_DIR=${PROJECT_BINARY_DIR}
      -DEXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/embed
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/embed_example
      -DDB=${_sgt_fixture_db}
      -DTABLE=${_sgt_fixture_table}
      -DNVCC=${CUDAToolkit_NVCC_EXECUTABLE}
      -DGENERATOR=${CMAKE_GENERATOR}
      -DEPOCH=${_sgt_fixture_epoch}
      -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(ExportEmbedExample.builds_against_installed_package
    PROPERTIES LABELS cpu TIMEOUT 900)

  # Configure-only tests of sgemm_tune_embed()'s CUDA architectures, against one installed package.
  set(_sgt_embed_args
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DPREFIX=${CMAKE_CURRENT_BINARY_DIR}/embed_configure/prefix
    -DEXAMPLE_DIR=${PROJECT_SOURCE_DIR}/examples/embed
    -DDB=${_sgt_fixture_db}
    -DTABLE=${_sgt_fixture_table}
    -DNVCC=${CUDAToolkit_NVCC_EXECUTABLE}
    -DGENERATOR=${CMAKE_GENERATOR})
  add_test(NAME ExportEmbedExample.install_for_configure_tests
    COMMAND ${CMAKE_COMMAND} ${_sgt_embed_args} -DMODE=install -P ${CMAKE_CURRENT_LIST_FILE})
  add_test(NAME ExportEmbedExample.adds_90a_to_every_form_holding_90
    COMMAND ${CMAKE_COMMAND} ${_sgt_embed_args} -DMODE=architectures
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/embed_configure/architectures
      -P ${CMAKE_CURRENT_LIST_FILE})
  add_test(NAME ExportEmbedExample.names_winners_the_architectures_cannot_run
    COMMAND ${CMAKE_COMMAND} ${_sgt_embed_args} -DMODE=unrunnable
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/embed_configure/unrunnable
      -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(ExportEmbedExample.install_for_configure_tests PROPERTIES
    LABELS cpu TIMEOUT 300 FIXTURES_SETUP sgt_embed_package)
  set_tests_properties(ExportEmbedExample.adds_90a_to_every_form_holding_90
    ExportEmbedExample.names_winners_the_architectures_cannot_run PROPERTIES
    LABELS cpu TIMEOUT 300 FIXTURES_REQUIRED sgt_embed_package)
endif()
