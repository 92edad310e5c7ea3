/* Internals shared by the emu net plugin's four files (transport, API adapters, NIC list, CUDA staging). */
#ifndef PATHPROOF_NET_EMU_H
#define PATHPROOF_NET_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "net_emu_api.h"

#define EMU_MAX_NICS 64
#define EMU_MAX_RECVS 8        /* the most grouped receives a NIC may claim: NCCL's IB transport's (net_ib.cc:924) */
#define EMU_NAME_LEN 64
#define EMU_PATH_LEN 256

struct emuNic {
  char name[EMU_NAME_LEN];
  char pciPath[EMU_PATH_LEN];  /* "" when not given: NCCL then treats the NIC as virtual */
  int speed;                   /* Mb/s */
  float latency;               /* us; 0 = NCCL's own base latency */
  int gdr;                     /* claims NCCL_PTR_CUDA */
  int maxComms;
  int port;
  uint64_t guid;
  int maxRecvs;
  int regIsGlobal;
  int forceFlush;
};

extern struct emuNic emuNics[EMU_MAX_NICS];
extern int emuNicCount;
extern ncclDebugLogger_t emuLogger;

void emuLog(ncclDebugLogLevel level, unsigned long flags, const char* fn, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define EMU_INFO(flags, fmt, ...) emuLog(NCCL_LOG_INFO, (flags), __func__, __LINE__, "NET/EMU : " fmt, ##__VA_ARGS__)
/* Every subsystem, as NCCL's own WARN (include/debug.h@v2.28.9-1): ncclDebugLog drops a line whose flags miss
 * NCCL_DEBUG_SUBSYS even at WARN level (src/debug.cc:292), and a run that leaves NET out must still see why. */
#define EMU_WARN(fmt, ...) emuLog(NCCL_LOG_WARN, ~0UL, __func__, __LINE__, "NET/EMU : " fmt, ##__VA_ARGS__)

/* The ncclNet_v11 implementation (net_emu.c), for the older and newer APIs' adapters (net_emu_compat.c). emuInitAs
 * is init for API version `api` (logged once per version: which table NCCL found). */
ncclResult_t emuInitAs(int api, void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logFn,
                       ncclProfilerCallback_t profFn);
ncclResult_t emuDevices(int* ndev);
ncclResult_t emuGetProperties(int dev, ncclNetProperties_v11_t* props);
ncclResult_t emuListenFn(void* ctx, int dev, void* handle, void** listenComm);
ncclResult_t emuConnect(void* ctx, int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v11_t** devComm);
ncclResult_t emuAccept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v11_t** devComm);
ncclResult_t emuRegMr(void* comm, void* data, size_t size, int type, void** mhandle);
ncclResult_t emuRegMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
ncclResult_t emuDeregMr(void* comm, void* mhandle);
ncclResult_t emuIsend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle, void** request);
ncclResult_t emuIrecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles,
                      void** request);
ncclResult_t emuIflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
ncclResult_t emuTest(void* request, int* done, int* sizes);
ncclResult_t emuCloseSend(void* sendComm);
ncclResult_t emuCloseRecv(void* recvComm);
ncclResult_t emuCloseListen(void* listenComm);
ncclResult_t emuFinalize(void* ctx);

/* Reads the NIC list (PATHPROOF_NET_EMU_NICS_FILE or PATHPROOF_NET_EMU_NICS). 0, or -1 with one line in err naming
 * the source and the line or entry at fault. */
int emuNicsLoad(char* err, size_t errLen);
/* Logs, per NIC, whether NCCL_TOPO_FILE places it and which of its attributes NCCL will keep over the plugin's. */
void emuNicsCheckTopoFile(void);

/* CUDA driver, opened with dlopen on first use so that the plugin needs no CUDA to load or to move host memory. */
struct emuDevMr {
  void* ctx;         /* CUcontext the copies run in: the plugin's own for a cuMem buffer, else the buffer's */
  void* stream;      /* CUstream created non-blocking in ctx: never behind NCCL's kernels on the legacy stream */
  char* shadow;      /* page-locked host memory as large as the region: offset X of one stages offset X of the other */
  const void* base;  /* the registered device region */
  size_t size;
};
int emuCudaLoad(void);
/* Everything staging the device region [data, data + size) needs, made now (regMr). 0, or -1 with a warning. */
int emuCudaRegister(struct emuDevMr* m, void* data, size_t size);
void emuCudaDeregister(struct emuDevMr* m);
/* Copies bytes at devPtr (inside m's region) to its shadow (toDevice 0) or back, and waits for the copy. */
int emuCudaCopy(struct emuDevMr* m, const void* devPtr, size_t bytes, int toDevice);
/* Whether bytes at devPtr lie inside m's region (a shadow holds no more). */
static inline int emuCudaInside(const struct emuDevMr* m, const void* devPtr, size_t bytes) {
  const char* p = devPtr;
  const char* b = m->base;
  return p >= b && bytes <= m->size && (size_t)(p - b) <= m->size - bytes;
}
/* The shadow bytes of devPtr, inside m's region. */
static inline char* emuCudaShadow(struct emuDevMr* m, const void* devPtr) {
  return m->shadow + ((const char*)devPtr - (const char*)m->base);
}

#endif
