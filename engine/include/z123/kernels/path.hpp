// The implementation paths of the kernels, on their own so that the tuning knobs (z123/tuning.hpp)
// can name one without the kernel context.
#pragma once

namespace z123::kernels {

enum class Path { Portable, NvCoopMat, KhrCoopMat, NvCoopMat2 };
const char* path_name(Path p);

} // namespace z123::kernels
