/* Compiling the rest of a file for an instruction set beyond the build's
 * -march (the kernels pick such code at run time).  gcc takes
 * #pragma GCC target; clang ignores that pragma, so there a target
 * attribute is pushed onto every function that follows, until
 * CF_TARGET_END. */
#ifndef CONFAB_TARGET_H
#define CONFAB_TARGET_H

#define CF_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define CF_TARGET_BEGIN(isa) \
    CF_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define CF_TARGET_END CF_PRAGMA(clang attribute pop)
#else
#define CF_TARGET_BEGIN(isa) CF_PRAGMA(GCC target(isa))
#define CF_TARGET_END
#endif

#endif
