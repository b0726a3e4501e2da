#include "z123/nets/weights.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <span>

#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/kernels/winograd.hpp"
#include "z123/vk/uploader.hpp"

namespace z123::nets {
namespace {

std::string problems(const TensorCheckReport& r, const std::string& file) {
  std::string s = file + " does not match its config:";
  size_t shown = 0;
  for (const auto& m : r.missing)
    if (shown++ < 20) s += "\n  missing tensor " + m;
  for (const auto& u : r.unexpected)
    if (shown++ < 20) s += "\n  unexpected tensor " + u;
  for (const auto& m : r.mis_shaped)
    if (shown++ < 20)
      s += "\n  tensor " + m.name + ": expected shape " + format_shape(m.expected) + ", found " + format_shape(m.found);
  size_t total = r.missing.size() + r.unexpected.size() + r.mis_shaped.size();
  if (total > 20) s += "\n  ... and " + std::to_string(total - 20) + " more";
  return s;
}

// Stores n fp32 values as `storage` at `to`.
void store_values(const std::vector<float>& v, std::byte* to, DType storage) {
  if (storage == DType::F16) {
    auto* h = reinterpret_cast<uint16_t*>(to);
    for (size_t i = 0; i < v.size(); ++i) h[i] = f32_to_f16(v[i]);
  } else {
    std::memcpy(to, v.data(), v.size() * sizeof(float));
  }
}

// Converts n elements of a [rows, K] checkpoint tensor from element `from` to `storage` at `to`,
// each times gamma[its column] (K = gamma's size), in fp32 with one rounding.
void convert_scaled(const TensorView& view, uint64_t from, std::byte* to, uint64_t n, const std::vector<float>& gamma,
                    DType storage) {
  std::vector<float> v(n);
  convert_range_to_f32(view, from, 1, v);
  for (uint64_t i = 0; i < n; ++i) v[i] *= gamma[(from + i) % gamma.size()];
  store_values(v, to, storage);
}

// A checkpoint vector in fp32, shared by the upload jobs that read it after the constructor.
std::shared_ptr<const std::vector<float>> read_vector(const TensorView& view, int64_t n) {
  auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(n));
  convert_range_to_f32(view, 0, 1, *v);
  return v;
}

// The checkpoint tensors whose rows, one after the other, make a stored 2-D weight (one for a
// checkpoint weight, its parts for a fused one).
struct RowSource {
  const TensorView* view;
  int64_t rows;
};

// Row r of those sources, K values in fp32.
void read_row(const std::vector<RowSource>& sources, int64_t r, std::span<float> row) {
  for (const RowSource& s : sources) {
    if (r < s.rows) return convert_range_to_f32(*s.view, static_cast<uint64_t>(r) * row.size(), 1, row);
    r -= s.rows;
  }
  throw internal_error("LayerNorm fold: a row past its weight's end");
}

// A weight folded by a LayerNorm (LayerNormFold), as its upload jobs need it.
struct FoldedWeight {
  std::shared_ptr<const std::vector<float>> gamma, beta, bias; // bias: null for none
  std::vector<RowSource> sources;
  int64_t rows = 0;
};

std::string fold_stem(const std::string& weight) {
  const std::string suffix = ".weight";
  if (weight.size() <= suffix.size() || weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) != 0)
    throw internal_error("LayerNorm fold: " + weight + " is not a weight name");
  return weight.substr(0, weight.size() - suffix.size());
}

} // namespace

std::string ln_bias_name(const std::string& weight) { return fold_stem(weight) + ".ln_bias"; }
std::string ln_colsum_name(const std::string& weight) { return fold_stem(weight) + ".ln_colsum"; }

void WeightUploads::add(const SafetensorsFile& file, std::vector<vk::UploadJob> jobs) {
  files_.push_back(&file);
  for (auto& j : jobs) jobs_.push_back(std::move(j));
}

void WeightUploads::run(vk::Device& device) {
  if (jobs_.empty()) return;
  auto t_read = std::chrono::steady_clock::now();
  for (const SafetensorsFile* f : files_) f->prefetch();
  vk::TransferStats& ts = device.transfer_stats();
  ts.read_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_read).count();
  vk::StreamingUploader uploader(device);
  uploader.run(jobs_);
  const vk::UploadStats& us = uploader.stats();
  ts.staged_bytes += us.staged_bytes;
  ts.direct_bytes += us.direct_bytes;
  ts.produce_ms += us.produce_ms;
  ts.wait_ms += us.wait_ms;
  jobs_.clear();
  files_.clear();
}

