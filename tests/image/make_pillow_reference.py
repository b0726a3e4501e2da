#!/usr/bin/env python3
"""Pillow reference data for tests/image (CPU preprocessing and image codecs).

The reference pipeline hands the condition image to Pillow (to_rgb_image's paste onto gray 127,
Image.resize in CLIPImageProcessor) and numpy (center crop, rescale, normalize), spec §4. This
script runs exactly those operations with Pillow itself and records the results, so the C++ port
can be checked bit for bit without committing large images:

* Input images are not stored: both this script and tests/image/synthetic.hpp generate them from
  the same integer hash (see `synthetic` below), so only (kind, size, channels, seed) is recorded.
* Outputs are recorded as a 64-bit FNV-1a hash of the uint8 pixels plus a few sampled pixels
  (the samples localise a mismatch; the hash proves equality).
* rescale + normalize map each uint8 value independently, so they are recorded as 256 x 3
  float32 tables (exact bit patterns) computed with numpy the way transformers 4.29-4.36 does:
  float32(uint8 * rescale_factor [float64]), then (x - float32(mean)) / float32(std) in float32.
* Codec fixtures (small PNG/JPEG files) are written next to the manifest together with the raw
  pixels Pillow decodes from them (.u8), converted the way codec.hpp documents.

center_crop is transformers' numpy code (image_transforms.center_crop, 4.3x), re-stated below
because transformers is not installed here; do not replace it with Pillow's crop.

Run with the Debian Python that has python3-pil (the pyenv python3 on PATH lacks Pillow):
    /usr/bin/python3 tests/image/make_pillow_reference.py [OUT_DIR]
OUT_DIR defaults to tests/data/image. The output is deterministic for a given Pillow version.
"""
import io
import json
import math
import os
import struct
import sys
import zlib

import numpy as np
import PIL
from PIL import Image

M32 = 0xFFFFFFFF
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- deterministic synthetic images (mirrored in tests/image/synthetic.hpp) ----------------------
def hash32(x):
    """lowbias32 (Chris Wellons' integer hash) on uint32 numpy arrays."""
    x = x.astype(np.uint64) & M32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & M32
    x ^= x >> 16
    return x


def synthetic(kind, w, h, c, seed):
    """uint8 [h, w, c]. noise: uniform hash bytes (sharp edges: exercises clipping of the bicubic
    overshoot); smooth: per-channel gradients + small noise (realistic, compresses well);
    alpha_sweep: (RGBA only) R = x, G = 255 - x, B = noise, A = y over a 256 x 256 image, i.e.
    every (colour, alpha) pair of the paste blend."""
    y, x, ch = np.meshgrid(np.arange(h, dtype=np.uint64), np.arange(w, dtype=np.uint64),
                           np.arange(c, dtype=np.uint64), indexing="ij")
    idx = (y * w + x) * c + ch
    noise = hash32((idx + np.uint64(seed) * np.uint64(0x9E3779B9)) & M32)
    if kind == "noise":
        return (noise & 255).astype(np.uint8)
    if kind == "smooth":
        gx = (x * 255) // max(w - 1, 1)
        gy = (y * 255) // max(h - 1, 1)
        gd = ((x + y) * 255) // max(w + h - 2, 1)
        base = np.where(ch % 3 == 0, gx, np.where(ch % 3 == 1, gy, gd)).astype(np.int64)
        v = base + (noise & 15).astype(np.int64) - 8
        return np.clip(v, 0, 255).astype(np.uint8)
    if kind == "alpha_sweep":
        assert c == 4
        v = np.where(ch == 0, x, np.where(ch == 1, 255 - x, np.where(ch == 2, noise & 255, y)))
        return v.astype(np.uint8)
    raise ValueError(kind)


def pil_image(a):
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[a.shape[2]]
    return Image.fromarray(a[:, :, 0] if a.shape[2] == 1 else a, mode)


def as_hwc(im):
    a = np.asarray(im)
    return a[:, :, None] if a.ndim == 2 else a


