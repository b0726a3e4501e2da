# cmake -DSPV=in.spv -DOUT=out.cpp -DIDENT=name -P EmbedSpirv.cmake
# Turns a SPIR-V binary into a C++ byte array (4-byte aligned, so it can be handed to Vulkan).
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT}.tmp
"// Generated from ${SPV}; do not edit.
alignas(4) extern const unsigned char z123_spv_${IDENT}[] = {
${bytes}
};
extern const unsigned long z123_spv_${IDENT}_size = ${size};
")
file(RENAME ${OUT}.tmp ${OUT})
