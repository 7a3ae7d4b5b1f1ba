/*
 * Ctrl-C during a blocking call.
 *
 * A blocking call runs without the GIL inside libdtrain, where Python's
 * SIGINT handler, which only sets a flag for the interpreter, cannot reach
 * it: the call would go on until its communicator's deadline. So, from the
 * first call declared with DTPY_BLOCKING on, the binding's own SIGINT
 * handler sits in front of Python's: it posts a semaphore
 * (async-signal-safe) and then runs Python's handler as before. A watcher thread waiting on that
 * semaphore calls dt_comm_abort() (which any thread may call and which
 * never blocks, unlike anything a signal handler could safely do) on the
 * communicator of every blocking call in flight, in any thread; each call
 * then returns DT_ERR_ABORTED at once. Back with the GIL, the call runs
 * Python's pending signal handlers: by default that raises
 * KeyboardInterrupt, whose __cause__ is the AbortedError (and whose message
 * says the communicator was aborted); with a handler of the caller's own
 * that returns, or off the main thread, the AbortedError itself is raised,
 * its message saying it was SIGINT.
 *
 * The handler stays installed between calls (it only passes the signal on
 * then); each call checks, with one sigaction() query, that it is still in
 * front of the handler Python has now (signal.signal() replaces it), and
 * does nothing more when SIGINT is ignored or left to its default.
 *
 * A call's communicator: its dt_comm* argument, or the one that made its
 * handle (a request, DDP, ZeRO, mesh, MoE plan or pipeline), which the
 * handle's creating wrapper recorded with dtpy_owner_set().
 */

