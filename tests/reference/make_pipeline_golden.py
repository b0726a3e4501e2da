#!/usr/bin/env python3
"""End-to-end golden of the OFFICIAL Zero123PlusPipeline on the tiny model, every noise draw recorded.

Runs `Zero123PlusPipeline` (SUDO-AI-3D/zero123plus `diffusers-support/pipeline.py`) on the tiny
model folder `tests/data/golden/tiny-model` (written by make_goldens.py), fp32 on the CPU, with a
synthetic RGBA input image, and writes

    OUT_DIR/pipeline.safetensors   every tensor the engine needs to replay the run (F32), except the
                                   VAE-branch input, which the engine's Pillow-exact preprocessing
                                   reproduces exactly (checked here, see `preprocessing`)
    OUT_DIR/pipeline_input.png     the RGBA input image (96 x 80)

Noise (spec §16): the pipeline draws standard normals from torch's global RNG (VAE posterior
samples, the per-step reference noise) and from the `generator` (initial latent, ancestral noise).
Every draw goes through `torch.randn` (diffusers' `randn_tensor`, used by the posterior's
`sample()`, `prepare_latents` and `EulerAncestralDiscreteScheduler.step`) or `torch.randn_like`
(`RefOnlyNoisedUNet.forward`). Both are wrapped for the duration of the call: the recording run
stores each draw together with its calling function; a replay run returns the stored tensors in
the same order instead of drawing (checking shape and caller). The script replays with a different
torch seed / generator seed and requires bit-identical results, and checks that the same seeds
without injection give a different image.

Needs torch, transformers, safetensors, Pillow, numpy and the diffusers + zero123plus sources
(never committed) in .ref/ (see make_goldens.py). Usage:
    python3 tests/reference/make_pipeline_golden.py [OUT_DIR] [--model DIR] [--no-cross-check]
OUT_DIR defaults to tests/data/golden. See tests/data/golden/README.md, section
"pipeline.safetensors", for what every tensor holds.
"""
import argparse
import functools
import json
import os
import platform
import sys
import traceback
import zlib
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")   # deterministic cuBLAS (CUDA cross-check)
sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_goldens as mg  # noqa: E402  (sets up .ref on sys.path, TF32 off; shared helpers)
import numpy as np  # noqa: E402
import PIL  # noqa: E402
from PIL import Image  # noqa: E402
import torch  # noqa: E402
from safetensors.torch import save_file, load_file  # noqa: E402
import transformers  # noqa: E402
from transformers import CLIPImageProcessor, CLIPTextModel, CLIPVisionModelWithProjection  # noqa: E402
import diffusers  # noqa: E402
from diffusers import AutoencoderKL, EulerAncestralDiscreteScheduler, UNet2DConditionModel  # noqa: E402

zp = mg.zero123plus          # the official custom pipeline module
log, f32 = mg.log, mg.f32

IMG_W, IMG_H = 96, 80        # input image, width x height
OUT_W, OUT_H = 128, 192      # pipeline width/height -> latent [1,4,24,16], image 128 wide x 192 tall.
                             # Latent sides are multiples of 8 (= 2^(UNet levels - 1)), as the real
                             # 120x80 latent's are: 12x8 would take diffusers' non-power-of-two
                             # upsample path (explicit upsample_size), which the real run never uses.
STEPS = 4
GUIDANCE = 4.0
SEED = 0                     # torch.manual_seed and the generator's seed of the recording run
REPLAY_SEED = 12345          # seeds of the replay runs (must not matter once the noise is injected)
CALL = dict(num_inference_steps=STEPS, guidance_scale=GUIDANCE, width=OUT_W, height=OUT_H, output_type="pil")
# noise draws in order (spec §16): (caller "file:function", stream name)
EXPECTED_DRAWS = ([("vae.py:sample", "vae_cond"), ("vae.py:sample", "vae_zero"),
                   ("pipeline_stable_diffusion.py:prepare_latents", "init")] +
                  [d for _ in range(STEPS) for d in (("pipeline.py:forward", "ref"),
                                                     ("scheduling_euler_ancestral_discrete.py:step", "ancestral"))])




