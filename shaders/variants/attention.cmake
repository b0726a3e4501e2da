# Attention (shaders/attention.comp): portable variants per head size and storage type, and the
# NV cooperative-matrix (tensor core) variants, fp16 only.
# Portable, head sizes 16/32/64: the register-tiled kernel (common/attention_tiled.glsl), 4 query
# rows per invocation, in two sizes chosen by the device's shared memory (attention.cpp):
#   _t128 128 invocations, for 32 KiB (lavapipe): D 16/32/64 take 128/64/32 queries and 16/32/64-key
#         tiles, 17/20/32 KiB in fp16 (fp32: 32-key tiles at D 64, 28 KiB);
#   _t256 256 invocations, twice the queries, for 48 KiB (33/36/48 KiB in fp16, 40 in fp32 at D 64);
#   _pv16 the fp16 ones with packed P·V (P fp16: 8 KiB less at D 64 on 256 invocations).
# Portable, head sizes 80 and 512: one invocation per query (common/attention_portable.glsl):
#   D 80:  64 queries per workgroup, 32-key tiles (20 KiB of K/V + 8 KiB of scores);
#   D 512: 8 invocations per query (64 columns each), 16 queries, 4-key tiles (18 KiB shared),
#          so the VAE's single 512-wide head fits lavapipe's 32 KiB of shared memory.
# The tiled attention's trials (Z123_ATTN_TILED_TRIAL): name:define[,define...], bench-only; a
# trial that sets PV_RUN replaces the default's runs. Session 24 measured ten ideas in sixteen
# trials (bench/NOTES.md); the four that paid (8-half loads, unrolled loops, no masks on whole
# tiles, paired runs of 32) are the default now. pv32: one fp16 sum over 32 keys (faster still,
# 3 levels in the parity image).
set(Z123_ATTN_TILED_TRIALS pv32:PV_RUN=32)
foreach(dt f32 f16)
  set(dt_defs "")
  if(dt STREQUAL "f16")
    set(dt_defs DTYPE_F16)
  endif()
  foreach(d 16 32 64)
    set(ks 4)
    if(d EQUAL 64 AND dt STREQUAL "f32")
      set(ks 2) # fp32 pairs take twice the shared memory: 64-key tiles would not fit
    endif()
    # Packed P·V's fp16 sums: runs of 32 keys as two sums of 16 added in fp16 (ATTN_PV_PAIRED);
    # head size 16's 16-key tiles take one sum of 16.
    set(pv_defs PV_RUN=32 ATTN_PV_PAIRED)
    if(d EQUAL 16)
      set(pv_defs PV_RUN=16)
    endif()
    foreach(nt 128 256)
      z123_shader(NAME attention_d${d}_t${nt}_${dt} SOURCE attention.comp
                  DEFINES HEAD_DIM=${d} ATTN_TILED ATTN_NT=${nt} ATTN_RO=4 ATTN_KS=${ks} ${dt_defs})
      if(dt STREQUAL "f16")
        # Packed fp16 P·V, summed in fp16 over 16 keys at a time (_pv16): the default where the
        # portable GEMMs take packed products too (attention.cpp). H100, level 0: 14.0 ms against
        # 14.5 (session 13; runs of 8 keys took 1.5% more per step); the paired runs of 32 10.99
        # against 11.88 for runs of 16 (session 24, run 5).
        z123_shader(NAME attention_d${d}_t${nt}_pv16_${dt} SOURCE attention.comp
                    DEFINES HEAD_DIM=${d} ATTN_TILED ATTN_NT=${nt} ATTN_RO=4 ATTN_KS=${ks} ATTN_PACKED_PV ${pv_defs}
                    ${dt_defs})
        if(d EQUAL 64)
          # The UNet's kernel with one part taken away (ATTN_ABLATE 1-5, common/attention_tiled.glsl),
          # for zero123pp-bench-attn-ceiling: wrong results by design, bench-only.
          foreach(mode 1 2 3 4 5)
            z123_shader(NAME attention_d${d}_t${nt}_pv16_ablate${mode}_${dt} SOURCE attention.comp
                        DEFINES HEAD_DIM=${d} ATTN_TILED ATTN_NT=${nt} ATTN_RO=4 ATTN_KS=${ks} ATTN_PACKED_PV
                        ${pv_defs} ATTN_ABLATE=${mode} ${dt_defs} BENCH)
          endforeach()
          # Candidates for the default (Z123_ATTN_TILED_TRIAL, common/attention_tiled.glsl's
          # "Trials"), bench-only: the trial's name, then its defines. The list of names is
          # kernels::tiled_attention_trials (attention.cpp); a test keeps the two in step.
          foreach(trial ${Z123_ATTN_TILED_TRIALS})
            string(REPLACE ":" ";" trial_parts "${trial}")
            list(POP_FRONT trial_parts trial_name)
            string(REPLACE "," ";" trial_defs "${trial_parts}")
            set(run_def ${pv_defs}) # unless the trial sets the runs itself
            if(trial_parts MATCHES "PV_RUN=")
              set(run_def "")
            endif()
            z123_shader(NAME attention_d${d}_t${nt}_pv16_${trial_name}_${dt} SOURCE attention.comp
                        DEFINES HEAD_DIM=${d} ATTN_TILED ATTN_NT=${nt} ATTN_RO=4 ATTN_KS=${ks} ATTN_PACKED_PV
                        ${run_def} ${trial_defs} ${dt_defs} BENCH)
          endforeach()
        endif()
      endif()
    endforeach()
  endforeach()
  z123_shader(NAME attention_d80_${dt} SOURCE attention.comp
              DEFINES HEAD_DIM=80 ATTN_DSPLIT=1 ATTN_QB=64 ATTN_BK=32 ${dt_defs})
  z123_shader(NAME attention_d512_${dt} SOURCE attention.comp
              DEFINES HEAD_DIM=512 ATTN_DSPLIT=8 ATTN_QB=16 ATTN_BK=4 ${dt_defs})
