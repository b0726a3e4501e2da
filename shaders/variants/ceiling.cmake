# Bench-only: the KHR GEMM inner loop with parts taken away (shaders/coopmat_ceiling.comp,
# zero123pp-bench-mma-ceiling lists the same configurations): subgroup grid, fragments per
# subgroup block, K step. Each entry is name:defines with the defines separated by commas (a
# semicolon would split the entry itself: until session 28 every configuration here was built
# with WARPS_M alone and the defaults for the rest, bench/NOTES.md).
set(Z123_CEILING_CONFIGS
    "w4x4:WARPS_M=4,WARPS_N=4,FM=2,FN=2,BK=64" "w4x4k32:WARPS_M=4,WARPS_N=4,FM=2,FN=2,BK=32"
    "w2x4:WARPS_M=2,WARPS_N=4,FM=4,FN=2,BK=64" "w4x4f42:WARPS_M=4,WARPS_N=4,FM=4,FN=2,BK=32"
    "w2x2f44:WARPS_M=2,WARPS_N=2,FM=4,FN=4,BK=64" "w4x4k80:WARPS_M=4,WARPS_N=4,FM=2,FN=2,BK=80")
# Modes 5 and 6 (two halves with tiles of their own) where both halves' tiles fit 48 KiB.
set(Z123_CEILING_SPLIT_CONFIGS
    "w4x4k32:WARPS_M=4,WARPS_N=4,FM=2,FN=2,BK=32" "w4x4k48:WARPS_M=4,WARPS_N=4,FM=2,FN=2,BK=48"
    "w8x2k32:WARPS_M=8,WARPS_N=2,FM=2,FN=2,BK=32" "w8x2k48:WARPS_M=8,WARPS_N=2,FM=2,FN=2,BK=48")
function(z123_ceiling_variants configs modes)
  foreach(cfg ${configs})
    string(FIND "${cfg}" ":" colon)
    string(SUBSTRING "${cfg}" 0 ${colon} name)
    math(EXPR rest "${colon} + 1")
    string(SUBSTRING "${cfg}" ${rest} -1 defs)
    string(REPLACE "," ";" defs "${defs}")
    foreach(mode ${modes})
      z123_shader(NAME coopmat_ceiling_m${mode}_${name} SOURCE coopmat_ceiling.comp DEFINES CEIL_MODE=${mode} ${defs}
                  REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3 BENCH)
    endforeach()
  endforeach()
endfunction()
z123_ceiling_variants("${Z123_CEILING_CONFIGS}" "0;2;3;4")
z123_ceiling_variants("${Z123_CEILING_SPLIT_CONFIGS}" "5;6")
