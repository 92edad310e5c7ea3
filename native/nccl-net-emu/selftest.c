/*
 * Drives libnccl-net-emu.so the way NCCL's proxy does, without a GPU: two processes, a receiver (listen/accept/irecv)
 * and a sender (connect/isend), and checks every byte that arrives.
 *   selftest PLUGIN.so FAKE_LIBCUDA.so
 * Checks: each NCCL version's loader finds the newest ncclNetPlugin_vN it knows; refused NIC lists name their source
 * and line; properties as given, and through v8, v10 and v12 equal to v11's field by field; NCCL_TOPO_FILE check;
 * then through each exported version (v8, v10, v11, v12, called with that version's signatures as NCCL does):
 * messages of 0 B to 9 MiB, pipelined; a grouped receive matched by tag; device buffers staged through the driver
 * (FAKE_LIBCUDA, see fake_libcuda.c; 128-byte lines written data first, flag words last, for LL128) with iflush; a
 * message larger than its receive is an error. Exit 0 only when all hold.
 *   selftest --probe PLUGIN.so
 * Loads the NIC list of this environment (PATHPROOF_NET_EMU_NICS[_FILE], NCCL_TOPO_FILE) as NCCL would, prints the
 * plugin's log and every NIC's properties; exit 1 when the list is refused or the plugin warns.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net_emu_api.h"

#define FAKE_DEVICE_OFFSET 0x100000000000ull
#define FAKE_PLAIN_OFFSET 0xA00000000000ull /* cudaMalloc memory to the stand-in: not a cuMem allocation */
#define PLAIN_BYTES 4101u                   /* 32 lines and a 5-byte tail */
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "selftest[%s]: FAILED %s:%d: ", role, __FILE__, __LINE__); \
  fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } } while (0)

static const char* role = "main";
static char roleBuf[32];
/* What the checks call: v11's signatures, as NCCL 2.28.9 calls every plugin (an older one through its compat layer,
 * src/plugin/net/net_v8.cc and net_v10.cc@v2.28.9-1). For v8, v10 and v12 the entries below translate like those
 * layers and call the plugin's table of that version, so every transfer check runs through each adapter. */
static ncclNet_v11_t* net;
static const ncclNet_v8_t* n8;
static const ncclNet_v10_t* n10;
static const ncclNet_v12_t* n12;
static char logText[1 << 16];
static size_t logLen;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  (void)flags; (void)file; (void)line;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (getenv("SELFTEST_VERBOSE")) fprintf(stderr, "[%s] %s %s\n", role, level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
  logLen += (size_t)snprintf(logText + logLen, sizeof(logText) - logLen, "%s %s\n",
                             level == NCCL_LOG_WARN ? "WARN" : "INFO", msg);
  if (logLen >= sizeof(logText)) logLen = sizeof(logText) - 1;
}

static int logged(const char* s) { return strstr(logText, s) != NULL; }

static ncclResult_t noFinalize(void* ctx) { (void)ctx; return ncclSuccess; }

static ncclResult_t d8Init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t log,
                           ncclProfilerCallback_t prof) {
  (void)commId; (void)config; (void)prof;
  *ctx = NULL;
  return n8->init(log);
}
static ncclResult_t d8Listen(void* ctx, int dev, void* handle, void** lc) { (void)ctx; return n8->listen(dev, handle, lc); }
static ncclResult_t d8Connect(void* ctx, int dev, void* handle, void** sc, ncclNetDeviceHandle_v11_t** dc) {
  (void)ctx;
  return n8->connect(dev, handle, sc, dc);
}
static ncclResult_t d8Isend(void* sc, void* data, size_t size, int tag, void* mh, void* ph, void** req) {
  (void)ph;
  if (size > INT_MAX) return ncclInternalError;
  return n8->isend(sc, data, (int)size, tag, mh, req);
}
static ncclResult_t d8Irecv(void* rc, int n, void** data, size_t* sizes, int* tags, void** mhs, void** phs, void** req) {
  (void)phs;
  int s[8];
  if (n > 8) return ncclInternalError;
  for (int i = 0; i < n; i++) {
    if (sizes[i] > INT_MAX) return ncclInternalError;
    s[i] = (int)sizes[i];
  }
  return n8->irecv(rc, n, data, s, tags, mhs, req);
}

static ncclResult_t d10Init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  (void)commId; (void)config;
  *ctx = NULL;
  return n10->init(log, prof);
}
static ncclResult_t d10Listen(void* ctx, int dev, void* handle, void** lc) {
  (void)ctx;
  return n10->listen(dev, handle, lc);
}
static ncclResult_t d10Connect(void* ctx, int dev, void* handle, void** sc, ncclNetDeviceHandle_v11_t** dc) {
  (void)ctx;
  ncclNetCommConfig_v10_t config = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return n10->connect(dev, &config, handle, sc, dc);
}

