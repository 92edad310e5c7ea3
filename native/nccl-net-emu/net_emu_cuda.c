/*
 * Staging of device buffers through host memory for the emu net plugin.
 *
 * When a NIC claims GPUDirect (NCCL_PTR_CUDA), NCCL registers device buffers and hands their pointers to isend and
 * irecv. The bytes are copied device -> host before they go on the socket and host -> device after they arrive.
 * The driver API is opened with dlopen (libcuda.so.1, or PATHPROOF_NET_EMU_LIBCUDA for the self-test's stand-in), so
 * the plugin links no CUDA library and loads on a machine without a GPU.
 *
 * Copies run on a stream created CU_STREAM_NON_BLOCKING and are waited for with cuStreamSynchronize: a copy on the
 * legacy default stream would wait for NCCL's kernel on the user's (blocking) stream, and that kernel waits for the
 * very bytes this copy delivers. The caller is NCCL's proxy thread, which has made the communicator's device current
 * (src/proxy.cc:940@v2.28.9-1); the context a buffer belongs to is still recorded at regMr and made current around
 * each copy, so a call from another thread (the GDR probe, a service thread) copies in the right context.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "net_emu.h"

typedef CUresult (*pfnInit)(unsigned int);
typedef CUresult (*pfnCtxGetCurrent)(CUcontext*);
typedef CUresult (*pfnCtxSetCurrent)(CUcontext);
typedef CUresult (*pfnPointerGetAttribute)(void*, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*pfnDeviceGet)(CUdevice*, int);
typedef CUresult (*pfnPrimaryCtxRetain)(CUcontext*, CUdevice);
typedef CUresult (*pfnStreamCreate)(CUstream*, unsigned int);
typedef CUresult (*pfnStreamDestroy)(CUstream);
typedef CUresult (*pfnStreamSynchronize)(CUstream);
typedef CUresult (*pfnMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
typedef CUresult (*pfnMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
typedef CUresult (*pfnMemcpy2DAsync)(const CUDA_MEMCPY2D*, CUstream);
typedef CUresult (*pfnGetErrorString)(CUresult, const char**);

static struct {
  pfnInit init;
  pfnCtxGetCurrent ctxGetCurrent;
  pfnCtxSetCurrent ctxSetCurrent;
  pfnPointerGetAttribute pointerGetAttribute;
  pfnDeviceGet deviceGet;
  pfnPrimaryCtxRetain primaryCtxRetain;
  pfnStreamCreate streamCreate;
  pfnStreamDestroy streamDestroy;
  pfnStreamSynchronize streamSynchronize;
  pfnMemcpyDtoHAsync memcpyDtoHAsync;
  pfnMemcpyHtoDAsync memcpyHtoDAsync;
  pfnMemcpy2DAsync memcpy2DAsync;
  pfnGetErrorString getErrorString;
} cu;
static pthread_mutex_t cuLock = PTHREAD_MUTEX_INITIALIZER;
static int cuState;  /* 0 not tried, 1 loaded, -1 failed */

static const char* cuErr(CUresult r) {
  const char* s = NULL;
  if (cu.getErrorString) cu.getErrorString(r, &s);
  return s ? s : "unknown CUDA error";
}

/* The versioned names are the ones cuda.h maps the plain names to (cuStreamDestroy -> cuStreamDestroy_v2, ...). */
#define CU_SYM(field, sym) if ((cu.field = (void*)dlsym(lib, sym)) == NULL) { missing = sym; goto fail; }

int emuCudaLoad(void) {
  pthread_mutex_lock(&cuLock);
  if (cuState == 0) {
    const char* path = getenv("PATHPROOF_NET_EMU_LIBCUDA");
    if (path == NULL || path[0] == '\0') path = "libcuda.so.1";
    const char* missing = NULL;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      EMU_WARN("cannot open %s (%s): device buffers cannot be staged, so GPUDirect cannot be emulated", path,
               dlerror());
      cuState = -1;
      goto out;
    }
    CU_SYM(init, "cuInit");
    CU_SYM(ctxGetCurrent, "cuCtxGetCurrent");
    CU_SYM(ctxSetCurrent, "cuCtxSetCurrent");
    CU_SYM(pointerGetAttribute, "cuPointerGetAttribute");
    CU_SYM(deviceGet, "cuDeviceGet");
    CU_SYM(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    CU_SYM(streamCreate, "cuStreamCreate");
    CU_SYM(streamDestroy, "cuStreamDestroy_v2");
    CU_SYM(streamSynchronize, "cuStreamSynchronize");
    CU_SYM(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    CU_SYM(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    CU_SYM(memcpy2DAsync, "cuMemcpy2DAsync_v2");
    CU_SYM(getErrorString, "cuGetErrorString");
    CUresult r = cu.init(0);
    if (r != CUDA_SUCCESS) {
      EMU_WARN("cuInit failed: %s", cuErr(r));
      cuState = -1;
      goto out;
    }
    EMU_INFO(NCCL_INIT | NCCL_NET, "CUDA driver opened (%s): device buffers are staged through host memory", path);
    cuState = 1;
    goto out;
  fail:
    EMU_WARN("%s has no %s", path, missing);
    cuState = -1;
  }
out:
  pthread_mutex_unlock(&cuLock);
  return cuState == 1 ? 0 : -1;
}

int emuCudaContextOf(const void* devPtr, void** ctx) {
  if (emuCudaLoad() != 0) return -1;
  CUcontext cur = NULL;
  if (cu.ctxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL) {
    *ctx = cur;
    return 0;
  }
  /* No context on this thread: the primary context of the device the buffer lives on (NCCL uses primary contexts). */
  int ordinal = -1;
  CUresult r = cu.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)devPtr);
  CUdevice dev;
  if (r == CUDA_SUCCESS) r = cu.deviceGet(&dev, ordinal);
  if (r == CUDA_SUCCESS) r = cu.primaryCtxRetain(&cur, dev);
  if (r != CUDA_SUCCESS) {
    EMU_WARN("no CUDA context for device buffer %p: %s", devPtr, cuErr(r));
    return -1;
  }
  *ctx = cur;
  return 0;
}

