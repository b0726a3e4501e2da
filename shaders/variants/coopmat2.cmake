# NV cooperative matrix 2 (GL_NV_cooperative_matrix2; Path::NvCoopMat2), fp16 only. Built only
# when glslc accepts the extension (docs/newer-glslc.md); workgroup-scope matrices need SPIR-V 1.6.
#
# GEMM (gemm_coopmat2.comp; engine/src/kernels/gemm_dispatch.cpp): 256 invocations, 64-deep K
# steps, 128 x 128 tiles, and 128 x 256 ("_l") for problems with enough tiles to fill the GPU.
# CONV selects the implicit-im2col loader. N <= 16 stays on the v1 kernels' narrow variants.
foreach(kind "" "_conv")
  if(kind STREQUAL "_conv")
    set(conv_def CONV)
  else()
    set(conv_def "")
  endif()
  z123_shader(NAME gemm${kind}_nvcm2_f16 SOURCE gemm_coopmat2.comp DEFINES DTYPE_F16 ${conv_def}
              REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
  z123_shader(NAME gemm${kind}_nvcm2_l_f16 SOURCE gemm_coopmat2.comp DEFINES DTYPE_F16 ${conv_def} BN=256
              REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
endforeach()

# Attention (attention.comp with ATTN_NV_COOPMAT2; engine/src/kernels/attention.cpp), head size 64
# (every UNet head), not causal. Default: 64 query rows x 64-key tiles on 4 subgroups (ggml's
# coopmat2 choice for head size 64). _br128: 128 rows on 8 subgroups, which halves the K/V
# traffic per query and keeps the per-invocation share of each matrix the same; the faster one
# on the H200 should become the default. Until measured, _br128 is bench-only
# (Z123_BENCH_VARIANTS; Z123_ATTN_CM2_ROWS=128 selects it).
z123_shader(NAME attention_d64_nvcm2_f16 SOURCE attention.comp
            DEFINES HEAD_DIM=64 ATTN_NV_COOPMAT2 DTYPE_F16 REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
z123_shader(NAME attention_d64_nvcm2_br128_f16 SOURCE attention.comp
            DEFINES HEAD_DIM=64 ATTN_NV_COOPMAT2 ATTN_BR=128 ATTN_NT=256 DTYPE_F16 REQUIRES NV_COOPMAT2
            TARGET_ENV vulkan1.3 BENCH)
