#!/usr/bin/env python3
"""Ceilings for the kernel benchmark, measured with PyTorch on the same GPU in the same run.

Times (CUDA events, median of many repeats after warm-up) PyTorch fp16 matmul at the UNet's
projection shapes, SDPA attention at the reference-attention shapes, GroupNorm+SiLU, and a large
device-to-device copy (bytes read + written). Writes JSON that bench/zero123pp-bench-kernels
reads with --ceilings, so every table row shows our kernel next to PyTorch's.

usage: python3 bench/torch_ceilings.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F


def median_ms(fn, warmup=5, reps=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


# (name, M, N, K): y[M,N] = x[M,K] @ w[N,K]^T, the shapes of spec §14 (B=2, level 0 = 9600 tokens)
MATMULS = [
    ("L0 proj 19200x320x320", 19200, 320, 320),
    ("L0 ff1 19200x2560x320", 19200, 2560, 320),
    ("L0 ff2 19200x320x1280", 19200, 320, 1280),
    ("L0 kvq 19200x960x320", 19200, 960, 320),  # the fused self-attention key/value/query projection
    ("L1 ff1 4800x5120x640", 4800, 5120, 640),
    ("L1 ff2 4800x640x2560", 4800, 640, 2560),
    ("L2 ff1 1200x10240x1280", 1200, 10240, 1280),
    ("conv L0 3x3 19200x320x2880", 19200, 320, 2880),
    ("conv L1 3x3 4800x640x5760", 4800, 640, 5760),
    ("vae conv 614400x128x1152", 614400, 128, 1152),
]
# (name, B, heads, Nq, Nk, D)
ATTENTIONS = [
    ("L0 ref-attn 2x5x9600x13696x64", 2, 5, 9600, 13696, 64),
    ("L1 ref-attn 2x10x2400x3424x64", 2, 10, 2400, 3424, 64),
    ("L0 cross 2x5x9600x77x64", 2, 5, 9600, 77, 64),
    ("ref pass L0 2x5x4096x4096x64", 2, 5, 4096, 4096, 64),
    ("vae mid 1x1x9600x9600x512", 1, 1, 9600, 9600, 512),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "ceilings.json"
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "matmul": {}, "attention": {}}

    n = 1 << 29  # 1 GiB of fp16 per buffer
    src = torch.randn(n, device=dev, dtype=torch.float16)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    res["copy_gbps"] = 2 * src.numel() * 2 / ms / 1e6
    del src, dst

    for name, m, nn, k in MATMULS:
        x = torch.randn(m, k, device=dev, dtype=torch.float16)
        w = torch.randn(nn, k, device=dev, dtype=torch.float16)
        ms = median_ms(lambda: F.linear(x, w))
        res["matmul"][name] = {"m": m, "n": nn, "k": k, "ms": ms, "tflops": 2 * m * nn * k / ms / 1e9}

    for name, b, h, nq, nk, d in ATTENTIONS:
        q = torch.randn(b, h, nq, d, device=dev, dtype=torch.float16)
        k = torch.randn(b, h, nk, d, device=dev, dtype=torch.float16)
        v = torch.randn(b, h, nk, d, device=dev, dtype=torch.float16)
        ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v))
        res["attention"][name] = {"b": b, "heads": h, "nq": nq, "nk": nk, "d": d, "ms": ms,
                                  "tflops": 4 * b * h * nq * nk * d / ms / 1e9}

    x = torch.randn(2, 320, 120, 80, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
    gn = torch.nn.GroupNorm(32, 320).to(dev, torch.float16)
    ms = median_ms(lambda: F.silu(gn(x)))
    res["group_norm_silu"] = {"shape": [2, 320, 120, 80], "ms": ms, "gbps": 2 * x.numel() * 2 / ms / 1e6}

    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