# ---- recording ------------------------------------------------------------------------------------
def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def samples(a, n=12):
    """Corners, centre and pseudo-random pixels: [x, y, [values]]."""
    h, w = a.shape[:2]
    pts = [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, h // 2)]
    r = hash32(np.arange(2 * n, dtype=np.uint64) + np.uint64(12345))
    pts += [(int(r[2 * i]) % w, int(r[2 * i + 1]) % h) for i in range(n - len(pts))]
    return [[x, y, [int(v) for v in a[y, x]]] for x, y in pts]


def record(a):
    a = np.ascontiguousarray(a)
    return {"width": a.shape[1], "height": a.shape[0], "channels": a.shape[2], "fnv1a64": fnv1a64(a.tobytes()),
            "samples": samples(a)}


# ---- the reference operations -----------------------------------------------------------------------
def to_rgb_image(a):
    """zero123plus' to_rgb_image; gray -> RGB replicated is this engine's documented extension."""
    im = pil_image(a)
    if im.mode == "RGBA":
        bg = Image.new("RGB", im.size, (127, 127, 127))  # np.random.randint(127, 128) is always 127
        bg.paste(im, mask=im.getchannel("A"))
        return as_hwc(bg)
    if im.mode == "L":
        return as_hwc(im.convert("RGB"))
    return a


def shortest_edge_size(w, h, s):  # transformers get_resize_output_image_size(default_to_square=False)
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = s, int(s * long / short)
    return (new_short, new_long) if w <= h else (new_long, new_short)  # (width, height)


def pil_resize(a, w, h, resample):
    return as_hwc(pil_image(a).resize((w, h), resample=resample, reducing_gap=None))


def center_crop(a, ch, cw):
    """transformers.image_transforms.center_crop (4.3x) on a channels-last array."""
    oh, ow = a.shape[:2]
    top = (oh - ch) // 2
    bottom = top + ch
    left = (ow - cw) // 2
    right = left + cw
    if top >= 0 and bottom <= oh and left >= 0 and right <= ow:
        return a[top:bottom, left:right]
    nh, nw = max(ch, oh), max(cw, ow)
    padded = np.zeros((nh, nw, a.shape[2]), dtype=a.dtype)
    top_pad = math.ceil((nh - oh) / 2)
    left_pad = math.ceil((nw - ow) / 2)
    padded[top_pad:top_pad + oh, left_pad:left_pad + ow] = a
    top += top_pad
    bottom += top_pad
    left += left_pad
    right += left_pad
    return padded[max(0, top):min(nh, bottom), max(0, left):min(nw, right)]


def normalize_table(cfg):
    """transformers rescale (uint8 * float -> float64 -> float32) then normalize in float32."""
    u = np.arange(256, dtype=np.uint8)[:, None].repeat(3, axis=1)
    x = (u * cfg["rescale_factor"]).astype(np.float32)
    mean, std = cfg["image_mean"], cfg["image_std"]
    mean = np.array(mean if isinstance(mean, list) else [mean] * 3, dtype=np.float32)
    std = np.array(std if isinstance(std, list) else [std] * 3, dtype=np.float32)
    out = (x - mean) / std
    assert out.dtype == np.float32
    return [[int(v) for v in row] for row in out.view(np.uint32)]


# ---- a minimal PNG writer for what Pillow cannot write (16-bit RGB(A), 2/4-bit gray, Adam7) -----
def png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & M32)


def pack_rows(a, bit_depth):
    """[h, w, c] integer samples -> list of scanline byte strings (no filter byte)."""
    rows = []
    for row in a:
        flat = row.reshape(-1)
        if bit_depth == 16:
            rows.append(flat.astype(">u2").tobytes())
        elif bit_depth == 8:
            rows.append(flat.astype(np.uint8).tobytes())
        else:
            per = 8 // bit_depth
            pad = (-len(flat)) % per
            v = np.concatenate([flat, np.zeros(pad, dtype=flat.dtype)]).astype(np.uint32).reshape(-1, per)
            shifts = np.array([8 - bit_depth * (i + 1) for i in range(per)], dtype=np.uint32)
            rows.append(np.bitwise_or.reduce(v << shifts, axis=1).astype(np.uint8).tobytes())
    return rows


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(a, bit_depth, color_type, interlace=False, before_idat=b""):
    """before_idat: chunks placed between IHDR and IDAT (PLTE, tRNS)."""
    h, w = a.shape[:2]
    raw = b""
    if interlace:
        for x0, y0, dx, dy in ADAM7:
            sub = a[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                raw += b"".join(b"\0" + r for r in pack_rows(sub, bit_depth))
    else:
        raw = b"".join(b"\0" + r for r in pack_rows(a, bit_depth))
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + before_idat +
            png_chunk(b"IDAT", zlib.compress(raw, 9)) +
            png_chunk(b"IEND", b""))


