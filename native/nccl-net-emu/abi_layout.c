/*
 * Prints the size and field offsets of the ncclNet structures of every version the plugin exports (v8, v10, v11,
 * v12). build.sh --abi-check compiles it twice, against net_emu_api.h and against NCCL's own ext-net headers of one
 * tag (net.h, -DNCCL_HEADER), with -DHAVE_V<N> for each net_v<N>.h that tag has, and requires equal output.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef NCCL_HEADER
#include "net.h"
#else
#include "net_emu_api.h"
#endif

#define F(T, f) printf("%s.%s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T*)0)->f))
#define S(T) printf("%s %zu\n", #T, sizeof(T))

/* The functions every version from v8 on has, in this order at the start of the table. */
#define NET_COMMON(T)                                                                                                 \
  S(T); F(T, name); F(T, init); F(T, devices); F(T, getProperties); F(T, listen); F(T, connect); F(T, accept);        \
  F(T, regMr); F(T, regMrDmaBuf); F(T, deregMr); F(T, isend); F(T, irecv); F(T, iflush); F(T, test);                  \
  F(T, closeSend); F(T, closeRecv); F(T, closeListen); F(T, getDeviceMr); F(T, irecvConsumed)
/* The properties every version from v8 on has (their offsets differ: v9 put forceFlush after regIsGlobal). */
#define PROPS_COMMON(T)                                                                                               \
  S(T); F(T, name); F(T, pciPath); F(T, guid); F(T, ptrSupport); F(T, regIsGlobal); F(T, speed); F(T, port);          \
  F(T, latency); F(T, maxComms); F(T, maxRecvs); F(T, netDeviceType); F(T, netDeviceVersion)
#define PROPS_V10(T)                                                                                                  \
  PROPS_COMMON(T); F(T, forceFlush); F(T, vProps); F(T, vProps.ndevs); F(T, vProps.devs); F(T, maxP2pBytes);         \
  F(T, maxCollBytes)

int main(void) {
  /* ncclInvalidUsage (5) is missing from ext-net/example/nccl/err.h@v2.21.5-1; NCCL's own nccl.h has it
   * (src/nccl.h.in:42@v2.21.5-1), and NCCL only compares init's result with ncclSuccess (src/net.cc:527@v2.21.5-1). */
  printf("handle max %d, max requests %d, ptr %d %d %d, result %d %d %d %d %d, device types %d %d\n",
         NCCL_NET_HANDLE_MAXSIZE, NCCL_NET_MAX_REQUESTS, NCCL_PTR_HOST, NCCL_PTR_CUDA, NCCL_PTR_DMABUF, ncclSuccess,
         ncclSystemError, ncclInternalError, ncclInvalidArgument, ncclRemoteError, NCCL_NET_DEVICE_HOST,
         NCCL_NET_DEVICE_INVALID_VERSION);
#ifdef HAVE_V8
  S(ncclNetDeviceHandle_v8_t);
  F(ncclNetDeviceHandle_v8_t, netDeviceType); F(ncclNetDeviceHandle_v8_t, netDeviceVersion);
  F(ncclNetDeviceHandle_v8_t, handle); F(ncclNetDeviceHandle_v8_t, size);
  F(ncclNetDeviceHandle_v8_t, needsProxyProgress);
  NET_COMMON(ncclNet_v8_t);
  PROPS_COMMON(ncclNetProperties_v8_t);
#endif
#ifdef HAVE_V10
  printf("traffic class undef %d\n", NCCL_NET_TRAFFIC_CLASS_UNDEF);
  S(ncclNetDeviceHandle_v10_t);
  NET_COMMON(ncclNet_v10_t); F(ncclNet_v10_t, makeVDevice);
  PROPS_V10(ncclNetProperties_v10_t);
  S(ncclNetVDeviceProps_v10_t); S(ncclNetCommConfig_v10_t); F(ncclNetCommConfig_v10_t, trafficClass);
#endif
#ifdef HAVE_V11
  S(ncclNetDeviceHandle_v11_t);
  NET_COMMON(ncclNet_v11_t); F(ncclNet_v11_t, makeVDevice); F(ncclNet_v11_t, finalize); F(ncclNet_v11_t, setNetAttr);
  PROPS_V10(ncclNetProperties_v11_t); F(ncclNetProperties_v11_t, maxMultiRequestSize);
  S(ncclNetVDeviceProps_v11_t); S(ncclNetCommConfig_v11_t); F(ncclNetCommConfig_v11_t, trafficClass);
  S(ncclNetAttr_v11_t); F(ncclNetAttr_v11_t, sendCommAttr); F(ncclNetAttr_v11_t, recvCommAttr);
  F(ncclNetAttr_v11_t, op); F(ncclNetAttr_v11_t, algo); F(ncclNetAttr_v11_t, proto);
#endif
#ifdef HAVE_V12
  printf("net id undef %d\n", NCCL_NET_ID_UNDEF);
  S(ncclNetDeviceHandle_v12_t);
  NET_COMMON(ncclNet_v12_t); F(ncclNet_v12_t, makeVDevice); F(ncclNet_v12_t, finalize); F(ncclNet_v12_t, setNetAttr);
  PROPS_V10(ncclNetProperties_v12_t); F(ncclNetProperties_v12_t, maxMultiRequestSize);
  F(ncclNetProperties_v12_t, railId); F(ncclNetProperties_v12_t, planeId);
  S(ncclNetVDeviceProps_v12_t); S(ncclNetCommConfig_v12_t); F(ncclNetCommConfig_v12_t, trafficClass);
  S(ncclNetAttr_v12_t); F(ncclNetAttr_v12_t, sendCommAttr); F(ncclNetAttr_v12_t, recvCommAttr);
  F(ncclNetAttr_v12_t, op); F(ncclNetAttr_v12_t, algo); F(ncclNetAttr_v12_t, proto);
#endif
  return 0;
}
