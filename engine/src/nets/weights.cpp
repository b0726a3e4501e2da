#include "z123/nets/weights.hpp"

#include <cstring>

#include "z123/error.hpp"
#include "z123/half.hpp"
#include "z123/kernels/conv2d.hpp"
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

Weights::Weights(vk::Device& device, const ModelFolder& folder, ModelModule module, DType storage,
                 vk::MemoryUsage usage)
    : module_(module), storage_(storage) {
  const SafetensorsFile& file = folder.weights(module);
  std::vector<ExpectedTensor> expected = expected_tensors(module, folder.configs());
  TensorCheckReport report = check_tensors(module, expected, file);
  if (!report.ok()) throw model_error(problems(report, file.source()));

  vk::BatchUploader uploader(device);
  std::vector<float> f32;
  std::vector<uint16_t> f16;
  for (const ExpectedTensor& e : expected) {
    const TensorView& view = file.at(report.stored_names.at(e.name));
    bool conv = e.shape.size() == 4;
    // Convolution weights live in the kernels' [out, kh, kw, in] layout on the device.
    std::vector<int64_t> shape = conv ? std::vector<int64_t>{e.shape[0], e.shape[2], e.shape[3], e.shape[1]} : e.shape;
    Tensor t = make_tensor(device, storage, shape, std::string(module_name(module)) + "." + e.name, usage);
    const void* data = nullptr;
    size_t bytes = static_cast<size_t>(t.numel()) * dtype_size(storage);
    if (storage == DType::F16 && !conv && view.dtype == StoredDType::F16) {
      data = view.bytes.data(); // already in the device format: no conversion
    } else {
      f32 = to_f32(view);
      if (conv) f32 = kernels::conv_weight_to_khwc(f32, e.shape[0], e.shape[1], e.shape[2], e.shape[3]);
      if (storage == DType::F32) {
        data = f32.data();
      } else {
        f16.resize(f32.size());
        for (size_t i = 0; i < f32.size(); ++i) f16[i] = f32_to_f16(f32[i]);
        data = f16.data();
      }
    }
    uploader.upload(t.buf(), data, bytes);
    device_bytes_ += t.buf().size();
    tensors_.emplace(e.name, std::move(t));
  }
  uploader.flush();
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
