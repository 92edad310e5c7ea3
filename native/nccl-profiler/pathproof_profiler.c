/*
 * pathproof's NCCL profiler plugin: one JSON line per collective per rank, written by NCCL's own accounting.
 *
 * NCCL (>= 2.28) loads this library when NCCL_PROFILER_PLUGIN names it and looks up the symbol ncclProfiler_v5
 * (src/plugin/profiler/profiler_v5.cc:15@v2.28.9-1; the loader tries v5, then v4 ... v1:
 * src/plugin/profiler.cc:69-84@v2.28.9-1). Only v5 is exported on purpose: an NCCL that wants another version does not
 * load the plugin, no record is written, and pathproof reports "profiler plugin not loaded (NCCL wants vN)" instead of
 * reading fields whose layout it does not know.
 *
 * What each line holds, and where NCCL takes it from (src/plugin/profiler.cc:393-453@v2.28.9-1, startTaskEvents):
 *   seq        comm->seqNumber[func]  (per function, counted on every rank alike)
 *   func, count, datatype, root
 *   algorithm  ncclAlgoToString(task->algorithm), protocol ncclProtoToString(task->protocol)
 *   channels   task->nChannels: channels this collective's work was spread over (src/enqueue.cc:635-638@v2.28.9-1)
 *   warps      task->nWarps (threads per block = warps x 32)
 *   hostStartNs/hostEndNs  CLOCK_REALTIME when NCCL started / stopped the task event on the host (around the proxy
 *              upload, src/enqueue.cc:1307-1315@v2.28.9-1): not the GPU's work
 *   startNs/endNs  the earliest kernel-channel start and latest kernel-channel stop, GPU globaltimer ns, written by the
 *              kernel and read by NCCL's proxy thread (src/transport/profiler.cc:34-43@v2.28.9-1); only when
 *              kernel-channel events are on (the default)
 * One-rank communicators run a collective as a cudaMemcpyAsync before any task or API event exists
 * (src/enqueue.cc:2569-2571@v2.28.9-1; the API event starts later, in collTaskAppend, src/enqueue.cc:2466): NCCL
 * reports nothing for them, and the file holds only the comm and finalize lines.
 *
 * Environment:
 *   PATHPROOF_NCCL_PROFILER_DIR     where the files go (default: the working directory)
 *   PATHPROOF_NCCL_PROFILER_EVENTS  "coll,kernel" (default) or "coll" (host times only: no proxy work per channel)
 * Files: nccl-profiler-rank<commRank>-<commHash>.jsonl; the first line of each describes the communicator.
 *
 * Every line is one write(2) on an O_APPEND descriptor: pathproof's harness leaves with os._exit, which skips stdio
 * buffers, and rank processes of one communicator never share a file. Multi-rank lines are written by NCCL's proxy
 * thread (when the last kernel channel stops), off the training thread.
 */
#define _GNU_SOURCE
#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "profiler.h"

#define PP_FORMAT "pathproof.nccl-profiler/1"
#define PP_API_VERSION 5
#define PP_LINE 1024

enum ppKind { PP_COLL = 0x70c011, PP_KERNEL_CH = 0x70c0c4 };

struct ppColl;

struct ppContext {
  int fd;
  int rank, nRanks, nNodes;
  uint64_t commId;
  int kernelEvents;
  pthread_mutex_t lock;
  struct ppColl* pending;           /* collectives whose kernel channels have not all stopped */
  uint64_t written, lost;
};

struct ppColl {
  int kind;                         /* first member: a handle tells its own kind */
  struct ppContext* ctx;
  struct ppColl *prev, *next;
  uint64_t seq;
  const char* func;                 /* NCCL's static strings (ncclFuncToString ...): safe to keep */
  const char* datatype;
  const char* algo;
  const char* proto;
  size_t count;
  int root, nChannels, nWarps;
  uint64_t hostStartNs, hostEndNs;
  uint64_t gpuStartNs, gpuEndNs;
  int chStarted, chStopped, stopped;
};

struct ppKernelCh {
  int kind;
  struct ppColl* coll;
  uint64_t stop;
};