%{
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

/* One blocking call in flight, on its caller's stack. */
typedef struct dtpy_call {
  const char *function;
  dt_comm *comm;   /* NULL: unknown, nothing to abort */
  int interrupted; /* the watcher aborted comm (under dtpy_calls_mutex) */
  struct dtpy_call *prev, *next;
} dtpy_call;

static pthread_mutex_t dtpy_calls_mutex = PTHREAD_MUTEX_INITIALIZER;
static dtpy_call *dtpy_calls; /* under dtpy_calls_mutex */
static sem_t dtpy_sigint_posted;
static int dtpy_watcher_running; /* under the GIL */
static struct sigaction dtpy_python_sigint;

static void *dtpy_watch(void *unused) {
  (void)unused;
  for (;;) {
    while (sem_wait(&dtpy_sigint_posted) != 0) {
      /* EINTR: a signal landed on this thread; wait again. */
    }
    pthread_mutex_lock(&dtpy_calls_mutex);
    for (dtpy_call *call = dtpy_calls; call != NULL; call = call->next) {
      if (call->comm != NULL && !call->interrupted) {
        call->interrupted = 1;
        dt_comm_abort(call->comm);
      }
    }
    pthread_mutex_unlock(&dtpy_calls_mutex);
  }
  return NULL;
}

static void dtpy_on_sigint(int signal_number, siginfo_t *info, void *context) {
  int saved_errno = errno;
  sem_post(&dtpy_sigint_posted);
  if (dtpy_python_sigint.sa_flags & SA_SIGINFO) {
    dtpy_python_sigint.sa_sigaction(signal_number, info, context);
  } else if (dtpy_python_sigint.sa_handler != SIG_DFL && dtpy_python_sigint.sa_handler != SIG_IGN) {
    dtpy_python_sigint.sa_handler(signal_number);
  }
  errno = saved_errno;
}

/* fork() holds the mutex, so that the child's copy is not locked by a
   watcher that does not exist there. A child has none of the parent's
   threads: no watcher, and none of the calls the parent's other threads had
   in flight. */
static void dtpy_before_fork(void) { pthread_mutex_lock(&dtpy_calls_mutex); }
static void dtpy_after_fork_in_parent(void) { pthread_mutex_unlock(&dtpy_calls_mutex); }
static void dtpy_after_fork_in_child(void) {
  dtpy_calls = NULL;
  dtpy_watcher_running = 0;
  sem_init(&dtpy_sigint_posted, 0, 0);
  pthread_mutex_unlock(&dtpy_calls_mutex);
}

static int dtpy_start_watcher(void) {
  static int initialised = 0;
  if (!initialised) {
    if (sem_init(&dtpy_sigint_posted, 0, 0) != 0 || pthread_atfork(dtpy_before_fork, dtpy_after_fork_in_parent, dtpy_after_fork_in_child) != 0) return -1;
    initialised = 1;
  }
  /* The watcher takes no signal, so that none interrupts an abort. */
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  int failed = pthread_create(&thread, NULL, dtpy_watch, NULL);
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (failed) return -1;
  pthread_detach(thread);
  dtpy_watcher_running = 1;
  return 0;
}

/* Puts dtpy_on_sigint in front of the current SIGINT handler unless it is
   there already, or SIGINT is ignored or left to its default. Called with
   the GIL, which signal.signal() needs too. */
static void dtpy_watch_sigint(void) {
  struct sigaction current;
  if (sigaction(SIGINT, NULL, &current) != 0) return;
  int ours = (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == dtpy_on_sigint;
  if (!ours && !(current.sa_flags & SA_SIGINFO) && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN)) {
    return;
  }
  /* A child of fork() inherits the handler but not the watcher. */
  if (!dtpy_watcher_running && dtpy_start_watcher() != 0) return;
  if (ours) return;
  /* Not installed yet, so no handler reads this while it changes. */
  dtpy_python_sigint = current;
  struct sigaction in_front = current;
  in_front.sa_flags |= SA_SIGINFO;
  in_front.sa_sigaction = dtpy_on_sigint;
  sigaction(SIGINT, &in_front, NULL);
}

/* Takes `call` out of the calls in flight; whether the watcher aborted its
   communicator. */
static int dtpy_call_unlink(dtpy_call *call) {
  pthread_mutex_lock(&dtpy_calls_mutex);
  if (call->next != NULL) call->next->prev = call->prev;
  if (call->prev != NULL) call->prev->next = call->next;
  else dtpy_calls = call->next;
  int interrupted = call->interrupted;
  pthread_mutex_unlock(&dtpy_calls_mutex);
  return interrupted;
}

/* Before a blocking call, with the GIL. -1 with KeyboardInterrupt (or what
   a signal handler raised) pending when a signal came before the call. */
static int dtpy_call_begin(dtpy_call *call, const char *function, dt_comm *comm) {
  call->function = function;
  call->comm = comm;
  call->interrupted = 0;
  call->prev = NULL;
  dtpy_watch_sigint();
  pthread_mutex_lock(&dtpy_calls_mutex);
  call->next = dtpy_calls;
  if (dtpy_calls != NULL) dtpy_calls->prev = call;
  dtpy_calls = call;
  pthread_mutex_unlock(&dtpy_calls_mutex);
  /* A signal between the interpreter's last look and the line above found
     no call to abort: Python's flag is set, and the call must not start. */
  if (PyErr_CheckSignals() < 0) {
    dtpy_call_unlink(call);
    return -1;
  }
  return 0;
}

/* After the call, with the GIL. 0: carry on (the status typemap reports
   `status`); -1: an exception is set (the call was interrupted). */
static int dtpy_call_end(dtpy_call *call, dt_status status) {
  if (!dtpy_call_unlink(call)) return 0;

  /* Python's handlers first: the pending signal would otherwise go off
     inside the Python code that makes the dtrain.Error below. */
  PyObject *type = NULL, *value = NULL, *traceback = NULL;
  if (PyErr_CheckSignals() < 0) {
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
  }
  PyObject *cause = NULL;
  if (status < 0) {
    PyObject *text = PyUnicode_FromFormat("%s: interrupted by SIGINT, which aborted the communicator: %s",
                                          call->function, dt_error_last());
    dtpy_raise(status, text ? PyUnicode_AsUTF8(text) : dt_error_last());
    Py_XDECREF(text);
    if (value == NULL) return -1; /* off the main thread, or a handler of the caller's own that returned */
    PyObject *cause_type, *cause_traceback;
    PyErr_Fetch(&cause_type, &cause, &cause_traceback);
    PyErr_NormalizeException(&cause_type, &cause, &cause_traceback);
    if (cause != NULL && cause_traceback != NULL) PyException_SetTraceback(cause, cause_traceback);
    Py_XDECREF(cause_type);
    Py_XDECREF(cause_traceback);
  }
  if (value == NULL) return 0; /* the call finished before the abort took */
  /* Python's handler raised (KeyboardInterrupt by default): say why the
     communicator is unusable now, and chain the library's error. */
  if (PyErr_GivenExceptionMatches(value, PyExc_KeyboardInterrupt)) {
    PyObject *args = Py_BuildValue("(N)", PyUnicode_FromFormat(
        "%s was interrupted; its communicator was aborted", call->function));
    if (args == NULL || PyObject_SetAttrString(value, "args", args) < 0) PyErr_Clear();
    Py_XDECREF(args);
  }
  if (cause != NULL) PyException_SetCause(value, cause); /* steals cause */
  PyErr_Restore(type, value, traceback);
  return -1;
}

/* The handle -> communicator records, for calls on handles. Touched with
   the GIL only. */
static PyObject *dtpy_owners;

static PyObject *dtpy_owner_key(const void *handle) { return PyLong_FromVoidPtr((void *)handle); }

static void dtpy_owner_set(const void *handle, dt_comm *comm) {
  if (handle == NULL) return;
  if (dtpy_owners == NULL && (dtpy_owners = PyDict_New()) == NULL) {
    PyErr_Clear();
    return;
  }
  PyObject *key = dtpy_owner_key(handle);
  PyObject *value = PyLong_FromVoidPtr(comm);
  if (key == NULL || value == NULL || PyDict_SetItem(dtpy_owners, key, value) < 0) {
    /* Without the record a Ctrl-C waits for the deadline; nothing else changes. */
    PyErr_Clear();
  }
  Py_XDECREF(key);
  Py_XDECREF(value);
}

static void dtpy_owner_forget(const void *handle) {
  if (handle == NULL || dtpy_owners == NULL) return;
  PyObject *key = dtpy_owner_key(handle);
  if (key == NULL || PyDict_DelItem(dtpy_owners, key) < 0) PyErr_Clear();
  Py_XDECREF(key);
}

/* A destroyed communicator's handles may outlive it (a request not yet
   freed): their records go with it, so that no Ctrl-C aborts a freed
   communicator, or a new one at its address. */
static void dtpy_owner_forget_comm(dt_comm *comm) {
  if (comm == NULL || dtpy_owners == NULL) return;
  PyObject *value = PyLong_FromVoidPtr(comm);
  PyObject *keys = value ? PyDict_Keys(dtpy_owners) : NULL;
  for (Py_ssize_t i = 0; keys != NULL && i < PyList_GET_SIZE(keys); ++i) {
    PyObject *key = PyList_GET_ITEM(keys, i);
    PyObject *owner = PyDict_GetItemWithError(dtpy_owners, key);
    if (owner != NULL && PyObject_RichCompareBool(owner, value, Py_EQ) == 1) PyDict_DelItem(dtpy_owners, key);
  }
  Py_XDECREF(keys);
  Py_XDECREF(value);
  PyErr_Clear();
}

static dt_comm *dtpy_owner_of(const void *handle) {
  if (handle == NULL || dtpy_owners == NULL) return NULL;
  PyObject *key = dtpy_owner_key(handle);
  PyObject *value = key ? PyDict_GetItemWithError(dtpy_owners, key) : NULL;
  Py_XDECREF(key);
  dt_comm *comm = value ? (dt_comm *)PyLong_AsVoidPtr(value) : NULL;
  PyErr_Clear();
  return comm;
}

static dt_comm *dtpy_comm_self(dt_comm *comm) { return comm; }

/* The communicator a blocking call uses, from the argument that names it. */
#define dtpy_comm_of(argument)                                                                  \
  _Generic((argument), dt_comm *: dtpy_comm_self, dt_request *: dtpy_owner_of,                  \
           dt_ddp *: dtpy_owner_of, dt_zero *: dtpy_owner_of, dt_mesh *: dtpy_owner_of,          \
           dt_moe_plan *: dtpy_owner_of, dt_pipeline *: dtpy_owner_of)(argument)
%}

/* A call that may block on other ranks: released GIL, and Ctrl-C aborts the
   communicator that `argument` (a wrapper argument: arg1, arg2, ...) names. */
%define DTPY_BLOCKING(function, argument)
%thread function;
%exception function {
  dtpy_call dtpy_this_call;
  if (dtpy_call_begin(&dtpy_this_call, "$symname", dtpy_comm_of(argument)) < 0) SWIG_fail;
  $action
  if (dtpy_call_end(&dtpy_this_call, result) < 0) SWIG_fail;
}
%enddef

/* The records of a handle made on a communicator go when it is destroyed
   (DTPY_OWNED), and those of a communicator's handles when the
   communicator is (DTPY_OWNER). */
%define DTPY_OWNER(type, destroy)
%exception destroy {
  dtpy_owner_forget_comm(arg1);
  $action
}
%exception type::~type {
  dtpy_owner_forget_comm(arg1);
  $action
}
%enddef
%define DTPY_OWNED(type, destroy)
%exception destroy {
  dtpy_owner_forget(arg1);
  $action
}
%exception type::~type {
  dtpy_owner_forget(arg1);
  $action
}
%enddef