/* LL128 (src/device/prims_ll128.h@v2.28.9-1, device.h:105-107): each 128-byte line of a receive buffer ends in an
 * 8-byte flag; the kernel polls the flags (prims_ll128.h:186-194) and then reads the line, trusting that a line whose
 * flag is new holds new data. A NIC's PCIe writes arrive in order; one copy-engine copy promises no order inside it.
 * So a 128-byte aligned receive is written in three copies on one stream, each starting after the one before it has
 * completed: every line's first 120 bytes, the bytes after the last whole line, then every line's last 8 bytes.
 * SIMPLE (waits for the receive to complete) and LL (8-byte data+flag words, written whole) do not mind the order. */
#define EMU_LINE 128
#define EMU_FLAG 8

static CUresult copyLines(void* dst, const void* src, size_t lines, size_t offset, size_t width, CUstream s) {
  CUDA_MEMCPY2D m;
  memset(&m, 0, sizeof(m));
  m.srcMemoryType = CU_MEMORYTYPE_HOST;
  m.srcHost = (const char*)src + offset;
  m.srcPitch = EMU_LINE;
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstDevice = (CUdeviceptr)(uintptr_t)dst + offset;
  m.dstPitch = EMU_LINE;
  m.WidthInBytes = width;
  m.Height = lines;
  return cu.memcpy2DAsync(&m, s);
}

static CUresult copyToDevice(void* dst, const void* src, size_t bytes, CUstream s) {
  size_t lines = bytes / EMU_LINE, whole = lines * EMU_LINE;
  if (lines == 0 || (uintptr_t)dst % EMU_LINE != 0) {
    return cu.memcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst, src, bytes, s);
  }
  CUresult r = copyLines(dst, src, lines, 0, EMU_LINE - EMU_FLAG, s);
  if (r == CUDA_SUCCESS && bytes > whole) {
    r = cu.memcpyHtoDAsync((CUdeviceptr)(uintptr_t)dst + whole, (const char*)src + whole, bytes - whole, s);
  }
  if (r == CUDA_SUCCESS) r = copyLines(dst, src, lines, EMU_LINE - EMU_FLAG, EMU_FLAG, s);
  return r;
}

int emuCudaCopy(struct emuCuda* c, void* ctx, void* dst, const void* src, size_t bytes, int toDevice) {
  if (bytes == 0) return 0;
  CUcontext prev = NULL;
  cu.ctxGetCurrent(&prev);
  CUresult r = CUDA_SUCCESS;
  if (prev != (CUcontext)ctx) r = cu.ctxSetCurrent((CUcontext)ctx);
  if (r == CUDA_SUCCESS && c->stream == NULL) {
    CUstream s = NULL;
    r = cu.streamCreate(&s, CU_STREAM_NON_BLOCKING);
    if (r == CUDA_SUCCESS) {
      c->stream = s;
      c->ctx = ctx;
    }
  }
  if (r == CUDA_SUCCESS) {
    r = toDevice ? copyToDevice(dst, src, bytes, (CUstream)c->stream)
                 : cu.memcpyDtoHAsync(dst, (CUdeviceptr)(uintptr_t)src, bytes, (CUstream)c->stream);
  }
  if (r == CUDA_SUCCESS) r = cu.streamSynchronize((CUstream)c->stream);
  if (prev != (CUcontext)ctx) cu.ctxSetCurrent(prev);
  if (r != CUDA_SUCCESS) {
    EMU_WARN("staging %zu bytes %s failed: %s", bytes, toDevice ? "host -> device" : "device -> host", cuErr(r));
    return -1;
  }
  return 0;
}

void emuCudaRelease(struct emuCuda* c) {
  if (c->stream == NULL || cuState != 1) return;
  CUcontext prev = NULL;
  cu.ctxGetCurrent(&prev);
  if (prev != (CUcontext)c->ctx) cu.ctxSetCurrent((CUcontext)c->ctx);
  cu.streamDestroy((CUstream)c->stream);
  if (prev != (CUcontext)c->ctx) cu.ctxSetCurrent(prev);
  c->stream = NULL;
}
