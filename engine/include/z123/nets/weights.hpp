// Device weights of one network, loaded by name from its module's safetensors file. Loading
// first checks the file against the tensor list the config implies (missing, unexpected and
// mis-shaped tensors are one Model error listing them), then converts every tensor to the
// storage dtype (the v1.2 UNet is fp32 on disk and fp16 on the device) and uploads it in
// batches. Convolution weights are reordered to the kernels' [out, kh, kw, in] layout.
//
// The upload can be deferred into a WeightUploads shared by several networks: Engine::open
// allocates every network's tensors first, records its programs (which starts compiling their
// pipelines on worker threads), and only then reads and uploads all weights in one go, so the
// driver's compiling and the weights' reading overlap.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/model/model_folder.hpp"
#include "z123/tensor.hpp"
#include "z123/vk/uploader.hpp"

namespace z123::nets {

// Uploads collected from several Weights, run together.
class WeightUploads {
public:
  void add(const SafetensorsFile& file, std::vector<vk::UploadJob> jobs);
  // Brings the files into memory and uploads every job (all cores, one staging ring); the
  // tensors must still exist. Runs once; later calls do nothing.
  void run(vk::Device& device);
  bool pending() const { return !jobs_.empty(); }

private:
  std::vector<const SafetensorsFile*> files_;
  std::vector<vk::UploadJob> jobs_;
};

// Where a network's weights live.
struct WeightPlacement {
  // vk::MemoryUsage::HostStreamed keeps them in host memory on discrete GPUs.
  vk::MemoryUsage usage = vk::MemoryUsage::DeviceLocal;
  // Low-memory mode: the device tensors take the First turn of the memory shared with the
  // activations of other stages (vk::MemoryTurn), and the converted weights are kept in host
  // memory too, from where record_restore() copies them back after the other turn ran. The
  // turn memory is reserved here, sized to these weights.
  bool take_turns = false;
};

// Checkpoint tensors of one width stored as one tensor, concatenated along dim 0 in the order of
// `parts`, under a name of their own; the parts are not stored separately. One GEMM then does the
// work of several (the UNet's self-attention projections: nets::UNet). A part may be in several
// fused tensors (each holds a copy), and a fused tensor of one part under the part's own name
// stores the part as well as the groups that hold it.
struct FusedWeight {
  std::string name;               // "…attn1.to_kvq.weight"
  std::vector<std::string> parts; // checkpoint names, all 2-D with the same dim 1
};

// A LayerNorm folded into the projections that read it (kernels::NormalizedInput): each weight
// (a checkpoint or fused name, 2-D, K = the norm's width) is stored as w diag(gamma), and two
// tensors are added beside it: ln_bias_name(weight) = bias + w · beta (storage dtype) and
// ln_colsum_name(weight) = the sums of the stored rows (F32). The projection then computes
// LayerNorm(x) · wᵀ + bias from x itself, or from x normalized without gamma and beta. A weight
// is folded by one norm at most; gamma and beta stay stored as well.
struct LayerNormFold {
  std::string gamma, beta;          // checkpoint names of the norm's weight and bias
  std::vector<std::string> weights; // the projections' stored names ("….weight")
  std::vector<std::string> biases;  // each one's checkpoint bias name, or "" for none
};
// The names of the added tensors: the weight's name with ".weight" replaced.
std::string ln_bias_name(const std::string& weight);
std::string ln_colsum_name(const std::string& weight);

class Weights {
public:
  // deferred: collect the uploads there instead of uploading before returning (the tensors
  // exist, with undefined contents, until deferred->run()). fused: see FusedWeight. winograd:
  // checkpoint names of 3x3 conv weights stored in Winograd form instead, [Cout, 16, Cin]
  // (kernels::conv_weight_to_winograd, transformed while loading), under the same name.
  // folds: see LayerNormFold.
  Weights(vk::Device& device, const ModelFolder& folder, ModelModule module, DType storage,
          WeightPlacement placement = {}, WeightUploads* deferred = nullptr, const std::vector<FusedWeight>& fused = {},
          const std::set<std::string>& winograd = {}, const std::vector<LayerNormFold>& folds = {});

  // Copies the host copies of weights that take turns back into their device tensors (nothing
  // for other placements).
  void record_restore(vk::Recording& rec) const;
  bool takes_turns() const { return !home_.empty(); }
  // Host memory held by the copies that record_restore() reads.
  uint64_t host_copy_bytes() const { return host_copy_bytes_; }

  // The tensor with this canonical name (spec §13 spelling). Networks name their blocks after
  // these keys, so a lookup failure is a programming error reported with the module name.
  const Tensor& at(const std::string& name) const;
  const Tensor* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }

  ModelModule module() const { return module_; }
  DType storage() const { return storage_; }
  uint64_t device_bytes() const { return device_bytes_; }
  size_t count() const { return tensors_.size(); }

private:
  ModelModule module_;
  DType storage_;
  std::map<std::string, Tensor> tensors_;
  // With take_turns: a host-memory copy per tensor, in the order of `restore_order_`.
  std::vector<vk::Buffer> home_;
  std::vector<const Tensor*> restore_order_;
  uint64_t device_bytes_ = 0, host_copy_bytes_ = 0;
};

} // namespace z123::nets
