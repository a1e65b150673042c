# sgemm_tune_add_library() and sgemm_tune_embed(): compile the sgemm_tuned dispatch library for one
# tuned-kernel table, with nvcc, from the same kernel template the tuner compiles with NVRTC.
# Included by sgemm_tuned/CMakeLists.txt (in-tree) and by SgemmTuneConfig.cmake (installed), which
# first set the global properties SGEMM_TUNE_EXECUTABLE (sgemm-tune: a target name or a path),
# SGEMM_TUNE_KERNEL_DIR (holds sgemm_warptile.cuh) and SGEMM_TUNE_DISPATCH_DIR (holds the library's
# include/ and src/). Global properties, not variables, so that a function called from any
# directory of the consumer's project sees them.
include_guard(GLOBAL)

# _sgemm_tune_add_90a(<name> <archs> <out archs> <out resolved> <out text>)
# <out archs>: <archs> with 90a-real added where 9.0 is among them without 90a. TMA winners run
# only from an sm_90a image: without it they would be dropped silently and their shapes served by
# slower kernels. The plain 9.0 image stays (its PTX is what newer GPUs compile at load time).
# all, all-major and native are expanded first, to the lists CMake builds for them, since a
# special value cannot be combined with another architecture.
# <out resolved>: the architectures images are built for, "?" where that is not known now (native
# with no GPU found); empty for nvcc's default, which has no 9.0 image.
# <out text>: how to name them in a message.
function(_sgemm_tune_add_90a name archs out_archs out_resolved out_text)
  list(JOIN archs ", " text)
  set(list "${archs}")
  if(archs MATCHES "^(all|all-major|native)$")
    string(TOUPPER "${archs}" suffix)
    string(REPLACE "-" "_" suffix "${suffix}")
    set(list "${CMAKE_CUDA_ARCHITECTURES_${suffix}}")
    if(NOT list)
      if(archs STREQUAL "native")
        set(why "no GPU was found when CMake detected the CUDA compiler")
      else()
        set(why "this CMake does not list them")
      endif()
      set(${out_archs} "${archs}" PARENT_SCOPE)
      set(${out_resolved} "?" PARENT_SCOPE)
      set(${out_text} "${archs} (${why}, so which images are built is not known)" PARENT_SCOPE)
      return()
    endif()
    list(JOIN list ", " text)
    set(text "${archs}: ${text}")
  elseif(NOT archs)
    set(list "")
    set(text "unset: nvcc's default")
  endif()
  set(has90 FALSE)
  set(has90a FALSE)
  foreach(arch IN LISTS list)
    if(arch MATCHES "^90(-real|-virtual)?$")
      set(has90 TRUE)
    elseif(arch MATCHES "^90a(-real|-virtual)?$")
      set(has90a TRUE)
    endif()
  endforeach()
  if(has90 AND NOT has90a)
    list(APPEND list 90a-real)
    set(archs "${list}")
    message(STATUS "sgemm_tuned ${name}: adding CUDA architecture 90a-real beside 90 (of ${text}), "
                   "which the table's TMA winners need on H100/H200")
  endif()
  set(${out_archs} "${archs}" PARENT_SCOPE)
  set(${out_resolved} "${list}" PARENT_SCOPE)
  set(${out_text} "${text}" PARENT_SCOPE)
endfunction()

