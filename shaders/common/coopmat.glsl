// Cooperative-matrix macro layer: the coopmat kernels (gemm_coopmat.comp, the coopmat path
// of attention.comp) are written once against these names and compile either with
// GL_NV_cooperative_matrix (default; Debian 12's glslc has it) or, with COOPMAT_KHR defined,
// with GL_KHR_cooperative_matrix (needs a newer glslc, see docs/newer-glslc.md).
//
// Matrices are at subgroup scope: fp16 A (CM_M x CM_K) and B (CM_K x CM_N) operands, fp32
// accumulators (CM_M x CM_N). CM_M, CM_N, CM_K default to 16; under KHR they may be any shape
// the device lists for fp16 x fp16 -> fp32 (kernels.cpp chooses, the variant defines them);
// NV v1 builds take 16 x 16 x 16 only. Offsets along K count 8-half units, so CM_K and CM_N
// must be multiples of 8 and 4.
//   CM_F16A, CM_F16B   fp16 operands of cmMulAdd (one type under NV, distinct uses under KHR)
//   CM_F32ACC          fp32 accumulator
//   CM_F16ACC          fp16 matrix that an fp32 accumulator converts to by constructor
//   cmLoad / cmStore(m, buf, element, stride, CM_ROW_MAJOR | CM_COL_MAJOR)
//   cmMulAdd(a, b, c)  a * b + c
//   CM_ACC_TO_A        1: an fp16 accumulator becomes an A operand in registers, by CM_AS_A(m):
//                      under NV, CM_F16ACC is CM_F16A; under KHR with COOPMAT_NV_CONVERT, through
//                      GL_NV_cooperative_matrix2's use conversions (the device must enable
//                      cooperativeMatrixConversions). 0 (plain KHR): conversions keep the matrix
//                      use, so such values go through shared memory.
//
// Both extensions count `element` and `stride` in elements of buf's array type (the kernels pass
// uvec4 arrays: units of 8 halves or 4 floats), not in bytes and not in matrix components, so
// the kernels' offsets are the same under either.
// Which invocation holds which element (m[i], m.length()) is implementation-defined under both;
// the kernels that depend on it learn it at run time (attention_coopmat.glsl).
#ifndef Z123_COOPMAT_GLSL
#define Z123_COOPMAT_GLSL

#extension GL_KHR_memory_scope_semantics : require

#ifndef CM_M
#define CM_M 16
#endif
#ifndef CM_N
#define CM_N 16
#endif
#ifndef CM_K
#define CM_K 16
#endif
#if (CM_K % 8) != 0 || (CM_N % 4) != 0
#error "CM_K must be a multiple of 8 and CM_N of 4"
#endif

#ifdef COOPMAT_KHR
#extension GL_KHR_cooperative_matrix : require
#define CM_F16A coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA>
#define CM_F16B coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB>
#define CM_F16ACC coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>
#define CM_F32ACC coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>
#define CM_ROW_MAJOR gl_CooperativeMatrixLayoutRowMajor
#define CM_COL_MAJOR gl_CooperativeMatrixLayoutColumnMajor
#define cmLoad coopMatLoad
#define cmStore coopMatStore
#define cmMulAdd coopMatMulAdd
#ifdef COOPMAT_NV_CONVERT
#extension GL_NV_cooperative_matrix2 : require
#define CM_ACC_TO_A 1
#define CM_AS_A(m) CM_F16A(m)
#else
#define CM_ACC_TO_A 0
#endif
#else
#if CM_M != 16 || CM_N != 16 || CM_K != 16
#error "the NV v1 builds are 16 x 16 x 16 only"
#endif
#extension GL_NV_cooperative_matrix : require
#define CM_F16A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define CM_F16B CM_F16A
#define CM_F16ACC CM_F16A
#define CM_F32ACC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define CM_ROW_MAJOR false // NV takes a bool: column-major
#define CM_COL_MAJOR true
#define cmLoad coopMatLoadNV
#define cmStore coopMatStoreNV
#define cmMulAdd coopMatMulAddNV
#define CM_ACC_TO_A 1
#define CM_AS_A(m) (m)
#endif

#endif
