/** @file
 * libdtrain — status codes and error messages.
 *
 * Every function that can fail returns a dt_status. DT_OK is zero, errors are
 * negative. The values are part of the ABI and never change.
 *
 * After a failure, dt_error_last() describes it: what went wrong, which
 * argument, which rank. The message is per thread and stays until the next
 * failure on the same thread; successful calls do not clear it.
 */
#ifndef DTRAIN_STATUS_H
#define DTRAIN_STATUS_H

#include "dtrain/common.h"

DT_BEGIN_DECLS

/** What every fallible call returns: DT_OK, DT_INPROGRESS, or a negative error. Values are fixed forever. */
typedef enum dt_status {
  DT_OK = 0,                      /**< success */
  DT_INPROGRESS = 1,              /**< a request has not finished yet */
  DT_ERR_INVALID_ARGUMENT = -1,   /**< a bad argument; nothing was changed */
  DT_ERR_INVALID_USAGE = -2,      /**< a call out of order or on the wrong object */
  DT_ERR_UNSUPPORTED = -3,        /**< not available in this build or on this machine */
  DT_ERR_OUT_OF_MEMORY = -4,      /**< an allocation failed, or the store is full */
  DT_ERR_TIMEOUT = -5,            /**< a deadline passed; names the ranks not heard from */
  DT_ERR_REMOTE = -6,             /**< a peer failed; names the rank */
  DT_ERR_TRANSPORT = -7,          /**< the network or transport failed */
  DT_ERR_ABORTED = -8,            /**< the communicator was aborted or is broken */
  DT_ERR_AUTH = -9,               /**< rendezvous refused the job's secret */
  DT_ERR_MISMATCH = -10,          /**< ranks disagree about a collective */
  DT_ERR_INTERNAL = -11,          /**< a bug in libdtrain; please report it */
  DT_ERR_IO = -12                 /**< a file could not be read or written; names it */
} dt_status;

/**
 * A short, static description of a status ("invalid argument"). Never NULL;
 * an unknown value gives "unknown status".
 */
DT_API const char *dt_status_string(dt_status status);

/**
 * The message of the last failure on the calling thread. Never NULL: an empty
 * string when this thread has seen no failure. The text is owned by the library
 * and stays valid until the next libdtrain call on this thread.
 */
DT_API const char *dt_error_last(void);

DT_END_DECLS

#endif /* DTRAIN_STATUS_H */
