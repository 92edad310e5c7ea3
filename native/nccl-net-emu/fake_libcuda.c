/*
 * A stand-in for libcuda.so.1 for selftest.c on a machine without a GPU (loaded by the plugin through
 * PATHPROOF_NET_EMU_LIBCUDA). "Device" addresses are host addresses plus FAKE_DEVICE_OFFSET, an unmapped range: a
 * plugin that touched a device pointer itself instead of copying through the driver would crash the test. Async
 * copies only happen at cuStreamSynchronize, so a plugin that forgot to wait would deliver stale bytes; a copy on the
 * legacy stream (NULL), on a stream not created non-blocking or in another context than the current one, or whose
 * host side is not page-locked memory from cuMemHostAlloc, is refused. Every fake device address is a cuMem
 * allocation (but those from FAKE_PLAIN_OFFSET, which stand for cudaMalloc memory), so the plugin must copy from the
 * one context it makes for itself (net_emu_cuda.c says why); the stats count those copies. It proves the plugin's
 * staging logic, not CUDA: gpu-check.sh runs the same code against the real driver.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define FAKE_DEVICE_OFFSET 0x100000000000ull
/* "Device" addresses from FAKE_PLAIN_OFFSET on (past every host address plus FAKE_DEVICE_OFFSET: user space ends below
 * 0x800000000000) stand for cudaMalloc memory: not cuMem allocations */
#define FAKE_PLAIN_OFFSET 0xA00000000000ull
#define FAKE_NON_BLOCKING 0x1
#define FAKE_MAX_PENDING 64
#define FAKE_MAX_PINNED 4096

static int ctxToken, ownCtxToken;
#define FAKE_CTX ((CUcontext)&ctxToken)
#define FAKE_OWN_CTX ((CUcontext)&ownCtxToken) /* the one context the plugin may make for itself */
/* a queued copy: n bytes, or height rows of width bytes at pitch (2D) */
struct fakeCopy { char* dst; const char* src; size_t n, width, height, pitch; };
static struct fakeStream { int flags; CUcontext ctx; int npending; struct fakeCopy q[FAKE_MAX_PENDING]; } streams[16];
static int nstreams;
static CUcontext current;
static unsigned long long d2h, h2d, syncs, refused, copies2d, flagsEarly, ownCtxCopies, ctxsMade;
static struct { char* p; size_t n; } pinned[FAKE_MAX_PINNED];

