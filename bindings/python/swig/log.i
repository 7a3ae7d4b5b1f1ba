/*
 * Log lines for Python.
 *
 * The library calls its log callback on whichever thread logs, possibly
 * while that thread holds a lock of the library's own. A callback that took
 * the GIL there could deadlock with a Python thread that holds the GIL and
 * waits for that lock, so the callback here only queues the line, in C;
 * dtrain.set_log_handler()'s thread waits for lines without the GIL
 * (dtpy_log_wait) and takes them with it (dtpy_log_pop). The queue holds at
 * most DTPY_LOG_QUEUED lines; lines beyond are counted and reported as one
 * line when there is room again.
 */

%{
#include <pthread.h>
#include <time.h>

#define DTPY_LOG_QUEUED 10000

typedef struct dtpy_log_line {
  struct dtpy_log_line *next;
  int level;
  int rank;
  char message[];
} dtpy_log_line;

static pthread_mutex_t dtpy_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dtpy_log_ready = PTHREAD_COND_INITIALIZER;
static dtpy_log_line *dtpy_log_head = NULL, *dtpy_log_tail = NULL;
static size_t dtpy_log_count = 0;
static unsigned long long dtpy_log_dropped = 0;

/* Appends a line; the caller holds dtpy_log_mutex. */
static void dtpy_log_append(int level, int rank, const char *message) {
  size_t length = strlen(message);
  dtpy_log_line *line = (dtpy_log_line *)malloc(sizeof *line + length + 1);
  if (line == NULL) {
    ++dtpy_log_dropped;
    return;
  }
  line->next = NULL;
  line->level = level;
  line->rank = rank;
  memcpy(line->message, message, length + 1);
  if (dtpy_log_tail) dtpy_log_tail->next = line; else dtpy_log_head = line;
  dtpy_log_tail = line;
  ++dtpy_log_count;
}

static void dtpy_log_enqueue(void *user, dt_log_level level, int rank, const char *message) {
  (void)user;
  pthread_mutex_lock(&dtpy_log_mutex);
  if (dtpy_log_count >= DTPY_LOG_QUEUED) {
    ++dtpy_log_dropped;
  } else {
    if (dtpy_log_dropped > 0) {
      char note[96];
      snprintf(note, sizeof note, "%llu log lines dropped: the Python handler fell behind", dtpy_log_dropped);
      dtpy_log_dropped = 0;
      dtpy_log_append(DT_LOG_WARN, rank, note);
    }
    dtpy_log_append((int)level, rank, message);
  }
  pthread_cond_signal(&dtpy_log_ready);
  pthread_mutex_unlock(&dtpy_log_mutex);
}
%}

/* dt_set_log_callback(DTPY_LOG_QUEUE, None) routes the library's lines into
   the queue; dt_set_log_callback(None, None) back to stderr. */
%constant dt_log_fn DTPY_LOG_QUEUE = dtpy_log_enqueue;

%thread dtpy_log_wait;
%inline %{
/* 1 once a line is queued, 0 after `timeout_ms` without one. Runs without the GIL. */
int dtpy_log_wait(int timeout_ms) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&dtpy_log_mutex);
  while (dtpy_log_head == NULL) {
    if (pthread_cond_timedwait(&dtpy_log_ready, &dtpy_log_mutex, &deadline) != 0) break;
  }
  int ready = dtpy_log_head != NULL;
  pthread_mutex_unlock(&dtpy_log_mutex);
  return ready;
}

/* The oldest queued line as (level, rank, message), or None. */
PyObject *dtpy_log_pop(void) {
  pthread_mutex_lock(&dtpy_log_mutex);
  dtpy_log_line *line = dtpy_log_head;
  if (line) {
    dtpy_log_head = line->next;
    if (dtpy_log_head == NULL) dtpy_log_tail = NULL;
    --dtpy_log_count;
  }
  pthread_mutex_unlock(&dtpy_log_mutex);
  if (line == NULL) Py_RETURN_NONE;
  PyObject *text = PyUnicode_DecodeUTF8(line->message, (Py_ssize_t)strlen(line->message), "replace");
  PyObject *result = text ? Py_BuildValue("(iiN)", line->level, line->rank, text) : NULL;
  free(line);
  return result;
}
%}