/* NCCL hands init a pointer to its one, process-wide activation mask (src/plugin/profiler.cc:223,232@v2.28.9-1) and
 * reads it at every collective; NCCL's example plugin switches it at run time the same way (exampleProfilerStart,
 * ext-profiler/example/plugin.cc:816@v2.28.9-1). pathproof's harness uses that to keep the plugin silent during the
 * plain phase of `run --overhead`, so the two phases differ only by the instrumentation. */
static int* ncclMask;
static int fullMask;
static int wanted = 1;

static uint64_t nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void writeLine(struct ppContext* ctx, const char* line, int len) {
  if (len <= 0 || len >= PP_LINE) { __atomic_fetch_add(&ctx->lost, 1, __ATOMIC_RELAXED); return; }
  ssize_t n = write(ctx->fd, line, (size_t)len);
  if (n == len) __atomic_fetch_add(&ctx->written, 1, __ATOMIC_RELAXED);
  else __atomic_fetch_add(&ctx->lost, 1, __ATOMIC_RELAXED);
}

static const char* orNull(const char* s) { return s ? s : "?"; }

static void emit(struct ppColl* c, int complete) {
  char line[PP_LINE];
  struct ppContext* ctx = c->ctx;
  /* One prefix for every record; only the GPU/host span and its clock differ between the three cases below. */
  int len = snprintf(line, sizeof line,
      "{\"event\":\"coll\",\"rank\":%d,\"seq\":%" PRIu64 ",\"func\":\"%s\",\"count\":%zu,\"datatype\":\"%s\","
      "\"root\":%d,\"algorithm\":\"%s\",\"protocol\":\"%s\",\"channels\":%d,\"warps\":%d,"
      "\"hostStartNs\":%" PRIu64 ",\"hostEndNs\":%" PRIu64 ",",
      ctx->rank, c->seq, orNull(c->func), c->count, orNull(c->datatype), c->root, orNull(c->algo),
      orNull(c->proto), c->nChannels, c->nWarps, c->hostStartNs, c->hostEndNs);
  if (len < 0 || len >= (int)sizeof line) return;
  if (c->chStopped > 0) {
    len += snprintf(line + len, sizeof line - len,
        "\"startNs\":%" PRIu64 ",\"endNs\":%" PRIu64 ",\"clock\":\"gpu-globaltimer\",\"kernelChannels\":%d,",
        c->gpuStartNs, c->gpuEndNs, c->chStopped);
  } else if (ctx->kernelEvents) {
    /* Kernel-channel events were asked for and none arrived: no GPU span to give (never the host's in its place). */
    len += snprintf(line + len, sizeof line - len,
        "\"startNs\":null,\"endNs\":null,\"clock\":null,\"kernelChannels\":0,");
  } else {
    len += snprintf(line + len, sizeof line - len,
        "\"startNs\":%" PRIu64 ",\"endNs\":%" PRIu64 ",\"clock\":\"host-realtime\",\"kernelChannels\":0,",
        c->hostStartNs, c->hostEndNs);
  }
  if (len >= (int)sizeof line) return;
  len += snprintf(line + len, sizeof line - len, "\"complete\":%s}\n", complete ? "true" : "false");
  if (len >= (int)sizeof line) return;
  writeLine(ctx, line, len);
}

/* Under ctx->lock. A collective is done when its task event stopped and every kernel channel it was spread over
 * reported its stop; kernel-channel events arrive from the proxy thread, usually after the task event stopped. */
static int done(const struct ppColl* c) {
  if (!c->stopped) return 0;
  if (!c->ctx->kernelEvents) return 1;
  return c->chStopped == c->chStarted && c->chStarted >= c->nChannels;
}

static void unlinkPending(struct ppColl* c) {
  if (c->prev) c->prev->next = c->next; else c->ctx->pending = c->next;
  if (c->next) c->next->prev = c->prev;
  c->prev = c->next = NULL;
}

