# sgemm_tune_add_library() and sgemm_tune_embed(): compile the sgemm_tuned dispatch library for one
# tuned-kernel table, with nvcc, from the same kernel template the tuner compiles with NVRTC.
# Included by sgemm_tuned/CMakeLists.txt (in-tree) and by SgemmTuneConfig.cmake (installed), which
# first set the global properties SGEMM_TUNE_EXECUTABLE (sgemm-tune: a target name or a path),
# SGEMM_TUNE_KERNEL_DIR (holds sgemm_warptile.cuh) and SGEMM_TUNE_DISPATCH_DIR (holds the library's
# include/ and src/). Global properties, not variables, so that a function called from any
# directory of the consumer's project sees them.
include_guard(GLOBAL)

# sgemm_tune_add_library(<name>
#     DB <tuning.db> [GPUS <name or key>...] [ALLOW_STALE]  # exported at build time
#   | HEADER <table.hpp>                                    # written by `sgemm-tune export`
#   [CUDA_ARCHITECTURES <arch>...])                         # default: CMAKE_CUDA_ARCHITECTURES
#
# A STATIC CUDA library <name> holding sgemm_tuned::sgemm() and explain() (#include
# <sgemm_tuned/sgemm_tuned.hpp>) and the kernels of exactly the table's configs. The table itself
# is <sgemm_tuned_table.hpp> on its include path. With DB, the table is re-exported whenever the
# database file or sgemm-tune changes. CUDA must be enabled in the calling project.
function(sgemm_tune_add_library name)
  cmake_parse_arguments(ARG "ALLOW_STALE" "DB;HEADER" "GPUS;CUDA_ARCHITECTURES" ${ARGN})
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
  if(ARG_DB)
    get_filename_component(db "${ARG_DB}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    set(args export --format cpp --db ${db} -o ${table})
    foreach(gpu IN LISTS ARG_GPUS)
      list(APPEND args --gpu ${gpu})
    endforeach()
    if(ARG_ALLOW_STALE)
      list(APPEND args --allow-stale)
    endif()
    add_custom_command(OUTPUT ${table}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
      COMMAND ${exe} ${args}
      DEPENDS ${db} ${exe}
      COMMENT "sgemm-tune export: tuned kernel table of ${name} from ${db}"
      VERBATIM)
  else()
    get_filename_component(header "${ARG_HEADER}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    # Copied under the one name dispatch.cu includes, so any header file name works.
    add_custom_command(OUTPUT ${table}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
      COMMAND ${CMAKE_COMMAND} -E copy ${header} ${table}
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
  set_target_properties(${name} PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON)
  if(ARG_CUDA_ARCHITECTURES)
    set_property(TARGET ${name} PROPERTY CUDA_ARCHITECTURES ${ARG_CUDA_ARCHITECTURES})
  endif()
  # TMA = 1 winners (most of an H100/H200 table) run only from an sm_90a image: where 9.0 is a
  # target without 90a, the sm_90a image is added beside it, or those winners would be dropped
  # silently and their shapes served by slower kernels. The plain 9.0 image stays (its PTX is what
  # newer GPUs compile at load time).
  get_target_property(archs ${name} CUDA_ARCHITECTURES)
  set(has90 FALSE)
  set(has90a FALSE)
  foreach(arch IN LISTS archs)
    if(arch MATCHES "^90(-real|-virtual)?$")
      set(has90 TRUE)
    elseif(arch MATCHES "^90a(-real|-virtual)?$")
      set(has90a TRUE)
    endif()
  endforeach()
  if(has90 AND NOT has90a)
    list(APPEND archs 90a-real)
    set_property(TARGET ${name} PROPERTY CUDA_ARCHITECTURES ${archs})
    message(STATUS "sgemm_tuned ${name}: adding CUDA architecture 90a-real beside 90, which the "
                   "table's TMA winners need on H100/H200")
  endif()
  include(${dispatch_dir}/src/sgemm_tuned_arch.cmake)
  sgemm_tuned_define_sm90a(${name})
endfunction()

# sgemm_tune_embed(TARGET <target> <arguments of sgemm_tune_add_library>)
#
# Builds the dispatch library <target>_sgemm_tuned for that table and links it into <target>,
# which then calls sgemm_tuned::sgemm(). One table per program: the library defines sgemm_tuned::*.
function(sgemm_tune_embed)
  cmake_parse_arguments(ARG "" "TARGET" "" ${ARGN})
  if(NOT ARG_TARGET OR NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "sgemm_tune_embed: TARGET must name an existing target (got '${ARG_TARGET}')")
  endif()
  sgemm_tune_add_library(${ARG_TARGET}_sgemm_tuned ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${ARG_TARGET} PRIVATE ${ARG_TARGET}_sgemm_tuned)
endfunction()
