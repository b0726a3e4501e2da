# Every compute-shader variant the engine embeds, one file per kernel family under
# shaders/variants/. Variants of one source differ only by defines (never copy-pasted GLSL).
z123_shader(NAME fill_u32 SOURCE fill.comp)
z123_shader(NAME axpy_f32 SOURCE axpy.comp)
# Proof that a newer glslc (docs/newer-glslc.md) builds KHR cooperative-matrix code.
z123_shader(NAME probe_khr_coopmat SOURCE ../cmake/probes/KHR_COOPMAT.comp REQUIRES KHR_COOPMAT
            TARGET_ENV vulkan1.3)
file(GLOB Z123_VARIANT_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/shaders/variants/*.cmake)
foreach(f ${Z123_VARIANT_FILES})
  include(${f})
endforeach()
