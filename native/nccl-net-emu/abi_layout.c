/*
 * Prints the size and field offsets of the ncclNet_v11 structures. build.sh --abi-check compiles it twice, against
 * net_emu_api.h and against NCCL's own ext-net/example/nccl/net.h (-DNCCL_HEADER), and requires equal output.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef NCCL_HEADER
#include "net.h"
#else
#include "net_emu_api.h"
#endif

#define F(T, f) printf("%s.%s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T*)0)->f))

int main(void) {
  printf("ncclNet_v11_t %zu\nncclNetProperties_v11_t %zu\nncclNetDeviceHandle_v11_t %zu\n", sizeof(ncclNet_v11_t),
         sizeof(ncclNetProperties_v11_t), sizeof(ncclNetDeviceHandle_v11_t));
  printf("handle max %d, max requests %d, ptr %d %d %d, result %d %d %d\n", NCCL_NET_HANDLE_MAXSIZE,
         NCCL_NET_MAX_REQUESTS, NCCL_PTR_HOST, NCCL_PTR_CUDA, NCCL_PTR_DMABUF, ncclSystemError, ncclInternalError,
         ncclInvalidUsage);
  F(ncclNet_v11_t, name); F(ncclNet_v11_t, init); F(ncclNet_v11_t, devices); F(ncclNet_v11_t, getProperties);
  F(ncclNet_v11_t, listen); F(ncclNet_v11_t, connect); F(ncclNet_v11_t, accept); F(ncclNet_v11_t, regMr);
  F(ncclNet_v11_t, regMrDmaBuf); F(ncclNet_v11_t, deregMr); F(ncclNet_v11_t, isend); F(ncclNet_v11_t, irecv);
  F(ncclNet_v11_t, iflush); F(ncclNet_v11_t, test); F(ncclNet_v11_t, closeSend); F(ncclNet_v11_t, closeRecv);
  F(ncclNet_v11_t, closeListen); F(ncclNet_v11_t, getDeviceMr); F(ncclNet_v11_t, irecvConsumed);
  F(ncclNet_v11_t, makeVDevice); F(ncclNet_v11_t, finalize); F(ncclNet_v11_t, setNetAttr);
  F(ncclNetProperties_v11_t, name); F(ncclNetProperties_v11_t, pciPath); F(ncclNetProperties_v11_t, guid);
  F(ncclNetProperties_v11_t, ptrSupport); F(ncclNetProperties_v11_t, regIsGlobal);
  F(ncclNetProperties_v11_t, forceFlush); F(ncclNetProperties_v11_t, speed); F(ncclNetProperties_v11_t, port);
  F(ncclNetProperties_v11_t, latency); F(ncclNetProperties_v11_t, maxComms); F(ncclNetProperties_v11_t, maxRecvs);
  F(ncclNetProperties_v11_t, netDeviceType); F(ncclNetProperties_v11_t, netDeviceVersion);
  F(ncclNetProperties_v11_t, vProps); F(ncclNetProperties_v11_t, maxP2pBytes);
  F(ncclNetProperties_v11_t, maxCollBytes); F(ncclNetProperties_v11_t, maxMultiRequestSize);
  return 0;
}