# _sgemm_tune_table_needs(<table text> <out names> <out needs>)
# Each config of an exported table and the architecture its kernel needs: "-" (any), "90" (a body
# for 9.0 only) or "90a" (the sm_90a image only). From kConfigLaunch (format 8 and later), else
# from the TMA field of kConfigs (formats 6 and 7, whose TMA = 1 configs need sm_90a). <out names>
# is "?" when the text holds neither.
function(_sgemm_tune_table_needs text out_names out_needs)
  set(names "")
  set(needs "")
  string(FIND "${text}" "kConfigLaunch[] = {\n" at)
  if(at GREATER -1)
    string(SUBSTRING "${text}" ${at} -1 block)
    string(FIND "${block}" "\n};" end)
    string(SUBSTRING "${block}" 0 ${end} block)
    set(entry "{[0-9]+, [0-9]+, {[^}]*}, {[^}]*}, ([0-9]+), (true|false)},  // ([^\n]+)")
    string(REGEX MATCHALL "${entry}" rows "${block}")
    foreach(row IN LISTS rows)
      string(REGEX MATCH "${entry}" row "${row}")
      list(APPEND names "${CMAKE_MATCH_3}")
      if(CMAKE_MATCH_2 STREQUAL "true")
        if(CMAKE_MATCH_1 EQUAL 0)
          list(APPEND needs 90a)  # what "architecture-specific" means in this format
        else()
          list(APPEND needs ${CMAKE_MATCH_1}a)
        endif()
      elseif(CMAKE_MATCH_1 EQUAL 0)
        list(APPEND needs "-")  # not "": an empty list item would be lost
      else()
        list(APPEND needs ${CMAKE_MATCH_1})
      endif()
    endforeach()
  else()
    string(REGEX MATCH "kFieldNames\\[\\] = {([^}\n]*)};" fields "${text}")
    string(REPLACE "\"" "" fields "${CMAKE_MATCH_1}")
    string(REPLACE ", " ";" fields "${fields}")
    list(FIND fields TMA tma)
    string(FIND "${text}" "kConfigs[] = {\n" at)
    if(tma EQUAL -1 OR at EQUAL -1)
      set(${out_names} "?" PARENT_SCOPE)
      return()
    endif()
    string(SUBSTRING "${text}" ${at} -1 block)
    string(FIND "${block}" "\n};" end)
    string(SUBSTRING "${block}" 0 ${end} block)
    set(entry "{([0-9, ]+)},  // ([^\n]+)")
    string(REGEX MATCHALL "${entry}" rows "${block}")
    foreach(row IN LISTS rows)
      string(REGEX MATCH "${entry}" row "${row}")
      list(APPEND names "${CMAKE_MATCH_2}")
      string(REPLACE ", " ";" values "${CMAKE_MATCH_1}")
      list(GET values ${tma} value)
      if(value EQUAL 1)
        list(APPEND needs 90a)
      else()
        list(APPEND needs "-")
      endif()
    endforeach()
  endif()
  set(${out_names} "${names}" PARENT_SCOPE)
  set(${out_needs} "${needs}" PARENT_SCOPE)
endfunction()