static ncclResult_t d12Init(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t log,
                            ncclProfilerCallback_t prof) {
  ncclNetCommConfig_v12_t c = {.trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return n12->init(ctx, commId, &c, log, prof);
}

static ncclNet_v11_t* n11;
static ncclNet_v11_t drv8, drv10, drv12;

/* The driver of version v (8, 10, 11, 12). getProperties goes through checkProperties, not here. */
static ncclNet_v11_t* driver(int v) {
  if (v == 11) return n11;
  ncclNet_v11_t* d = v == 8 ? &drv8 : v == 10 ? &drv10 : &drv12;
  if (v == 8) {
    *d = (ncclNet_v11_t){.name = n8->name, .init = d8Init, .devices = n8->devices, .listen = d8Listen,
        .connect = d8Connect, .accept = n8->accept, .regMr = n8->regMr, .regMrDmaBuf = n8->regMrDmaBuf,
        .deregMr = n8->deregMr, .isend = d8Isend, .irecv = d8Irecv, .iflush = n8->iflush, .test = n8->test,
        .closeSend = n8->closeSend, .closeRecv = n8->closeRecv, .closeListen = n8->closeListen,
        .finalize = noFinalize};
  } else if (v == 10) {
    *d = (ncclNet_v11_t){.name = n10->name, .init = d10Init, .devices = n10->devices, .listen = d10Listen,
        .connect = d10Connect, .accept = n10->accept, .regMr = n10->regMr, .regMrDmaBuf = n10->regMrDmaBuf,
        .deregMr = n10->deregMr, .isend = n10->isend, .irecv = n10->irecv, .iflush = n10->iflush, .test = n10->test,
        .closeSend = n10->closeSend, .closeRecv = n10->closeRecv, .closeListen = n10->closeListen,
        .finalize = noFinalize};
  } else {
    *d = (ncclNet_v11_t){.name = n12->name, .init = d12Init, .devices = n12->devices, .listen = n12->listen,
        .connect = n12->connect, .accept = n12->accept, .regMr = n12->regMr, .regMrDmaBuf = n12->regMrDmaBuf,
        .deregMr = n12->deregMr, .isend = n12->isend, .irecv = n12->irecv, .iflush = n12->iflush,
        .test = n12->test, .closeSend = n12->closeSend, .closeRecv = n12->closeRecv,
        .closeListen = n12->closeListen, .finalize = n12->finalize};
  }
  return d;
}

static void fill(unsigned char* b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 131u + seed * 7919u + (i >> 9)) & 0xff);
}

static void waitReq(void* req, int* sizes) {
  int done = 0;
  for (long spins = 0; !done; spins++) {
    CHECK(net->test(req, &done, sizes) == ncclSuccess, "test failed");
    CHECK(spins < 200000000L, "a request never completed");
  }
}

static const size_t sizes[] = {0, 1, 4097, 65536, 3u << 20, 9u << 20, 12345};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define CAP ((9u << 20) + 128)

