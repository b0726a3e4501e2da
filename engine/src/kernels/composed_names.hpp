// Variant names the attention and group-norm dispatchers compose at run time (head sizes, key
// tiles, element widths), each built in one function so that tests/vk/test_shader_names.cpp can
// enumerate every value and check the name is declared in shaders/variants (literal names are
// checked when the engine compiles: shader_names.hpp). The GEMMs' are in gemm_dispatch.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "z123/kernels/kernels.hpp"
#include "z123/tensor.hpp"

namespace z123::kernels {

// The portable attention for a head size: the register-tiled kernel on `invocations` (128 or 256,
// by the device's shared memory), with packed fp16 P·V for fp16 where `packed_pv`, where it has
// the head size, else the one-query kernel.
std::string portable_attention_variant(int64_t head_dim, int64_t invocations, bool packed_pv, DType dtype);
// Whether the portable attention takes packed P·V (the `_pv16` variants) for this head size and
// dtype: the tiled kernel's fp16 ones, where the portable kernels take packed products
// (Kernels::portable_packed_products). The attention tests pick their tolerance by it.
bool portable_attention_packed_pv(const Kernels& kernels, int64_t head_dim, DType dtype);
std::vector<int64_t> portable_attention_invocations();

// Group norm: the resident kernel with `ev` channels per access, and the split kernel's two
// stages (partial statistics, apply) with 4-element or single accesses.
std::string group_norm_resident_variant(int64_t ev, DType dtype);
std::string group_norm_split_variant(bool apply, bool vec4, DType dtype);
std::vector<int64_t> group_norm_resident_evs();
// The statistics alone as a table (kernels::group_norm_table): the direct stage, or the split
// path's partial statistics (whose last workgroup per batch merges them into the table).
enum class GroupNormTableStage { Direct, Partial };
std::string group_norm_table_variant(GroupNormTableStage stage, bool vec4, DType dtype);

} // namespace z123::kernels
