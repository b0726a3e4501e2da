# GEMM family (engine/src/kernels/gemm_dispatch.cpp): linear layers and implicit-GEMM conv2d.
# gemm.comp is the portable register-tiled kernel; gemm_coopmat.comp the cooperative-matrix
# kernel (fp16 only), built for NV cooperative matrix (_nv) and, with COOPMAT_KHR, for KHR
# cooperative matrix (_khr). CONV selects the implicit-im2col loader in both.
foreach(dt f32 f16)
  if(dt STREQUAL "f16")
    set(dt_def DTYPE_F16)
  else()
    set(dt_def "")
  endif()
  z123_shader(NAME gemm_${dt} SOURCE gemm.comp DEFINES ${dt_def})
  z123_shader(NAME gemm_conv_${dt} SOURCE gemm.comp DEFINES CONV ${dt_def})
  # N <= 4 (conv_out to RGB, latent convs): 4 x 4 blocks, so 8-wide ones do not waste half.
  z123_shader(NAME gemm_narrow_${dt} SOURCE gemm.comp DEFINES TM=4 TN=4 ${dt_def})
  z123_shader(NAME gemm_conv_narrow_${dt} SOURCE gemm.comp DEFINES CONV TM=4 TN=4 ${dt_def})
endforeach()
# fp16 inputs, fp32 output (kernels::matmul_f32 on the portable path; the cooperative-matrix
# kernels write fp32 through their split-K partial-sum output instead).
z123_shader(NAME gemm_out32_f16 SOURCE gemm.comp DEFINES DTYPE_F16 OUT_F32)
# Split-K GEMMs (few output tiles): sums the partial sums and applies the epilogue.
z123_shader(NAME gemm_splitk_reduce_f16 SOURCE gemm_splitk_reduce.comp DEFINES DTYPE_F16)
# fp32 models' split-K GEMMs (portable kernel on GPUs).
z123_shader(NAME gemm_splitk_reduce_f32 SOURCE gemm_splitk_reduce.comp)
foreach(kind "" "_conv")
  if(kind STREQUAL "_conv")
    set(conv_def CONV)
    set(wide_bench "")
  else()
    set(conv_def "")
    # Only convolutions take 128 x 256 tiles by themselves (gemm_dispatch.cpp): the linear
    # layers' variant exists for Z123_GEMM_TILE alone.
    set(wide_bench BENCH)
  endif()
  # Tiled portable kernel (gemm_tiled.comp): fp16 GEMMs and convs on GPUs without a usable
  # cooperative-matrix path (gemm_dispatch.cpp portable_kernel): 128 x 128 tiles (8 x 8 per
  # invocation, 16-deep K steps), and 64 x 64 ones (4 x 4, 32-deep) where those still fill a wave.
  z123_shader(NAME gemm${kind}_tiled_f16 SOURCE gemm_tiled.comp DEFINES DTYPE_F16 ${conv_def})
  z123_shader(NAME gemm${kind}_tiled_t64_f16 SOURCE gemm_tiled.comp DEFINES DTYPE_F16 ${conv_def} BM=64 BN=64 BK=32)
  # The same two with packed fp16 products (F16_ARITH), the default where fp16 models run; both sum
  # 8 products per half in fp16 (FLUSH_K 16) before the fp32 accumulators: with 16 (the 64 x 64
  # tiles' whole K step then) the H100's fp16 parity went from 1.59e-3 to 1.77e-3 and 3 levels
  # (bench/NOTES.md session 10). The 64 x 64 one takes 64-deep K steps (17 KiB of shared memory):
  # half the barriers and tile stores per product, 255.6 -> 235.8 ms per step on the H100, the
  # same sums bit for bit (session 12, run 6).
  z123_shader(NAME gemm${kind}_tiled_packed_f16 SOURCE gemm_tiled.comp DEFINES DTYPE_F16 F16_ARITH ${conv_def})
  z123_shader(NAME gemm${kind}_tiled_t64_packed_f16 SOURCE gemm_tiled.comp
              DEFINES DTYPE_F16 F16_ARITH ${conv_def} BM=64 BN=64 BK=64 FLUSH_K=16)
  z123_shader(NAME gemm${kind}_nv_f16 SOURCE gemm_coopmat.comp DEFINES DTYPE_F16 ${conv_def}
              REQUIRES NV_COOPMAT TARGET_ENV vulkan1.3)
  # N <= 16 (conv_out to RGB, latent convs): 128 x 16 tiles, one 16 x 16 fragment per subgroup.
  z123_shader(NAME gemm${kind}_nv_narrow_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 ${conv_def} BN=16 WARPS_M=8 WARPS_N=1 REQUIRES NV_COOPMAT TARGET_ENV vulkan1.3)
  # The same two tilings on KHR cooperative matrix (glslc with GL_KHR_cooperative_matrix only).
  z123_shader(NAME gemm${kind}_khr_f16 SOURCE gemm_coopmat.comp DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def}
              REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3)
  z123_shader(NAME gemm${kind}_khr_narrow_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BN=16 WARPS_M=8 WARPS_N=1 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
  # The default and narrow tilings again for the other fragment shapes devices list (kernels.cpp
  # khr_gemm_shapes picks; shaders/variants.cmake defines them). Same source, other constants.
  foreach(shape ${Z123_KHR_SHAPES})
    z123_khr_shape_defines(${shape} shape_defs)
    z123_shader(NAME gemm${kind}_khr_${shape}_f16 SOURCE gemm_coopmat.comp
                DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} ${shape_defs} REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3)
    z123_shader(NAME gemm${kind}_khr_narrow_${shape}_f16 SOURCE gemm_coopmat.comp
                DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BN=16 WARPS_M=8 WARPS_N=1 ${shape_defs} REQUIRES KHR_COOPMAT
                TARGET_ENV vulkan1.3)
  endforeach()
  # 128 x 256 tiles with 64 x 64 per subgroup: large convolutions (1,024+ workgroups, the VAE
  # decoder's upper levels) take them (bench/NOTES.md session 2: 2.83 against 4.86 ms).
  z123_shader(NAME gemm${kind}_khr_t128x256_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BN=256 BK=32 REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3
              ${wide_bench})
  # Bench-only (Z123_BENCH_VARIANTS): alternative KHR tilings that Z123_GEMM_TILE picks to measure
  # them against the rule on a GPU; none won anywhere (bench/NOTES.md sessions 2 and 4): 256 x 128
  # tiles, double-buffered BK 32, and 4 x 2 subgroups of 32 x 64.
  z123_shader(NAME gemm${kind}_khr_t256x128_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BM=256 BK=32 WARPS_M=4 WARPS_N=2 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3 BENCH)
  z123_shader(NAME gemm${kind}_khr_k32s2_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BK=32 STAGES=2 REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3
              BENCH)
  z123_shader(NAME gemm${kind}_khr_w4x2_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} WARPS_M=4 WARPS_N=2 REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3
              BENCH)
  # Bench-only: 4 x 4 subgroups of 32 x 32 with double-buffered BK 32 (53.9 ms/step against 46.1 for
  # the single-buffered w4x4 below, bench/NOTES.md session 16 run 3).
  z123_shader(NAME gemm${kind}_khr_w4x4s2_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} WARPS_M=4 WARPS_N=4 BK=32 STAGES=2 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3 BENCH)
  # 4-subgroup tilings with 32-deep K steps, each subgroup 64 x 32 as in the default: 152-154
  # registers per invocation on an H100 against the default's 167-178, so three of these
  # workgroups share an SM where one default workgroup sits alone. gemm_dispatch.cpp picks them
  # by how the tiles fill whole waves of SMs (bench/NOTES.md session 5).
  # 128 x 128 tiles on 4 x 4 subgroups of 32 x 32 (512 invocations): a workgroup that size must fit
  # 128 registers per invocation (97-128 here, against 167-178 for the 2 x 4 default above), so an
  # SM runs 16 warps instead of 8. gemm_dispatch.cpp takes it wherever the KHR rule says 128 x 128
  # (khr_square_tiles_win); the 2 x 4 one stays for the fp32 raw products and other fragment shapes.
  z123_shader(NAME gemm${kind}_khr_w4x4_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} WARPS_M=4 WARPS_N=4 REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3)
  # 256 x 64 tiles on 8 x 2 subgroups of 32 x 32 (512 invocations, at most 128 registers): in place
  # of the 128 x 64 ones where they make two or more waves (gemm_dispatch.cpp khr_tall_tiles_win).
  z123_shader(NAME gemm${kind}_khr_t256x64_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BM=256 BN=64 WARPS_M=8 WARPS_N=2 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
  # 96 x 128 tiles on 3 x 4 subgroups of 32 x 32 (384 invocations): in place of the square ones
  # where those leave a wave's SMs idle and K is whole (gemm_dispatch.cpp khr_short_tiles_win).
  z123_shader(NAME gemm${kind}_khr_t96x128_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BM=96 WARPS_M=3 WARPS_N=4 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
  # 128 x 64 tiles on 2 x 2 subgroups: for N = 320, whose last 128-wide column tile is half padding.
  z123_shader(NAME gemm${kind}_khr_t128x64_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BN=64 WARPS_M=2 WARPS_N=2 BK=32 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
  # 64 x 128 tiles on 1 x 4 subgroups: for M of thousands of rows and N of 128 to 1,280.
  z123_shader(NAME gemm${kind}_khr_t64x128_f16 SOURCE gemm_coopmat.comp
              DEFINES DTYPE_F16 COOPMAT_KHR ${conv_def} BM=64 WARPS_M=1 WARPS_N=4 BK=32 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
endforeach()