def configure(steps, width, height):
    """Overrides the run size (the defaults make the committed tiny golden)."""
    global STEPS, OUT_W, OUT_H, CALL, EXPECTED_DRAWS
    STEPS, OUT_W, OUT_H = steps, width, height
    CALL = dict(num_inference_steps=STEPS, guidance_scale=GUIDANCE, width=OUT_W, height=OUT_H, output_type="pil")
    EXPECTED_DRAWS = ([("vae.py:sample", "vae_cond"), ("vae.py:sample", "vae_zero"),
                       ("pipeline_stable_diffusion.py:prepare_latents", "init")] +
                      [d for _ in range(STEPS) for d in (("pipeline.py:forward", "ref"),
                                                         ("scheduling_euler_ancestral_discrete.py:step", "ancestral"))])


# ---- input image -------------------------------------------------------------------------------

def make_input_rgba():
    """Deterministic 96x80 RGBA image (no RNG): transparent background whose hidden RGB is magenta
    (a composite that ignored alpha would show it), a colour-gradient ellipse with an opaque core
    and a soft rim (alpha falling to 0), a semi-transparent rectangle with an alpha ramp, and a top
    stripe whose alpha runs 0..255 across the image."""
    H, W = IMG_H, IMG_W
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    rgb = np.zeros((H, W, 3))
    rgb[..., 0], rgb[..., 2] = 255, 255
    alpha = np.zeros((H, W))
    r = np.sqrt(((x - 42) / 33) ** 2 + ((y - 40) / 27) ** 2)
    ell = r < 1
    rgb[ell, 0] = (30 + 200 * x / (W - 1))[ell]
    rgb[ell, 1] = (220 - 170 * y / (H - 1))[ell]
    rgb[ell, 2] = (128 + 100 * np.sin(x / 5) * np.cos(y / 7))[ell]
    alpha[ell] = np.clip((1 - r) / 0.4, 0, 1)[ell] * 255
    rect = (x >= 58) & (x < 90) & (y >= 44) & (y < 74)
    rgb[rect] = (20, 160, 230)
    alpha[rect] = (60 + 4 * (y - 44) + 2 * (x - 58))[rect]
    stripe = (y >= 2) & (y < 8) & (x >= 2) & (x < W - 2)
    rgb[stripe, 0] = (255 - 2.5 * x)[stripe]
    rgb[stripe, 1] = 40
    rgb[stripe, 2] = (2.5 * x)[stripe]
    alpha[stripe] = (255 * (x - 2) / (W - 5))[stripe]
    rgba = np.concatenate([rgb, alpha[..., None]], axis=-1)
    return np.clip(np.round(rgba), 0, 255).astype(np.uint8)


def composite_formula(rgba):
    """Pillow's masked paste over gray 127 (spec §4.1): DIV255(127*(255-a) + fg*a)."""
    a = rgba[..., 3:].astype(np.int64)
    v = 127 * (255 - a) + rgba[..., :3].astype(np.int64) * a + 128
    return ((v + (v >> 8)) >> 8).astype(np.uint8)


def pillow_preprocess(img, size, resample, mean, std):
    """CLIPImageProcessor as the released pipeline era ran it (transformers 4.29-4.36, spec §4.2):
    Pillow resize of the short edge to `size` (long edge truncated), center crop, x/255 in float64
    stored as float32, (x - mean)/std in float32. Returns [1,3,size,size]."""
    w, h = img.size
    if w <= h:
        nw, nh = size, int(size * h / w)
    else:
        nw, nh = int(size * w / h), size
    arr = np.asarray(img.resize((nw, nh), resample=resample), dtype=np.uint8)
    top, left = (nh - size) // 2, (nw - size) // 2
    arr = arr[top:top + size, left:left + size]
    x = (arr.astype(np.float64) * (1 / 255)).astype(np.float32)
    x = (x - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None]))


