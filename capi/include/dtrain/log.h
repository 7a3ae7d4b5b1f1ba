/** @file
 * libdtrain — where the library's log lines go.
 *
 * By default each line at or above the level is written to stderr, or
 * appended to the file DTRAIN_LOG_FILE names, prefixed with the UTC time,
 * the rank and the level. DTRAIN_LOG_LEVEL (error, warn, info, debug, trace;
 * default warn) chooses the level. A host application that has a logger of
 * its own routes the lines there with dt_set_log_callback(), as NCCL's and
 * UCX's hosts do, and may set the level with dt_set_log_level().
 *
 * Both settings are process-wide and may be changed at any time, from any
 * thread.
 */
#ifndef DTRAIN_LOG_H
#define DTRAIN_LOG_H

#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

/** How much a log line matters; a level lets through itself and the ones above it. */
typedef enum dt_log_level {
  DT_LOG_ERROR = 0, /**< an operation failed */
  DT_LOG_WARN = 1,  /**< something the user should know (the default level) */
  DT_LOG_INFO = 2,  /**< what a job is doing, a few lines per job */
  DT_LOG_DEBUG = 3, /**< every refusal and choice, for finding a problem */
  DT_LOG_TRACE = 4  /**< every operation */
} dt_log_level;

/**
 * Receives one log line: its `level`, the `rank` of the process's most
 * recent communicator (-1 before there is one) and the `message`, UTF-8
 * text without time, rank, level or trailing newline, owned by the library
 * and valid only during the call. `user` is what dt_set_log_callback() was
 * given.
 */
typedef void (*dt_log_fn)(void *user, dt_log_level level, int rank, const char *message);

/**
 * Sends every log line at or above the level to `fn` instead of stderr or
 * DTRAIN_LOG_FILE; `fn` NULL restores them (`user` is then ignored).
 *
 * `fn` is called on whichever thread logs, libdtrain's own included, but
 * never by two threads at once: calls are serialised. It must return
 * promptly and must not call libdtrain (a call that logs would wait for the
 * callback to return). When dt_set_log_callback() returns, the previous
 * callback is no longer running and will not be called again, so its
 * `user` may be freed. Always DT_OK.
 */
DT_API dt_status dt_set_log_callback(dt_log_fn fn, void *user);

/**
 * Sets the level, in place of DTRAIN_LOG_LEVEL's (which is not read again).
 * A value outside dt_log_level is DT_ERR_INVALID_ARGUMENT and changes
 * nothing.
 */
DT_API dt_status dt_set_log_level(dt_log_level level);

DT_END_DECLS

#endif /* DTRAIN_LOG_H */
