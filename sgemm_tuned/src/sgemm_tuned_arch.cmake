# sgemm_tuned_define_sm90a(<target>): tells the dispatch library <target> whether its image for
# compute capability 9.0 is the architecture-specific sm_90a one, as SGT_TUNED_SM90A=1 (else 0).
# TMA-fed kernels (sgemm_ws_tma.cuh) have a body only there; without it the library never launches
# them. Installed with the library's sources, so that the embedding functions can call it too.
include_guard(GLOBAL)

function(sgemm_tuned_define_sm90a target)
  get_target_property(archs ${target} CUDA_ARCHITECTURES)
  set(sm90a 0)
  foreach(arch IN LISTS archs)
    # 90a, 90a-real (cubin) or 90a-virtual (PTX the driver compiles for the device, still sm_90a).
    # An H200 given both an sm_90 and an sm_90a image loads the sm_90a one (driver 580).
    if(arch MATCHES "^90a(-real|-virtual)?$")
      set(sm90a 1)
    endif()
  endforeach()
  target_compile_definitions(${target} PRIVATE SGT_TUNED_SM90A=${sm90a})
endfunction()