# ---- pipeline ----------------------------------------------------------------------------------

class EmptyPromptTokenizer:
    """Stands in for the CLIP BPE tokenizer (vocab.json/merges.txt are not in the tiny model): the
    pipeline only ever encodes "", whose ids are [49406, 49407, 0 x 75] (spec §5.1)."""
    model_max_length = 77
    added_tokens_encoder = {}

    def __call__(self, prompt, padding=None, max_length=None, truncation=None, return_tensors=None):
        n = len(prompt) if isinstance(prompt, list) else 1
        assert all(p == "" for p in (prompt if isinstance(prompt, list) else [prompt])), prompt
        ids = torch.zeros(n, 77, dtype=torch.long)
        ids[:, 0], ids[:, 1] = 49406, 49407

        class R:
            pass
        r = R()
        r.input_ids, r.attention_mask = ids, torch.ones_like(ids)
        return r

    def tokenize(self, prompt):
        return []

    def batch_decode(self, *a, **k):
        return [""]


def load_image_processor(path):
    try:
        return CLIPImageProcessor.from_pretrained(str(path)), "from_pretrained"
    except Exception as e:  # noqa: BLE001
        log("CLIPImageProcessor.from_pretrained failed, constructing from the json:", e)
        cfg = json.loads((path / "preprocessor_config.json").read_text())
        cfg.pop("image_processor_type", None)
        return CLIPImageProcessor(**cfg), "constructed from preprocessor_config.json"


def build_pipeline(model_dir, device, dtype):
    """Zero123PlusPipeline from the tiny model folder's pieces, as the README sets it up
    (scheduler from the folder's config with timestep_spacing='trailing')."""
    unet = UNet2DConditionModel.from_pretrained(str(model_dir), subfolder="unet")
    vae = AutoencoderKL.from_pretrained(str(model_dir), subfolder="vae")
    text = CLIPTextModel.from_pretrained(str(model_dir / "text_encoder"))
    vision = CLIPVisionModelWithProjection.from_pretrained(str(model_dir / "vision_encoder"))
    sched = EulerAncestralDiscreteScheduler.from_pretrained(str(model_dir), subfolder="scheduler")
    sched = EulerAncestralDiscreteScheduler.from_config(sched.config, timestep_spacing="trailing")
    fe_vae, how_vae = load_image_processor(model_dir / "feature_extractor_vae")
    fe_clip, how_clip = load_image_processor(model_dir / "feature_extractor_clip")
    ramp = json.loads((model_dir / "model_index.json").read_text())["ramping_coefficients"]
    mods = dict(unet=unet, vae=vae, text_encoder=text, vision_encoder=vision)
    for m in mods.values():
        m.to(device=device, dtype=dtype).eval()
    pipe = zp.Zero123PlusPipeline(vae=vae, text_encoder=text, tokenizer=EmptyPromptTokenizer(), unet=unet,
                                  scheduler=sched, vision_encoder=vision, feature_extractor_clip=fe_clip,
                                  feature_extractor_vae=fe_vae, ramping_coefficients=ramp)
    pipe.set_progress_bar_config(disable=True)
    info = dict(image_processors=dict(vae=how_vae, clip=how_clip, vae_class=type(fe_vae).__name__,
                                      clip_class=type(fe_clip).__name__),
                scheduler_config={k: v for k, v in sched.config.items() if not k.startswith("_")})
    return pipe, info


# ---- noise tape --------------------------------------------------------------------------------

