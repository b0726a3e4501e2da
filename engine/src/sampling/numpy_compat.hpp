// The few numpy float64 routines diffusers' set_timesteps runs, re-derived from numpy's C code
// paths so the schedule matches the reference bit for bit (the step counts and ties it produces are
// part of the reference behaviour, spec §11.2). Internal to the sampling sources.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

namespace z123::sampling::np {

// np.linspace(start, stop, num) (endpoint=True) in float64: y[i] = i * step + start with
// step = (stop - start) / (num - 1), the last element forced to stop; num == 1 gives [start]
// (numpy multiplies by delta instead of step, giving 0 * delta + start).
inline std::vector<double> linspace(double start, double stop, int num) {
  std::vector<double> y(static_cast<std::size_t>(num > 0 ? num : 0));
  if (num <= 0) return y;
  if (num == 1) {
    y[0] = 0.0 * (stop - start) + start;
    return y;
  }
  const double step = (stop - start) / static_cast<double>(num - 1);
  for (int i = 0; i < num; ++i) y[static_cast<std::size_t>(i)] = static_cast<double>(i) * step + start;
  y.back() = stop;
  return y;
}

// np.arange(start, stop, step) with a float step. numpy sizes it as ceil((stop - start) / step),
// stores start and start + step, then fills element i as start + i * delta with
// delta = (start + step) - start (which is not always exactly step).
inline std::vector<double> arange(double start, double stop, double step) {
  const double len_f = std::ceil((stop - start) / step);
  std::vector<double> y;
  if (!(len_f > 0)) return y;
  const auto len = static_cast<std::size_t>(len_f);
  y.resize(len);
  y[0] = start;
  if (len == 1) return y;
  y[1] = start + step;
  const double delta = y[1] - y[0];
  for (std::size_t i = 2; i < len; ++i) y[i] = start + static_cast<double>(i) * delta;
  return y;
}

// ndarray.round() / np.rint: round half to even, independent of the FPU rounding mode.
inline double round_half_even(double x) {
  const double f = std::floor(x);
  const double frac = x - f; // exact for every double
  if (frac > 0.5) return f + 1.0;
  if (frac < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

// np.interp(x, arange(len(fp)), fp): clamps outside [0, len-1], returns fp[j] exactly on a knot,
// else slope * (x - j) + fp[j] with slope = (fp[j+1] - fp[j]) / 1.
inline double interp_unit_grid(double x, std::span<const double> fp) {
  const std::size_t n = fp.size();
  if (n == 0) return 0.0;
  if (std::isnan(x)) return x;
  if (x < 0.0) return fp.front();
  if (x >= static_cast<double>(n - 1)) return fp.back();
  const auto j = static_cast<std::size_t>(std::floor(x));
  const double xj = static_cast<double>(j);
  if (x == xj) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (static_cast<double>(j + 1) - xj);
  return slope * (x - xj) + fp[j];
}

} // namespace z123::sampling::np
