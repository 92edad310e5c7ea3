/*
 * ncclNetPlugin_v8, _v10 and _v12: the emu plugin for the NCCLs whose loader looks for another ncclNet version before
 * v11 (README.md, "NCCL versions"): 2.21.5 looks for v8 first, 2.26.2 and 2.27.x for v10, 2.30.7 for v12. Each table is
 * a thin adapter over the v11 implementation in net_emu.c. It does the inverse of what NCCL itself does to drive an
 * older plugin through its own newer interface (src/plugin/net/net_v8.cc and net_v10.cc@v2.28.9-1; for v12,
 * src/plugin/net/net_v11.cc@v2.30.7-1): properties field by field, int sizes to size_t and back, the context that v8
 * and v10 do not pass, the comm config that v10 passes to connect instead of init.
 */
#include <pthread.h>
#include <stddef.h>

#include "net_emu.h"

#define EMU_EXPORT __attribute__((visibility("default")))

/* v8 and v10 pass no context: NCCL up to 2.27 initialises the plugin once per process, not once per communicator
 * (src/net.cc:523-534@v2.21.5-1, src/plugin/net.cc:175-186@v2.26.2-1, src/plugin/net.cc:139-146@v2.27.5-1). The
 * first context made is kept for the process; listen and connect do not read it. */
static pthread_mutex_t ctxLock = PTHREAD_MUTEX_INITIALIZER;
static void* processCtx;

static ncclResult_t initProcess(int api, ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  ncclNetCommConfig_v11_t config = {.trafficClass = NCCL_NET_TRAFFIC_CLASS_UNDEF};
  void* ctx = NULL;
  ncclResult_t r = emuInitAs(api, &ctx, 0, &config, logFn, profFn);
  if (r != ncclSuccess) return r;
  pthread_mutex_lock(&ctxLock);
  int keep = processCtx == NULL;
  if (keep) processCtx = ctx;
  pthread_mutex_unlock(&ctxLock);
  if (!keep) emuFinalize(ctx);
  return ncclSuccess;
}

static ncclResult_t listenNoCtx(int dev, void* handle, void** listenComm) {
  return emuListenFn(processCtx, dev, handle, listenComm);
}

/* ---- ncclNet_v8 (NCCL 2.21.5; 2.22-2.25 fall back to it) ---- */

static ncclResult_t v8Init(ncclDebugLogger_t logFn) {
  ncclResult_t r = initProcess(8, logFn, NULL);
  if (r != ncclSuccess) return r;
  /* v8's properties have no forceFlush (ext-net/example/nccl/net_v8.h@v2.21.5-1). NCCL then flushes GDR receives
   * only below sm_90 or with NCCL_NET_FORCE_FLUSH=1 (src/graph/paths.cc:423-433@v2.21.5-1). */
  static int warned;
  pthread_mutex_lock(&ctxLock);
  int warn = !warned;
  warned = 1;
  pthread_mutex_unlock(&ctxLock);
  for (int i = 0; warn && i < emuNicCount; i++) {
    if (emuNics[i].forceFlush) {
      EMU_WARN("NIC %s: forceflush=1 does not reach NCCL through ncclNet_v8 (no forceFlush property before v9); "
               "set NCCL_NET_FORCE_FLUSH=1 for the same flush", emuNics[i].name);
    }
  }
  return ncclSuccess;
}

/* Fields v8 lacks are dropped: forceFlush (warned at init); vProps (each emu NIC is one physical device, what NCCL
 * assumes of a v8 NIC: net_v8.cc:39-40@v2.28.9-1); maxP2pBytes, maxCollBytes (v8 sizes are int); maxMultiRequestSize
 * (1, NCCL's value for v8: net_v8.cc:43@v2.28.9-1). v8 has no field that v11 lacks. */
static ncclResult_t v8GetProperties(int dev, ncclNetProperties_v8_t* props) {
  ncclNetProperties_v11_t p;
  ncclResult_t r = emuGetProperties(dev, &p);
  if (r != ncclSuccess) return r;
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  return ncclSuccess;
}

static ncclResult_t v8Connect(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v8_t** sendDevComm) {
  return emuConnect(processCtx, dev, handle, sendComm, sendDevComm);
}

static ncclResult_t v8Isend(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
  if (size < 0) {
    *request = NULL;
    EMU_WARN("isend of %d bytes", size);
    return ncclInternalError;
  }
  return emuIsend(sendComm, data, (size_t)size, tag, mhandle, NULL, request);
}

static ncclResult_t v8Irecv(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                            void** request) {
  size_t s[EMU_MAX_RECVS];
  *request = NULL;
  if (n < 1 || n > EMU_MAX_RECVS) {
    EMU_WARN("irecv of %d buffers; a NIC takes at most %d", n, EMU_MAX_RECVS);
    return ncclInternalError;
  }
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0) {
      EMU_WARN("irecv buffer %d of %d bytes", i, sizes[i]);
      return ncclInternalError;
    }
    s[i] = (size_t)sizes[i];
  }
  return emuIrecv(recvComm, n, data, s, tags, mhandles, NULL, request);
}

EMU_EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
  .name = "emu",
  .init = v8Init,
  .devices = emuDevices,
  .getProperties = v8GetProperties,
  .listen = listenNoCtx,
  .connect = v8Connect,
  .accept = emuAccept,
  .regMr = emuRegMr,
  .regMrDmaBuf = emuRegMrDmaBuf,
  .deregMr = emuDeregMr,
  .isend = v8Isend,
  .irecv = v8Irecv,
  .iflush = emuIflush,
  .test = emuTest,
  .closeSend = emuCloseSend,
  .closeRecv = emuCloseRecv,
  .closeListen = emuCloseListen,
  .getDeviceMr = NULL,
  .irecvConsumed = NULL,
};

