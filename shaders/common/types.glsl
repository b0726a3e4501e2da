// Storage type selection for kernels built in fp32 and fp16 variants. Define DTYPE_F16 for the
// fp16 variant. Arithmetic and accumulation are always fp32 (ACC); only storage changes.
#ifndef Z123_TYPES_GLSL
#define Z123_TYPES_GLSL

#ifdef DTYPE_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define STORE_T float16_t
#define STORE_T2 f16vec2
#define STORE_T4 f16vec4
#else
#define STORE_T float
#define STORE_T2 vec2
#define STORE_T4 vec4
#endif

#define LOAD(x) float(x)
#define STORE(x) STORE_T(x)

#endif