Weights::Weights(vk::Device& device, const ModelFolder& folder, ModelModule module, DType storage,
                 WeightPlacement placement, WeightUploads* deferred, const std::vector<FusedWeight>& fused,
                 const std::set<std::string>& winograd, const std::vector<LayerNormFold>& folds)
    : module_(module), storage_(storage) {
  const SafetensorsFile& file = folder.weights(module);
  std::vector<ExpectedTensor> expected = expected_tensors(module, folder.configs());
  TensorCheckReport report = check_tensors(module, expected, file);
  if (!report.ok()) throw model_error(problems(report, file.source()));

  std::map<std::string, const ExpectedTensor*> by_name;
  for (const ExpectedTensor& e : expected) by_name[e.name] = &e;
  std::set<std::string> fused_part; // checkpoint names stored inside a fused tensor
  for (const FusedWeight& f : fused) {
    std::set<std::string> in_this;
    for (const std::string& part : f.parts) {
      auto it = by_name.find(part);
      if (it == by_name.end() || it->second->shape.size() != 2 ||
          it->second->shape[1] != by_name.at(f.parts.front())->shape[1] || !in_this.insert(part).second)
        throw internal_error(f.name + ": part " + part + " is not a 2-D tensor of the group's width, or repeated");
      fused_part.insert(part);
    }
  }

  for (const std::string& name : winograd) {
    auto it = by_name.find(name);
    if (it == by_name.end() || it->second->shape.size() != 4 || it->second->shape[2] != 3 || it->second->shape[3] != 3)
      throw internal_error(name + ": not a 3x3 conv weight of " + module_name(module) + " (Winograd form)");
  }

  // The folded weights: each a checkpoint 2-D weight or a fused one, as wide as its norm.
  std::map<std::string, FoldedWeight> folded;
  for (const LayerNormFold& f : folds) {
    auto vector_of = [&](const std::string& name) -> const ExpectedTensor& {
      auto it = by_name.find(name);
      if (it == by_name.end() || it->second->shape.size() != 1)
        throw internal_error("LayerNorm fold: " + name + " is not a 1-D tensor of " + module_name(module));
      return *it->second;
    };
    const ExpectedTensor& g = vector_of(f.gamma);
    if (vector_of(f.beta).shape != g.shape || f.weights.size() != f.biases.size())
      throw internal_error("LayerNorm fold of " + f.gamma + ": mismatched beta or bias list");
    const int64_t width = g.shape[0];
    auto gamma = read_vector(file.at(report.stored_names.at(f.gamma)), width);
    auto beta = read_vector(file.at(report.stored_names.at(f.beta)), width);
    for (size_t i = 0; i < f.weights.size(); ++i) {
      FoldedWeight fw{gamma, beta, nullptr, {}, 0};
      std::vector<std::string> parts{f.weights[i]};
      for (const FusedWeight& fu : fused)
        if (fu.name == f.weights[i]) parts = fu.parts;
      for (const std::string& part : parts) {
        auto it = by_name.find(part);
        if (it == by_name.end() || it->second->shape.size() != 2 || it->second->shape[1] != width)
          throw internal_error("LayerNorm fold: " + f.weights[i] + " is not a 2-D weight " + std::to_string(width) +
                               " wide");
        fw.sources.push_back({&file.at(report.stored_names.at(part)), it->second->shape[0]});
        fw.rows += it->second->shape[0];
      }
      if (!f.biases[i].empty()) {
        if (vector_of(f.biases[i]).shape[0] != fw.rows)
          throw internal_error("LayerNorm fold: bias " + f.biases[i] + " does not match " + f.weights[i]);
        fw.bias = read_vector(file.at(report.stored_names.at(f.biases[i])), fw.rows);
      }
      if (!folded.emplace(f.weights[i], std::move(fw)).second)
        throw internal_error("LayerNorm fold: " + f.weights[i] + " folded twice");
    }
  }

  std::vector<vk::UploadJob> jobs;
  jobs.reserve(expected.size());
  const size_t es = dtype_size(storage);
  const vk::MemoryTurn turn = placement.take_turns ? vk::MemoryTurn::First : vk::MemoryTurn::None;
  if (placement.take_turns) {
    // The turn memory is sized to these tensors as the allocator will place them (256-byte
    // granules), with room for the alignment of each (a fused tensor is smaller than its parts).
    uint64_t total = 0;
    const auto placed_size = [](uint64_t bytes) { return ((bytes + 3) / 4 * 4 + 255) / 256 * 256 + 256; };
    for (const ExpectedTensor& e : expected) {
      int64_t n = 1;
      for (int64_t d : e.shape) n *= d;
      if (winograd.count(e.name)) n = n / 9 * kernels::kWinogradProducts; // [Cout, 16, Cin] for [Cout, Cin, 3, 3]
      total += placed_size(static_cast<uint64_t>(n) * es);
    }
    for (const auto& [name, fw] : folded) // ln_bias and ln_colsum
      total += placed_size(static_cast<uint64_t>(fw.rows) * es) + placed_size(static_cast<uint64_t>(fw.rows) * 4);
    device.allocator().reserve_turn_memory(total, std::string(module_name(module)) + " weights (turns)");
    // Jobs point into home_: it must not reallocate (a fold adds two tensors per weight).
    home_.reserve(expected.size() + 2 * folded.size());
  }
  // Converts `n` elements of a stored tensor from element `from` (every `stride`-th) to `to`.
  auto convert = [storage](const TensorView& view, uint64_t from, uint64_t stride, std::byte* to, uint64_t n) {
    if (storage == DType::F16)
      convert_range_to_f16(view, from, stride, {reinterpret_cast<uint16_t*>(to), n});
    else
      convert_range_to_f32(view, from, stride, {reinterpret_cast<float*>(to), n});
  };
  // A device tensor of `dtype` and the job that fills it.
  auto place = [&](const std::string& key, const std::vector<int64_t>& shape, uint64_t unit,
                   std::function<void(std::byte*, uint64_t, uint64_t)> produce, DType dtype) {
    const std::string name = std::string(module_name(module)) + "." + key;
    Tensor t = make_tensor(device, dtype, shape, name, placement.usage, turn);
    vk::UploadJob job;
    job.dst = &t.buf();
    if (placement.take_turns) {
      // Loaded into the host copy; record_restore() brings it to the device.
      if (home_.size() == home_.capacity()) throw internal_error("Weights: host copies past their reservation");
      home_.push_back(device.allocator().create_buffer(t.buf().size(), vk::MemoryUsage::Upload, name + " (host copy)"));
      host_copy_bytes_ += home_.back().size();
      job.dst = &home_.back();
    }
    job.bytes = static_cast<uint64_t>(t.numel()) * dtype_size(dtype);
    job.unit = unit;
    job.produce = std::move(produce);
    jobs.push_back(std::move(job));
    device_bytes_ += t.buf().size();
    auto placed = tensors_.emplace(key, std::move(t));
    if (placement.take_turns) restore_order_.push_back(&placed.first->second);
  };
  for (const ExpectedTensor& e : expected) {
    if (fused_part.count(e.name)) continue;
    const TensorView& view = file.at(report.stored_names.at(e.name));
    if (winograd.count(e.name)) {
      // [Cout, 16, Cin], transformed per output channel from its [Cin, 3, 3] values in fp32.
      const uint64_t cin = static_cast<uint64_t>(e.shape[1]), row = cin * 9,
                     out_row = cin * static_cast<uint64_t>(kernels::kWinogradProducts);
      place(
          e.name, {e.shape[0], kernels::kWinogradProducts, e.shape[1]}, out_row * es,
          [&view, storage, cin, row, out_row, es](std::byte* out, uint64_t first, uint64_t count) {
            std::vector<float> taps(row), u(out_row);
            for (uint64_t o = first / es / out_row, end = (first + count) / es / out_row; o < end; ++o) {
              convert_range_to_f32(view, o * row, 1, taps);
              kernels::winograd_weight_row(taps.data(), static_cast<int64_t>(cin), u.data());
              store_values(u, out, storage);
              out += out_row * es;
            }
          },
          storage);
      continue;
    }
    const bool conv = e.shape.size() == 4;
    // Convolution weights live in the kernels' [out, kh, kw, in] layout on the device.
    std::vector<int64_t> shape = conv ? std::vector<int64_t>{e.shape[0], e.shape[2], e.shape[3], e.shape[1]} : e.shape;
    // Element i of the device tensor, in elements of the file's tensor: a conv's output row o
    // holds taps (ky, kx) of every input channel ci, read from [o, ci, ky, kx].
    const uint64_t taps = conv ? static_cast<uint64_t>(e.shape[2] * e.shape[3]) : 1;
    const uint64_t cin = conv ? static_cast<uint64_t>(e.shape[1]) : 1;
    auto fold = folded.find(e.name);
    if (fold != folded.end()) { // w diag(gamma), rounded once
      place(
          e.name, shape, es,
          [&view, gamma = fold->second.gamma, storage, es](std::byte* out, uint64_t first, uint64_t count) {
            convert_scaled(view, first / es, out, count / es, *gamma, storage);
          },
          storage);
      continue;
    }
    place(
        e.name, shape, conv ? cin * taps * es : es, // a conv is cut between output channels
        [&view, convert, conv, taps, cin, es](std::byte* out, uint64_t first, uint64_t count) {
          if (!conv || taps == 1) return convert(view, first / es, 1, out, count / es);
          const uint64_t row = cin * taps; // elements per output channel
          for (uint64_t o = first / es / row, end = (first + count) / es / row; o < end; ++o)
            for (uint64_t tap = 0; tap < taps; ++tap, out += cin * es) convert(view, o * row + tap, taps, out, cin);
        },
        storage);
  }
  for (const FusedWeight& f : fused) {
    // Part i covers elements [starts[i], starts[i + 1]) of the fused tensor.
    std::vector<const TensorView*> views;
    std::vector<uint64_t> starts{0};
    int64_t rows = 0;
    for (const std::string& part : f.parts) {
      const ExpectedTensor& e = *by_name.at(part);
      views.push_back(&file.at(report.stored_names.at(part)));
      rows += e.shape[0];
      starts.push_back(starts.back() + static_cast<uint64_t>(e.shape[0] * e.shape[1]));
    }
    auto fold = folded.find(f.name);
    std::shared_ptr<const std::vector<float>> gamma = fold != folded.end() ? fold->second.gamma : nullptr;
    place(
        f.name, {rows, by_name.at(f.parts.front())->shape[1]}, es,
        [views, starts, convert, gamma, storage, es](std::byte* out, uint64_t first, uint64_t count) {
          const uint64_t begin = first / es, end = (first + count) / es;
          for (size_t i = 0; i < views.size(); ++i) {
            const uint64_t lo = std::max(begin, starts[i]), hi = std::min(end, starts[i + 1]);
            if (lo >= hi) continue;
            if (gamma) // w diag(gamma): every part's rows start at column 0
              convert_scaled(*views[i], lo - starts[i], out + (lo - begin) * es, hi - lo, *gamma, storage);
            else
              convert(*views[i], lo - starts[i], 1, out + (lo - begin) * es, hi - lo);
          }
        },
        storage);
  }
  // Each folded weight's b' = bias + w beta (from the checkpoint's w) and the sums of its stored
  // w' rows (rounded as stored, summed in double).
  for (const auto& [wname, fw] : folded) {
    place(
        ln_bias_name(wname), {fw.rows}, es,
        [fw, storage, es](std::byte* out, uint64_t first, uint64_t count) {
          std::vector<float> row(fw.beta->size()), vals;
          for (uint64_t r = first / es, end = (first + count) / es; r < end; ++r) {
            read_row(fw.sources, static_cast<int64_t>(r), row);
            double acc = fw.bias ? (*fw.bias)[r] : 0.0;
            for (size_t k = 0; k < row.size(); ++k) acc += double(row[k]) * (*fw.beta)[k];
            vals.push_back(static_cast<float>(acc));
          }
          store_values(vals, out, storage);
        },
        storage);
    place(
        ln_colsum_name(wname), {fw.rows}, sizeof(float),
        [fw, storage](std::byte* out, uint64_t first, uint64_t count) {
          std::vector<float> row(fw.gamma->size()), vals;
          for (uint64_t r = first / sizeof(float), end = (first + count) / sizeof(float); r < end; ++r) {
            read_row(fw.sources, static_cast<int64_t>(r), row);
            double acc = 0.0;
            for (size_t k = 0; k < row.size(); ++k) {
              const float v = row[k] * (*fw.gamma)[k];
              acc += storage == DType::F16 ? round_f16(v) : v;
            }
            vals.push_back(static_cast<float>(acc));
          }
          store_values(vals, out, DType::F32);
        },
        DType::F32);
  }
  // The tensors' buffers are shared_ptr-owned: moving the Tensor into the map kept job.dst valid.
  if (deferred) {
    deferred->add(file, std::move(jobs));
  } else {
    WeightUploads now;
    now.add(file, std::move(jobs));
    now.run(device);
  }
}

void Weights::record_restore(vk::Recording& rec) const {
  for (size_t i = 0; i < home_.size(); ++i) rec.copy(home_[i], restore_order_[i]->buf(), home_[i].size(), 0, 0);
}

const Tensor* Weights::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const Tensor& Weights::at(const std::string& name) const {
  if (const Tensor* t = find(name)) return *t;
  throw internal_error(std::string("network code asked ") + module_name(module_) + " for tensor '" + name +
                       "', which its config does not define");
}

} // namespace z123::nets
