#!/usr/bin/env python3
"""The machine code NVIDIA's driver made of this engine's pipelines, for reading (bench/NOTES.md,
session 28: what the GEMM and attention loops compile to, instruction by instruction).

The driver keeps what it compiles in a disk cache when told where (the folder must exist):
    mkdir -p /tmp/nvcache
    __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache \\
        Z123_PIPELINE_REPORT_DIR=/tmp/reports <any program of this project>
    bench/nv_sass.py /tmp/nvcache OUT_DIR --reports /tmp/reports [--zstd ZSTD] [--nvdisasm NVDISASM]

The cache is a .toc index beside a .bin of sections (0x24-byte header: magic 0x9846A19D, ..., the
section's size at 0x1C and its unpacked size at 0x20), each zstd-compressed (driver 580). An
unpacked section that holds a shader starts with "NVDA" "NVVM" and an "NVuc" object, which
nvdisasm (CUDA 13) reads as it is. The object's code section (type 1) is as long as the pipeline
report's "Binary Size", which names each listing where that length is unique.

Writes OUT_DIR/<pipeline or objNNN>.sass and prints, per object, the instruction counts that say
most about a tensor-core loop (HMMA, LDSM, BAR, spills). zstd and nvdisasm must be on the PATH or
given; the GPU machine has nvdisasm in /usr/local/cuda*/bin.
"""
import argparse
import collections
import glob
import os
import re
import struct
import subprocess

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SECTION_MAGIC = 0x9846A19D


def cache_sections(toc_path):
    """(unpacked size, packed bytes) of every section that a .toc lists in its .bin."""
    toc = open(toc_path, "rb").read()
    data = open(toc_path[:-4] + ".bin", "rb").read()
    if toc[:4] != b"CDVN":
        return
    for i in range((len(toc) - 0x20) // 0x18):
        offset, size = struct.unpack_from("<II", toc, 0x20 + i * 0x18 + 0x10)
        if size < 4 or offset + 0x24 > len(data):
            continue
        header = struct.unpack_from("<9I", data, offset)
        if header[0] != SECTION_MAGIC:
            continue
        yield header[8], data[offset + 0x24:offset + 0x24 + size - 4]


def unpack(packed, unpacked_size, zstd):
    if packed[:4] == ZSTD_MAGIC:
        r = subprocess.run([zstd, "-d", "-c", "-q"], input=packed, capture_output=True)
        return r.stdout if r.returncode == 0 else None
    return packed if len(packed) == unpacked_size else None


def code_length(nvuc):
    """Length of the NVuc object's code section (type 1), 0 if none."""
    count = struct.unpack_from("<I", nvuc, 8)[0] & 0xFFFF
    for i in range(count):
        if 32 + 32 * i + 12 > len(nvuc):
            break
        kind, length, _ = struct.unpack_from("<III", nvuc, 32 + 32 * i)
        if kind == 1:
            return length
    return 0


def report_names(folder):
    """Binary size -> pipeline names, from Z123_PIPELINE_REPORT_DIR's files."""
    names = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "*.txt")):
        text = open(path).read()
        size = re.search(r"Binary Size = (\d+)", text)
        if size:
            names[int(size.group(1))].append(text.split("\n", 1)[0].split(" ", 1)[1])
    return names


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", ".", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cache")
    ap.add_argument("out")
    ap.add_argument("--reports", help="Z123_PIPELINE_REPORT_DIR of the same run: names the listings")
    ap.add_argument("--zstd", default="zstd")
    ap.add_argument("--nvdisasm", default="nvdisasm")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = report_names(args.reports) if args.reports else {}
    count = 0
    for toc in sorted(glob.glob(os.path.join(args.cache, "**", "*.toc"), recursive=True)):
        for size, packed in cache_sections(toc):
            obj = unpack(packed, size, args.zstd)
            start = obj.find(b"NVuc", 0, 64) if obj else -1
            if start < 0:
                continue  # not a shader (the driver caches host code too)
            obj = obj[start:]
            length = code_length(obj)
            matches = names.get(length, [])
            name = safe(matches[0]) if len(matches) == 1 else "obj%03d_%d" % (count, length)
            count += 1
            path = os.path.join(args.out, name)
            open(path + ".nvuc", "wb").write(obj)
            r = subprocess.run([args.nvdisasm, path + ".nvuc"], capture_output=True, text=True)
            os.remove(path + ".nvuc")
            text = r.stdout if r.returncode == 0 else "// nvdisasm: " + r.stderr.strip()
            open(path + ".sass", "w").write(text)
            ops = collections.Counter(re.findall(r"\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", text))
            print("%s: %d instructions, HMMA %d, LDSM %d, BAR %d, STL %d, LDL %d" %
                  (name, sum(ops.values()), ops["HMMA"], ops["LDSM"], ops["BAR"], ops["STL"], ops["LDL"]))
    print("objects:", count)


if __name__ == "__main__":
    main()
