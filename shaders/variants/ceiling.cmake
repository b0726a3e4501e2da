# Bench-only: the KHR GEMM inner loop with parts taken away (shaders/coopmat_ceiling.comp,
# zero123pp-bench-mma-ceiling lists the same configurations): subgroup grid, fragments per
# subgroup block, K step.
set(Z123_CEILING_CONFIGS
    "w4x4:WARPS_M=4;WARPS_N=4;FM=2;FN=2;BK=64" "w4x4k32:WARPS_M=4;WARPS_N=4;FM=2;FN=2;BK=32"
    "w2x4:WARPS_M=2;WARPS_N=4;FM=4;FN=2;BK=64" "w4x4f42:WARPS_M=4;WARPS_N=4;FM=4;FN=2;BK=32"
    "w2x2f44:WARPS_M=2;WARPS_N=2;FM=4;FN=4;BK=64" "w4x4k80:WARPS_M=4;WARPS_N=4;FM=2;FN=2;BK=80")
foreach(cfg ${Z123_CEILING_CONFIGS})
  string(REPLACE ":" ";" parts "${cfg}")
  list(GET parts 0 name)
  list(REMOVE_AT parts 0)
  foreach(mode 0 2 3 4)
    z123_shader(NAME coopmat_ceiling_m${mode}_${name} SOURCE coopmat_ceiling.comp DEFINES CEIL_MODE=${mode} ${parts}
                REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3 BENCH)
  endforeach()
endforeach()
