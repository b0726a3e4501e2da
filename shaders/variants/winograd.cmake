# Winograd F(2x2, 3x3) input and output transforms (shaders/winograd.comp; kernels/winograd.hpp),
# per storage type, with four channels per invocation and (the `_v2` ones) two
# (Tuning::winograd_input_vec, winograd_output_vec).
foreach(dt f32 f16)
  set(defs "")
  if(dt STREQUAL f16)
    set(defs DTYPE_F16)
  endif()
  foreach(vec 4 2)
    set(suffix "")
    if(vec EQUAL 2)
      set(suffix "_v2")
    endif()
    z123_shader(NAME winograd_input${suffix}_${dt} SOURCE winograd.comp DEFINES WINO_INPUT WINO_VEC=${vec} ${defs})
    z123_shader(NAME winograd_output${suffix}_${dt} SOURCE winograd.comp DEFINES WINO_OUTPUT WINO_VEC=${vec} ${defs})
  endforeach()
endforeach()
