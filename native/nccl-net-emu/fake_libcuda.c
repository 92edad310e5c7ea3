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

#include <cuda.h>

#define FAKE_DEVICE_OFFSET 0x100000000000ull
#define FAKE_NON_BLOCKING 0x1
#define FAKE_MAX_PENDING 64

static int ctxToken;
#define FAKE_CTX ((CUcontext)&ctxToken)
/* a queued copy: n bytes, or height rows of width bytes at pitch (2D) */
struct fakeCopy { char* dst; const char* src; size_t n, width, height, pitch; };
static struct fakeStream { int flags; int npending; struct fakeCopy q[FAKE_MAX_PENDING]; } streams[16];
static int nstreams;
static CUcontext current;
static unsigned long long d2h, h2d, syncs, refused, copies2d, flagsEarly;

/* d2h, h2d (calls), syncs, refused copies, 2D copies, flag words written before their line's data */
void fake_cuda_stats(unsigned long long out[6]) {
  out[0] = d2h;
  out[1] = h2d;
  out[2] = syncs;
  out[3] = refused;
  out[4] = copies2d;
  out[5] = flagsEarly;
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
CUresult cuDeviceGet(CUdevice* dev, int ordinal) { *dev = ordinal; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) { (void)dev; *ctx = FAKE_CTX; return CUDA_SUCCESS; }
CUresult cuStreamCreate(CUstream* s, unsigned int flags) {
  if (nstreams == 16) return 2;
  streams[nstreams].flags = (int)flags;
  *s = (CUstream)&streams[nstreams++];
  return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return CUDA_SUCCESS; }

static CUresult enqueue(CUstream s, struct fakeCopy c) {
  struct fakeStream* st = (struct fakeStream*)s;
  if (st == NULL || !(st->flags & FAKE_NON_BLOCKING) || current != FAKE_CTX || st->npending == FAKE_MAX_PENDING) {
    refused++;
    return CUDA_ERROR_INVALID_VALUE;
  }
  st->q[st->npending++] = c;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream s) {
  d2h++;
  return enqueue(s, (struct fakeCopy){dst, (const char*)(uintptr_t)(src - FAKE_DEVICE_OFFSET), n, 0, 0, 0});
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream s) {
  h2d++;
  return enqueue(s, (struct fakeCopy){(char*)(uintptr_t)(dst - FAKE_DEVICE_OFFSET), src, n, 0, 0, 0});
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
  return enqueue(s, (struct fakeCopy){(char*)(uintptr_t)(m->dstDevice - FAKE_DEVICE_OFFSET), m->srcHost, 0,
                                      m->WidthInBytes, m->Height, m->srcPitch});
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