static void sender(void* ctx, void* handle, void* fakeCuda) {
  void* s = NULL;
  CHECK(net->connect(ctx, 1, handle, &s, NULL) == ncclSuccess && s, "connect");
  unsigned char* buf = NULL;
  CHECK(posix_memalign((void**)&buf, 4096, CAP * NSIZES) == 0, "posix_memalign");
  void* mr;
  CHECK(net->regMr(s, buf, CAP * NSIZES, NCCL_PTR_HOST, &mr) == ncclSuccess, "regMr host");
  /* 1. all messages posted before any completes: exercises the in-order queue and partial writes */
  void* req[NSIZES];
  for (size_t i = 0; i < NSIZES; i++) {
    fill(buf + i * CAP, sizes[i], (unsigned)i);
    req[i] = NULL;
    while (req[i] == NULL) CHECK(net->isend(s, buf + i * CAP, sizes[i], 3, mr, NULL, &req[i]) == ncclSuccess, "isend");
  }
  for (size_t i = 0; i < NSIZES; i++) {
    int got = -1;
    waitReq(req[i], &got);
    CHECK((size_t)got == sizes[i], "send %zu reported %d bytes", i, got);
  }
  /* 2. a grouped receive: tags 5, 7, 9, 7 in this order */
  const int tags[] = {5, 7, 9, 7};
  for (int i = 0; i < 4; i++) {
    fill(buf + i * 1000, 100 + (size_t)i, 100u + (unsigned)i);
    void* r = NULL;
    while (r == NULL) {
      CHECK(net->isend(s, buf + i * 1000, 100 + (size_t)i, tags[i], mr, NULL, &r) == ncclSuccess, "isend");
    }
    waitReq(r, NULL);
  }
  CHECK(net->deregMr(s, mr) == ncclSuccess, "deregMr");
  /* 3. a device buffer (fake driver): staged device -> host at isend */
  void* dmr;
  unsigned char* dev = buf + CAP;  /* host memory behind the fake device address */
  CHECK(net->regMr(s, (void*)((uintptr_t)dev + FAKE_DEVICE_OFFSET), 5u << 20, NCCL_PTR_CUDA, &dmr) == ncclSuccess,
        "regMr cuda");
  for (unsigned k = 0; k < 3; k++) {
    size_t n = (size_t)(1u << 20) + k * 777u;
    fill(dev + k * (2u << 20) % (4u << 20), n, 200u + k);
    void* r = NULL;
    void* p = (void*)((uintptr_t)dev + k * (2u << 20) % (4u << 20) + FAKE_DEVICE_OFFSET);
    while (r == NULL) CHECK(net->isend(s, p, n, 3, dmr, NULL, &r) == ncclSuccess, "isend cuda");
    waitReq(r, NULL);
  }
  unsigned long long st[8];
  ((void (*)(unsigned long long*))dlsym(fakeCuda, "fake_cuda_stats"))(st);
  CHECK(st[0] == 3 && st[3] == 0, "device -> host copies %llu (want 3), refused %llu", st[0], st[3]);
  CHECK(st[6] == 3 && st[7] == 1, "copies in the plugin's own context %llu (want 3), contexts made %llu (want 1)",
        st[6], st[7]);
  CHECK(net->deregMr(s, dmr) == ncclSuccess, "deregMr cuda");
  /* a device buffer that is no cuMem allocation: copied in the caller's context, said once */
  unsigned char* plain = buf + 3 * CAP;
  CHECK(net->regMr(s, (void*)((uintptr_t)plain + FAKE_PLAIN_OFFSET), 1u << 20, NCCL_PTR_CUDA, &dmr) == ncclSuccess,
        "regMr plain cuda");
  fill(plain, PLAIN_BYTES, 300u);
  void* pr = NULL;
  void* pp = (void*)((uintptr_t)plain + FAKE_PLAIN_OFFSET);
  while (pr == NULL) CHECK(net->isend(s, pp, PLAIN_BYTES, 3, dmr, NULL, &pr) == ncclSuccess, "isend plain cuda");
  waitReq(pr, NULL);
  ((void (*)(unsigned long long*))dlsym(fakeCuda, "fake_cuda_stats"))(st);
  CHECK(st[0] == 4 && st[3] == 0 && st[6] == 3, "plain buffer: device -> host copies %llu (want 4), refused %llu, in "
        "the plugin's own context %llu (want 3)", st[0], st[3], st[6]);
  CHECK(logged("is not a cuMem allocation"), "plain buffer: not said\n%s", logText);
  CHECK(net->deregMr(s, dmr) == ncclSuccess, "deregMr plain cuda");
  /* 4. a message larger than the receive posted for it */
  void* mr2;
  CHECK(net->regMr(s, buf, 100, NCCL_PTR_HOST, &mr2) == ncclSuccess, "regMr");
  void* r = NULL;
  while (r == NULL) CHECK(net->isend(s, buf, 100, 3, mr2, NULL, &r) == ncclSuccess, "isend");
  waitReq(r, NULL);
  CHECK(net->closeSend(s) == ncclSuccess, "closeSend");
  free(buf);
}

