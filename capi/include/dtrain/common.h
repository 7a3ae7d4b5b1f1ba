/*
 * libdtrain — definitions shared by every public header.
 *
 * DT_API marks what the shared library exports. DT_UNDEF is the value of an
 * integer option left unset: "the default, or what the environment says".
 */
#ifndef DTRAIN_COMMON_H
#define DTRAIN_COMMON_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define DT_API
#elif defined(__GNUC__)
#  define DT_API __attribute__((visibility("default")))
#else
#  define DT_API
#endif

#ifdef __cplusplus
#  define DT_BEGIN_DECLS extern "C" {
#  define DT_END_DECLS }
#else
#  define DT_BEGIN_DECLS
#  define DT_END_DECLS
#endif

/** An integer option left unset: use the default or the environment. */
#define DT_UNDEF INT_MIN

#endif /* DTRAIN_COMMON_H */
