/*
 * Staging of device buffers through host memory for the emu net plugin.
 *
 * When a NIC claims GPUDirect (NCCL_PTR_CUDA), NCCL registers device buffers and hands their pointers to isend and
 * irecv. The bytes are copied device -> host before they go on the socket and host -> device after they arrive.
 * The driver API is opened with dlopen (libcuda.so.1, or PATHPROOF_NET_EMU_LIBCUDA for the self-test's stand-in), so
 * the plugin links no CUDA library and loads on a machine without a GPU.
 *
 * Why the copies run in a context of the plugin's own. A real NIC writes GPU memory over PCIe and calls no CUDA; the
 * plugin has only the driver, and in a PyTorch rank the main thread often sits in a blocking copy into pageable
 * memory (`.cpu()`, `.item()`) behind NCCL's kernel, which waits for the bytes this plugin delivers. While it sits
 * there the driver takes no other work of that context from any thread: a copy, a kernel launch, even a stream
 * creation never returns (measured on an H200, driver 580: staging-probe.cu, "legacy-memcpy"). DDP's first shape
 * broadcast stopped exactly there, on the first node that received over the network. The same copy made from a
 * second context of the same device (cuCtxCreate) completes, when the device buffer is a cuMem allocation, whose
 * mapping every context of the device shares (cuMemSetAccess grants a device, not a context); NCCL allocates its
 * buffers so by default (NCCL_CUMEM_ENABLE). A buffer of another kind (cudaMalloc) is copied in its own context,
 * as before, and the plugin says once that such a copy can wait behind the main thread.
 *
 * Everything a copy needs is made at regMr, while NCCL is setting up a connection and no rank waits for it: the
 * context, a stream (CU_STREAM_NON_BLOCKING, never ordered behind the legacy stream), and a page-locked host shadow
 * of the registered region (cuMemHostAlloc, as a NIC's DMA target is), so that bytes at offset X of the device
 * region travel through offset X of the shadow and nothing is allocated while bytes move.
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
typedef CUresult (*pfnMemHostAlloc)(void**, size_t, unsigned int);
typedef CUresult (*pfnCtxCreate)(CUcontext*, unsigned int, CUdevice);
typedef CUresult (*pfnCtxPopCurrent)(CUcontext*);
typedef CUresult (*pfnMemRetainAllocationHandle)(CUmemGenericAllocationHandle*, void*);
typedef CUresult (*pfnMemRelease)(CUmemGenericAllocationHandle);
typedef CUresult (*pfnMemFreeHost)(void*);

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
  pfnMemHostAlloc memHostAlloc;
  pfnMemFreeHost memFreeHost;
  pfnCtxCreate ctxCreate;
  pfnCtxPopCurrent ctxPopCurrent;
  pfnMemRetainAllocationHandle memRetainAllocationHandle;
  pfnMemRelease memRelease;
} cu;
/* the plugin's own context per device ordinal, made at the first registration of a cuMem buffer there */
#define EMU_MAX_DEVICES 64
static CUcontext stagingCtx[EMU_MAX_DEVICES];
static int plainBufferSaid;
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
    CU_SYM(memHostAlloc, "cuMemHostAlloc");
    CU_SYM(memFreeHost, "cuMemFreeHost");
    /* cuCtxCreate_v2 (flags, device): the signature every driver since CUDA 4 keeps; cuda.h 13 maps the plain name
     * to _v4, which takes a parameter block */
    CU_SYM(ctxCreate, "cuCtxCreate_v2");
    CU_SYM(ctxPopCurrent, "cuCtxPopCurrent_v2");
    CU_SYM(memRetainAllocationHandle, "cuMemRetainAllocationHandle");
    CU_SYM(memRelease, "cuMemRelease");
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

/* The context the copies of a buffer at devPtr run in: the plugin's own on that device for a cuMem allocation, else
 * the buffer's (the thread's current context, or the device's primary context, which NCCL uses). */
