#!/usr/bin/env python3
"""Golden tensors for the C++ network parity tests, made with the OFFICIAL modules.

Builds tiny-config versions of the four Zero123++ v1.2 networks with the official classes
(diffusers UNet2DConditionModel / AutoencoderKL, transformers CLIPTextModel /
CLIPVisionModelWithProjection, and the zero123plus pipeline's RefOnlyNoisedUNet for the
reference attention), gives them deterministic random weights, writes them as a model folder in
the released diffusers layout of sudo-ai/zero123plus-v1.2, and records inputs, outputs and
intermediates of each network as fp32 safetensors files.

Needs torch, transformers, safetensors and the diffusers + zero123plus sources (never committed):
    .ref/src/diffusers             (git archive of huggingface/diffusers src/diffusers)
    .ref/diffusers-support/pipeline.py  (git archive of SUDO-AI-3D/zero123plus diffusers-support)
(or point Z123_REF_DIR at a folder holding src/ and diffusers-support/).

Usage:
    python3 tests/reference/make_goldens.py [OUT_DIR] [--seed N] [--no-cross-check]
OUT_DIR defaults to tests/data/golden. See tests/data/golden/README.md for what every file holds.

Goldens are computed on the CPU in fp32 (deterministic). When CUDA is available the same
computation is repeated on the GPU in fp32 with TF32 off, and on the CPU in fp64, and the
differences are written to manifest.json as a guide for test tolerances.
"""
import argparse
import copy
import json
import math
import os
import platform
import shutil
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REF = Path(os.environ.get("Z123_REF_DIR", REPO / ".ref"))
sys.path.insert(0, str(REF / "src"))
sys.path.insert(0, str(REF / "diffusers-support"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from safetensors.torch import save_file, load_file  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")

import transformers  # noqa: E402
from transformers import (CLIPTextConfig, CLIPTextModel, CLIPVisionConfig,  # noqa: E402
                          CLIPVisionModelWithProjection)
import diffusers  # noqa: E402
from diffusers import (AutoencoderKL, DDPMScheduler, EulerAncestralDiscreteScheduler,  # noqa: E402
                       UNet2DConditionModel)
import pipeline as zero123plus  # noqa: E402  (the official custom pipeline module)

REAL_CONFIGS = REPO / "tests" / "data" / "v1.2-configs"

# ---- tiny configs: only these keys differ from the released v1.2 config files ----------------
# Width constraints: head sizes the engine's attention kernels have variants for (16/32/64/80/512),
# GroupNorm's 32 groups must divide every width, and text hidden == vision projection_dim == UNet
# cross_attention_dim (the pipeline adds image_embeds to the text embedding and feeds the sum to
# the UNet's cross-attention). UNet norm_num_groups 16, not 32: with 32 groups a 32-wide GroupNorm
# has one channel per group, whose mean subtraction cancels the per-channel time-embedding add in
# every resnet (norm2(h + temb)), so the UNet output would not depend on the timestep at all (seen:
# t=999 and t=35 outputs equal to 2e-6); 16 groups of 2 channels keep both paths live. Every network keeps the released topology (UNet: 4 levels,
# layers_per_block 2, the same block types; VAE: 4 levels, layers_per_block 2; CLIP: causal text
# attention, class token + patches) and has several heads per attention where the released one
# does: UNet 2 heads of 16 at every level, text 2 x 16, vision 2 x 80; the VAE mid attention keeps
# the released single head (of 32 here).
# VAE widths [32, 64, 32, 32] change width exactly where the released [128, 256, 512, 512] does
# (encoder down_blocks.1/2 resnets.0, decoder up_blocks.2/3 resnets.0), so the tiny VAE has every
# released tensor name incl. all conv_shortcut tensors. The UNet stays [32, 32, 32, 32]: the width
# change that would give its down blocks conv_shortcuts ([32, 64, 32, 32]) costs 1.84 M params =
# 3.7 MB F16 instead of 2.2 MB; its up blocks have conv_shortcuts anyway (skip concatenation).
COND_DIM = 32
TINY = {
    "unet/config.json": dict(block_out_channels=[32, 32, 32, 32], attention_head_dim=[2, 2, 2, 2],
                             cross_attention_dim=COND_DIM, norm_num_groups=16),
    "vae/config.json": dict(block_out_channels=[32, 64, 32, 32]),
    "text_encoder/config.json": dict(hidden_size=COND_DIM, num_attention_heads=2, num_hidden_layers=2,
                                     intermediate_size=64),
    "vision_encoder/config.json": dict(hidden_size=160, num_attention_heads=2, num_hidden_layers=2,
                                       intermediate_size=320, projection_dim=COND_DIM),
}
VERBATIM = ["model_index.json", "scheduler/scheduler_config.json",
            "feature_extractor_vae/preprocessor_config.json",
            "feature_extractor_clip/preprocessor_config.json"]
WEIGHT_FILES = {"unet": "unet/diffusion_pytorch_model.safetensors",
                "vae": "vae/diffusion_pytorch_model.safetensors",
                "text_encoder": "text_encoder/model.safetensors",
                "vision_encoder": "vision_encoder/model.safetensors"}
# Token-embedding rows kept random; all others are zero (the engine only ever embeds ids 49406,
# 49407 and 0; zero rows keep the 49408-row table cheap in git).
TOKEN_ROWS_KEPT = [(0, 256), (49152, 49408)]

# Shapes of the golden inputs (rows x cols of the latents divisible by 8 = 2^3 downsamplings,
# like the real 120x80, so the UNet never takes diffusers' forced-upsample-size path).
MAIN_HW = (24, 16)      # 3:2 like 120x80
REF_HW = (16, 16)       # square like the real 64x64 reference latent, fewer tokens than the main
VAE_ENC_HW = (64, 64)
VAE_DEC_HW = (12, 8)
REF_STEPS, REF_STEP_INDEX = 28, 14   # trailing schedule: t = 499
REF_LAYERS = ["down_blocks.0.attentions.0.transformer_blocks.0.attn1.processor",
              "mid_block.attentions.0.transformer_blocks.0.attn1.processor",
              "up_blocks.3.attentions.2.transformer_blocks.0.attn1.processor"]
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def log(*a):
    print(*a, flush=True)


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


# ---- model folder ------------------------------------------------------------------------------

def write_configs(model_dir):
    for rel in VERBATIM:
        (model_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_CONFIGS / rel, model_dir / rel)
    for rel, over in TINY.items():
        cfg = json.loads((REAL_CONFIGS / rel).read_text())
        for k, v in over.items():
            assert k in cfg, (rel, k)
            cfg[k] = v
        write_json(model_dir / rel, cfg)
    # tokenizer/: the folder must exist (model_index.json lists it); only the two small config
    # files (spec §2.8) are written, not the third-party BPE vocab.json / merges.txt.
    tok = {"content": None, "lstrip": False, "normalized": True, "rstrip": False, "single_word": False}
    write_json(model_dir / "tokenizer/special_tokens_map.json", {
        "bos_token": dict(tok, content="<|startoftext|>"), "eos_token": dict(tok, content="<|endoftext|>"),
        "pad_token": "!", "unk_token": dict(tok, content="<|endoftext|>")})
    added = lambda c, norm: {"content": c, "lstrip": False, "normalized": norm, "rstrip": False,  # noqa: E731
                             "single_word": False, "special": True}
    write_json(model_dir / "tokenizer/tokenizer_config.json", {
        "add_prefix_space": False,
        "added_tokens_decoder": {"0": added("!", False), "49406": added("<|startoftext|>", True),
                                 "49407": added("<|endoftext|>", True)},
        "bos_token": "<|startoftext|>", "clean_up_tokenization_spaces": True, "do_lower_case": True,
        "eos_token": "<|endoftext|>", "errors": "replace", "model_max_length": 77, "pad_token": "!",
        "tokenizer_class": "CLIPTokenizer", "unk_token": "<|endoftext|>"})


def build_modules(model_dir):
    """The four networks, constructed by the official classes from the written config files."""
    unet = UNet2DConditionModel.from_config(UNet2DConditionModel.load_config(str(model_dir / "unet")))
    vae = AutoencoderKL.from_config(AutoencoderKL.load_config(str(model_dir / "vae")))
    text = CLIPTextModel(CLIPTextConfig.from_pretrained(str(model_dir / "text_encoder")))
    vision = CLIPVisionModelWithProjection(CLIPVisionConfig.from_pretrained(str(model_dir / "vision_encoder")))
    return dict(unet=unet.float().eval(), vae=vae.float().eval(), text_encoder=text.float().eval(),
                vision_encoder=vision.float().eval())


@torch.no_grad()
def randomize(module, gen):
    """Deterministic random weights, every value exactly representable in fp16.

    Norm weights 1 + 0.1 N, norm biases 0.1 N, other biases 0.05 N, embedding tables and the
    CLIP class embedding N(0,1), every other weight N(0, 1/fan_in). (The libraries' own inits
    leave norms at 1/0 and CLIP biases at 0, which would hide affine / bias bugs.)"""
    for mname, mod in module.named_modules():
        for pname, p in mod.named_parameters(recurse=False):
            r = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if isinstance(mod, (nn.LayerNorm, nn.GroupNorm)):
                v = 1 + 0.1 * r if pname == "weight" else 0.1 * r
            elif isinstance(mod, nn.Embedding) or pname == "class_embedding":
                v = r
            elif pname == "bias":
                v = 0.05 * r
            else:
                v = r / math.sqrt(p[0].numel())
            if isinstance(mod, nn.Embedding) and mname.endswith("token_embedding"):
                keep = torch.zeros(p.shape[0], dtype=torch.bool)
                for a, b in TOKEN_ROWS_KEPT:
                    keep[a:b] = True
                v[~keep] = 0
            p.copy_(v.half().float())


def released_state_dict(name, module):
    sd = {k: v.detach().to(torch.float16).contiguous().cpu() for k, v in module.state_dict().items()}
    sd = {k: v for k, v in sd.items() if not k.endswith("position_ids")}
    if name == "text_encoder":
        # released naming (transformers 4.36): "text_model." prefix on every tensor
        sd = {(k if k.startswith("text_model.") else "text_model." + k): v for k, v in sd.items()}
    return sd


def write_weights(model_dir, modules):
    for name, rel in WEIGHT_FILES.items():
        save_file(released_state_dict(name, modules[name]), str(model_dir / rel), metadata={"format": "pt"})


def layout_check(modules):
    """Tensor names vs the released checkpoint's (tests/data/zero123pp-v1.2-tensors.tsv): the VAE
    matches exactly, the UNet up to the 1x1 conv_shortcut tensors of down_blocks.{1,2}.resnets.0
    (which exist only where a resnet changes width; the tiny UNet widths are equal where the real
    ones grow), the CLIP towers up to their layer count."""
    import re
    real = {}
    for line in (REPO / "tests/data/zero123pp-v1.2-tensors.tsv").read_text().splitlines()[1:]:
        mod, name = line.split("\t")[:2]
        real.setdefault(mod, set()).add(name)
    report = {}
    for name, m in modules.items():
        mine = set(released_state_dict(name, m))
        layers = {int(x) for x in re.findall(r"\.layers\.(\d+)\.", " ".join(mine))}
        want = {n for n in real[name]
                if not (re.search(r"\.layers\.(\d+)\.", n) and
                        int(re.search(r"\.layers\.(\d+)\.", n).group(1)) not in layers)}
        missing = want - mine
        shortcuts = sorted(n for n in missing if ".conv_shortcut." in n)
        report[name] = dict(ok=not (mine - want) and len(shortcuts) == len(missing), tensors=len(mine),
                            released_tensors_in_this_topology=len(want),
                            missing_conv_shortcuts_equal_widths=shortcuts,
                            missing_other=sorted(missing - set(shortcuts))[:5], unexpected=sorted(mine - want)[:5])
        log("layout", name, report[name])
    return report


def reload_check(model_dir, modules):
    """Load the written folder back with the libraries' own from_pretrained and compare."""
    report = {}
    loaders = dict(unet=lambda p: UNet2DConditionModel.from_pretrained(p),
                   vae=lambda p: AutoencoderKL.from_pretrained(p),
                   text_encoder=lambda p: CLIPTextModel.from_pretrained(p),
                   vision_encoder=lambda p: CLIPVisionModelWithProjection.from_pretrained(p))
    for name, load in loaders.items():
        try:
            m = load(str(model_dir / name)).float()
            a, b = modules[name].state_dict(), m.state_dict()
            a = {k: v for k, v in a.items() if not k.endswith("position_ids")}
            b = {k: v for k, v in b.items() if not k.endswith("position_ids")}
            diff = max(((a[k].float() - b[k].float().cpu()).abs().max().item() for k in a if k in b), default=0.0)
            report[name] = dict(ok=set(a) == set(b) and diff == 0.0, max_abs_diff=diff,
                                missing=sorted(set(a) - set(b))[:5], unexpected=sorted(set(b) - set(a))[:5])
        except Exception as e:  # noqa: BLE001
            report[name] = dict(ok=False, error=f"{type(e).__name__}: {e}")
        log("reload", name, report[name])
    return report


# ---- capture helpers ---------------------------------------------------------------------------

def first_tensor(o):
    if torch.is_tensor(o):
        return o
    if isinstance(o, (tuple, list)):
        return first_tensor(o[0])
    for attr in ("sample", "last_hidden_state"):
        if hasattr(o, attr):
            return getattr(o, attr)
    raise TypeError(type(o))


class Capture:
    """Forward hooks that record module outputs (every call, in order)."""

    def __init__(self, root, names):
        self.out = {n: [] for n in names}
        mods = dict(root.named_modules())

        def find(n):  # tolerate a CLIP wrapper without the text_model./vision_model. level
            if n not in mods and n.split(".", 1)[0] in ("text_model", "vision_model"):
                return mods[n.split(".", 1)[1]]
            return mods[n]
        self.handles = [find(n).register_forward_hook(self._hook(n)) for n in names]

    def _hook(self, n):
        def h(_m, _i, o):
            self.out[n].append(first_tensor(o).detach().clone())
        return h

    def close(self):
        for h in self.handles:
            h.remove()


def f32(t):
    return t.detach().float().cpu().contiguous().clone()   # own storage (views of one tensor can't be saved)


# ---- goldens -----------------------------------------------------------------------------------

def make_inputs(seed):
    g = lambda k: torch.Generator().manual_seed(seed * 1000 + k)  # noqa: E731
    ids = torch.tensor([[49406, 49407] + [0] * 75], dtype=torch.long)
    pix = torch.randint(0, 256, (1, 3, 224, 224), generator=g(1)).float() / 255
    pix = (pix - torch.tensor(CLIP_MEAN).view(1, 3, 1, 1)) / torch.tensor(CLIP_STD).view(1, 3, 1, 1)
    vae_img = (torch.randint(0, 256, (1, 3) + VAE_ENC_HW, generator=g(2)).float() / 255 - 0.5) / 0.8
    return dict(
        input_ids=ids, pixel_values=pix, vae_image=vae_img,
        vae_noise=torch.randn((1, 4, VAE_ENC_HW[0] // 8, VAE_ENC_HW[1] // 8), generator=g(3)),
        vae_latent=torch.randn((1, 4) + VAE_DEC_HW, generator=g(4)),
        unet_sample=torch.randn((2, 4) + MAIN_HW, generator=g(5)),
        unet_ctx=torch.randn((2, 77, COND_DIM), generator=g(6)),
        ref_latent=torch.randn((1, 4) + MAIN_HW, generator=g(7)),
        ref_cond_lat=torch.randn((2, 4) + REF_HW, generator=g(8)),
        ref_noise=torch.randn((2, 4) + REF_HW, generator=g(9)),
    )


@torch.no_grad()
def compute(modules, inputs, device, dtype, errors):
    """All golden tensors: {file: {name: tensor}}, computed on device in dtype. A section that
    fails is reported in `errors` (with its traceback printed) and left out; the others go on."""
    mods = {k: copy.deepcopy(v).to(device=device, dtype=dtype) for k, v in modules.items()}
    x = {k: (v.to(device) if v.dtype == torch.long else v.to(device=device, dtype=dtype))
         for k, v in inputs.items()}
    out = {}

    def text_section():
        text = mods["text_encoder"]
        cap = Capture(text, ["text_model.embeddings", "text_model.encoder.layers.0",
                             "text_model.encoder.layers.1"])
        try:
            r = text(input_ids=x["input_ids"])
        finally:
            cap.close()
        return {"input_ids": x["input_ids"].float(),
                "embeddings": cap.out["text_model.embeddings"][0],
                "layer0_out": cap.out["text_model.encoder.layers.0"][0],
                "layer1_out": cap.out["text_model.encoder.layers.1"][0],
                "last_hidden_state": r.last_hidden_state}

    def vision_section():
        vis = mods["vision_encoder"]
        names = ["vision_model.embeddings", "vision_model.pre_layrnorm", "vision_model.encoder.layers.0",
                 "vision_model.post_layernorm"]
        cap = Capture(vis, names)
        try:
            r = vis(pixel_values=x["pixel_values"])
        finally:
            cap.close()
        return {"pixel_values": x["pixel_values"],
                "embeddings": cap.out[names[0]][0],
                "pre_layrnorm_out": cap.out[names[1]][0],
                "layer0_out": cap.out[names[2]][0],
                "last_hidden_state": r.last_hidden_state,
                "pooled": cap.out[names[3]][0],
                "image_embeds": r.image_embeds}

    def conditioning_section():
        # exactly as Zero123PlusPipeline.__call__ (+ StableDiffusionPipeline's CFG concatenation)
        E = out["text"]["last_hidden_state"]
        img = out["vision"]["image_embeds"]
        global_embeds = img.unsqueeze(-2)
        ramp = global_embeds.new_tensor(json.loads((REAL_CONFIGS / "model_index.json").read_text())
                                        ["ramping_coefficients"]).unsqueeze(-1)
        pos = E + global_embeds * ramp
        ctx = torch.cat([E, pos])           # [uncond (empty prompt, no image term), cond]
        return {"ramping_coefficients": ramp.view(-1), "prompt_embeds": E, "image_embeds": img,
                "positive": pos, "ctx": ctx}

    def vae_section():
        vae = mods["vae"]
        names = ["encoder.down_blocks.0", "encoder.mid_block", "encoder", "post_quant_conv",
                 "decoder.mid_block", "decoder.up_blocks.0"]
        cap = Capture(vae, names)
        try:
            post = vae.encode(x["vae_image"]).latent_dist
            dec = vae.decode(x["vae_latent"]).sample
        finally:
            cap.close()
        return {"enc.input": x["vae_image"],
                "enc.down0_out": cap.out["encoder.down_blocks.0"][0],
                "enc.mid_out": cap.out["encoder.mid_block"][0],
                "enc.encoder_out": cap.out["encoder"][0],
                "enc.moments": post.parameters,
                "enc.mean": post.mean, "enc.logvar": post.logvar, "enc.std": post.std,
                "enc.noise": x["vae_noise"],
                # DiagonalGaussianDistribution.sample() with this noise instead of randn
                "enc.sample": post.mean + post.std * x["vae_noise"],
                "dec.latent": x["vae_latent"],
                "dec.post_quant_out": cap.out["post_quant_conv"][0],
                "dec.mid_out": cap.out["decoder.mid_block"][0],
                "dec.up0_out": cap.out["decoder.up_blocks.0"][0],
                "dec.output": dec}

    def unet_section():
        # plain UNet, the library's default attention processors
        unet = mods["unet"]
        names = ["time_proj", "time_embedding", "conv_in", "down_blocks.0.resnets.0",
                 "down_blocks.0.attentions.0", "down_blocks.0", "down_blocks.3", "mid_block", "up_blocks.0",
                 "up_blocks.3"]
        res = {"sample": x["unet_sample"], "ctx": x["unet_ctx"]}
        for t in (999.0, 35.0):
            cap = Capture(unet, names)
            try:
                o = unet(x["unet_sample"], torch.tensor(t, device=device), encoder_hidden_states=x["unet_ctx"],
                         return_dict=False)[0]
            finally:
                cap.close()
            tag = f"t{int(t)}"
            res[f"{tag}.timestep"] = torch.tensor([t])
            res[f"{tag}.out"] = o
            if t == 999.0:
                for n in names:
                    res[f"{tag}.{n}.out"] = cap.out[n][0]
        return res

    def unet_ref_section():
        # the official RefOnlyNoisedUNet (reference write pass, then read pass), one sampling step
        # of the pipeline: cond_lat [uncond, cond], ctx [uncond, cond]
        ctx = out["conditioning"]["ctx"] if "conditioning" in out else x["unet_ctx"]
        sched_cfg = json.loads((REAL_CONFIGS / "scheduler/scheduler_config.json").read_text())
        sched = EulerAncestralDiscreteScheduler.from_config(sched_cfg, timestep_spacing="trailing")
        sched.set_timesteps(REF_STEPS)
        t = sched.timesteps[REF_STEP_INDEX]
        sigma = sched.sigmas[REF_STEP_INDEX]
        ref_unet = zero123plus.RefOnlyNoisedUNet(copy.deepcopy(mods["unet"]),
                                                 DDPMScheduler.from_config(sched.config), sched).eval()
        # as StableDiffusionPipeline's loop: latent_model_input = scale_model_input(cat([latents] * 2), t)
        main_in = sched.scale_model_input(torch.cat([x["ref_latent"]] * 2), t)
        seen = {}
        orig_fc = ref_unet.forward_cond

        def forward_cond(noisy_cond_lat, timestep, encoder_hidden_states, class_labels, ref_dict, is_cfg, **kw):
            seen["ref_input"] = noisy_cond_lat.detach().clone()
            orig_fc(noisy_cond_lat, timestep, encoder_hidden_states, class_labels, ref_dict, is_cfg, **kw)
            seen["stored"] = {k: v.detach().clone() for k, v in ref_dict.items()}
        ref_unet.forward_cond = forward_cond
        orig_randn_like = torch.randn_like
        noises = []

        def randn_like(t_, *a, **k):   # the per-step reference noise: inject the stored tensor
            assert tuple(t_.shape) == tuple(x["ref_noise"].shape), t_.shape
            n = x["ref_noise"].to(device=t_.device, dtype=t_.dtype)
            noises.append(n)
            return n
        names = ["down_blocks.0", "mid_block", "up_blocks.3"]
        cap = Capture(ref_unet.unet, names)
        torch.randn_like = randn_like
        try:
            o = ref_unet(main_in, t, encoder_hidden_states=ctx,
                         cross_attention_kwargs=dict(cond_lat=x["ref_cond_lat"]), return_dict=False)[0]
        finally:
            torch.randn_like = orig_randn_like
            cap.close()
        stored_layers = 16 * TINY["unet/config.json"].get("transformer_layers_per_block", 1)
        assert len(noises) == 1 and len(seen["stored"]) == stored_layers, (len(noises), len(seen.get("stored", {})))
        for n in names:
            assert len(cap.out[n]) == 2, (n, len(cap.out[n]))
        res = {"latents": x["ref_latent"], "main_input": main_in, "timestep": t.reshape(1).float(),
               "sigma": sigma.reshape(1).float(), "ctx": ctx, "cond_lat": x["ref_cond_lat"],
               "noise": x["ref_noise"], "ref_input": seen["ref_input"], "out": o}
        for n in names:
            res[f"write.{n}.out"] = cap.out[n][0]
            res[f"read.{n}.out"] = cap.out[n][1]
        for n in REF_LAYERS + [n.replace("transformer_blocks.0", "transformer_blocks.1") for n in REF_LAYERS]:
            if n in seen["stored"]:
                res[f"stored.{n}"] = seen["stored"][n]
        return res

    for name, fn in [("text", text_section), ("vision", vision_section), ("conditioning", conditioning_section),
                     ("vae", vae_section), ("unet", unet_section), ("unet_ref", unet_ref_section)]:
        try:
            out[name] = fn()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            errors.append(f"{device}/{dtype}/{name}: {type(e).__name__}: {e}")
            log("SECTION FAILED", errors[-1])
    return {f: {k: f32(v) for k, v in d.items()} for f, d in out.items()}


def side_checks(goldens, modules, inputs):
    """Facts about the goldens worth recording (not used by the tests)."""
    r = goldens["unet_ref"]
    s = r["sigma"][0].item()
    expect = (r["cond_lat"] + r["noise"] * s) / math.sqrt(s * s + 1)
    facts = {"ref_input_vs_formula_max_abs": (expect - r["ref_input"]).abs().max().item(),
             "sigma": s, "timestep": r["timestep"][0].item()}
    with torch.no_grad():
        plain = copy.deepcopy(modules["unet"])(r["main_input"], r["timestep"][0], encoder_hidden_states=r["ctx"],
                                               return_dict=False)[0]
    facts["ref_out_vs_plain_unet_max_abs"] = (plain - r["out"]).abs().max().item()
    facts["ref_out_max_abs"] = r["out"].abs().max().item()
    u = goldens["unet"]
    facts["unet_t999_vs_t35_out_max_abs"] = (u["t999.out"] - u["t35.out"]).abs().max().item()
    return facts


def compare(ref, other):
    rep = {}
    for f, d in ref.items():
        for k, a in d.items():
            b = other.get(f, {}).get(k)
            if b is None:
                rep[f"{f}/{k}"] = {"missing": True}
                continue
            scale = a.abs().max().item()
            diff = (a.double() - b.double()).abs().max().item()
            rep[f"{f}/{k}"] = {"max_abs": diff, "max_abs_over_max": diff / scale if scale else diff}
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=str(REPO / "tests" / "data" / "golden"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-cross-check", action="store_true")
    ap.add_argument("--transformer-layers", type=int, default=1,
                    help="the tiny UNet's transformer_layers_per_block (2: tests/data/golden-tlpb2)")
    a = ap.parse_args()
    if a.transformer_layers != 1:
        TINY["unet/config.json"]["transformer_layers_per_block"] = a.transformer_layers
    out = Path(a.out)
    model_dir = out / "tiny-model"
    if model_dir.exists():
        shutil.rmtree(model_dir)
    model_dir.mkdir(parents=True)

    versions = dict(torch=torch.__version__, transformers=transformers.__version__, diffusers=diffusers.__version__,
                    python=platform.python_version(),
                    cuda_device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
    log("versions", versions)
    write_configs(model_dir)
    torch.manual_seed(a.seed)
    modules = build_modules(model_dir)
    gen = torch.Generator().manual_seed(a.seed)
    for name in ("unet", "vae", "text_encoder", "vision_encoder"):
        randomize(modules[name], gen)
    write_weights(model_dir, modules)
    params = {k: sum(p.numel() for p in m.parameters()) for k, m in modules.items()}
    log("params", params)
    reload = reload_check(model_dir, modules)
    layout = layout_check(modules)

    inputs = make_inputs(a.seed)
    errors = []
    goldens = compute(modules, inputs, "cpu", torch.float32, errors)
    for f, d in goldens.items():
        save_file(d, str(out / f"{f}.safetensors"), metadata={"format": "pt", "producer": "make_goldens.py"})
        log("wrote", f, {k: list(v.shape) for k, v in d.items()})

    cross = {}
    if not a.no_cross_check:
        runs = [("cpu_fp64", "cpu", torch.float64)]
        if torch.cuda.is_available():
            runs.append(("cuda_fp32_no_tf32", "cuda", torch.float32))
        for tag, dev, dt in runs:
            try:
                cross[tag] = compare(goldens, compute(modules, inputs, dev, dt, errors))
                worst = max(cross[tag].items(), key=lambda kv: kv[1].get("max_abs_over_max", -1))
                log("cross-check", tag, "worst", worst)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                cross[tag] = {"error": f"{type(e).__name__}: {e}"}
    try:
        facts = side_checks(goldens, modules, inputs)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        facts = {"error": f"{type(e).__name__}: {e}"}
    log("facts", facts)
    # guards against tiny configs that make a path dead (e.g. GroupNorm cancelling the timestep)
    for key, floor in (("unet_t999_vs_t35_out_max_abs", 0.05), ("ref_out_vs_plain_unet_max_abs", 0.05)):
        if not facts.get(key, 0.0) > floor:
            errors.append(f"facts: {key} = {facts.get(key)} <= {floor}: a path has no effect on the output")
            log("CHECK FAILED", errors[-1])

    manifest = dict(
        producer="tests/reference/make_goldens.py", seed=a.seed, versions=versions, parameters=params,
        weights_dtype="F16 (all four networks; values generated in fp32 and rounded to fp16, "
                      "goldens computed in fp32 from those fp16-exact values)",
        goldens_dtype="F32, computed on the CPU in fp32",
        tiny_config_overrides=TINY, token_embedding_rows_kept=TOKEN_ROWS_KEPT,
        reference_step=dict(spacing="trailing", steps=REF_STEPS, index=REF_STEP_INDEX, layers=REF_LAYERS),
        reload_check=reload, layout_check=layout, facts=facts, errors=errors, cross_check=cross,
        files={f: {k: list(v.shape) for k, v in d.items()} for f, d in goldens.items()})
    write_json(out / "manifest.json", manifest)
    # the written files load back
    for f in goldens:
        load_file(str(out / f"{f}.safetensors"))
    log("done", out, "errors:", errors)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
