/** @file
 * libdtrain — versions and build information.
 */
#ifndef DTRAIN_VERSION_H
#define DTRAIN_VERSION_H

#include "dtrain/common.h"

/** The major version of these headers; see dt_version() for the library's. */
#define DT_VERSION_MAJOR 0
/** The minor version of these headers. */
#define DT_VERSION_MINOR 1
/** The patch version of these headers. */
#define DT_VERSION_PATCH 0

DT_BEGIN_DECLS

/**
 * The version of the library loaded at run time, which may differ from the
 * DT_VERSION_* macros the caller was compiled with. Any pointer may be NULL.
 */
DT_API void dt_version(int *major, int *minor, int *patch);

/**
 * A static, human-readable description of the build: version, the backends and
 * devices compiled in, and which of them were found at run time, e.g.
 * "libdtrain 0.1.0; backends: self; ucx: 1.13.1; cuda: compiled, no device; nccl: not compiled".
 * Owned by the library; never NULL.
 */
DT_API const char *dt_build_info(void);

DT_END_DECLS

#endif /* DTRAIN_VERSION_H */
