# ctests proving the kernel file NVRTC compiles at run time compiles offline with nvcc too, and that
# nvcc refuses an invalid config by its static_asserts. include()d to add them; run -P to check.

if(CMAKE_SCRIPT_MODE_FILE)
  # -P mode. Inputs: NVCC, SOURCE, INCLUDE_DIR, OUTPUT, EXPECT (fail | compile), and with
  # EXPECT=fail a MESSAGE regex, with EXPECT=compile comma-separated SYMBOLS the cubin must hold.
  execute_process(
    COMMAND "${NVCC}" -std=c++17 -arch=sm_90 -cubin -Werror all-warnings -I "${INCLUDE_DIR}"
            "${SOURCE}" -o "${OUTPUT}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(EXPECT STREQUAL "fail")
    # A failure for any other reason (missing file, broken toolkit) must not pass for this one.
    if(rc EQUAL 0)
      message(FATAL_ERROR "nvcc compiled ${SOURCE}; its static_asserts should have refused it")
    endif()
    if(NOT "${out}${err}" MATCHES "${MESSAGE}")
      message(FATAL_ERROR "nvcc failed on ${SOURCE}, but not with /${MESSAGE}/")
    endif()
  else()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "nvcc could not compile ${SOURCE} (exit ${rc})")
    endif()
    # The mangled names must be the ones NVRTC's nvrtcGetLoweredName gives, or a cubin from
    # either compiler could not be looked up by the same name.
    file(STRINGS "${OUTPUT}" found REGEX "_Z1[049]sgemm_(warptile|pack)")
    string(REPLACE "," ";" symbols "${SYMBOLS}")
    foreach(sym IN LISTS symbols)
      string(FIND "${found}" "${sym}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "${OUTPUT} lacks the kernel ${sym}")
      endif()
    endforeach()
  endif()
elseif(SGT_NVCC_CHECK AND CUDAToolkit_NVCC_EXECUTABLE)
  set(_sgt_nvcc_common
    -DNVCC=${CUDAToolkit_NVCC_EXECUTABLE} -DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/kernel_templates)

  add_test(NAME nvcc_instantiate_compiles
    COMMAND ${CMAKE_COMMAND} ${_sgt_nvcc_common}
      -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/compile/nvcc_instantiate.cu
      -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/nvcc_instantiate.cubin
      -DEXPECT=compile
      "-DSYMBOLS=_Z14sgemm_warptileILi64ELi128ELi16ELi32ELi64ELi1ELi4ELi4ELi128ELi2ELi2ELi4ELi8ELi1ELi0ELi1ELi0ELb1ELb0ELb1EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi256ELi128ELi8ELi64ELi64ELi4ELi8ELi4ELi256ELi1ELi2ELi4ELi8ELi1ELi0ELi1ELi1ELb1ELb0ELb1EEviiifPKfiS1_ifPfiiS2_,_Z10sgemm_packILi0EEviN10sgt_kernel11PackOperandES1_,_Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1ELi1ELi0ELi1ELi0ELi0ELi0ELi0ELb0ELb0ELb1EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi128ELi128ELi16ELi64ELi64ELi2ELi8ELi4ELi128ELi1ELi1ELi0ELi1ELi0ELi0ELi0ELi0ELb1ELb0ELb1EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi128ELi256ELi8ELi64ELi64ELi4ELi8ELi4ELi256ELi2ELi2ELi4ELi8ELi0ELi4ELi0ELi0ELb1ELb1ELb1EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi128ELi64ELi16ELi64ELi32ELi2ELi4ELi4ELi128ELi1ELi1ELi0ELi1ELi0ELi0ELi0ELi0ELb0ELb0ELb0EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi128ELi128ELi16ELi64ELi64ELi2ELi8ELi4ELi128ELi1ELi1ELi0ELi1ELi0ELi0ELi0ELi0ELb1ELb0ELb0EEviiifPKfiS1_ifPfiiS2_,_Z14sgemm_warptileILi128ELi256ELi8ELi64ELi64ELi4ELi8ELi4ELi256ELi2ELi2ELi4ELi8ELi0ELi4ELi0ELi0ELb1ELb1ELb0EEviiifPKfiS1_ifPfiiS2_"
      -P ${CMAKE_CURRENT_LIST_FILE})

  add_test(NAME nvcc_instantiate_ring_compiles
    COMMAND ${CMAKE_COMMAND} ${_sgt_nvcc_common}
      -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/compile/nvcc_instantiate_ring.cu
      -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/nvcc_instantiate_ring.cubin
      -DEXPECT=compile
      "-DSYMBOLS=_Z19sgemm_warptile_ringILi128ELi64ELi16ELi64ELi16ELi2ELi4ELi4ELi256ELi2ELi3ELi4ELi8ELi1ELi4ELi0ELi0ELi1ELi0EEviiifPKfiS1_ifPfiiS2_,_Z19sgemm_warptile_ringILi128ELi64ELi16ELi64ELi16ELi2ELi4ELi4ELi256ELi2ELi3ELi4ELi8ELi1ELi4ELi0ELi0ELi0ELi0EEviiifPKfiS1_ifPfiiS2_,_Z19sgemm_warptile_ringILi128ELi64ELi16ELi64ELi16ELi2ELi4ELi4ELi256ELi2ELi3ELi4ELi8ELi1ELi4ELi0ELi0ELi0ELi1EEviiifPKfiS1_ifPfiiS2_,_Z19sgemm_warptile_ringILi128ELi64ELi16ELi64ELi16ELi2ELi4ELi4ELi256ELi2ELi3ELi4ELi8ELi1ELi4ELi0ELi0ELi1ELi1EEviiifPKfiS1_ifPfiiS2_,_Z19sgemm_warptile_ringILi128ELi32ELi16ELi64ELi16ELi2ELi4ELi4ELi128ELi1ELi4ELi4ELi8ELi1ELi0ELi1ELi0ELi1ELi0EEviiifPKfiS1_ifPfiiS2_"
      -P ${CMAKE_CURRENT_LIST_FILE})

  add_test(NAME nvcc_rejects_invalid_config
    COMMAND ${CMAKE_COMMAND} ${_sgt_nvcc_common}
      -DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/compile/nvcc_invalid_config.cu
      -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/nvcc_invalid_config.cubin
      -DEXPECT=fail
      "-DMESSAGE=static assertion failed with \"wmiter_divisibility"
      -P ${CMAKE_CURRENT_LIST_FILE})

  set_tests_properties(nvcc_instantiate_compiles nvcc_instantiate_ring_compiles
    nvcc_rejects_invalid_config
    PROPERTIES LABELS cpu TIMEOUT 300)
endif()