static void receiver(void* lc, void* fakeCuda) {
  void* rc = NULL;
  for (long spins = 0; rc == NULL; spins++) {
    CHECK(net->accept(lc, &rc, NULL) == ncclSuccess, "accept");
    CHECK(spins < 100000000L, "never accepted");
  }
  unsigned char* buf = NULL;
  CHECK(posix_memalign((void**)&buf, 4096, CAP * NSIZES) == 0, "posix_memalign");
  unsigned char* want = malloc(CAP);
  void* mr;
  CHECK(net->regMr(rc, buf, CAP * NSIZES, NCCL_PTR_HOST, &mr) == ncclSuccess, "regMr host");
  /* 1. */
  for (size_t i = 0; i < NSIZES; i++) {
    void* r = NULL;
    void* data = buf + i * CAP;
    size_t cap = CAP;
    int tag = 3, got = -1;
    memset(data, 0xEE, sizes[i] + 1);
    while (r == NULL) CHECK(net->irecv(rc, 1, &data, &cap, &tag, &mr, NULL, &r) == ncclSuccess, "irecv");
    waitReq(r, &got);
    CHECK((size_t)got == sizes[i], "receive %zu: %d bytes, want %zu", i, got, sizes[i]);
    fill(want, sizes[i], (unsigned)i);
    CHECK(memcmp(data, want, sizes[i]) == 0, "receive %zu: bytes differ", i);
    CHECK(buf[i * CAP + sizes[i]] == 0xEE, "receive %zu wrote past its message", i);
  }
  /* 2. buffers tagged 7, 5, 7, 9: messages tagged 5, 7, 9, 7 go to buffers 1, 0, 3, 2 */
  void* data[4];
  size_t caps[4];
  int tags[4] = {7, 5, 7, 9}, got[8] = {0};
  void* mrs[4];
  for (int i = 0; i < 4; i++) { data[i] = buf + i * 1000; caps[i] = 1000; mrs[i] = mr; }
  void* r = NULL;
  while (r == NULL) CHECK(net->irecv(rc, 4, data, caps, tags, mrs, NULL, &r) == ncclSuccess, "irecv grouped");
  waitReq(r, got);
  const int msgOf[4] = {1, 0, 3, 2};
  for (int b = 0; b < 4; b++) {
    int m = msgOf[b];
    CHECK(got[b] == 100 + m, "grouped buffer %d: %d bytes, want %d", b, got[b], 100 + m);
    fill(want, 100 + (size_t)m, 100u + (unsigned)m);
    CHECK(memcmp(data[b], want, 100 + (size_t)m) == 0, "grouped buffer %d holds the wrong message", b);
  }
  /* 3. device buffers: staged host -> device before the receive reports done; iflush then completes at once */
  void* dmr;
  unsigned char* dev = buf + CAP;
  CHECK(net->regMr(rc, (void*)((uintptr_t)dev + FAKE_DEVICE_OFFSET), 5u << 20, NCCL_PTR_CUDA, &dmr) == ncclSuccess,
        "regMr cuda");
  for (unsigned k = 0; k < 3; k++) {
    size_t n = (size_t)(1u << 20) + k * 777u, cap = 2u << 20;
    int tag = 3, sz = -1;
    memset(dev + k * (2u << 20) % (4u << 20), 0, n);
    void* p = (void*)((uintptr_t)dev + k * (2u << 20) % (4u << 20) + FAKE_DEVICE_OFFSET);
    r = NULL;
    while (r == NULL) CHECK(net->irecv(rc, 1, &p, &cap, &tag, &dmr, NULL, &r) == ncclSuccess, "irecv cuda");
    waitReq(r, &sz);
    CHECK((size_t)sz == n, "device receive %u: %d bytes", k, sz);
    fill(want, n, 200u + k);
    CHECK(memcmp(dev + k * (2u << 20) % (4u << 20), want, n) == 0, "device receive %u: bytes differ", k);
    int isz = sz;
    void* f = NULL;
    CHECK(net->iflush(rc, 1, &p, &isz, &dmr, &f) == ncclSuccess && f, "iflush");
    int done = 0;
    CHECK(net->test(f, &done, NULL) == ncclSuccess && done, "flush not complete at once");
  }
  unsigned long long st[8];
  ((void (*)(unsigned long long*))dlsym(fakeCuda, "fake_cuda_stats"))(st);
  CHECK(st[6] == st[4] + st[1] && st[7] == 1, "copies in the plugin's own context %llu (want %llu), contexts made "
        "%llu (want 1)", st[6], st[4] + st[1], st[7]);
  /* 128-byte aligned receives: lines' data, the 777- and 1554-byte tails, then the lines' flag words */
  CHECK(st[4] == 6 && st[1] == 2 && st[2] >= 3 && st[3] == 0 && st[5] == 0, "2D copies %llu (want 6), host -> device "
        "%llu (want 2: the tails), syncs %llu, refused %llu, flag words before their line %llu", st[4], st[1], st[2],
        st[3], st[5]);
  /* a device buffer that is no cuMem allocation: copied in the caller's context (2D lines, flags, the tail) */
  unsigned char* plain = buf + 3 * CAP;
  void* pp = (void*)((uintptr_t)plain + FAKE_PLAIN_OFFSET);
  void* pmr;
  CHECK(net->regMr(rc, pp, 1u << 20, NCCL_PTR_CUDA, &pmr) == ncclSuccess, "regMr plain cuda");
  size_t pcap = 1u << 20;
  int ptag = 3, psz = -1;
  memset(plain, 0, PLAIN_BYTES);
  r = NULL;
  while (r == NULL) CHECK(net->irecv(rc, 1, &pp, &pcap, &ptag, &pmr, NULL, &r) == ncclSuccess, "irecv plain cuda");
  waitReq(r, &psz);
  fill(want, PLAIN_BYTES, 300u);
  CHECK((size_t)psz == PLAIN_BYTES && memcmp(plain, want, PLAIN_BYTES) == 0, "plain receive: %d bytes or bytes differ",
        psz);
  ((void (*)(unsigned long long*))dlsym(fakeCuda, "fake_cuda_stats"))(st);
  CHECK(st[4] == 8 && st[1] == 3 && st[6] == 8 && st[3] == 0 && st[5] == 0, "plain receive: 2D copies %llu (want 8), "
        "host -> device %llu (want 3), in the plugin's own context %llu (want 8), refused %llu, early flags %llu",
        st[4], st[1], st[6], st[3], st[5]);
  CHECK(logged("is not a cuMem allocation"), "plain receive: not said\n%s", logText);
  CHECK(net->deregMr(rc, pmr) == ncclSuccess, "deregMr plain cuda");
  /* 4. */
  size_t small = 10;
  int tag = 3, done = 0;
  void* d0 = buf;
  r = NULL;
  while (r == NULL) CHECK(net->irecv(rc, 1, &d0, &small, &tag, &mr, NULL, &r) == ncclSuccess, "irecv small");
  ncclResult_t res = ncclSuccess;
  for (long spins = 0; res == ncclSuccess && !done && spins < 200000000L; spins++) res = net->test(r, &done, NULL);
  CHECK(res != ncclSuccess && logged("larger than the posted receive"), "an oversized message was accepted");
  CHECK(net->closeRecv(rc) == ncclSuccess && net->closeListen(lc) == ncclSuccess, "close");
  free(buf);
  free(want);
}

