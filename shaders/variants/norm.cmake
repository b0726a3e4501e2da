# GroupNorm (four stages of one source: direct, register-resident, and the split path's partial
# and apply, also with vector accesses; the statistics alone as a table) and LayerNorm, each with fp32 and
# fp16 storage (fp32 statistics always).
foreach(dt f32 f16)
  set(defs "")
  if(dt STREQUAL f16)
    set(defs DTYPE_F16)
  endif()
  foreach(stage DIRECT PARTIAL APPLY)
    string(TOLOWER ${stage} s)
    z123_shader(NAME group_norm_${s}_${dt} SOURCE group_norm.comp DEFINES STAGE_${stage} ${defs})
  endforeach()
  foreach(stage DIRECT PARTIAL APPLY)
    string(TOLOWER ${stage} s)
    z123_shader(NAME group_norm_${s}_vec4_${dt} SOURCE group_norm.comp DEFINES STAGE_${stage} VEC=4 ${defs})
  endforeach()
  # The statistics alone, as a per-channel table for a kernel that applies the norm as it reads
  # (kernels::group_norm_table), on the direct and the split path (whose PARTIAL stage's last
  # workgroup merges: no APPLY stage).
  foreach(stage DIRECT PARTIAL)
    string(TOLOWER ${stage} s)
    z123_shader(NAME group_norm_table_${s}_${dt} SOURCE group_norm.comp DEFINES STAGE_${stage} TABLE_OUT ${defs})
    z123_shader(NAME group_norm_table_${s}_vec4_${dt} SOURCE group_norm.comp
                DEFINES STAGE_${stage} TABLE_OUT VEC=4 ${defs})
  endforeach()
  # The register-resident single dispatch, by channels per access (the largest of 4, 2, 1 that
  # divides the channels per group).
  foreach(ev 1 2 4)
    z123_shader(NAME group_norm_resident_ev${ev}_${dt} SOURCE group_norm.comp DEFINES STAGE_RESIDENT EV=${ev} ${defs})
  endforeach()
  z123_shader(NAME layer_norm_${dt} SOURCE layer_norm.comp DEFINES ${defs})
  z123_shader(NAME layer_norm_vec4_${dt} SOURCE layer_norm.comp DEFINES VEC=4 ${defs})
endforeach()