def pil_save(im, fmt, **kw):
    b = io.BytesIO()
    im.save(b, fmt, **kw)
    return b.getvalue()


# ---- CMYK / YCCK JPEGs (print workflows): Pillow opens them as mode CMYK, the pipeline converts ----
def adobe_segment(data):
    """(offset, length) of the Adobe APP14 segment, marker included."""
    i = data.find(b"\xff\xee")  # FF EE, a 2-byte length, then "Adobe"
    while i >= 0 and data[i + 4:i + 9] != b"Adobe":
        i = data.find(b"\xff\xee", i + 1)
    assert i >= 0, "no Adobe APP14 segment"
    return i, 2 + ((data[i + 2] << 8) | data[i + 3])


def cmyk_jpeg_fixtures():
    """Pillow saves mode CMYK inverted with an Adobe APP14 marker (transform 0), as Photoshop does,
    and reads every 4-component JPEG as inverted ("CMYK;I", "always use Adobe polarity"), with or
    without the marker; libjpeg turns YCCK (Adobe transform 2) into CMYK before that. The expected
    pixels are what the pipeline gets: Image.open(f).convert("RGB")."""
    def rgb_of(data):
        return as_hwc(Image.open(io.BytesIO(data)).convert("RGB"))

    fx = []
    cmyk = pil_save(Image.fromarray(synthetic("smooth", 16, 16, 4, 52), "CMYK"), "JPEG", quality=90)
    i, n = adobe_segment(cmyk)
    assert cmyk[i + 15] == 0  # Adobe transform 0: plain (inverted) CMYK
    fx.append(("cmyk.jpg", cmyk, rgb_of(cmyk)))
    # The same file without the marker: libjpeg still sees CMYK (4 components), Pillow still inverts.
    bare = cmyk[:i] + cmyk[i + n:]
    assert "adobe" not in Image.open(io.BytesIO(bare)).info
    fx.append(("cmyk_no_adobe.jpg", bare, rgb_of(bare)))
    # Odd size, progressive, first component sampled 2x2 (Pillow's subsampling=2 on CMYK): exercises
    # libjpeg's upsampling and partial MCUs.
    odd = pil_save(Image.fromarray(synthetic("smooth", 19, 13, 4, 53), "CMYK"), "JPEG", quality=85,
                   progressive=True, subsampling=2)
    fx.append(("cmyk_progressive_odd.jpg", odd, rgb_of(odd)))

    # YCCK: the stored components are Y, Cb, Cr of (255 - C, 255 - M, 255 - Y) and K (what libjpeg's
    # JCS_YCCK encoder stores). Pillow writes its CMYK input inverted, so it is handed the inverse of
    # those components and the Adobe transform byte is then set to 2. Y sampled 2x2, as is common.
    src = synthetic("smooth", 21, 15, 4, 54).astype(np.float64)
    r, g, b = 255 - src[..., 0], 255 - src[..., 1], 255 - src[..., 2]
    ycc = np.stack([0.299 * r + 0.587 * g + 0.114 * b,
                    -0.168736 * r - 0.331264 * g + 0.5 * b + 128,
                    0.5 * r - 0.418688 * g - 0.081312 * b + 128, src[..., 3]], axis=-1)
    stored = np.clip(np.round(ycc), 0, 255).astype(np.uint8)
    plain = pil_save(Image.fromarray(255 - stored, "CMYK"), "JPEG", quality=90, subsampling=2)
    i, _ = adobe_segment(plain)
    ycck = plain[:i + 15] + b"\x02" + plain[i + 16:]
    assert Image.open(io.BytesIO(ycck)).info["adobe_transform"] == 2
    # The YCCK conversion must matter, or the fixture would not test it.
    assert not np.array_equal(rgb_of(ycck), rgb_of(plain))
    fx.append(("ycck.jpg", ycck, rgb_of(ycck)))
    return fx


