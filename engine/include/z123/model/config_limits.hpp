// Upper (and lower) bounds on every number the config parsers read (configs.hpp).
//
// A config file is untrusted input, and its numbers size everything built from it: the expected
// tensor list (zero123pp-inspect, ModelFolder), the networks, the scheduler tables. Without a
// bound, `"layers_per_block": 2000000000` makes the tensor walk run two billion times, and a
// width of 2^30 overflows int arithmetic. The parsers refuse a value outside these ranges before
// anything is sized by it, naming the file, the key and the range.
//
// Each bound stands far above every published checkpoint of the model families these configs
// describe (Stable Diffusion 1.x / 2.x / XL UNets and VAEs, OpenAI / OpenCLIP CLIP encoders), so
// no real model meets one; the real values are listed next to each. At the bounds the largest
// UNet tensor list still has under 200,000 entries (8 levels x 17 resnets x 32 transformer
// blocks) and every shape product fits in 64 bits with room to spare (derived sizes are computed
// in 64-bit arithmetic and checked against these bounds too).
#pragma once

namespace z123::config_limits {

// ---- model_index.json --------------------------------------------------------------------------
// Per-token weight of the image embedding. v1.2: 0.003 .. 1.2.
inline constexpr double kMaxRampingCoefficient = 100.0;

// ---- scheduler_config.json ---------------------------------------------------------------------
// Training timesteps: the schedule is a linspace between two ends, so at least 2. Every SD-family
// scheduler uses 1000; the tables hold a few floats per timestep.
inline constexpr int kMinTrainTimesteps = 2;
inline constexpr int kMaxTrainTimesteps = 100'000;

// ---- UNet / VAE --------------------------------------------------------------------------------
// Resolution levels (block_out_channels entries): SD 1.x/2.x and v1.2 use 4, SDXL 3, the VAEs 4.
// 8 levels already halve a 96-latent seven times; the UNet's size rule is 2^(levels-1).
inline constexpr int kMaxLevels = 8;
// Feature widths: UNet block channels (v1.2: 320..1280; up blocks see 2x with the skips), VAE
// channels (128..512), cross_attention_dim (768 SD1, 1024 SD2/v1.2, 2048 SDXL), CLIP hidden and
// projection sizes (512..1664 for ViT-bigG).
inline constexpr int kMaxChannels = 16384;
// MLP-like widths that are a multiple of a feature width: CLIP intermediate_size (4x hidden:
// 2048..8192) and the UNet time embedding (4 x block_out_channels[0] = 1280 in v1.2).
inline constexpr int kMaxWideChannels = 4 * kMaxChannels;
// Image and latent channels: 3 (RGB), 4 (SD latents), 16 (SD3 / FLUX VAEs), 9 (inpainting UNets).
inline constexpr int kMaxIoChannels = 256;
// Resnets per level: 1..3 in every SD-family UNet and VAE (v1.2: UNet 2, VAE 2).
inline constexpr int kMaxLayersPerBlock = 16;
// BasicTransformerBlocks per attention: 1 in SD 1.x/2.x and v1.2, up to 10 in SDXL.
inline constexpr int kMaxTransformerLayers = 32;
// Attention heads per level / encoder: UNet 5..20 (v1.2: 5, 10, 20, 20), CLIP 8..16 (bigG 16/20).
inline constexpr int kMaxAttentionHeads = 256;
// GroupNorm groups: 32 everywhere (16 or 8 in some tiny test models).
inline constexpr int kMaxNormGroups = 1024;
// conv_in / conv_out kernel sizes: 3 (1 in a few models); the engine needs odd sizes.
inline constexpr int kMaxConvKernel = 15;
// sample_size (informational): UNet 64..128 latents (v1.2: 96), VAE 256..1024 pixels.
inline constexpr int kMaxSampleSize = 16384;
// freq_shift: 0 (SD) or 1 (DDPM-style UNets); it must also stay below block_out_channels[0] / 2
// (the sinusoid divides by their difference).
inline constexpr int kMaxFreqShift = 16;

// ---- CLIP text / vision ------------------------------------------------------------------------
// Encoder layers: 12 (ViT-B) .. 48 (ViT-bigG vision); v1.2: text 23, vision 32.
inline constexpr int kMaxEncoderLayers = 256;
// Text context length: 77 in every CLIP (v1.2 has one ramping coefficient per position).
inline constexpr int kMaxTextPositions = 4096;
// Vocabulary: 49408 in every CLIP tokenizer; the largest common tokenizers are ~256k.
inline constexpr int kMaxVocabSize = 1 << 20;
// Vision input side: 224 (v1.2) .. 448; patch grid positions (image / patch)^2 + 1: 50 .. 1025.
inline constexpr int kMaxVisionImageSize = 4096;
inline constexpr int kMaxVisionPositions = 65536;

// ---- floating-point options --------------------------------------------------------------------
// norm_eps / layer_norm_eps must be positive; real values are 1e-5 / 1e-6.
inline constexpr double kMaxNormEps = 1.0;
// VAE scaling_factor (0.18215 SD / v1.2, 0.13025 SDXL, 1.5305 SD3) and |shift_factor| (0.0609 SD3).
inline constexpr double kMaxVaeFactor = 1000.0;

// ---- preprocessor_config.json ------------------------------------------------------------------
// Resize shortest edge and crop sides: 224 (CLIP) and 512 (VAE branch) in v1.2. At the bound a
// float32 RGB crop is 200 MB.
inline constexpr int kMaxPreprocessSide = 4096;
// |image_mean| and image_std: 0..1 in CLIP's [0, 1] pixel scale; up to ~255 when a config
// normalizes unrescaled pixels. image_std divides, so it must also be at least kMinImageStd.
inline constexpr double kMaxPixelStatistic = 255.0;
inline constexpr double kMinImageStd = 1e-6;
// rescale_factor: 1/255 everywhere; at most 1 (no rescale).
inline constexpr double kMaxRescaleFactor = 1.0;

} // namespace z123::config_limits