class NoiseTape:
    """Wraps torch.randn and torch.randn_like while active. mode 'record': draws as usual and
    keeps a float32 CPU copy of every draw with its caller; mode 'replay': returns the recorded
    draws in order instead of drawing (shape and caller must match); mode 'off': records the
    callers only (a plain run)."""

    SKIP = {"randn_tensor", "randn", "randn_like"}

    def __init__(self, mode, draws=None):
        self.mode, self.draws, self.calls = mode, (draws if draws is not None else []), []

    @staticmethod
    def _caller():
        f = sys._getframe(2)
        while f is not None and f.f_code.co_name in NoiseTape.SKIP:
            f = f.f_back
        return f"{Path(f.f_code.co_filename).name}:{f.f_code.co_name}" if f else "?"

    def _take(self, shape, dtype, device, draw, source):
        caller = self._caller()
        i = len(self.calls)
        self.calls.append(dict(caller=caller, shape=list(shape), source=source))
        if self.mode == "replay":
            rec = self.draws[i]
            assert list(rec["tensor"].shape) == list(shape) and rec["caller"] == caller, (i, rec["caller"], caller)
            return rec["tensor"].to(device=device, dtype=dtype)
        t = draw()
        if self.mode == "record":
            self.draws.append(dict(caller=caller, source=source, tensor=t.detach().float().cpu().clone()))
        return t

    def __enter__(self):
        self._orig = (torch.randn, torch.randn_like)
        o_randn, o_like = self._orig

        def randn(*size, generator=None, dtype=None, device=None, **kw):
            shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
            return self._take(shape, dtype or torch.get_default_dtype(), device or "cpu",
                              lambda: o_randn(*size, generator=generator, dtype=dtype, device=device, **kw),
                              "generator" if generator is not None else "global")

        def randn_like(inp, *a, dtype=None, device=None, **kw):
            return self._take(tuple(inp.shape), dtype or inp.dtype, device or inp.device,
                              lambda: o_like(inp, *a, dtype=dtype, device=device, **kw), "global")
        torch.randn, torch.randn_like = randn, randn_like
        return self

    def __exit__(self, *exc):
        torch.randn, torch.randn_like = self._orig
        return False


# ---- probes ------------------------------------------------------------------------------------

class Probe:
    """Hooks that record what the pipeline feeds and computes (no behaviour change)."""

    def __init__(self, pipe):
        pipe.prepare()        # wraps the UNet in RefOnlyNoisedUNet now (idempotent; __call__ calls it too)
        self.r = {}
        self.pipe = pipe
        c = lambda t: t.detach().clone()  # noqa: E731
        add = lambda k, v: self.r.setdefault(k, []).append(c(v))  # noqa: E731
        vae = pipe.vae
        H = []
        H.append(vae.encoder.register_forward_pre_hook(lambda m, a: add("vae_enc_in", a[0])))
        H.append(vae.quant_conv.register_forward_hook(lambda m, a, o: add("moments", o)))
        H.append(vae.post_quant_conv.register_forward_pre_hook(lambda m, a: add("dec_in", a[0])))
        H.append(vae.decoder.register_forward_hook(lambda m, a, o: add("dec_out", o)))

        def vis_pre(m, a, k):
            add("clip_in", a[0] if a else k["pixel_values"])
        H.append(pipe.vision_encoder.register_forward_pre_hook(vis_pre, with_kwargs=True))
        H.append(pipe.vision_encoder.register_forward_hook(lambda m, a, o: add("image_embeds", o.image_embeds)))
        H.append(pipe.text_encoder.register_forward_hook(lambda m, a, o: add("text_out", o[0])))

        def unet_hook(m, a, k, o):
            add("unet_in", a[0])
            add("unet_t", torch.as_tensor(a[1]).reshape(1).float())
            add("ctx", k["encoder_hidden_states"])
            add("cond_lat", k["cross_attention_kwargs"]["cond_lat"])
            add("unet_out", o[0])
        H.append(pipe.unet.register_forward_hook(unet_hook, with_kwargs=True))
        self.handles = H

        sched = pipe.scheduler
        self._step = sched.step

        @functools.wraps(self._step)
        def step(model_output, timestep, sample, *a, **k):
            out = self._step(model_output, timestep, sample, *a, **k)
            add("step_v", model_output)
            add("step_x", sample)
            add("step_prev", out[0] if isinstance(out, tuple) else out.prev_sample)
            add("step_x0", out[1] if isinstance(out, tuple) else out.pred_original_sample)
            return out
        sched.step = step

        ip = pipe.image_processor
        self._post = ip.postprocess

        @functools.wraps(self._post)
        def postprocess(image, output_type="pil", **k):
            if output_type == "latent":   # StableDiffusionPipeline's own call (returns the latents)
                return self._post(image, output_type=output_type, **k)
            add("post_in", image)
            add("image01", self._post(image.clone(), output_type="pt", **k))
            return self._post(image, output_type=output_type, **k)
        ip.postprocess = postprocess

    def close(self):
        for h in self.handles:
            h.remove()
        del self.pipe.scheduler.step
        del self.pipe.image_processor.postprocess


