// Reading a memory-mapped file that shrinks underneath (truncated or replaced in place while the
// model loads) makes the kernel raise SIGBUS at the first page past the new end. The weight
// readers run their copies through this guard so that such a read becomes a clear error
// instead of killing the process. After open() nothing reads a mapping: the model folder, and
// with it every mapping, is closed once the weights are on the device.
#pragma once

#include <functional>

namespace z123 {

// Runs fn on this thread; returns false if fn touched a mapped page that no longer exists
// (SIGBUS), true otherwise. fn is abandoned at the fault without unwinding, so it must hold
// nothing that needs a destructor (plain copies between spans). SIGBUS from outside a guard
// goes to the handler that was installed before (by default: the process ends, as without us).
bool run_catching_sigbus(const std::function<void()>& fn);

} // namespace z123
