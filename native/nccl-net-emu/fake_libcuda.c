/*
 * A stand-in for libcuda.so.1 for selftest.c on a machine without a GPU (loaded by the plugin through
 * PATHPROOF_NET_EMU_LIBCUDA). "Device" addresses are host addresses plus FAKE_DEVICE_OFFSET, an unmapped range: a
 * plugin that touched a device pointer itself instead of copying through the driver would crash the test. Async
 * copies only happen at cuStreamSynchronize, so a plugin that forgot to wait would deliver stale bytes; a copy on the
 * legacy stream (NULL) or on a stream not created non-blocking is refused. It proves the plugin's staging logic, not
 * CUDA: gpu-check.sh runs the same code against the real driver.
 */
#include <stdint.h>
#include <string.h>

#define FAKE_DEVICE_OFFSET 0x100000000000ull
#define FAKE_NON_BLOCKING 0x1
#define FAKE_MAX_PENDING 64

typedef int CUresult;
static int ctxToken;
static struct fakeStream { int flags; int npending; struct { void* dst; const void* src; size_t n; } q[FAKE_MAX_PENDING]; }
    streams[16];
static int nstreams;
static void* current;
static unsigned long long d2h, h2d, syncs, refused;

void fake_cuda_stats(unsigned long long out[4]) {
  out[0] = d2h;
  out[1] = h2d;
  out[2] = syncs;
  out[3] = refused;
}

CUresult cuInit(unsigned int flags) { (void)flags; current = &ctxToken; return 0; }
CUresult cuCtxGetCurrent(void** ctx) { *ctx = current; return 0; }
CUresult cuCtxSetCurrent(void* ctx) { current = ctx; return 0; }
CUresult cuPointerGetAttribute(void* data, int attr, unsigned long long ptr) { (void)attr; (void)ptr; *(int*)data = 0; return 0; }
CUresult cuDeviceGet(int* dev, int ordinal) { *dev = ordinal; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &ctxToken; return 0; }
CUresult cuStreamCreate(void** s, unsigned int flags) {
  if (nstreams == 16) return 2;
  streams[nstreams].flags = (int)flags;
  *s = &streams[nstreams++];
  return 0;
}
CUresult cuStreamDestroy_v2(void* s) { (void)s; return 0; }

static CUresult enqueue(void* s, void* dst, const void* src, size_t n) {
  struct fakeStream* st = s;
  if (st == NULL || !(st->flags & FAKE_NON_BLOCKING) || current != &ctxToken || st->npending == FAKE_MAX_PENDING) {
    refused++;
    return 1;
  }
  st->q[st->npending].dst = dst;
  st->q[st->npending].src = src;
  st->q[st->npending++].n = n;
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, unsigned long long src, size_t n, void* s) {
  d2h++;
  return enqueue(s, dst, (const void*)(uintptr_t)(src - FAKE_DEVICE_OFFSET), n);
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void* src, size_t n, void* s) {
  h2d++;
  return enqueue(s, (void*)(uintptr_t)(dst - FAKE_DEVICE_OFFSET), src, n);
}
CUresult cuStreamSynchronize(void* s) {
  struct fakeStream* st = s;
  for (int i = 0; i < st->npending; i++) memcpy(st->q[i].dst, st->q[i].src, st->q[i].n);
  st->npending = 0;
  syncs++;
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) { *s = r ? "fake error" : "no error"; return 0; }