def cmyk_to_rgb_table():
    """Pillow's CMYK -> RGB (convert("RGB")) for every (ink, K) pair: C = x, M = 255 - x,
    Y = (7x + 3y) % 256, K = y on a 256 x 256 image (mirrored in the C++ test)."""
    y, x = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    cm = np.stack([x, 255 - x, (7 * x + 3 * y) % 256, y], axis=-1).astype(np.uint8)
    return record(as_hwc(Image.fromarray(cm, "CMYK").convert("RGB")))


def codec_fixtures(out_dir):
    """(name, file bytes, expected uint8 [h, w, c] or None for 'must be rejected')."""
    fx = []
    rgb = synthetic("smooth", 13, 11, 3, 7)
    rgba = synthetic("noise", 13, 11, 4, 8)
    gray = synthetic("noise", 13, 11, 1, 9)

    fx.append(("rgb8.png", pil_save(pil_image(rgb), "PNG"), rgb))
    fx.append(("rgba8.png", pil_save(pil_image(rgba), "PNG"), rgba))
    fx.append(("gray8.png", pil_save(pil_image(gray), "PNG"), gray))
    la = Image.merge("LA", [pil_image(gray), pil_image(rgba[:, :, 3:])])
    fx.append(("gray_alpha8.png", pil_save(la, "PNG"), as_hwc(la.convert("RGBA"))))
    g16 = (synthetic("noise", 13, 11, 1, 10).astype(np.uint16) << 8) | synthetic("noise", 13, 11, 1, 11)
    fx.append(("gray16.png", write_png(g16, 16, 0), (g16 >> 8).astype(np.uint8)))
    for bits in (1, 2, 4):
        g = synthetic("noise", 13, 11, 1, 12 + bits) >> (8 - bits)
        data = write_png(g, bits, 0)
        fx.append((f"gray{bits}.png", data, as_hwc(Image.open(io.BytesIO(data)).convert("L"))))
    for ct, c, name in ((2, 3, "rgb16.png"), (6, 4, "rgba16.png")):
        s = (synthetic("noise", 13, 11, c, 20 + c).astype(np.uint16) << 8) | synthetic("noise", 13, 11, c, 30 + c)
        data = write_png(s, 16, ct)
        fx.append((name, data, as_hwc(Image.open(io.BytesIO(data)))))  # Pillow: high byte
    for name, a, ct in (("rgb8_adam7.png", synthetic("noise", 13, 11, 3, 40), 2),
                        ("rgba8_adam7.png", synthetic("noise", 9, 10, 4, 41), 6),
                        ("gray8_adam7_3x2.png", synthetic("noise", 3, 2, 1, 42), 0),
                        ("rgb8_adam7_1x1.png", synthetic("noise", 1, 1, 3, 43), 2)):
        data = write_png(a, 8, ct, interlace=True)
        got = as_hwc(Image.open(io.BytesIO(data)))
        assert np.array_equal(got, a)
        fx.append((name, data, a))
    # Interlaced files whose rows libpng expands (low bit depths, palette + tRNS, 16-bit): the
    # decoder takes each pass as a small image and places its pixels itself.
    g = synthetic("noise", 13, 11, 1, 44) >> 6
    data = write_png(g, 2, 0, interlace=True)
    fx.append(("gray2_adam7.png", data, as_hwc(Image.open(io.BytesIO(data)).convert("L"))))
    idx = synthetic("noise", 11, 9, 1, 45) >> 4
    plte = png_chunk(b"PLTE", synthetic("noise", 16, 1, 3, 46).tobytes())
    trns = png_chunk(b"tRNS", bytes(range(0, 240, 16)))
    data = write_png(idx, 4, 3, interlace=True, before_idat=plte + trns)
    fx.append(("palette4_trns_adam7.png", data, as_hwc(Image.open(io.BytesIO(data)).convert("RGBA"))))
    s16 = (synthetic("noise", 10, 7, 4, 47).astype(np.uint16) << 8) | synthetic("noise", 10, 7, 4, 48)
    data = write_png(s16, 16, 6, interlace=True)
    fx.append(("rgba16_adam7.png", data, as_hwc(Image.open(io.BytesIO(data)))))
    p = pil_image(rgb).quantize(16)
    fx.append(("palette.png", pil_save(p, "PNG"), as_hwc(p.convert("RGB"))))
    p4 = pil_image(rgb).quantize(16)
    fx.append(("palette4.png", pil_save(p4, "PNG", bits=4), as_hwc(p4.convert("RGB"))))
    pt = pil_image(rgb).quantize(16)
    data = pil_save(pt, "PNG", transparency=bytes([0, 128, 255] + [255] * 13))
    fx.append(("palette_trns.png", data, as_hwc(Image.open(io.BytesIO(data)).convert("RGBA"))))
    data = pil_save(pil_image(rgb), "PNG", transparency=tuple(int(v) for v in rgb[0, 0]))
    assert "transparency" in Image.open(io.BytesIO(data)).info
    fx.append(("rgb8_colorkey.png", data, as_hwc(Image.open(io.BytesIO(data)))))  # stays RGB

    photo = synthetic("smooth", 48, 40, 3, 50)
    for name, kw in (("rgb_q90.jpg", {"quality": 90}), ("rgb_progressive.jpg", {"quality": 80, "progressive": True}),
                     ("rgb_444.jpg", {"quality": 95, "subsampling": 0})):
        data = pil_save(pil_image(photo), "JPEG", **kw)
        fx.append((name, data, as_hwc(Image.open(io.BytesIO(data)))))
    data = pil_save(pil_image(synthetic("smooth", 21, 17, 1, 51)), "JPEG", quality=90)
    fx.append(("gray.jpg", data, as_hwc(Image.open(io.BytesIO(data)))))
    fx += cmyk_jpeg_fixtures()

    entries = []
    for name, data, expected in fx:
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        e = {"file": name}
        if expected is not None:
            raw = name + ".u8"
            with open(os.path.join(out_dir, raw), "wb") as f:
                f.write(np.ascontiguousarray(expected).tobytes())
            e.update({"expected": raw, "width": expected.shape[1], "height": expected.shape[0],
                      "channels": expected.shape[2]})
        entries.append(e)
    return entries


