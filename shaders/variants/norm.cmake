# GroupNorm (three stages of one source: direct, and the split path's partial and apply,
# the bandwidth-bound two also with 4-channel vector accesses) and LayerNorm, each with fp32 and
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
  foreach(stage PARTIAL APPLY)
    string(TOLOWER ${stage} s)
    z123_shader(NAME group_norm_${s}_vec4_${dt} SOURCE group_norm.comp DEFINES STAGE_${stage} VEC=4 ${defs})
  endforeach()
  z123_shader(NAME layer_norm_${dt} SOURCE layer_norm.comp DEFINES ${defs})
  z123_shader(NAME layer_norm_vec4_${dt} SOURCE layer_norm.comp DEFINES VEC=4 ${defs})
endforeach()
