/** @file
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

/** @def DT_API
 * Marks a function that libdtrain.so exports. */
/** @def DT_BEGIN_DECLS
 * Opens the headers' declarations (extern "C" in C++). */
/** @def DT_END_DECLS
 * Closes what DT_BEGIN_DECLS opened. */
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