static int contextFor(const void* devPtr, CUcontext* ctx) {
  int ordinal = -1;
  CUresult r = cu.pointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)devPtr);
  if (r != CUDA_SUCCESS) {
    EMU_WARN("device buffer %p: no device (%s)", devPtr, cuErr(r));
    return -1;
  }
  CUdevice dev;
  if ((r = cu.deviceGet(&dev, ordinal)) != CUDA_SUCCESS) {
    EMU_WARN("device buffer %p: device %d: %s", devPtr, ordinal, cuErr(r));
    return -1;
  }
  CUmemGenericAllocationHandle h;
  int vmm = cu.memRetainAllocationHandle(&h, (void*)devPtr) == CUDA_SUCCESS;
  if (vmm) cu.memRelease(h);
  if (vmm && ordinal >= 0 && ordinal < EMU_MAX_DEVICES) {
    pthread_mutex_lock(&cuLock);
    if (stagingCtx[ordinal] == NULL) {
      CUcontext made = NULL, popped = NULL;
      r = cu.ctxCreate(&made, 0, dev);  /* also makes it current on this thread: pop it straight away */
      if (r == CUDA_SUCCESS) {
        cu.ctxPopCurrent(&popped);
        stagingCtx[ordinal] = made;
        EMU_INFO(NCCL_INIT | NCCL_NET, "device %d: staging copies run in a context of the plugin's own, so that a "
                 "rank's main thread waiting in a blocking copy does not hold them up", ordinal);
      } else {
        EMU_WARN("device %d: cannot make a staging context (%s)", ordinal, cuErr(r));
      }
    }
    *ctx = stagingCtx[ordinal];
    pthread_mutex_unlock(&cuLock);
    return *ctx == NULL ? -1 : 0;
  }
  CUcontext cur = NULL;
  if (cu.ctxGetCurrent(&cur) != CUDA_SUCCESS || cur == NULL) {
    if ((r = cu.primaryCtxRetain(&cur, dev)) != CUDA_SUCCESS) {
      EMU_WARN("no CUDA context for device buffer %p: %s", devPtr, cuErr(r));
      return -1;
    }
  }
  *ctx = cur;
  if (!__atomic_exchange_n(&plainBufferSaid, 1, __ATOMIC_RELAXED)) {
    EMU_INFO(NCCL_INIT | NCCL_NET, "device buffer %p is not a cuMem allocation: its copies run in its own context "
             "and wait whenever the rank's main thread waits in a blocking copy for NCCL (NCCL_CUMEM_ENABLE=0?)",
             devPtr);
  }
  return 0;
}

/* Runs f(arg) with ctx current on this thread, and puts the thread's own context back. */
static CUresult inContext(CUcontext ctx, CUresult (*f)(void*), void* arg) {
  CUcontext prev = NULL;
  cu.ctxGetCurrent(&prev);
  CUresult r = CUDA_SUCCESS;
  if (prev != ctx) r = cu.ctxSetCurrent(ctx);
  if (r == CUDA_SUCCESS) r = f(arg);
  if (prev != ctx) cu.ctxSetCurrent(prev);
  return r;
}

static CUresult prepare(void* arg) {
  struct emuDevMr* m = arg;
  CUresult r = cu.streamCreate((CUstream*)&m->stream, CU_STREAM_NON_BLOCKING);
  /* PORTABLE: page-locked for every context, whichever thread copies or frees */
  if (r == CUDA_SUCCESS) r = cu.memHostAlloc((void**)&m->shadow, m->size ? m->size : 1, CU_MEMHOSTALLOC_PORTABLE);
  return r;
}

int emuCudaRegister(struct emuDevMr* m, void* data, size_t size) {
  memset(m, 0, sizeof(*m));
  if (emuCudaLoad() != 0) return -1;
  m->base = data;
  m->size = size;
  CUcontext ctx;
  if (contextFor(data, &ctx) != 0) return -1;
  m->ctx = ctx;
  CUresult r = inContext(ctx, prepare, m);
  if (r != CUDA_SUCCESS) {
    EMU_WARN("device buffer %p (%zu bytes): no stream or page-locked shadow to stage it: %s", data, size, cuErr(r));
    emuCudaDeregister(m);
    return -1;
  }
  return 0;
}

static CUresult release(void* arg) {
  struct emuDevMr* m = arg;
  if (m->stream) cu.streamDestroy((CUstream)m->stream);
  if (m->shadow) cu.memFreeHost(m->shadow);
  return CUDA_SUCCESS;
}

void emuCudaDeregister(struct emuDevMr* m) {
  if (cuState == 1 && m->ctx != NULL) inContext((CUcontext)m->ctx, release, m);
  memset(m, 0, sizeof(*m));
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

struct copyArgs {
  struct emuDevMr* m;
  size_t off, bytes;
  int toDevice;
};

static CUresult copyNow(void* arg) {
  struct copyArgs* a = arg;
  CUstream s = (CUstream)a->m->stream;
  void* dev = (char*)a->m->base + a->off;
  char* host = a->m->shadow + a->off;
  CUresult r = a->toDevice ? copyToDevice(dev, host, a->bytes, s)
                           : cu.memcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, a->bytes, s);
  if (r == CUDA_SUCCESS) r = cu.streamSynchronize(s);
  return r;
}

int emuCudaCopy(struct emuDevMr* m, const void* devPtr, size_t bytes, int toDevice) {
  if (bytes == 0) return 0;
  if (!emuCudaInside(m, devPtr, bytes)) {
    EMU_WARN("%zu bytes at %p lie outside the registered device region %p + %zu", bytes, devPtr, m->base, m->size);
    return -1;
  }
  struct copyArgs a = {m, (size_t)((const char*)devPtr - (const char*)m->base), bytes, toDevice};
  CUresult r = inContext((CUcontext)m->ctx, copyNow, &a);
  if (r != CUDA_SUCCESS) {
    EMU_WARN("staging %zu bytes %s failed: %s", bytes, toDevice ? "host -> device" : "device -> host", cuErr(r));
    return -1;
  }
  return 0;
}