static ncclResult_t ppInit(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes,
                           int nRanks, int rank, ncclDebugLogger_t logfn) {
  *context = NULL;  /* the mask is left alone on failure: it is the process's, and other communicators may record */
  const char* dir = getenv("PATHPROOF_NCCL_PROFILER_DIR");
  const char* events = getenv("PATHPROOF_NCCL_PROFILER_EVENTS");
  int kernelEvents = !(events && strcmp(events, "coll") == 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/nccl-profiler-rank%d-%016" PRIx64 ".jsonl", dir && *dir ? dir : ".", rank, commId);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (logfn) logfn(NCCL_LOG_WARN, NCCL_INIT, __FILE__, __LINE__, "pathproof profiler: cannot open %s: %s", path,
                     strerror(errno));
    return ncclSystemError;
  }
  struct ppContext* ctx = calloc(1, sizeof *ctx);
  if (!ctx) { close(fd); return ncclSystemError; }
  ctx->fd = fd;
  ctx->rank = rank;
  ctx->nRanks = nRanks;
  ctx->nNodes = nNodes;
  ctx->commId = commId;
  ctx->kernelEvents = kernelEvents;
  pthread_mutex_init(&ctx->lock, NULL);
  char line[PP_LINE];
  char name[128];
  /* commName comes from the user (torch sets a pg description): keep only characters that need no JSON escape. */
  size_t k = 0;
  for (const char* s = commName ? commName : ""; *s && k + 1 < sizeof name; s++)
    if (*s >= 0x20 && *s != '"' && *s != '\\') name[k++] = *s;
  name[k] = 0;
  int len = snprintf(line, sizeof line,
      "{\"event\":\"comm\",\"format\":\"%s\",\"apiVersion\":%d,\"commId\":\"%016" PRIx64 "\",\"commName\":\"%s\","
      "\"rank\":%d,\"nRanks\":%d,\"nNodes\":%d,\"pid\":%d,\"kernelEvents\":%s,\"hostStartNs\":%" PRIu64 "}\n",
      PP_FORMAT, PP_API_VERSION, commId, name, rank, nRanks, nNodes, (int)getpid(), kernelEvents ? "true" : "false",
      nowNs());
  writeLine(ctx, line, len);
  /* The mask is one variable for the whole process (src/plugin/profiler.cc:232@v2.28.9-1); every communicator
   * asks for the same events. Group and API events come too (NCCL starts them when Coll is on,
   * src/plugin/profiler.cc:233,292): startEvent gives them no handle. */
  fullMask = ncclProfileColl | (kernelEvents ? ncclProfileKernelCh : 0);
  ncclMask = eActivationMask;
  __atomic_store_n(eActivationMask, __atomic_load_n(&wanted, __ATOMIC_RELAXED) ? fullMask : 0, __ATOMIC_RELAXED);
  *context = ctx;
  if (logfn) logfn(NCCL_LOG_INFO, NCCL_INIT, __FILE__, __LINE__, "pathproof profiler v%d: rank %d of %d -> %s",
                   PP_API_VERSION, rank, nRanks, path);
  return ncclSuccess;
}

static ncclResult_t ppStartEvent(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* d) {
  *eHandle = NULL;
  struct ppContext* ctx = context;
  if (!ctx) return ncclSuccess;
  if (d->type == ncclProfileColl) {
    struct ppColl* c = calloc(1, sizeof *c);
    if (!c) return ncclSuccess;
    c->kind = PP_COLL;
    c->ctx = ctx;
    c->seq = d->coll.seqNumber;
    c->func = d->coll.func;
    c->datatype = d->coll.datatype;
    c->algo = d->coll.algo;
    c->proto = d->coll.proto;
    c->count = d->coll.count;
    c->root = d->coll.root;
    c->nChannels = d->coll.nChannels;
    c->nWarps = d->coll.nWarps;
    c->hostStartNs = nowNs();
    pthread_mutex_lock(&ctx->lock);
    c->next = ctx->pending;
    if (c->next) c->next->prev = c;
    ctx->pending = c;
    pthread_mutex_unlock(&ctx->lock);
    *eHandle = c;
  } else if (d->type == ncclProfileKernelCh) {
    struct ppColl* c = d->parentObj;  /* the task event's handle; NULL or not ours for p2p tasks */
    if (!c || c->kind != PP_COLL) return ncclSuccess;
    struct ppKernelCh* k = calloc(1, sizeof *k);
    if (!k) return ncclSuccess;
    k->kind = PP_KERNEL_CH;
    k->coll = c;
    pthread_mutex_lock(&ctx->lock);
    if (c->chStarted == 0 || d->kernelCh.pTimer < c->gpuStartNs) c->gpuStartNs = d->kernelCh.pTimer;
    c->chStarted++;
    pthread_mutex_unlock(&ctx->lock);
    *eHandle = k;
  }
  return ncclSuccess;
}

