// Counter-based standard-normal generator: element `index` of stream `stream` under `seed` is a
// pure function of those three numbers, so any element can be computed on its own and the values
// are the same on every device, thread count and run. The bits come from Philox4x32-10 (Salmon et
// al., SC'11) and become normals through a Box-Muller transform written with fp32 additions and
// multiplications only (no library log/sin/cos/sqrt, whose results differ between libms and GPUs),
// so a shader using `precise` arithmetic reproduces it bit for bit. docs/rng.md specifies the
// algorithm, the stream numbering and known-answer values.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace z123::sampling {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// Philox4x32 with 10 rounds, as in Random123's philox4x32_R(10, ctr, key).
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// The four random words of block `block` of (seed, stream): counter = {block lo, block hi,
// stream lo, stream hi}, key = {seed lo, seed hi}. Block b feeds elements 4b .. 4b+3.
PhiloxCounter random_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t block);

// Two standard normals {r*cos, r*sin} from a radius word and an angle word (docs/rng.md).
std::array<float, 2> box_muller(std::uint32_t radius_word, std::uint32_t angle_word);

// One element: lanes 0,1 of a block come from words (0,1), lanes 2,3 from words (2,3).
float normal_at(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// out[i] = normal_at(seed, stream, offset + i).
void normal_fill(std::uint64_t seed, std::uint64_t stream, std::span<float> out, std::uint64_t offset = 0);

// Stream ids of the pipeline's noise tensors (spec §16). Elements are indexed in the tensor's
// logical NCHW (PyTorch) order, whatever layout the engine stores it in.
namespace rng_stream {
inline constexpr std::uint64_t kConditionPosterior = 0; // VAE posterior noise, condition image [1,4,64,64]
inline constexpr std::uint64_t kZeroPosterior = 1;      // VAE posterior noise, zero image [1,4,64,64]
inline constexpr std::uint64_t kInitialLatent = 2;      // initial latent noise [1,4,120,80]
// Step k (0-based): reference-pass noise [2,4,64,64] and ancestral noise [1,4,120,80].
constexpr std::uint64_t reference_noise(std::uint64_t step) { return 3 + 2 * step; }
constexpr std::uint64_t ancestral_noise(std::uint64_t step) { return 4 + 2 * step; }
} // namespace rng_stream

} // namespace z123::sampling