endforeach()
# The cooperative-matrix variants, for the UNet's head size 64 and CLIP vision's 80 (16 heads of
# 257 tokens: 162 us a call on the portable kernel against ~15 on tensor cores, 32 calls an image,
# bench/NOTES.md session 21). Head size 80 takes 32-key tiles: 64 would need 56 KiB of shared
# memory; 32 keep it at 34 KiB.
# NV cooperative matrix: 8 subgroups x 16 query rows, 64-key tiles, 2 K/V stages (47.25 KiB shared).
foreach(d 64 80)
  set(kv_defs HEAD_DIM=${d})
  if(d EQUAL 80)
    list(APPEND kv_defs ATTN_BK=32)
  endif()
  z123_shader(NAME attention_d${d}_nvcm_f16 SOURCE attention.comp
              DEFINES ${kv_defs} ATTN_COOPMAT DTYPE_F16 REQUIRES NV_COOPMAT TARGET_ENV vulkan1.3)
  # The same with the generic (shared-memory) row reductions forced, so tests cover that route on
  # GPUs whose accumulator layout would take the quad route (Z123_ATTN_COOPMAT_GENERIC=1). These
  # generic twins are for tests only but not BENCH: on the NVIDIA GPUs the project tests on they
  # are the only coverage of the route other vendors' devices run, and every test build must keep
  # it.
  z123_shader(NAME attention_d${d}_nvcm_generic_f16 SOURCE attention.comp
              DEFINES ${kv_defs} ATTN_COOPMAT ATTN_FORCE_GENERIC DTYPE_F16 REQUIRES NV_COOPMAT TARGET_ENV vulkan1.3)
  # Both again on KHR cooperative matrix (glslc with GL_KHR_cooperative_matrix only). P reaches
  # P·V through the per-subgroup scratch, so the shared memory is the same.
  z123_shader(NAME attention_d${d}_khrcm_f16 SOURCE attention.comp
              DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR DTYPE_F16 REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3)
  z123_shader(NAME attention_d${d}_khrcm_generic_f16 SOURCE attention.comp
              DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR ATTN_FORCE_GENERIC DTYPE_F16 REQUIRES KHR_COOPMAT
              TARGET_ENV vulkan1.3)
  # KHR again, with P converted to an A operand in registers by NV cooperative matrix 2's use
  # conversions instead of the round trip through shared memory: the default where the device
  # enables VK_NV_cooperative_matrix2 (attention.cpp).
  z123_shader(NAME attention_d${d}_khrcm_cv_f16 SOURCE attention.comp
              DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR COOPMAT_NV_CONVERT DTYPE_F16 REQUIRES NV_COOPMAT2
              TARGET_ENV vulkan1.3)
  # The KHR kernels again for the other fragment shapes (shaders/variants.cmake): the one the
  # GEMMs use is the attention's too (attention.cpp). The generic-route twin only where the quad
  # route exists (16-row fragments on 32-wide subgroups); the in-register P conversion only where
  # P's fragments are A's shape (CM_N = CM_K) on NVIDIA's shapes.
  foreach(shape ${Z123_KHR_SHAPES})
    z123_khr_shape_defines(${shape} shape_defs)
    z123_shader(NAME attention_d${d}_khrcm_${shape}_f16 SOURCE attention.comp
                DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR DTYPE_F16 ${shape_defs} REQUIRES KHR_COOPMAT
                TARGET_ENV vulkan1.3)
    if(shape MATCHES "^m16n8")
      z123_shader(NAME attention_d${d}_khrcm_generic_${shape}_f16 SOURCE attention.comp
                  DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR ATTN_FORCE_GENERIC DTYPE_F16 ${shape_defs}
                  REQUIRES KHR_COOPMAT TARGET_ENV vulkan1.3)
    endif()
    if(shape STREQUAL "m16n8k8")
      z123_shader(NAME attention_d${d}_khrcm_cv_${shape}_f16 SOURCE attention.comp
                  DEFINES ${kv_defs} ATTN_COOPMAT COOPMAT_KHR COOPMAT_NV_CONVERT DTYPE_F16 ${shape_defs}
                  REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
    endif()
  endforeach()
endforeach()
# 16 subgroups (512 invocations, 256 queries per workgroup: at most 128 registers, 16 warps per SM
# instead of 8), the quad route alone so that it fits 48 KiB: the default at head size 64 where the
# device's accumulators are laid out in quads (the layout probe below says so) and khrcm_cv runs.
z123_shader(NAME attention_d64_khrcm_cv_nw16_f16 SOURCE attention.comp
            DEFINES HEAD_DIM=64 ATTN_COOPMAT COOPMAT_KHR COOPMAT_NV_CONVERT DTYPE_F16 ATTN_NW=16 ATTN_QUAD_ONLY
            REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
# Its ablations (ATTN_ABLATE, common/attention_coopmat.glsl; kernels::khr_attention_ablations), for
# zero123pp-bench-attn-ceiling --khr: wrong results by design, bench-only.
foreach(ablation noexp:1 nopv:2 nos:3 noload:4 krow:5)
  string(REPLACE ":" ";" parts "${ablation}")
  list(GET parts 0 name)
  list(GET parts 1 mode)
  z123_shader(NAME attention_d64_khrcm_cv_nw16_${name}_f16 SOURCE attention.comp
              DEFINES HEAD_DIM=64 ATTN_COOPMAT COOPMAT_KHR COOPMAT_NV_CONVERT DTYPE_F16 ATTN_NW=16 ATTN_QUAD_ONLY
              ATTN_ABLATE=${mode} BENCH REQUIRES NV_COOPMAT2 TARGET_ENV vulkan1.3)
endforeach()
# The accumulator layout probe (kernels::Kernels::khr_accumulator_rows_in_quads), 16 x 16 fp32.
z123_shader(NAME coopmat_layout_probe SOURCE coopmat_layout_probe.comp DEFINES COOPMAT_KHR REQUIRES KHR_COOPMAT
            TARGET_ENV vulkan1.3)
# Row softmax of fp32 scores into the storage type (the wide-head attention route of
# kernels::softmax_rows, nets::vae_attention).
z123_shader(NAME softmax_rows_f32 SOURCE softmax_rows.comp)
z123_shader(NAME softmax_rows_f16 SOURCE softmax_rows.comp DEFINES DTYPE_F16)