static ncclResult_t ppRecordEventState(void* eHandle, ncclProfilerEventState_v5_t state,
                                       ncclProfilerEventStateArgs_v5_t* args) {
  struct ppKernelCh* k = eHandle;
  if (k && k->kind == PP_KERNEL_CH && state == ncclProfilerKernelChStop && args) k->stop = args->kernelCh.pTimer;
  return ncclSuccess;
}

static ncclResult_t ppStopEvent(void* eHandle) {
  if (!eHandle) return ncclSuccess;
  int kind = *(int*)eHandle;
  if (kind == PP_COLL) {
    struct ppColl* c = eHandle;
    struct ppContext* ctx = c->ctx;
    pthread_mutex_lock(&ctx->lock);
    c->hostEndNs = nowNs();
    c->stopped = 1;
    int finished = done(c);
    if (finished) unlinkPending(c);
    pthread_mutex_unlock(&ctx->lock);
    if (finished) { emit(c, 1); free(c); }
  } else if (kind == PP_KERNEL_CH) {
    struct ppKernelCh* k = eHandle;
    struct ppColl* c = k->coll;
    struct ppContext* ctx = c->ctx;
    pthread_mutex_lock(&ctx->lock);
    if (c->chStopped == 0 || k->stop > c->gpuEndNs) c->gpuEndNs = k->stop;
    c->chStopped++;
    int finished = done(c);
    if (finished) unlinkPending(c);
    pthread_mutex_unlock(&ctx->lock);
    free(k);
    if (finished) { emit(c, 1); free(c); }
  }
  return ncclSuccess;
}

static ncclResult_t ppFinalize(void* context) {
  struct ppContext* ctx = context;
  if (!ctx) return ncclSuccess;
  pthread_mutex_lock(&ctx->lock);
  struct ppColl* c = ctx->pending;
  ctx->pending = NULL;
  pthread_mutex_unlock(&ctx->lock);
  /* What never completed (a channel event NCCL did not deliver, or the communicator torn down mid-collective) is
   * still written, marked incomplete, rather than lost. */
  while (c) {
    struct ppColl* next = c->next;
    emit(c, 0);
    free(c);
    c = next;
  }
  char line[PP_LINE];
  int len = snprintf(line, sizeof line,
      "{\"event\":\"finalize\",\"rank\":%d,\"written\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"hostEndNs\":%" PRIu64 "}\n",
      ctx->rank, ctx->written, ctx->lost, nowNs());
  writeLine(ctx, line, len);
  close(ctx->fd);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
  return ncclSuccess;
}

/* Switches recording on (1) or off (0) for every communicator of this process; takes effect at the next collective.
 * Returns 1 when NCCL has loaded and initialised the plugin, else 0 (the choice is kept for its init). Called by the
 * harness through ctypes on the same file NCCL opened, which the dynamic loader maps once. */
__attribute__((visibility("default"))) int pathproof_profiler_enable(int on) {
  __atomic_store_n(&wanted, on ? 1 : 0, __ATOMIC_RELAXED);
  if (!ncclMask) return 0;
  __atomic_store_n(ncclMask, on ? fullMask : 0, __ATOMIC_RELAXED);
  return 1;
}

__attribute__((visibility("default"))) ncclProfiler_v5_t ncclProfiler_v5 = {
  "pathproof",
  ppInit,
  ppStartEvent,
  ppStopEvent,
  ppRecordEventState,
  ppFinalize,
};