CUresult cuMemHostAlloc(void** p, size_t n, unsigned int flags) {
  (void)flags;
  for (int i = 0; i < FAKE_MAX_PINNED; i++) {
    if (pinned[i].p == NULL) {
      if ((pinned[i].p = malloc(n)) == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
      pinned[i].n = n;
      *p = pinned[i].p;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* p) {
  for (int i = 0; i < FAKE_MAX_PINNED; i++) {
    if (pinned[i].p == p) {
      free(p);
      pinned[i].p = NULL;
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}
static int isPinned(const char* p, size_t n) {
  for (int i = 0; i < FAKE_MAX_PINNED; i++) {
    if (pinned[i].p != NULL && p >= pinned[i].p && p + n <= pinned[i].p + pinned[i].n) return 1;
  }
  return 0;
}

/* d2h, h2d (calls), syncs, refused copies, 2D copies, flag words written before their line's data, copies made in
 * the plugin's own context, contexts made */
void fake_cuda_stats(unsigned long long out[8]) {
  out[0] = d2h;
  out[1] = h2d;
  out[2] = syncs;
  out[3] = refused;
  out[4] = copies2d;
  out[5] = flagsEarly;
  out[6] = ownCtxCopies;
  out[7] = ctxsMade;
}

CUresult cuInit(unsigned int flags) { (void)flags; current = FAKE_CTX; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext* ctx) { *ctx = current; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext ctx) { current = ctx; return CUDA_SUCCESS; }
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr) {
  (void)attr;
  (void)ptr;
  *(int*)data = 0;
  return CUDA_SUCCESS;
}
/* A fake device address below FAKE_PLAIN_OFFSET is a cuMem allocation, as NCCL's buffers are by default. */
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* h, void* p) {
  *h = 1;
  uintptr_t a = (uintptr_t)p;
  return a >= FAKE_DEVICE_OFFSET && a < FAKE_PLAIN_OFFSET ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static char* hostOf(CUdeviceptr d) {
  return (char*)(uintptr_t)(d >= FAKE_PLAIN_OFFSET ? d - FAKE_PLAIN_OFFSET : d - FAKE_DEVICE_OFFSET);
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) { (void)h; return CUDA_SUCCESS; }
static CUcontext pushed;
CUresult cuCtxCreate_v2(CUcontext* ctx, unsigned int flags, CUdevice dev) {
  (void)flags;
  (void)dev;
  if (ctxsMade++) return CUDA_ERROR_INVALID_VALUE;  /* one per device is all the plugin needs */
  pushed = current;
  *ctx = current = FAKE_OWN_CTX;
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  *ctx = current;
  current = pushed;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice* dev, int ordinal) { *dev = ordinal; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) { (void)dev; *ctx = FAKE_CTX; return CUDA_SUCCESS; }
CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
  if (nstreams == 16) return 2;
  streams[nstreams].flags = (int)flags;
  streams[nstreams].ctx = current;
  *s = (CUstream)&streams[nstreams++];
  return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return CUDA_SUCCESS; }

static CUresult enqueue(CUstream s, struct fakeCopy c, const char* host) {
  struct fakeStream* st = (struct fakeStream*)s;
  size_t span = c.height ? (c.height - 1) * c.pitch + c.width : c.n;
  if (!isPinned(host, span) || st == NULL || !(st->flags & FAKE_NON_BLOCKING) ||
      (current != FAKE_CTX && current != FAKE_OWN_CTX) || st->ctx != current || st->npending == FAKE_MAX_PENDING) {
    refused++;
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (current == FAKE_OWN_CTX) ownCtxCopies++;
  st->q[st->npending++] = c;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  d2h++;
  return enqueue(s, (struct fakeCopy){dst, hostOf(src), n, 0, 0, 0}, dst);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  h2d++;
  return enqueue(s, (struct fakeCopy){hostOf(dst), src, n, 0, 0, 0}, src);
}
/* host -> device only, equal pitches: what the plugin asks for */
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* m, CUstream s) {
  copies2d++;
  if (m->srcMemoryType != CU_MEMORYTYPE_HOST || m->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
      m->srcPitch != m->dstPitch ||
      m->srcXInBytes || m->srcY || m->dstXInBytes || m->dstY) {
    refused++;
    return CUDA_ERROR_INVALID_VALUE;
  }
  return enqueue(s, (struct fakeCopy){hostOf(m->dstDevice), m->srcHost, 0,
                                      m->WidthInBytes, m->Height, m->srcPitch},
                 m->srcHost);
}
CUresult cuStreamSynchronize(CUstream s) {
  struct fakeStream* st = (struct fakeStream*)s;
  for (int i = 0; i < st->npending; i++) {
    struct fakeCopy* c = &st->q[i];
    if (c->height == 0) {
      memcpy(c->dst, c->src, c->n);
      continue;
    }
    for (size_t row = 0; row < c->height; row++) {
      /* an LL128 flag word (the last 8 bytes of a 128-byte line) written before the rest of its line */
      if (c->pitch == 128 && c->width == 8 && ((uintptr_t)c->dst % 128) == 120 &&
          memcmp(c->dst - 120 + row * 128, c->src - 120 + row * 128, 120) != 0) {
        flagsEarly++;
      }
      memcpy(c->dst + row * c->pitch, c->src + row * c->pitch, c->width);
    }
  }
  st->npending = 0;
  syncs++;
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) { *s = r ? "fake error" : "no error"; return CUDA_SUCCESS; }
