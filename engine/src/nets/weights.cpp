#include "z123/nets/weights.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>

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

} // namespace

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
                 const std::set<std::string>& winograd)
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

  std::vector<vk::UploadJob> jobs;
  jobs.reserve(expected.size());
  const size_t es = dtype_size(storage);
  const vk::MemoryTurn turn = placement.take_turns ? vk::MemoryTurn::First : vk::MemoryTurn::None;
  if (placement.take_turns) {
    // The turn memory is sized to these tensors as the allocator will place them (256-byte
    // granules), with room for the alignment of each (a fused tensor is smaller than its parts).
    uint64_t total = 0;
    for (const ExpectedTensor& e : expected) {
      int64_t n = 1;
      for (int64_t d : e.shape) n *= d;
      if (winograd.count(e.name)) n = n / 9 * kernels::kWinogradProducts; // [Cout, 16, Cin] for [Cout, Cin, 3, 3]
      total += ((static_cast<uint64_t>(n) * es + 3) / 4 * 4 + 255) / 256 * 256 + 256;
    }
    device.allocator().reserve_turn_memory(total, std::string(module_name(module)) + " weights (turns)");
    home_.reserve(expected.size());
  }
  // Converts `n` elements of a stored tensor from element `from` (every `stride`-th) to `to`.
  auto convert = [storage](const TensorView& view, uint64_t from, uint64_t stride, std::byte* to, uint64_t n) {
    if (storage == DType::F16)
      convert_range_to_f16(view, from, stride, {reinterpret_cast<uint16_t*>(to), n});
    else
      convert_range_to_f32(view, from, stride, {reinterpret_cast<float*>(to), n});
  };
  // A device tensor and the job that fills it.
  auto place = [&](const std::string& key, const std::vector<int64_t>& shape, uint64_t unit,
                   std::function<void(std::byte*, uint64_t, uint64_t)> produce) {
    const std::string name = std::string(module_name(module)) + "." + key;
    Tensor t = make_tensor(device, storage, shape, name, placement.usage, turn);
    vk::UploadJob job;
    job.dst = &t.buf();
    if (placement.take_turns) {
      // Loaded into the host copy; record_restore() brings it to the device.
      home_.push_back(device.allocator().create_buffer(t.buf().size(), vk::MemoryUsage::Upload, name + " (host copy)"));
      host_copy_bytes_ += home_.back().size();
      job.dst = &home_.back();
    }
    job.bytes = static_cast<uint64_t>(t.numel()) * es;
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
      place(e.name, {e.shape[0], kernels::kWinogradProducts, e.shape[1]}, out_row * es,
            [&view, storage, cin, row, out_row, es](std::byte* out, uint64_t first, uint64_t count) {
              std::vector<float> taps(row), u(out_row);
              for (uint64_t o = first / es / out_row, end = (first + count) / es / out_row; o < end; ++o) {
                convert_range_to_f32(view, o * row, 1, taps);
                kernels::winograd_weight_row(taps.data(), static_cast<int64_t>(cin), u.data());
                if (storage == DType::F16) {
                  auto* h = reinterpret_cast<uint16_t*>(out);
                  for (uint64_t i = 0; i < out_row; ++i) h[i] = f32_to_f16(u[i]);
                } else {
                  std::memcpy(out, u.data(), out_row * sizeof(float));
                }
                out += out_row * es;
              }
            });
      continue;
    }
    const bool conv = e.shape.size() == 4;
    // Convolution weights live in the kernels' [out, kh, kw, in] layout on the device.
    std::vector<int64_t> shape = conv ? std::vector<int64_t>{e.shape[0], e.shape[2], e.shape[3], e.shape[1]} : e.shape;
    // Element i of the device tensor, in elements of the file's tensor: a conv's output row o
    // holds taps (ky, kx) of every input channel ci, read from [o, ci, ky, kx].
    const uint64_t taps = conv ? static_cast<uint64_t>(e.shape[2] * e.shape[3]) : 1;
    const uint64_t cin = conv ? static_cast<uint64_t>(e.shape[1]) : 1;
    place(e.name, shape, conv ? cin * taps * es : es, // a conv is cut between output channels
          [&view, convert, conv, taps, cin, es](std::byte* out, uint64_t first, uint64_t count) {
            if (!conv || taps == 1) return convert(view, first / es, 1, out, count / es);
            const uint64_t row = cin * taps; // elements per output channel
            for (uint64_t o = first / es / row, end = (first + count) / es / row; o < end; ++o)
              for (uint64_t tap = 0; tap < taps; ++tap, out += cin * es) convert(view, o * row + tap, taps, out, cin);
          });
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
    place(f.name, {rows, by_name.at(f.parts.front())->shape[1]}, es,
          [views, starts, convert, es](std::byte* out, uint64_t first, uint64_t count) {
            const uint64_t begin = first / es, end = (first + count) / es;
            for (size_t i = 0; i < views.size(); ++i) {
              const uint64_t lo = std::max(begin, starts[i]), hi = std::min(end, starts[i + 1]);
              if (lo < hi) convert(*views[i], lo - starts[i], 1, out + (lo - begin) * es, hi - lo);
            }
          });
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