/* ---- ncclNet_v10 (NCCL 2.26.2, 2.27.3, 2.27.5) ---- */

static ncclResult_t v10Init(ncclDebugLogger_t logFn, ncclProfilerCallback_t profFn) {
  return initProcess(10, logFn, profFn);
}

/* v10 lacks only maxMultiRequestSize (1 here, which is what NCCL assumes of a v10 plugin: net_v10.cc:44@v2.28.9-1). */
static ncclResult_t v10GetProperties(int dev, ncclNetProperties_v10_t* props) {
  ncclNetProperties_v11_t p;
  ncclResult_t r = emuGetProperties(dev, &p);
  if (r != ncclSuccess) return r;
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->forceFlush = p.forceFlush;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  props->vProps.ndevs = p.vProps.ndevs;
  for (int i = 0; i < p.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V10; i++) {
    props->vProps.devs[i] = p.vProps.devs[i];
  }
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  return ncclSuccess;
}

/* v10 gives the comm config (a traffic class) to each connect; v11 gives it to init; neither is emulated. */
static ncclResult_t v10Connect(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                               ncclNetDeviceHandle_v10_t** sendDevComm) {
  (void)config;
  return emuConnect(processCtx, dev, handle, sendComm, sendDevComm);
}

EMU_EXPORT const ncclNet_v10_t ncclNetPlugin_v10 = {
  .name = "emu",
  .init = v10Init,
  .devices = emuDevices,
  .getProperties = v10GetProperties,
  .listen = listenNoCtx,
  .connect = v10Connect,
  .accept = emuAccept,
  .regMr = emuRegMr,
  .regMrDmaBuf = emuRegMrDmaBuf,
  .deregMr = emuDeregMr,
  .isend = emuIsend,
  .irecv = emuIrecv,
  .iflush = emuIflush,
  .test = emuTest,
  .closeSend = emuCloseSend,
  .closeRecv = emuCloseRecv,
  .closeListen = emuCloseListen,
  .getDeviceMr = NULL,
  .irecvConsumed = NULL,
  .makeVDevice = NULL,
};

/* ---- ncclNet_v12 (NCCL 2.30.7) ---- */

static ncclResult_t v12Init(void** ctx, uint64_t commId, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t logFn,
                            ncclProfilerCallback_t profFn) {
  ncclNetCommConfig_v11_t c = {.trafficClass = config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF};
  return emuInitAs(12, ctx, commId, &c, logFn, profFn);
}

/* Every v11 field, plus railId and planeId: NCCL_NET_ID_UNDEF, what NCCL's IB transport reports for a NIC the user
 * gave no rail or plane (src/transport/net_ib/init.cc:436-437,567-568@v2.30.7-1) and what NCCL sets for a v11 plugin
 * (src/plugin/net/net_v11.cc:39-40@v2.30.7-1). A topology file's <net rail=… plane=…> still sets them
 * (src/graph/topo.cc:426-430@v2.30.7-1). */
static ncclResult_t v12GetProperties(int dev, ncclNetProperties_v12_t* props) {
  ncclNetProperties_v11_t p;
  ncclResult_t r = emuGetProperties(dev, &p);
  if (r != ncclSuccess) return r;
  props->name = p.name;
  props->pciPath = p.pciPath;
  props->guid = p.guid;
  props->ptrSupport = p.ptrSupport;
  props->regIsGlobal = p.regIsGlobal;
  props->forceFlush = p.forceFlush;
  props->speed = p.speed;
  props->port = p.port;
  props->latency = p.latency;
  props->maxComms = p.maxComms;
  props->maxRecvs = p.maxRecvs;
  props->netDeviceType = p.netDeviceType;
  props->netDeviceVersion = p.netDeviceVersion;
  props->vProps.ndevs = p.vProps.ndevs;
  for (int i = 0; i < p.vProps.ndevs && i < NCCL_NET_MAX_DEVS_PER_NIC_V12; i++) {
    props->vProps.devs[i] = p.vProps.devs[i];
  }
  props->maxP2pBytes = p.maxP2pBytes;
  props->maxCollBytes = p.maxCollBytes;
  props->maxMultiRequestSize = p.maxMultiRequestSize;
  props->railId = NCCL_NET_ID_UNDEF;
  props->planeId = NCCL_NET_ID_UNDEF;
  return ncclSuccess;
}

EMU_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {
  .name = "emu",
  .init = v12Init,
  .devices = emuDevices,
  .getProperties = v12GetProperties,
  .listen = emuListenFn,
  .connect = emuConnect,
  .accept = emuAccept,
  .regMr = emuRegMr,
  .regMrDmaBuf = emuRegMrDmaBuf,
  .deregMr = emuDeregMr,
  .isend = emuIsend,
  .irecv = emuIrecv,
  .iflush = emuIflush,
  .test = emuTest,
  .closeSend = emuCloseSend,
  .closeRecv = emuCloseRecv,
  .closeListen = emuCloseListen,
  .getDeviceMr = NULL,
  .irecvConsumed = NULL,
  .makeVDevice = NULL,
  .finalize = emuFinalize,
  .setNetAttr = NULL,
};
