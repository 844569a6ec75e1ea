// RINGSMB_ASSERT(cond): an invariant the code keeps, checked where it is
// kept. Active in Debug builds (NDEBUG unset: the ASan + UBSan tree of
// scripts/test and CI) and in sanitizer and fuzz builds
// (RINGSMB_ASSERTIONS, cmake/Sanitizers.cmake); compiled out otherwise,
// the condition not evaluated. A failed assertion logs where and aborts:
// the state behind it is already wrong, and going on would hide how.
#pragma once

#if !defined(NDEBUG) || defined(RINGSMB_ASSERTIONS)
#define RINGSMB_ASSERTIONS_ON 1
#define RINGSMB_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::ringsmb::assertion_failed(#cond, __FILE__, __LINE__, __func__))
#else
#define RINGSMB_ASSERTIONS_ON 0
#define RINGSMB_ASSERT(cond) static_cast<void>(sizeof(static_cast<bool>(cond)))
#endif

namespace ringsmb {

[[noreturn]] void assertion_failed(const char* cond, const char* file, int line, const char* func);

}  // namespace ringsmb