static void expectRefused(const char* what, const char* nics, const char* file, const char* message) {
  void* ctx = NULL;
  if (file) {
    setenv("PATHPROOF_NET_EMU_NICS_FILE", file, 1);
  } else {
    unsetenv("PATHPROOF_NET_EMU_NICS_FILE");
    if (nics) setenv("PATHPROOF_NET_EMU_NICS", nics, 1); else unsetenv("PATHPROOF_NET_EMU_NICS");
  }
  logLen = 0;
  logText[0] = '\0';
  CHECK(net->init(&ctx, 1, NULL, logger, NULL) == ncclInvalidUsage, "%s: init accepted it", what);
  CHECK(logged(message), "%s: no WARN with '%s' in:\n%s", what, message, logText);
}

/* The ncclNetPlugin_vN each NCCL version looks up, newest first (README.md, "NCCL versions"). */
static const struct { const char* nccl; int order[8]; } loaders[] = {
  {"2.21.5", {8, 7, 6, 5}},                /* src/net.cc:426-436@v2.21.5-1 */
  {"2.26.2", {10, 9, 8, 7, 6}},            /* src/plugin/net.cc:75-100@v2.26.2-1 */
  {"2.27.3", {10, 9, 8, 7, 6}},            /* src/plugin/net.cc:35,81-85@v2.27.3-1 */
  {"2.27.5", {10, 9, 8, 7, 6}},            /* src/plugin/net.cc:35,81-85@v2.27.5-1 */
  {"2.28.9", {11, 10, 9, 8, 7, 6}},        /* src/plugin/net.cc:39,97-101@v2.28.9-1 */
  {"2.29.7", {11, 10, 9, 8, 7, 6}},        /* src/plugin/net.cc:38,91-95@v2.29.7-1 */
  {"2.30.7", {12, 11, 10, 9, 8, 7, 6}},    /* src/plugin/net.cc:40,102-106@v2.30.7-1 */
};

/* Opens the library as NCCL does (RTLD_NOW | RTLD_LOCAL) and walks each version's order: the first symbol found must
 * be the newest that version knows, and named "emu" (what NCCL_NET=emu matches). Prints one line per version; returns
 * the number of versions that would not load it so. */
static int checkLoaders(const char* path) {
  int bad = 0;
  for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib, "dlopen %s: %s", path, dlerror());
    char sym[32] = "";
    const char* const* table = NULL;
    int k;
    for (k = 0; loaders[i].order[k] && table == NULL; k++) {
      snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", loaders[i].order[k]);
      table = dlsym(lib, sym);
    }
    int ok = table && k == 1 && strcmp(*table, "emu") == 0;
    bad += !ok;
    printf("selftest: NCCL %s looks up ncclNetPlugin_v%d first: %s%s%s\n", loaders[i].nccl, loaders[i].order[0],
           table ? "finds " : "finds none of its versions", table ? sym : "", ok ? "" : "  <-- NOT the newest it knows");
    dlclose(lib);
  }
  return bad;
}

#define SAME(f) CHECK(q.f == p.f, "v%d NIC %d: " #f " differs from v11's", v, dev)
#define SAME_V8() do { SAME(name); SAME(pciPath); SAME(guid); SAME(ptrSupport); SAME(regIsGlobal); SAME(speed); \
  SAME(port); SAME(latency); SAME(maxComms); SAME(maxRecvs); SAME(netDeviceType); SAME(netDeviceVersion); } while (0)