@torch.no_grad()
def run(pipe, image, mode, seed, draws=None):
    """One pipeline call; returns ({name: f32 tensor}, NoiseTape)."""
    torch.manual_seed(seed)
    gen = torch.Generator("cpu").manual_seed(seed)
    probe = Probe(pipe)
    try:
        with NoiseTape(mode, draws) as tape:
            out = pipe(image, generator=gen, **CALL)
    finally:
        probe.close()
    r = probe.r
    for k, n in dict(vae_enc_in=2, moments=2, dec_in=1, dec_out=1, clip_in=1, image_embeds=1, text_out=2,
                     unet_in=STEPS, step_v=STEPS, post_in=1, image01=1).items():
        assert len(r.get(k, [])) == n, (k, len(r.get(k, [])))
    assert not r["vae_enc_in"][1].any(), "second VAE encode should be the zero image"
    for i in range(1, STEPS):
        assert torch.equal(r["step_x"][i], r["step_prev"][i - 1])
    for i in range(STEPS):
        assert torch.equal(r["ctx"][i], r["ctx"][0]) and torch.equal(r["cond_lat"][i], r["cond_lat"][0])
    sch = pipe.scheduler
    t = dict()
    t["input.clip"] = r["clip_in"][0]
    t["cond_lat"] = r["cond_lat"][0]
    t["prompt_embeds"] = r["text_out"][0]
    t["image_embeds"] = r["image_embeds"][0]
    t["ctx"] = r["ctx"][0]
    t["timesteps"] = sch.timesteps.float()
    t["sigmas"] = sch.sigmas.float()
    t["init_noise_sigma"] = torch.tensor([float(sch.init_noise_sigma)])
    t["latents"] = torch.stack([r["step_x"][0]] + r["step_prev"])
    t["unet.timestep"] = torch.cat(r["unet_t"])
    t["unet.input"] = torch.stack(r["unet_in"])
    t["unet.out"] = torch.stack(r["unet_out"])
    t["v"] = torch.stack(r["step_v"])
    t["x0"] = torch.stack(r["step_x0"])
    t["decode.input"] = r["dec_in"][0]
    t["decode.output"] = r["dec_out"][0]
    t["image"] = r["image01"][0]
    t["image_u8"] = torch.from_numpy(np.asarray(out.images[0], dtype=np.uint8).copy()).float()
    t = {k: f32(v) for k, v in t.items()}
    # internal, not stored: the VAE-branch input (compared with a Pillow-exact preprocessing below;
    # it matches, so the engine computes it itself), posterior moments (a consistency check)
    t["_input_vae"] = f32(r["vae_enc_in"][0])
    t["_moments"] = f32(torch.cat(r["moments"]))
    t["_post_in"] = f32(r["post_in"][0])
    return t, tape