# _sgemm_tune_check_table(<name> <table file> <resolved archs> <archs text> <allow> <at build>)
# Fails, naming them, when configs of the table need an image that none of the architectures
# builds (a warning with <allow>). At build time the table is removed first, so that the next
# build exports and checks it again rather than taking it as up to date.
function(_sgemm_tune_check_table name table resolved text allow at_build)
  file(READ "${table}" content)
  _sgemm_tune_table_needs("${content}" names needs)
  if(names STREQUAL "?")
    message(WARNING "sgemm_tune_add_library(${name}): ${table} lists no configs in a form this "
                    "sgemm-tune reads, so whether the CUDA architectures run them is not checked; "
                    "export it again with this sgemm-tune")
    return()
  endif()
  list(LENGTH names total)
  set(bad "")
  set(count 0)
  foreach(config need IN ZIP_LISTS names needs)
    if(need STREQUAL "-")
      continue()
    endif()
    set(ok FALSE)
    if(NOT resolved STREQUAL "?")
      string(REGEX REPLACE "a$" "" number "${need}")
      foreach(arch IN LISTS resolved)
        # An image for the number runs a body for it; only an "a" image has the specific one.
        if(arch MATCHES "^([0-9]+)([a-z]?)(-real|-virtual)?$")
          if(CMAKE_MATCH_1 EQUAL number)
            if(need STREQUAL number OR CMAKE_MATCH_2 STREQUAL "a")
              set(ok TRUE)
            endif()
          endif()
        endif()
      endforeach()
    endif()
    if(NOT ok)
      string(APPEND bad "\n  ${config} (needs an sm_${need} image)")
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  if(count EQUAL 0)
    return()
  endif()
  if(resolved STREQUAL "?")
    set(why "may never run: the CUDA architectures are ${text}")
  else()
    set(why "can never run: none of the CUDA architectures (${text}) builds the image they need")
  endif()
  set(msg "sgemm_tune_add_library(${name}): ${count} of the table's ${total} configs ${why}:"
          "${bad}\n")
  if(allow)
    message(WARNING ${msg} "ALLOW_UNRUNNABLE is given: the shapes they won run the next winner "
                    "that can, or cuBLAS.")
    return()
  endif()
  if(at_build)
    file(REMOVE "${table}")
  endif()
  message(FATAL_ERROR ${msg} "Give CUDA architectures that hold 90 (CMAKE_CUDA_ARCHITECTURES, "
                      "or the CUDA_ARCHITECTURES argument; 90a-real is then added beside it), or "
                      "pass ALLOW_UNRUNNABLE to sgemm_tune_embed() or sgemm_tune_add_library() to "
                      "build without them.")
endfunction()

