# Every compute-shader variant the engine embeds. Variants of one source differ only by defines.
z123_shader(NAME fill_u32 SOURCE fill.comp)
z123_shader(NAME axpy_f32 SOURCE axpy.comp)
z123_shader(NAME probe_khr_coopmat SOURCE ../cmake/probes/KHR_COOPMAT.comp REQUIRES KHR_COOPMAT
            TARGET_ENV vulkan1.3)
