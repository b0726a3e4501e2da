#include "support/check.hpp"

#include <cmath>
#include <sstream>

namespace z123::test {

std::vector<float> random_uniform(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<float> random_normal(size_t n, uint64_t seed, float stddev) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<float> as_stored(const std::vector<float>& v, DType dtype) {
  if (dtype == DType::F32) return v;
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = round_f16(v[i]);
  return r;
}

std::string ErrorReport::summary() const {
  std::ostringstream o;
  o << "max abs " << max_abs << " (at " << worst << "), max rel " << max_rel << ", rel L2 " << rel_l2 << ", non-finite "
    << nonfinite;
  return o.str();
}

ErrorReport compare(const std::vector<float>& got, const std::vector<double>& ref) {
  ErrorReport r;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) {
      r.nonfinite++;
      continue;
    }
    double e = std::fabs(got[i] - ref[i]);
    if (e > r.max_abs) {
      r.max_abs = e;
      r.worst = i;
    }
    if (std::fabs(ref[i]) > 1e-6) r.max_rel = std::max(r.max_rel, e / std::fabs(ref[i]));
    num += e * e;
    den += ref[i] * ref[i];
  }
  r.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return r;
}

::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref, double atol,
                                     double rtol) {
  return all_close(got, ref, atol, rtol, {});
}

::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<double>& ref, double atol,
                                     double rtol, const std::vector<double>& extra) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs reference " << ref.size();
  if (!extra.empty() && extra.size() != ref.size())
    return ::testing::AssertionFailure() << "error bounds for " << extra.size() << " of " << ref.size() << " elements";
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = atol + rtol * std::fabs(ref[i]) + (extra.empty() ? 0.0 : extra[i]);
    bool ok = std::isfinite(got[i]) && std::fabs(got[i] - ref[i]) <= allowed;
    if (!ok && bad++ == 0) first = i;
  }
  ErrorReport rep = compare(got, ref);
  if (bad == 0) return ::testing::AssertionSuccess() << rep.summary();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements outside atol " << atol << " + rtol "
                                       << rtol << (extra.empty() ? "" : " + their own bound") << "; first at " << first
                                       << ": got " << got[first] << ", want " << ref[first]
                                       << (extra.empty() ? "" : " +- " + std::to_string(extra[first]) + " more")
                                       << (got[first] == kPoisonValue ? " (POISON: never written)" : "") << "; "
                                       << rep.summary();
}

void poison(vk::Device& device, const Tensor& t) {
  upload(device, t, std::vector<float>(static_cast<size_t>(t.numel()), kPoisonValue));
}

} // namespace z123::test
