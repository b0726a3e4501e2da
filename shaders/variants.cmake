# Every compute-shader variant the engine embeds, one file per kernel family under
# shaders/variants/. Variants of one source differ only by defines (never copy-pasted GLSL).
z123_shader(NAME fill_u32 SOURCE fill.comp)
z123_shader(NAME axpy_f32 SOURCE axpy.comp)
# Proof that a newer glslc (docs/newer-glslc.md) builds KHR cooperative-matrix code.
z123_shader(NAME probe_khr_coopmat SOURCE ../cmake/probes/KHR_COOPMAT.comp REQUIRES KHR_COOPMAT
            TARGET_ENV vulkan1.3)
# The KHR cooperative-matrix fragment shapes built besides 16x16x16 on 32-wide subgroups, as the
# suffixes of their variant names (kernels.cpp khr_gemm_shapes lists the same), and the defines
# of each: NVIDIA's 16x8x16 and 16x8x8, 16x16x16 on 64-wide subgroups (AMD RDNA3 in wave64),
# Intel's 8x16x16 (Xe2) and 8x8x16 (Arc) on 16-wide ones (docs/devices.md).
set(Z123_KHR_SHAPES m16n8k16 m16n8k8 sg64 m8n16k16 m8n8k16)
function(z123_khr_shape_defines shape out)
  if(shape STREQUAL "m16n8k16")
    set(defs CM_N=8)
  elseif(shape STREQUAL "m16n8k8")
    set(defs CM_N=8 CM_K=8)
  elseif(shape STREQUAL "sg64")
    set(defs SUBGROUP_SIZE=64)
  elseif(shape STREQUAL "m8n16k16")
    set(defs CM_M=8 SUBGROUP_SIZE=16)
  elseif(shape STREQUAL "m8n8k16")
    set(defs CM_M=8 CM_N=8 SUBGROUP_SIZE=16)
  else()
    message(FATAL_ERROR "z123_khr_shape_defines: unknown shape ${shape}")
  endif()
  set(${out} ${defs} PARENT_SCOPE)
endfunction()
file(GLOB Z123_VARIANT_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/variants/*.cmake)
foreach(f ${Z123_VARIANT_FILES})
  include(${f})
endforeach()