def compact_json(man):
    """One line per case (and per normalize table row) keeps the manifest small and diffable."""
    def one(v):
        return json.dumps(v, separators=(",", ":"))
    parts = []
    for k, v in man.items():
        if isinstance(v, list):
            body = "[\n" + ",\n".join("  " + one(e) for e in v) + "\n ]"
        elif k == "normalize_tables":
            body = "{\n" + ",\n".join(
                f"  {one(b)}: [\n" + ",\n".join("   " + one(row) for row in t) + "\n  ]" for b, t in v.items()) + "\n }"
        else:
            body = one(v)
        parts.append(f" {one(k)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# ---- cases -----------------------------------------------------------------------------------------
def spec(kind, w, h, c, seed):
    return {"kind": kind, "width": w, "height": h, "channels": c, "seed": seed}


def make(s):
    return synthetic(s["kind"], s["width"], s["height"], s["channels"], s["seed"])


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "tests", "data", "image")
    os.makedirs(out_dir, exist_ok=True)
    cfg_dir = os.path.join(REPO, "tests", "data", "v1.2-configs")
    cfgs = {b: json.load(open(os.path.join(cfg_dir, f"feature_extractor_{b}", "preprocessor_config.json")))
            for b in ("vae", "clip")}

    man = {"pillow_version": PIL.__version__, "numpy_version": np.__version__,
           "generator": "tests/image/make_pillow_reference.py"}

    # to_rgb_image: paste onto gray 127 (Pillow's DIV255 blend); gray replicated.
    man["to_rgb"] = []
    for s in (spec("alpha_sweep", 256, 256, 4, 1), spec("noise", 300, 200, 4, 2), spec("noise", 64, 64, 1, 3),
              spec("noise", 1, 1, 4, 4)):
        man["to_rgb"].append({"input": s, "output": record(to_rgb_image(make(s)))})

    # Image.resize: filters 1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming.
    man["resize"] = []
    def add_resize(s, w, h, f, shortest=None):
        out = pil_resize(make(s), w, h, f)
        man["resize"].append({"input": s, "width": w, "height": h, "filter": f, "shortest_edge": shortest,
                              "output": record(out)})

    shortest_cases = [
        (spec("noise", 37, 53, 3, 10), [(512, 2), (224, 3)]),              # upscale, portrait
        (spec("noise", 600, 450, 3, 11), [(512, 2), (224, 3), (224, 1), (224, 4), (224, 5)]),  # downscale
        (spec("smooth", 64, 64, 1, 12), [(512, 2), (224, 3)]),             # gray (Pillow mode L)
        (spec("noise", 1, 1, 3, 13), [(512, 2), (224, 3)]),
        (spec("noise", 513, 512, 3, 14), [(512, 2), (224, 3)]),            # 512: same size -> copy
        (spec("smooth", 2000, 1500, 3, 15), [(512, 2), (224, 3)]),         # strong antialiasing
        (spec("noise", 300, 7, 3, 16), [(224, 3)]),                        # long side 9600
        (spec("noise", 5, 3, 3, 17), [(224, 2), (3, 3)]),
    ]
    for s, targets in shortest_cases:
        for shortest, f in targets:
            w, h = shortest_edge_size(s["width"], s["height"], shortest)
            add_resize(s, w, h, f, shortest)
    add_resize(spec("noise", 37, 53, 3, 10), 100, 20, 3)   # up in x, down in y
    add_resize(spec("noise", 37, 53, 3, 10), 37, 20, 2)    # vertical pass only
    add_resize(spec("noise", 37, 53, 3, 10), 80, 53, 3)    # horizontal pass only
    add_resize(spec("noise", 600, 450, 1, 18), 33, 77, 1)

    # transformers center_crop, including crops larger than the image (zero padding).
    man["center_crop"] = []
    for s, (cw, ch) in ((spec("noise", 10, 9, 3, 20), (7, 5)), (spec("noise", 10, 9, 3, 20), (4, 4)),
                        (spec("noise", 5, 8, 3, 21), (8, 8)), (spec("noise", 6, 3, 1, 22), (3, 7)),
                        (spec("noise", 600, 450, 3, 23), (224, 224))):
        man["center_crop"].append({"input": s, "width": cw, "height": ch, "output": record(center_crop(make(s), ch, cw))})

    # The full uint8 part of both feature extractors with the v1.2 configs (to_rgb, resize, crop).
    man["normalize_tables"] = {b: normalize_table(cfgs[b]) for b in cfgs}
    man["preprocess"] = []
    for s in (spec("noise", 600, 450, 3, 30), spec("noise", 37, 53, 3, 31), spec("noise", 1, 1, 3, 32),
              spec("noise", 513, 512, 3, 33), spec("smooth", 64, 64, 1, 34), spec("noise", 300, 200, 4, 35),
              spec("smooth", 2000, 1500, 3, 36), spec("noise", 300, 7, 3, 37), spec("noise", 7, 300, 3, 38),
              spec("smooth", 320, 320, 4, 39)):
        rgb = to_rgb_image(make(s))
        entry = {"input": s}
        for b, cfg in cfgs.items():
            S = cfg["size"]["shortest_edge"]
            w, h = shortest_edge_size(rgb.shape[1], rgb.shape[0], S)
            r = pil_resize(rgb, w, h, cfg["resample"])
            c = center_crop(r, cfg["crop_size"]["height"], cfg["crop_size"]["width"])
            entry[b] = record(c)
        man["preprocess"].append(entry)

    man["codec"] = codec_fixtures(out_dir)
    man["cmyk_to_rgb"] = cmyk_to_rgb_table()

    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        f.write(compact_json(man))
    print("wrote", out_dir)


if __name__ == "__main__":
    main()
