#include "common/blocking.h"

namespace serac::blocking {
namespace {

thread_local Hook thread_hook = nullptr;
thread_local void* thread_hook_context = nullptr;

}  // namespace

void SetThreadHook(Hook hook, void* context) {
  thread_hook = hook;
  thread_hook_context = context;
}

Region::Region() {
  if (thread_hook != nullptr) thread_hook(thread_hook_context);
}

}  // namespace serac::blocking
