#include "reference_gemm.hpp"

#include <cmath>

#include "support/check.hpp"

namespace z123::test {

double reference_activation(double v, kernels::Epilogue act) {
  switch (act) {
  case kernels::Epilogue::None: return v;
  case kernels::Epilogue::Gelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  case kernels::Epilogue::Silu: return v / (1.0 + std::exp(-v));
  }
  return v;
}

std::vector<double> reference_linear(const std::vector<float>& x, const std::vector<float>& w,
                                     const std::vector<float>& bias, const std::vector<float>& residual, int64_t M,
                                     int64_t N, int64_t K, kernels::Epilogue act) {
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += double(x[m * K + k]) * double(w[n * K + k]);
      if (!bias.empty()) s += bias[n];
      s = reference_activation(s, act);
      if (!residual.empty()) s += residual[m * N + n];
      y[m * N + n] = s;
    }
  }
  return y;
}

std::vector<double> reference_conv2d_nhwc(const std::vector<float>& x, const std::vector<float>& w_oihw,
                                          const std::vector<float>& bias, const std::vector<float>& residual,
                                          const ConvRefShape& s, const kernels::Conv2dParams& p, kernels::Epilogue act,
                                          int64_t& Ho, int64_t& Wo) {
  const int64_t hu = s.H * p.upsample, wu = s.W * p.upsample; // upsampled input size
  Ho = (hu + p.pad_top + p.pad_bottom - s.KH) / p.stride + 1;
  Wo = (wu + p.pad_left + p.pad_right - s.KW) / p.stride + 1;
  std::vector<double> y(static_cast<size_t>(s.B * Ho * Wo * s.Cout));
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t oy = 0; oy < Ho; ++oy)
      for (int64_t ox = 0; ox < Wo; ++ox)
        for (int64_t co = 0; co < s.Cout; ++co) {
          double acc = 0;
          for (int64_t ky = 0; ky < s.KH; ++ky)
            for (int64_t kx = 0; kx < s.KW; ++kx) {
              int64_t iy = oy * p.stride - p.pad_top + ky, ix = ox * p.stride - p.pad_left + kx;
              if (iy < 0 || ix < 0 || iy >= hu || ix >= wu) continue; // zero padding
              int64_t sy = iy / p.upsample, sx = ix / p.upsample;     // nearest-neighbour source
              for (int64_t ci = 0; ci < s.Cin; ++ci)
                acc += double(x[((b * s.H + sy) * s.W + sx) * s.Cin + ci]) *
                       double(w_oihw[((co * s.Cin + ci) * s.KH + ky) * s.KW + kx]);
            }
          if (!bias.empty()) acc += bias[co];
          acc = reference_activation(acc, act);
          size_t o = static_cast<size_t>(((b * Ho + oy) * Wo + ox) * s.Cout + co);
          if (!residual.empty()) acc += residual[o];
          y[o] = acc;
        }
  return y;
}

std::vector<GemmCase> gemm_test_cases() {
  return {{kernels::Path::Portable, DType::F32},
          {kernels::Path::Portable, DType::F16},
          {kernels::Path::NvCoopMat, DType::F16},
          {kernels::Path::KhrCoopMat, DType::F16},
          {kernels::Path::NvCoopMat2, DType::F16}};
}

std::string gemm_case_name(const GemmCase& c) {
  std::string p = c.path == kernels::Path::Portable     ? "portable"
                  : c.path == kernels::Path::NvCoopMat  ? "nvcoopmat"
                  : c.path == kernels::Path::KhrCoopMat ? "khrcoopmat"
                  : c.path == kernels::Path::NvCoopMat2 ? "nvcoopmat2"
                                                        : "other";
  return p + "_" + dtype_name(c.dtype);
}

Tolerance gemm_tolerance(DType dtype) { return dtype == DType::F32 ? Tolerance{1e-5, 1e-5} : Tolerance{1e-5, 1e-3}; }

::testing::AssertionResult gemm_close(const std::vector<float>& got, const std::vector<double>& ref, DType dtype,
                                      const std::vector<double>* abs_products) {
  const Tolerance tol = gemm_tolerance(dtype);
  if (!abs_products) return all_close(got, ref, tol.atol, tol.rtol);
  constexpr double kActivationSlope = 1.2;
  std::vector<double> bound(abs_products->size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = kActivationSlope * kFp16SumGamma * (*abs_products)[i];
  ::testing::AssertionResult each = all_close(got, ref, tol.atol, tol.rtol, bound);
  if (!each) return each;
  constexpr double kMaxRelL2 = 2e-3;
  const ErrorReport rep = compare(got, ref);
  if (rep.rel_l2 > kMaxRelL2)
    return ::testing::AssertionFailure() << "relative L2 " << rep.rel_l2 << " above " << kMaxRelL2
                                         << " for fp16 partial sums; " << rep.summary();
  return each;
}

std::vector<float> abs_values(std::vector<float> v) {
  for (float& e : v) e = std::fabs(e);
  return v;
}

Tensor device_tensor(vk::Device& device, DType dtype, const std::vector<int64_t>& shape,
                     const std::vector<float>& values, const std::string& name) {
  Tensor t = make_tensor(device, dtype, shape, name);
  upload(device, t, values);
  return t;
}

} // namespace z123::test
