// Marks a wait that may last a while (a disk flush, a group commit waiting for one), so that a
// thread serving many connections can hand them to another thread before it blocks instead of
// after. The HTTP server installs the hook on its event-loop threads; elsewhere a region costs one
// thread-local read.
#pragma once

namespace serac::blocking {

// Called on the blocking thread when it enters a region. Must not block itself.
using Hook = void (*)(void* context);

// Installs (or, with nullptr, removes) this thread's hook.
void SetThreadHook(Hook hook, void* context);

// Declare one around (or just before) a wait that may take milliseconds.
class Region {
 public:
  Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

}  // namespace serac::blocking
