// Exact (erf) GELU, x * Phi(x), for the pointwise kernel (elementwise.comp) and the GEMM's fused
// GEGLU epilogue (common/gemm_io.glsl): one definition, so the fused and unfused feed-forwards
// round alike. GELU_T is the value type (float unless the includer defines it, e.g. vec4);
// GELU_VECTOR marks a vector GELU_T (its sign select must be per lane).
//
// Phi(x) = 0.5 erfc(-x / sqrt 2). erfc(z), z >= 0, by the Chebyshev-fitted form
// t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), fractional error < 1.2e-7 for all z >= 0 (Numerical
// Recipes, "erfcc"). Taking the small side from erfc keeps the negative tail relatively accurate
// (a plain erf with 1e-7 absolute error would lose it). GLSL exp adds <= 3 + 2|arg| ulp.
#ifndef Z123_GELU_GLSL
#define Z123_GELU_GLSL

#ifndef GELU_T
#define GELU_T float
#endif

GELU_T normal_cdf(GELU_T x) {
  GELU_T z = abs(x) * 0.70710678118654752;
  GELU_T t = 1.0 / (1.0 + 0.5 * z);
  GELU_T p = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
             t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  GELU_T half_erfc = 0.5 * t * exp(p - z * z);
#ifdef GELU_VECTOR
  return mix(half_erfc, 1.0 - half_erfc, greaterThanEqual(x, GELU_T(0.0))); // per-lane select
#else
  return x >= 0.0 ? 1.0 - half_erfc : half_erfc;
#endif
}

GELU_T gelu(GELU_T x) { return x * normal_cdf(x); }

#endif
