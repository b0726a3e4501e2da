# Winograd F(2x2, 3x3) input and output transforms (shaders/winograd.comp; kernels/winograd.hpp),
# per storage type.
foreach(dt f32 f16)
  set(defs "")
  if(dt STREQUAL f16)
    set(defs DTYPE_F16)
  endif()
  z123_shader(NAME winograd_input_${dt} SOURCE winograd.comp DEFINES WINO_INPUT ${defs})
  z123_shader(NAME winograd_output_${dt} SOURCE winograd.comp DEFINES WINO_OUTPUT ${defs})
endforeach()
