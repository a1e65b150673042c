# Builds the nvcc instance of the seed config that the GPU tests compare with NVRTC's.
if(TARGET sgt_gpu_tests)
  set(_cubin ${CMAKE_BINARY_DIR}/bin/seed_nvcc.cubin)
  add_custom_command(OUTPUT ${_cubin}
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -std=c++17 -arch=sm_90 -cubin
            -I${PROJECT_SOURCE_DIR}/kernel_templates ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvcc_seed.cu
            -o ${_cubin}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/gpu/nvcc_seed.cu
            ${PROJECT_SOURCE_DIR}/kernel_templates/sgemm_warptile.cuh
            ${PROJECT_SOURCE_DIR}/kernel_templates/warptile_geometry.h
    COMMENT "nvcc: seed config cubin for the NVRTC-vs-nvcc GPU test")
  add_custom_target(sgt_seed_nvcc_cubin DEPENDS ${_cubin})
  add_dependencies(sgt_gpu_tests sgt_seed_nvcc_cubin)
endif()