#define SAME_V10() do { SAME_V8(); SAME(forceFlush); SAME(vProps.ndevs); SAME(maxP2pBytes); SAME(maxCollBytes); \
  for (int i = 0; i < p.vProps.ndevs; i++) SAME(vProps.devs[i]); } while (0)

/* Version v's properties of every NIC (after its init) equal v11's in every field v has; v12's railId and planeId
 * are NCCL_NET_ID_UNDEF; a NIC past the last is refused the same way. */
static void checkProperties(int v) {
  int n = 0, nv = 0;
  CHECK(n11->devices(&n) == ncclSuccess && driver(v)->devices(&nv) == ncclSuccess && nv == n, "v%d devices", v);
  for (int dev = 0; dev <= n; dev++) {
    ncclNetProperties_v11_t p;
    ncclResult_t want = n11->getProperties(dev, &p), got;
    if (v == 8) {
      ncclNetProperties_v8_t q;
      memset(&q, 0xa5, sizeof(q));
      if ((got = n8->getProperties(dev, &q)) == ncclSuccess && want == ncclSuccess) SAME_V8();
    } else if (v == 10) {
      ncclNetProperties_v10_t q;
      memset(&q, 0xa5, sizeof(q));
      if ((got = n10->getProperties(dev, &q)) == ncclSuccess && want == ncclSuccess) SAME_V10();
    } else {
      ncclNetProperties_v12_t q;
      memset(&q, 0xa5, sizeof(q));
      if ((got = n12->getProperties(dev, &q)) == ncclSuccess && want == ncclSuccess) {
        SAME_V10();
        SAME(maxMultiRequestSize);
        CHECK(q.railId == NCCL_NET_ID_UNDEF && q.planeId == NCCL_NET_ID_UNDEF, "v12 NIC %d: railId %d planeId %d",
              dev, q.railId, q.planeId);
      }
    }
    CHECK(got == want && (dev < n) == (want == ncclSuccess), "v%d getProperties(%d): %d, v11 %d", v, dev, got, want);
  }
}

static int probe(const char* path) {
  int bad = checkLoaders(path);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(lib, "dlopen %s: %s", path, dlerror());
  net = dlsym(lib, "ncclNetPlugin_v11");
  CHECK(net, "no ncclNetPlugin_v11 in %s", path);
  void* ctx = NULL;
  ncclResult_t r = net->init(&ctx, 0, NULL, logger, NULL);
  fputs(logText, stdout);
  if (r != ncclSuccess) return 1;
  int n = 0;
  net->devices(&n);
  for (int i = 0; i < n; i++) {
    ncclNetProperties_v11_t p;
    CHECK(net->getProperties(i, &p) == ncclSuccess, "getProperties %d", i);
    printf("dev %d name %s pciPath %s speed %d latency %g ptrSupport %d port %d guid %llu maxComms %d maxRecvs %d "
           "regIsGlobal %d forceFlush %d\n", i, p.name, p.pciPath ? p.pciPath : "(null)", p.speed, p.latency,
           p.ptrSupport, p.port, (unsigned long long)p.guid, p.maxComms, p.maxRecvs, p.regIsGlobal, p.forceFlush);
  }
  net->finalize(ctx);
  return logged("WARN ") || bad ? 1 : 0;
}

/* One version's transfer checks, in a process of their own (fresh stand-in driver counters): this process receives,
 * a child sends. */