# sgemm_tune_add_library(<name>
#     DB <tuning.db> [GPUS <name or key>...] [ALLOW_STALE]  # exported at build time
#   | HEADER <table.hpp>                                    # written by `sgemm-tune export`
#   [CUDA_ARCHITECTURES <arch>...]                          # default: CMAKE_CUDA_ARCHITECTURES
#   [PRECISION fp32|fp32-accurate]                          # default fp32; see below
#   [ALLOW_UNRUNNABLE])                                     # see below
#
# A STATIC CUDA library <name> holding sgemm_tuned::sgemm() and explain() (#include
# <sgemm_tuned/sgemm_tuned.hpp>) and the kernels of exactly the table's configs. The table itself
# is <sgemm_tuned_table.hpp> on its include path. With DB, the table is re-exported whenever the
# database file or sgemm-tune changes. CUDA must be enabled in the calling project.
#
# Architectures: the TMA winners (most of an H100/H200 table) have a kernel body only in an sm_90a
# image. Wherever the architectures include 9.0 (90, 90-real, 90-virtual, or all, all-major and
# native, which CMake expands to lists that hold it), 90a-real is added beside it. A table winner
# that no chosen architecture can run (a TMA winner without 90 or 90a, e.g. with CMake's default
# architecture) is an error that names it, at configure time where the table can be read then
# (a HEADER that exists, or a DB and an installed sgemm-tune), else when the build exports it.
# ALLOW_UNRUNNABLE makes that a warning: such a winner's shapes then run the next winner that
# can, or cuBLAS.
#
# PRECISION: the precision class the program accepts. fp32 (the default) builds only a table of
# FFMA kernels, numerically what cuBLAS FP32 computes; a table exported with `--precision
# fp32-accurate` (which may hold split-TF32 tensor-core kernels, verified no less accurate than
# cuBLAS FP32 against FP64) fails to compile unless PRECISION fp32-accurate is given. With DB, the
# table is exported in that class.
function(sgemm_tune_add_library name)
  cmake_parse_arguments(ARG "ALLOW_STALE;ALLOW_UNRUNNABLE" "DB;HEADER;PRECISION"
                        "GPUS;CUDA_ARCHITECTURES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "sgemm_tune_add_library(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if((ARG_DB AND ARG_HEADER) OR (NOT ARG_DB AND NOT ARG_HEADER))
    message(FATAL_ERROR "sgemm_tune_add_library(${name}): give exactly one of DB <tuning.db> or "
                        "HEADER <table.hpp>")
  endif()
  if(ARG_HEADER AND (ARG_GPUS OR ARG_ALLOW_STALE))
    message(FATAL_ERROR "sgemm_tune_add_library(${name}): GPUS and ALLOW_STALE apply to DB; a "
                        "HEADER was exported with its own")
  endif()
  if(NOT ARG_PRECISION)
    set(ARG_PRECISION fp32)
  endif()
  if(NOT ARG_PRECISION MATCHES "^(fp32|fp32-accurate)$")
    message(FATAL_ERROR "sgemm_tune_add_library(${name}): PRECISION must be fp32 or "
                        "fp32-accurate (got '${ARG_PRECISION}')")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    message(FATAL_ERROR "sgemm_tune_add_library(${name}): the dispatch library is compiled by "
                        "nvcc; enable CUDA first: project(... LANGUAGES CXX CUDA) or "
                        "enable_language(CUDA)")
  endif()
  if(NOT TARGET CUDA::cublas)
    find_package(CUDAToolkit REQUIRED)
  endif()
  get_property(exe GLOBAL PROPERTY SGEMM_TUNE_EXECUTABLE)
  get_property(kernel_dir GLOBAL PROPERTY SGEMM_TUNE_KERNEL_DIR)
  get_property(dispatch_dir GLOBAL PROPERTY SGEMM_TUNE_DISPATCH_DIR)
  if(NOT exe OR NOT kernel_dir OR NOT dispatch_dir)
    message(FATAL_ERROR "sgemm_tune_add_library: use it through find_package(SgemmTune)")
  endif()

  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}_table)
  set(table ${gen}/sgemm_tuned_table.hpp)

  # The architectures the library is compiled for: what its CUDA_ARCHITECTURES property will hold.
  if(ARG_CUDA_ARCHITECTURES)
    set(archs ${ARG_CUDA_ARCHITECTURES})
  else()
    set(archs ${CMAKE_CUDA_ARCHITECTURES})
  endif()
  _sgemm_tune_add_90a(${name} "${archs}" archs resolved archs_text)

  # Which architectures the table's winners need, read now where the table can be read now: a
  # HEADER that exists, or a DB that an installed sgemm-tune (a file, not a target of this build)
  # exports. The build checks the table it writes as well, for the other cases and for a database
  # that changed since.
  set(allow ${ARG_ALLOW_UNRUNNABLE})
  if(ARG_DB)
    get_filename_component(db "${ARG_DB}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(args export --format cpp --db ${db} --precision ${ARG_PRECISION})
    foreach(gpu IN LISTS ARG_GPUS)
      list(APPEND args --gpu ${gpu})
    endforeach()
    if(ARG_ALLOW_STALE)
      list(APPEND args --allow-stale)
    endif()
    if(IS_ABSOLUTE "${exe}" AND EXISTS "${exe}" AND EXISTS "${db}")
      set(now ${gen}/configure/sgemm_tuned_table.hpp)
      file(MAKE_DIRECTORY ${gen}/configure)
      execute_process(COMMAND ${exe} ${args} -o ${now}
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "sgemm_tune_add_library(${name}): `sgemm-tune export` of ${db} "
                            "failed (exit ${rc}):\n${out}${err}")
      endif()
      _sgemm_tune_check_table(${name} ${now} "${resolved}" "${archs_text}" ${allow} FALSE)
    endif()
  else()
    get_filename_component(header "${ARG_HEADER}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(EXISTS "${header}")
      _sgemm_tune_check_table(${name} ${header} "${resolved}" "${archs_text}" ${allow} FALSE)
    endif()
  endif()
  # Passed as one argument each; ';' would split them.
  string(REPLACE ";" "," resolved_arg "${resolved}")
  set(check ${CMAKE_COMMAND} "-DSGEMM_TUNE_CHECK=${name}" "-DSGEMM_TUNE_CHECK_TABLE=${table}"
      "-DSGEMM_TUNE_CHECK_ARCHS=${resolved_arg}" "-DSGEMM_TUNE_CHECK_ARCHS_TEXT=${archs_text}"
      "-DSGEMM_TUNE_CHECK_ALLOW=${allow}" -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE})

  if(ARG_DB)
    add_custom_command(OUTPUT ${table}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
      COMMAND ${exe} ${args} -o ${table}
      COMMAND ${check}
      DEPENDS ${db} ${exe}
      COMMENT "sgemm-tune export: tuned kernel table of ${name} from ${db}"
      VERBATIM)
  else()
    # Copied under the one name dispatch.cu includes, so any header file name works.
    add_custom_command(OUTPUT ${table}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
      COMMAND ${CMAKE_COMMAND} -E copy ${header} ${table}
      COMMAND ${check}
      DEPENDS ${header}
      COMMENT "sgemm_tuned: tuned kernel table of ${name} from ${header}"
      VERBATIM)
  endif()

  add_library(${name} STATIC ${dispatch_dir}/src/dispatch.cu ${table})
  target_include_directories(${name}
    PUBLIC ${dispatch_dir}/include ${gen}
    PRIVATE ${dispatch_dir}/src ${kernel_dir})
  # The runtime flavour the project asked nvcc for; a static and a shared runtime in one process
  # would keep two sets of runtime state.
  if(CMAKE_CUDA_RUNTIME_LIBRARY STREQUAL "Shared")
    set(runtime CUDA::cudart)
  else()
    set(runtime CUDA::cudart_static)
  endif()
  target_link_libraries(${name} PUBLIC ${runtime} CUDA::cublas)
  if(ARG_PRECISION STREQUAL "fp32-accurate")
    target_compile_definitions(${name} PRIVATE SGT_TUNED_ACCEPT_FP32_ACCURATE=1)
  endif()
  set_target_properties(${name} PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON)
  # Left unset where it is (CMP0104 OLD, no CMAKE_CUDA_ARCHITECTURES): nvcc's default then.
  if(archs)
    set_property(TARGET ${name} PROPERTY CUDA_ARCHITECTURES ${archs})
  endif()
  include(${dispatch_dir}/src/sgemm_tuned_arch.cmake)
  sgemm_tuned_define_sm90a(${name})
endfunction()

# sgemm_tune_embed(TARGET <target> <arguments of sgemm_tune_add_library>)
#
# Builds the dispatch library <target>_sgemm_tuned for that table and links it into <target>,
# which then calls sgemm_tuned::sgemm(). One table per program: the library defines sgemm_tuned::*.
# The arguments, ALLOW_UNRUNNABLE and the architectures' rules included, are
# sgemm_tune_add_library's.
function(sgemm_tune_embed)
  cmake_parse_arguments(ARG "" "TARGET" "" ${ARGN})
  if(NOT ARG_TARGET OR NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "sgemm_tune_embed: TARGET must name an existing target (got '${ARG_TARGET}')")
  endif()
  sgemm_tune_add_library(${ARG_TARGET}_sgemm_tuned ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${ARG_TARGET} PRIVATE ${ARG_TARGET}_sgemm_tuned)
endfunction()

# `cmake -DSGEMM_TUNE_CHECK=<name> ... -P SgemmTuneEmbed.cmake`: the build's check of the table it
# just wrote (see sgemm_tune_add_library).
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE AND DEFINED SGEMM_TUNE_CHECK)
  string(REPLACE "," ";" _archs "${SGEMM_TUNE_CHECK_ARCHS}")
  _sgemm_tune_check_table(${SGEMM_TUNE_CHECK} ${SGEMM_TUNE_CHECK_TABLE} "${_archs}"
                          "${SGEMM_TUNE_CHECK_ARCHS_TEXT}" ${SGEMM_TUNE_CHECK_ALLOW} TRUE)
endif()