def noise_tensors(tape):
    got = [(d["caller"], d["source"]) for d in tape.draws]
    assert [c for c, _ in got] == [c for c, _ in EXPECTED_DRAWS], got
    by = {}
    for d, (_, name) in zip(tape.draws, EXPECTED_DRAWS):
        by.setdefault(name, []).append(d["tensor"])
    return {"noise.vae_cond": by["vae_cond"][0], "noise.vae_zero": by["vae_zero"][0], "noise.init": by["init"][0],
            "noise.ref": torch.stack(by["ref"]), "noise.ancestral": torch.stack(by["ancestral"])}


def max_abs(a, b):
    return (a.double() - b.double().to(a.device)).abs().max().item()


def close(a, b, rel=1e-6):
    """max |a - b| within rel * max(1, max |a|) (allows an ulp where the formula is evaluated differently)."""
    return max_abs(a, b) <= rel * max(1.0, a.abs().max().item())


def compare(ref, other):
    rep = {}
    for k, a in ref.items():
        if k.startswith("_") or k not in other:
            continue
        b = other[k]
        scale = a.abs().max().item()
        d = max_abs(a, b)
        rep[k] = dict(max_abs=d, rel=d / scale if scale else d)
        if k == "image_u8":
            rep[k]["values_differing"] = int((a != b).sum().item())
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=str(mg.REPO / "tests" / "data" / "golden"))
    ap.add_argument("--model", default=str(mg.REPO / "tests" / "data" / "golden" / "tiny-model"))
    ap.add_argument("--no-cross-check", action="store_true")
    # Full-size runs (bench/gpu_run.sh): the real 640x960 / 28 steps on the GPU in fp32.
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--width", type=int, default=OUT_W)
    ap.add_argument("--height", type=int, default=OUT_H)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    configure(a.steps, a.width, a.height)
    if a.device != "cpu":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    out_dir, model_dir = Path(a.out), Path(a.model)
    out_dir.mkdir(parents=True, exist_ok=True)
    versions = dict(torch=torch.__version__, transformers=transformers.__version__,
                    diffusers=diffusers.__version__, pillow=PIL.__version__, numpy=np.__version__,
                    python=platform.python_version(),
                    cuda_device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
    log("versions", versions)
    errors, checks = [], {}

    def check(name, ok, value=None):
        checks[name] = dict(ok=bool(ok), value=value)
        log("check", name, "OK" if ok else "FAILED", value)
        if not ok:
            errors.append(name)

    # input image: written as PNG and read back, so the file is exactly what was fed
    rgba = make_input_rgba()
    png = out_dir / "pipeline_input.png"
    Image.fromarray(rgba, "RGBA").save(png, optimize=True)
    image = Image.open(png)
    image.load()
    check("png_roundtrip", image.mode == "RGBA" and np.array_equal(np.asarray(image), rgba))
    rgb = np.asarray(zp.to_rgb_image(image), dtype=np.uint8)
    check("composite_equals_div255_formula", np.array_equal(rgb, composite_formula(rgba)))
    al = rgba[..., 3]
    alpha_stats = dict(transparent=int((al == 0).sum()), partial=int(((al > 0) & (al < 255)).sum()),
                       opaque=int((al == 255).sum()))
    log("alpha", alpha_stats)

    torch.use_deterministic_algorithms(True, warn_only=True)
    pipe, build_info = build_pipeline(model_dir, a.device, torch.float32)

    # 1. recording run
    rec, tape = run(pipe, image, "record", SEED)
    noise = noise_tensors(tape)
    sources = [dict(caller=d["caller"], rng=d["source"], shape=list(d["tensor"].shape)) for d in tape.draws]
    log("noise draws", sources)
    # 2. replay with other seeds: must be bit-identical
    rep, rtape = run(pipe, image, "replay", REPLAY_SEED, tape.draws)
    diff = [k for k in rec if not torch.equal(rec[k], rep[k])]
    check("replay_bit_identical", not diff and len(rtape.calls) == len(tape.draws), diff)
    # 3. the same other seeds without injection: the image must change
    plain, ptape = run(pipe, image, "off", REPLAY_SEED)
    check("plain_run_other_seed_differs", max_abs(rec["image"], plain["image"]) > 1e-3,
          max_abs(rec["image"], plain["image"]))
    check("plain_run_same_draw_sequence", [c["caller"] for c in ptape.calls] == [c for c, _ in EXPECTED_DRAWS])

    # consistency facts (the stored tensors agree with the formulas of the spec)
    s0 = rec["sigmas"][0]
    check("x0_is_init_noise_times_sigma0", torch.equal(rec["latents"][0], noise["noise.init"] * rec["init_noise_sigma"][0]))
    check("init_noise_sigma_is_sigma0", rec["init_noise_sigma"][0].item() == s0.item())
    m = rec["_moments"][[1, 0]]       # encode order is [cond, zero]; cond_lat is [zero, cond]
    mean, std = m[:, :4], torch.exp(0.5 * torch.clamp(m[:, 4:], -30.0, 20.0))
    post = mean + std * torch.cat([noise["noise.vae_zero"], noise["noise.vae_cond"]])
    check("cond_lat_is_mean_plus_std_noise", close(post, rec["cond_lat"]), max_abs(post, rec["cond_lat"]))
    ramp = torch.tensor(pipe.config.ramping_coefficients, dtype=torch.float32).view(1, 77, 1)
    pos = rec["prompt_embeds"] + rec["image_embeds"].unsqueeze(1) * ramp
    check("ctx_is_E_and_E_plus_ramp_image", torch.equal(rec["ctx"][0:1], rec["prompt_embeds"]) and
          close(pos, rec["ctx"][1:2]), max_abs(pos, rec["ctx"][1:2]))
    u, c = rec["unet.out"][:, 0:1], rec["unet.out"][:, 1:2]
    check("v_is_cfg_of_unet_out", close(u + GUIDANCE * (c - u), rec["v"]), max_abs(u + GUIDANCE * (c - u), rec["v"]))
    expect_in = torch.cat([rec["latents"][:STEPS]] * 2, dim=1) / torch.sqrt(rec["sigmas"][:STEPS] ** 2 + 1).view(-1, 1, 1, 1, 1)
    check("unet_input_is_scaled_latents", close(expect_in, rec["unet.input"]), max_abs(expect_in, rec["unet.input"]))
    check("unet_timestep_is_timesteps", torch.equal(rec["unet.timestep"], rec["timesteps"]))
    dec_in = (rec["latents"][-1] / 0.75 + 0.22) / 0.18215
    check("decode_input_is_unscaled_latents", close(dec_in, rec["decode.input"]), max_abs(dec_in, rec["decode.input"]))
    img01 = (rec["decode.output"] / 0.5 * 0.8 * 0.5 + 0.5).clamp(0, 1)
    check("image_is_postprocessed_decode", close(img01, rec["image"]), max_abs(img01, rec["image"]))
    u8 = torch.from_numpy((rec["image"][0].permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)).float()
    check("image_u8_is_round_image_x255", torch.equal(u8, rec["image_u8"]))
    check("image_not_constant", rec["image_u8"].std().item() > 1.0, rec["image_u8"].std().item())

    # what the pipeline's CLIPImageProcessor fed vs a Pillow-exact preprocessing (spec §4.2)
    rgb_img = Image.fromarray(rgb, "RGB")
    pil_vae = pillow_preprocess(rgb_img, 512, Image.BILINEAR, [0.5] * 3, [0.8] * 3)
    pil_clip = pillow_preprocess(rgb_img, 224, Image.BICUBIC, mg.CLIP_MEAN, mg.CLIP_STD)
    preprocessing = dict(
        vae_fed_vs_pillow_max_abs=max_abs(rec["_input_vae"], pil_vae),
        vae_fed_vs_pillow_levels=round(max_abs(rec["_input_vae"], pil_vae) * 0.8 * 255, 3),
        clip_fed_vs_pillow_max_abs=max_abs(rec["input.clip"], pil_clip),
        clip_fed_vs_pillow_levels=round(max_abs(rec["input.clip"] * torch.tensor(mg.CLIP_STD).view(1, 3, 1, 1),
                                                pil_clip * torch.tensor(mg.CLIP_STD).view(1, 3, 1, 1)) * 255, 3),
        vae_fed_on_8bit_levels=max_abs(torch.round((rec["_input_vae"] * 0.8 + 0.5) * 255) / 255, rec["_input_vae"] * 0.8 + 0.5) < 1e-6)
    log("preprocessing", preprocessing)
    # input.vae is not stored: the engine's Pillow-exact preprocessing must reproduce it (same 8-bit levels)
    check("vae_input_equals_pillow_preprocessing",
          preprocessing["vae_fed_vs_pillow_levels"] < 0.01 and preprocessing["vae_fed_on_8bit_levels"],
          preprocessing["vae_fed_vs_pillow_max_abs"])

    # cross-checks: the same run (noise injected) on CUDA fp32 without TF32 and on the CPU in fp64
    cross = {}
    if not a.no_cross_check:
        runs = [("cpu_fp64", "cpu", torch.float64)]
        if torch.cuda.is_available():
            runs.append(("cuda_fp32_no_tf32", "cuda", torch.float32))
        for tag, dev, dt in runs:
            try:
                p2, _ = build_pipeline(model_dir, dev, dt)
                o2, _ = run(p2, image, "replay", REPLAY_SEED, tape.draws)
                cross[tag] = compare(rec, o2)
                worst = max(((k, v) for k, v in cross[tag].items() if k not in ("image_u8",)), key=lambda kv: kv[1]["rel"])
                log("cross-check", tag, "worst", worst, "image_u8", cross[tag].get("image_u8"))
                del p2
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                cross[tag] = {"error": f"{type(e).__name__}: {e}"}

    tensors = {"input.rgba": torch.from_numpy(rgba).float(), "input.rgb": torch.from_numpy(rgb.copy()).float()}
    tensors.update({k: v for k, v in rec.items() if not k.startswith("_")})
    tensors.update(noise)
    tensors = {k: v.contiguous() for k, v in tensors.items()}
    call = dict(CALL, generator=f"torch.Generator('cpu').manual_seed({SEED})", torch_manual_seed=SEED,
                image="pipeline_input.png (RGBA 96x80)", prompt="", device="cpu", dtype="float32")
    meta = {"format": "pt", "producer": "tests/reference/make_pipeline_golden.py",
            "call": json.dumps(call, sort_keys=True), "versions": json.dumps(versions, sort_keys=True),
            "build": json.dumps(build_info, sort_keys=True, default=str),
            "noise_draws": json.dumps(sources), "alpha": json.dumps(alpha_stats),
            "preprocessing": json.dumps(preprocessing, sort_keys=True),
            "checks": json.dumps({k: v["ok"] for k, v in checks.items()}, sort_keys=True),
            "cross_check": json.dumps(cross, sort_keys=True)}
    path = out_dir / "pipeline.safetensors"
    save_file(tensors, str(path), metadata=meta)
    back = load_file(str(path))
    check("file_loads_back", all(torch.equal(back[k], tensors[k]) for k in tensors))
    raw = path.read_bytes()
    log("wrote", path, len(raw), "bytes, zlib", len(zlib.compress(raw, 6)))
    log("tensors", {k: list(v.shape) for k, v in tensors.items()})
    log("summary", json.dumps(dict(checks=checks, cross_check=cross, preprocessing=preprocessing,
                                   build=build_info, versions=versions, bytes=len(raw),
                                   zlib_bytes=len(zlib.compress(raw, 6)),
                                   scalars=dict(timesteps=rec["timesteps"].tolist(), sigmas=rec["sigmas"].tolist())),
                              default=str))
    log("done", out_dir, "errors:", errors)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