static void transfers(int v, void* fakeCuda) {
  net = driver(v);
  snprintf(roleBuf, sizeof(roleBuf), "receiver v%d", v);
  role = roleBuf;
  logLen = 0;
  logText[0] = '\0';
  void* ctx = NULL;
  CHECK(net->init(&ctx, 42, NULL, logger, NULL) == ncclSuccess, "init");
  void* lc = NULL;
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  CHECK(net->listen(ctx, 0, handle, &lc) == ncclSuccess && lc, "listen");
  fflush(NULL);
  pid_t child = fork();
  CHECK(child >= 0, "fork");
  if (child == 0) {
    snprintf(roleBuf, sizeof(roleBuf), "sender v%d", v);
    logLen = 0;
    logText[0] = '\0';
    void* sctx = NULL;
    setenv("NCCL_HOSTID", "nodeB", 1);
    CHECK(net->init(&sctx, 42, NULL, logger, NULL) == ncclSuccess, "sender init");
    sender(sctx, handle, fakeCuda);
    CHECK(logged("send: NIC mlx5_1 of node nodeB -> NIC mlx5_0 of node nodeA"), "connect log\n%s", logText);
    CHECK(net->finalize(sctx) == ncclSuccess, "finalize");
    _exit(0);
  }
  receiver(lc, fakeCuda);
  CHECK(logged("recv: NIC mlx5_0 of node nodeA <- NIC mlx5_1 of node nodeB"), "accept log\n%s", logText);
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0, "sender failed");
  CHECK(net->finalize(ctx) == ncclSuccess, "finalize");
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--probe") == 0) return probe(argv[2]);
  if (argc != 3) { fprintf(stderr, "usage: %s PLUGIN.so FAKE_LIBCUDA.so | --probe PLUGIN.so\n", argv[0]); return 2; }
  CHECK(checkLoaders(argv[1]) == 0, "an NCCL version would not load the plugin through the newest API it knows");
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  CHECK(lib, "dlopen %s: %s", argv[1], dlerror());
  n11 = dlsym(lib, "ncclNetPlugin_v11");
  n8 = dlsym(lib, "ncclNetPlugin_v8");
  n10 = dlsym(lib, "ncclNetPlugin_v10");
  n12 = dlsym(lib, "ncclNetPlugin_v12");
  CHECK(n11 && n8 && n10 && n12, "ncclNetPlugin_v8, _v10, _v11 or _v12 missing");
  CHECK(strcmp(n11->name, "emu") == 0 && strcmp(n8->name, "emu") == 0 && strcmp(n10->name, "emu") == 0 &&
        strcmp(n12->name, "emu") == 0, "a table not named emu");
  net = n11;
  setenv("PATHPROOF_NET_EMU_LIBCUDA", argv[2], 1);
  void* fakeCuda = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  CHECK(fakeCuda, "dlopen %s: %s", argv[2], dlerror());

  char dir[256];
  snprintf(dir, sizeof(dir), "%s/net-emu-selftest-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir);
  CHECK(mkdtemp(dir), "mkdtemp");
  char nicsFile[300], topoFile[300], badFile[300];
  snprintf(nicsFile, sizeof(nicsFile), "%s/nics", dir);
  snprintf(topoFile, sizeof(topoFile), "%s/topo.xml", dir);
  snprintf(badFile, sizeof(badFile), "%s/bad", dir);

  /* Refused lists: one line naming the source and line; init fails through every version. */
  unsetenv("PATHPROOF_NET_EMU_NICS");
  unsetenv("PATHPROOF_NET_EMU_NICS_FILE");
  const int others[] = {8, 10, 12}, all[] = {8, 10, 11, 12};
  for (int i = 0; i < 3; i++) {
    net = driver(others[i]);
    expectRefused("unknown key", "name=a speed=1;name=b speed=2 colour=red", NULL,
                  "PATHPROOF_NET_EMU_NICS:2: unknown key 'colour'");
  }
  net = n11;
  expectRefused("nothing set", NULL, NULL, "neither PATHPROOF_NET_EMU_NICS_FILE nor PATHPROOF_NET_EMU_NICS");
  expectRefused("unknown key", "name=a speed=1;name=b speed=2 colour=red", NULL,
                "PATHPROOF_NET_EMU_NICS:2: unknown key 'colour'");
  expectRefused("no speed", "name=a", NULL, "PATHPROOF_NET_EMU_NICS:1: no speed=");
  FILE* f = fopen(badFile, "w");
  fprintf(f, "# two NICs\nname=a speed=100000\n\nname=a speed=100000 pci=/sys/devices/x/0000:17:00.0\n");
  fclose(f);
  char want[512];
  snprintf(want, sizeof(want), "%s:4: NIC name a given twice", badFile);
  expectRefused("duplicate", NULL, badFile, want);
  f = fopen(badFile, "w");
  fprintf(f, "name=a speed=100000 pci=/sys/devices/pci0000:15/17:00.0\n");
  fclose(f);
  snprintf(want, sizeof(want), "%s:1: pci=", badFile);
  expectRefused("bad pci", NULL, badFile, want);

  /* A good list: 3 NICs; the topology file has two of them, one with its own speed. */
  f = fopen(nicsFile, "w");
  fprintf(f, "# node A\n"
             "name=mlx5_0 pci=/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0 speed=400000 gdr=1\n"
             "name=mlx5_1 pci=/sys/devices/pci0000:30/0000:30:01.0/0000:31:00.0/0000:32:00.0 speed=400000 gdr=1 "
             "latency=2.5 port=2 guid=0x1234 maxcomms=100 regglobal=0 forceflush=1\n"
             "name=eth9 speed=25000 maxrecvs=1   # no pci: a virtual NIC\n");
  fclose(f);
  f = fopen(topoFile, "w");
  fprintf(f, "<system version=\"1\"><cpu numaid=\"0\">\n"
             " <pci busid=\"0000:16:00.0\" class=\"0x060400\"><pci busid=\"0000:17:00.0\" class=\"0x020700\">"
             "<nic><net name=\"mlx5_0\"/></nic></pci></pci>\n"
             " <pci busid=\"0000:31:00.0\" class=\"0x060400\"><pci busid=\"0000:33:00.0\" class=\"0x020700\">"
             "<nic><net name=\"mlx5_1\" speed=\"200000\" gdr=\"1\"/></nic></pci></pci>\n"
             "</cpu></system>\n");
  fclose(f);
  setenv("PATHPROOF_NET_EMU_NICS_FILE", nicsFile, 1);
  setenv("NCCL_TOPO_FILE", topoFile, 1);
  setenv("NCCL_HOSTID", "nodeA", 1);
  logLen = 0;
  void* ctx = NULL;
  CHECK(net->init(&ctx, 42, NULL, logger, NULL) == ncclSuccess, "init with a good list:\n%s", logText);
  int n = 0;
  CHECK(net->devices(&n) == ncclSuccess && n == 3, "devices: %d", n);
  ncclNetProperties_v11_t p;
  CHECK(net->getProperties(0, &p) == ncclSuccess, "getProperties 0");
  CHECK(strcmp(p.name, "mlx5_0") == 0 && strcmp(p.pciPath, "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/"
        "0000:17:00.0") == 0 && p.speed == 400000 && p.ptrSupport == (NCCL_PTR_HOST | NCCL_PTR_CUDA) &&
        p.latency == 0 && p.port == 1 && p.guid == 1 && p.maxRecvs == 8 && p.regIsGlobal == 1 && p.forceFlush == 0 &&
        p.maxComms == 65536 && p.vProps.ndevs == 1 && p.vProps.devs[0] == 0, "NIC 0 properties");
  CHECK(net->getProperties(1, &p) == ncclSuccess && p.latency == 2.5f && p.port == 2 && p.guid == 0x1234 &&
        p.maxComms == 100 && p.regIsGlobal == 0 && p.forceFlush == 1, "NIC 1 properties");
  CHECK(net->getProperties(2, &p) == ncclSuccess && p.pciPath == NULL && p.ptrSupport == NCCL_PTR_HOST &&
        p.speed == 25000 && p.maxRecvs == 1 && p.guid == 3, "NIC 2 properties");
  CHECK(net->getProperties(3, &p) == ncclInvalidArgument, "NIC 3 exists");
  CHECK(logged("INFO NET/EMU : NIC mlx5_0 is in NCCL_TOPO_FILE under pci 0000:17:00.0"), "topo: mlx5_0\n%s", logText);
  CHECK(logged("WARN NET/EMU : NIC mlx5_1: pci path") && logged("under <pci busid=\"0000:33:00.0\">"),
        "topo: mlx5_1's place\n%s", logText);
  CHECK(logged("NCCL_TOPO_FILE's speed=\"200000\" wins over the plugin's 400000"), "topo: speed\n%s", logText);
  CHECK(logged("NCCL_TOPO_FILE's gdr=\"1\" equals the plugin's"), "topo: gdr\n%s", logText);
  CHECK(logged("WARN NET/EMU : NIC eth9 is not in NCCL_TOPO_FILE"), "topo: eth9\n%s", logText);
  CHECK(logged("INFO NET/EMU : NCCL drives the plugin through ncclNetPlugin_v11"), "API line\n%s", logText);

  /* The same NICs through v8, v10 and v12. */
  for (int i = 0; i < 3; i++) {
    int v = others[i];
    char api[64];
    void* c = NULL;
    logLen = 0;
    logText[0] = '\0';
    CHECK(driver(v)->init(&c, 42, NULL, logger, NULL) == ncclSuccess, "v%d init:\n%s", v, logText);
    snprintf(api, sizeof(api), "INFO NET/EMU : NCCL drives the plugin through ncclNetPlugin_v%d", v);
    CHECK(logged(api), "v%d: no API line\n%s", v, logText);
    /* v8 cannot pass mlx5_1's forceflush=1 on (it has no forceFlush): said once, for that NIC only */
    CHECK(logged("WARN NET/EMU : NIC mlx5_1: forceflush=1 does not reach NCCL") == (v == 8) &&
          !logged("NIC mlx5_0: forceflush"), "v%d: forceflush warning\n%s", v, logText);
    checkProperties(v);
    CHECK(driver(v)->finalize(c) == ncclSuccess, "v%d finalize", v);
  }

  /* Transfers between two processes, through each version in turn. */
  for (int i = 0; i < 4; i++) {
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
      transfers(all[i], fakeCuda);
      _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "transfers through ncclNetPlugin_v%d failed", all[i]);
  }
  CHECK(n11->finalize(ctx) == ncclSuccess, "finalize");
  unlink(nicsFile); unlink(topoFile); unlink(badFile); rmdir(dir);
  printf("selftest: ok (loaders of 7 NCCL versions, refused lists, properties, topology check; through v8, v10, v11 "
         "and v12 each: %zu messages 0 B..9 MiB, grouped receive, device staging (cuMem and plain buffers) and iflush, "
         "oversized message)\n",
         NSIZES);
  return 0;
}
