/*
 * pathproof's emu net plugin: NCCL sees the NICs of an emulated node (name, PCI place, speed, latency, GPUDirect) and
 * its inter-node bytes travel over loopback TCP between the rank processes of one machine.
 *
 * NCCL loads it through NCCL_NET_PLUGIN=emu (libnccl-net-emu.so on the library path) or NCCL_NET_PLUGIN=/abs/path/
 * libnccl-net-emu.so (src/plugin/plugin_open.cc:70-100@v2.28.9-1) and looks up ncclNetPlugin_v11, the newest ncclNet
 * version 2.28.9 loads (src/plugin/net.cc:39,97-100@v2.28.9-1). This file implements that version; net_emu_compat.c
 * exports v8, v10 and v12 over it for the NCCLs whose loader looks for those first (README.md, "NCCL versions").
 * NCCL_NET=emu makes NCCL refuse to fall back to its own transports when this plugin cannot start
 * (src/plugin/net.cc:359-360,378-380@v2.28.9-1; init.cc:1706@v2.28.9-1).
 *
 * Wire: one TCP connection per sendComm/recvComm pair. A connecting side sends a hello (its NIC and node, for the
 * log); every isend then goes as a 16-byte header (magic, tag, size) and the payload. Sends and receives match in the
 * order they were posted; within a grouped receive a message goes to the first unfilled buffer of its tag, as NCCL's
 * API asks. Everything is non-blocking and advanced by test(), which NCCL's proxy thread calls.
 *
 * Device buffers (NICs claiming GPUDirect) are staged through a page-locked shadow of each registered region, in a
 * CUDA context of the plugin's own (net_emu_cuda.c says why): device -> host at isend (NCCL posts a send
 * only when its bytes are in the buffer), host -> device before a receive reports done. iflush therefore has nothing
 * left to make visible and completes at once.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net_emu.h"

#define EMU_EXPORT __attribute__((visibility("default")))
#define EMU_MAGIC 0x4e554d45u           /* "EMUN" */
#define EMU_POOL (NCCL_NET_MAX_REQUESTS * EMU_MAX_RECVS + NCCL_NET_MAX_REQUESTS)
#define EMU_CHUNK (4u << 20)

ncclDebugLogger_t emuLogger;

void emuLog(ncclDebugLogLevel level, unsigned long flags, const char* fn, int line, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (emuLogger) {
    emuLogger(level, flags, fn, line, "%s", msg);
  } else if (level == NCCL_LOG_WARN) {
    fprintf(stderr, "%s\n", msg);
  }
}

struct emuHandle {
  uint32_t magic;
  uint16_t port;            /* network order, on 127.0.0.1 */
  uint16_t pad;
  int32_t dev;
  char nic[EMU_NAME_LEN - 16];
  char node[48];
};
_Static_assert(sizeof(struct emuHandle) <= NCCL_NET_HANDLE_MAXSIZE, "handle too large");

struct emuHello {
  uint32_t magic;
  int32_t dev;
  char nic[EMU_NAME_LEN - 16];
  char node[48];
};

struct emuWire {
  uint32_t magic;
  int32_t tag;
  uint64_t size;
};

struct emuMr {
  int type;
  struct emuDevMr dev;      /* a device buffer's staging: context, stream, page-locked shadow */
};

enum { EMU_SEND = 1, EMU_RECV, EMU_FLUSH };

struct emuComm;

struct emuReq {
  int used, kind, done;
  struct emuComm* comm;
  /* send */
  const char* src;
  size_t size, off, hdrOff;
  struct emuWire hdr;
  /* receive: up to EMU_MAX_RECVS grouped buffers */
  int n;
  void* data[EMU_MAX_RECVS];
  size_t cap[EMU_MAX_RECVS], got[EMU_MAX_RECVS];
  int tags[EMU_MAX_RECVS], filled[EMU_MAX_RECVS];
  struct emuMr* mr[EMU_MAX_RECVS];
};

struct emuComm {
  int fd, dev, isSend, failed;
  char peer[128];
  struct emuReq pool[EMU_POOL];
  struct emuReq* fifo[EMU_POOL];  /* sends or receives in flight, in post order */
  int head, count;
  /* receive side: the message being read */
  struct emuWire hdr;
  size_t hdrOff, payOff;
  int slot;
  char* dst;
  uint64_t msgs, bytes, staged, flushes;
};

struct emuListen {
  int fd, dev;
};

static pthread_mutex_t initLock = PTHREAD_MUTEX_INITIALIZER;
static int nicsLoaded;

static const char* nodeName(void) {
  static char host[48];
  const char* id = getenv("NCCL_HOSTID");
  if (id && id[0]) return id;
  if (host[0] == '\0' && gethostname(host, sizeof(host) - 1) != 0) strcpy(host, "?");
  return host;
}

ncclResult_t emuInitAs(int api, void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logFn,
                       ncclProfilerCallback_t profFn) {
  (void)config;
  (void)profFn;
  emuLogger = logFn;
  pthread_mutex_lock(&initLock);
  if (!nicsLoaded) {
    char err[512];
    if (emuNicsLoad(err, sizeof(err)) != 0) {
      pthread_mutex_unlock(&initLock);
      EMU_WARN("%s", err);
      return ncclInvalidUsage;
    }
    const char* src = getenv("PATHPROOF_NET_EMU_NICS_FILE");
    EMU_INFO(NCCL_INIT | NCCL_NET, "node %s: %d emulated NICs from %s; bytes go over loopback TCP, timings are not "
             "physical", nodeName(), emuNicCount, src && src[0] ? src : "PATHPROOF_NET_EMU_NICS");
    for (int i = 0; i < emuNicCount; i++) {
      const struct emuNic* n = &emuNics[i];
      EMU_INFO(NCCL_INIT | NCCL_NET, "NIC %d %s pci %s speed %d Mb/s latency %g us GPUDirect %s port %d guid 0x%llx "
               "maxComms %d maxRecvs %d", i, n->name, n->pciPath[0] ? n->pciPath : "(none)", n->speed, n->latency,
               n->gdr ? "claimed" : "not claimed", n->port, (unsigned long long)n->guid, n->maxComms, n->maxRecvs);
    }
    emuNicsCheckTopoFile();
    nicsLoaded = 1;
  }
  /* Once per API version (one in a process that NCCL drives): NCCL 2.21.5 logs no "Loaded net plugin" line for v8. */
  static unsigned apisLogged;
  int logApi = api >= 0 && api < 32 && !(apisLogged & (1u << api));
  if (logApi) apisLogged |= 1u << api;
  pthread_mutex_unlock(&initLock);
  if (logApi) EMU_INFO(NCCL_INIT | NCCL_NET, "NCCL drives the plugin through ncclNetPlugin_v%d", api);
  uint64_t* c = malloc(sizeof(uint64_t));
  if (c == NULL) return ncclSystemError;
  *c = commId;
  *ctx = c;
  return ncclSuccess;
}

static ncclResult_t emuInit(void** ctx, uint64_t commId, ncclNetCommConfig_v11_t* config, ncclDebugLogger_t logFn,
                            ncclProfilerCallback_t profFn) {
  return emuInitAs(11, ctx, commId, config, logFn, profFn);
}

ncclResult_t emuDevices(int* ndev) {
  *ndev = emuNicCount;
  return ncclSuccess;
}

ncclResult_t emuGetProperties(int dev, ncclNetProperties_v11_t* props) {
  if (dev < 0 || dev >= emuNicCount) {
    EMU_WARN("getProperties: no NIC %d (have %d)", dev, emuNicCount);
    return ncclInvalidArgument;
  }
  struct emuNic* n = &emuNics[dev];
  memset(props, 0, sizeof(*props));
  props->name = n->name;
  props->pciPath = n->pciPath[0] ? n->pciPath : NULL;
  props->guid = n->guid;
  props->ptrSupport = NCCL_PTR_HOST | (n->gdr ? NCCL_PTR_CUDA : 0);
  props->regIsGlobal = n->regIsGlobal;
  props->forceFlush = n->forceFlush;
  props->speed = n->speed;
  props->port = n->port;
  props->latency = n->latency;
  props->maxComms = n->maxComms;
  props->maxRecvs = n->maxRecvs;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxMultiRequestSize = 1;
  return ncclSuccess;
}

static int setNonBlocking(int fd, int on) {
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

ncclResult_t emuListenFn(void* ctx, int dev, void* handle, void** listenComm) {
  (void)ctx;
  if (dev < 0 || dev >= emuNicCount) return ncclInvalidArgument;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr*)&a, sizeof(a)) || listen(fd, 256) ||
      getsockname(fd, (struct sockaddr*)&a, &len) || setNonBlocking(fd, 1)) {
    EMU_WARN("listen on 127.0.0.1 for NIC %s: %s", emuNics[dev].name, strerror(errno));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  struct emuHandle* h = handle;
  memset(h, 0, sizeof(*h));
  h->magic = EMU_MAGIC;
  h->port = a.sin_port;
  h->dev = dev;
  snprintf(h->nic, sizeof(h->nic), "%s", emuNics[dev].name);
  snprintf(h->node, sizeof(h->node), "%s", nodeName());
  struct emuListen* l = calloc(1, sizeof(*l));
  if (l == NULL) {
    close(fd);
    return ncclSystemError;
  }
  l->fd = fd;
  l->dev = dev;
  *listenComm = l;
  return ncclSuccess;
}

static struct emuComm* newComm(int fd, int dev, int isSend) {
  struct emuComm* c = calloc(1, sizeof(*c));
  if (c == NULL) return NULL;
  c->fd = fd;
  c->dev = dev;
  c->isSend = isSend;
  c->slot = -1;
  for (int i = 0; i < EMU_POOL; i++) c->pool[i].comm = c;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return c;
}

/* Loopback connect() completes from the listener's backlog, before the peer accepts: it does not wait on the peer. */
ncclResult_t emuConnect(void* ctx, int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v11_t** devComm) {
  (void)ctx;
  (void)devComm;
  *sendComm = NULL;
  struct emuHandle* h = handle;
  if (h->magic != EMU_MAGIC) {
    EMU_WARN("connect: the handle is not an emu plugin's (magic 0x%x)", h->magic);
    return ncclInternalError;
  }
  if (dev < 0 || dev >= emuNicCount) return ncclInvalidArgument;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = h->port, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct emuHello hello = {.magic = EMU_MAGIC, .dev = dev};
  snprintf(hello.nic, sizeof(hello.nic), "%s", emuNics[dev].name);
  snprintf(hello.node, sizeof(hello.node), "%s", nodeName());
  if (fd < 0 || connect(fd, (struct sockaddr*)&a, sizeof(a)) ||
      send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello) || setNonBlocking(fd, 1)) {
    EMU_WARN("connect NIC %s to %s of node %s (127.0.0.1:%d): %s", emuNics[dev].name, h->nic, h->node,
             ntohs(h->port), strerror(errno));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  struct emuComm* c = newComm(fd, dev, 1);
  if (c == NULL) {
    close(fd);
    return ncclSystemError;
  }
  snprintf(c->peer, sizeof(c->peer), "%s of node %.48s", h->nic, h->node);
  EMU_INFO(NCCL_NET, "send: NIC %s of node %s -> NIC %s", emuNics[dev].name, nodeName(), c->peer);
  *sendComm = c;
  return ncclSuccess;
}

ncclResult_t emuAccept(void* listenComm, void** recvComm, ncclNetDeviceHandle_v11_t** devComm) {
  (void)devComm;
  struct emuListen* l = listenComm;
  *recvComm = NULL;
  int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return ncclSuccess;
    EMU_WARN("accept on NIC %s: %s", emuNics[l->dev].name, strerror(errno));
    return ncclSystemError;
  }
  /* The connecting side sent its hello right after connect(): it is here or on its way. */
  struct emuHello hello;
  if (setNonBlocking(fd, 0) || recv(fd, &hello, sizeof(hello), MSG_WAITALL) != (ssize_t)sizeof(hello) ||
      hello.magic != EMU_MAGIC || setNonBlocking(fd, 1)) {
    EMU_WARN("accept on NIC %s: no valid hello from the connecting side", emuNics[l->dev].name);
    close(fd);
    return ncclSystemError;
  }
  hello.nic[sizeof(hello.nic) - 1] = hello.node[sizeof(hello.node) - 1] = '\0';
  struct emuComm* c = newComm(fd, l->dev, 0);
  if (c == NULL) {
    close(fd);
    return ncclSystemError;
  }
  snprintf(c->peer, sizeof(c->peer), "%s of node %s", hello.nic, hello.node);
  EMU_INFO(NCCL_NET, "recv: NIC %s of node %s <- NIC %s", emuNics[l->dev].name, nodeName(), c->peer);
  *recvComm = c;
  return ncclSuccess;
}

ncclResult_t emuRegMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  struct emuComm* c = comm;
  struct emuMr* mr = calloc(1, sizeof(*mr));
  if (mr == NULL) return ncclSystemError;
  mr->type = type;
  if (type == NCCL_PTR_CUDA && emuCudaRegister(&mr->dev, data, size) != 0) {
    EMU_WARN("regMr of device buffer %p (%zu bytes) on NIC %s: no CUDA to stage it", data, size, emuNics[c->dev].name);
    free(mr);
    return ncclSystemError;
  }
  *mhandle = mr;
  return ncclSuccess;
}

ncclResult_t emuRegMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle) {
  (void)offset;
  (void)fd;
  return emuRegMr(comm, data, size, type, mhandle);
}

ncclResult_t emuDeregMr(void* comm, void* mhandle) {
  (void)comm;
  struct emuMr* mr = mhandle;
  if (mr && mr->type == NCCL_PTR_CUDA) emuCudaDeregister(&mr->dev);
  free(mhandle);
  return ncclSuccess;
}

static struct emuReq* takeReq(struct emuComm* c, int kind) {
  for (int i = 0; i < EMU_POOL; i++) {
    struct emuReq* r = &c->pool[i];
    if (!r->used) {
      r->used = 1;
      r->kind = kind;
      r->done = 0;
      return r;
    }
  }
  return NULL;
}

static void pop(struct emuComm* c) {
  c->fifo[c->head]->done = 1;
  c->head = (c->head + 1) % EMU_POOL;
  c->count--;
}

/* Moves bytes until the socket would block or nothing is posted. -1 on a broken connection or a protocol error. */
static int progressSend(struct emuComm* c) {
  while (c->count > 0) {
    struct emuReq* r = c->fifo[c->head];
    const char* p;
    size_t left;
    if (r->hdrOff < sizeof(r->hdr)) {
      p = (const char*)&r->hdr + r->hdrOff;
      left = sizeof(r->hdr) - r->hdrOff;
    } else if (r->off < r->size) {
      p = r->src + r->off;
      left = r->size - r->off;
    } else {
      c->msgs++;
      c->bytes += r->size;
      pop(c);
      continue;
    }
    ssize_t n = send(c->fd, p, left < EMU_CHUNK ? left : EMU_CHUNK, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
      EMU_WARN("send to NIC %s: %s", c->peer, strerror(errno));
      return -1;
    }
    if (r->hdrOff < sizeof(r->hdr)) r->hdrOff += (size_t)n; else r->off += (size_t)n;
  }
  return 0;
}

static int finishSlot(struct emuComm* c, struct emuReq* r) {
  int s = c->slot;
  struct emuMr* mr = r->mr[s];
  if (mr && mr->type == NCCL_PTR_CUDA) {
    if (emuCudaCopy(&mr->dev, r->data[s], c->hdr.size, 1) != 0) return -1;
    c->staged += c->hdr.size;
  }
  r->filled[s] = 1;
  r->got[s] = c->hdr.size;
  c->msgs++;
  c->bytes += c->hdr.size;
  c->slot = -1;
  c->hdrOff = 0;
  return 0;
}

static int progressRecv(struct emuComm* c) {
  while (c->count > 0) {
    struct emuReq* r = c->fifo[c->head];
    int all = 1;
    for (int i = 0; i < r->n; i++) all &= r->filled[i];
    if (all) {
      pop(c);
      continue;
    }
    char* p;
    size_t left;
    if (c->slot < 0) {
      p = (char*)&c->hdr + c->hdrOff;
      left = sizeof(c->hdr) - c->hdrOff;
    } else {
      p = c->dst + c->payOff;
      left = c->hdr.size - c->payOff;
    }
    ssize_t n = recv(c->fd, p, left < EMU_CHUNK ? left : EMU_CHUNK, MSG_DONTWAIT);
    if (n == 0) {
      EMU_WARN("NIC %s closed the connection with a receive posted", c->peer);
      return -1;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
      EMU_WARN("recv from NIC %s: %s", c->peer, strerror(errno));
      return -1;
    }
    if (c->slot >= 0) {
      c->payOff += (size_t)n;
      if (c->payOff == c->hdr.size && finishSlot(c, r) != 0) return -1;
      continue;
    }
    c->hdrOff += (size_t)n;
    if (c->hdrOff < sizeof(c->hdr)) continue;
    if (c->hdr.magic != EMU_MAGIC) {
      EMU_WARN("stream from NIC %s out of step (header magic 0x%x)", c->peer, c->hdr.magic);
      return -1;
    }
    int s = -1;
    for (int i = 0; i < r->n && s < 0; i++) {
      if (!r->filled[i] && r->tags[i] == c->hdr.tag) s = i;
    }
    if (s < 0) {
      EMU_WARN("message with tag %d from NIC %s matches no buffer of the posted receive", c->hdr.tag, c->peer);
      return -1;
    }
    if (c->hdr.size > r->cap[s]) {
      EMU_WARN("message of %llu bytes from NIC %s is larger than the posted receive (%zu)",
               (unsigned long long)c->hdr.size, c->peer, r->cap[s]);
      return -1;
    }
    c->slot = s;
    c->payOff = 0;
    c->dst = r->data[s];
    if (r->mr[s] && r->mr[s]->type == NCCL_PTR_CUDA) c->dst = emuCudaShadow(&r->mr[s]->dev, r->data[s]);
    if (c->hdr.size == 0 && finishSlot(c, r) != 0) return -1;
  }
  return 0;
}

ncclResult_t emuIsend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle, void** request) {
  (void)phandle;
  struct emuComm* c = sendComm;
  *request = NULL;
  if (c->failed) return ncclSystemError;
  struct emuReq* r = takeReq(c, EMU_SEND);
  if (r == NULL) return ncclSuccess;  /* NCCL posts it again later */
  struct emuMr* mr = mhandle;
  r->src = data;
  if (mr && mr->type == NCCL_PTR_CUDA && size > 0) {
    if (emuCudaCopy(&mr->dev, data, size, 0) != 0) {
      r->used = 0;
      c->failed = 1;
      return ncclSystemError;
    }
    c->staged += size;
    r->src = emuCudaShadow(&mr->dev, data);
  }
  r->size = size;
  r->off = r->hdrOff = 0;
  r->hdr = (struct emuWire){.magic = EMU_MAGIC, .tag = tag, .size = size};
  c->fifo[(c->head + c->count) % EMU_POOL] = r;
  c->count++;
  if (progressSend(c) != 0) c->failed = 1;
  *request = r;
  return c->failed ? ncclSystemError : ncclSuccess;
}

ncclResult_t emuIrecv(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles, void** phandles,
                      void** request) {
  (void)phandles;
  struct emuComm* c = recvComm;
  *request = NULL;  /* also when NCCL marked it NCCL_NET_OPTIONAL_RECV_COMPLETION: every byte is delivered anyway */
  if (c->failed) return ncclSystemError;
  if (n < 1 || n > emuNics[c->dev].maxRecvs) {
    EMU_WARN("irecv of %d buffers on NIC %s, which takes 1..%d", n, emuNics[c->dev].name, emuNics[c->dev].maxRecvs);
    return ncclInternalError;
  }
  struct emuReq* r = takeReq(c, EMU_RECV);
  if (r == NULL) return ncclSuccess;
  r->n = n;
  for (int i = 0; i < n; i++) {
    struct emuMr* mr = mhandles ? mhandles[i] : NULL;
    /* a device buffer is received into its shadow first: it must lie inside the region registered */
    if (mr && mr->type == NCCL_PTR_CUDA && !emuCudaInside(&mr->dev, data[i], sizes[i])) {
      EMU_WARN("irecv of %zu bytes at %p on NIC %s: outside the registered device region %p + %zu", sizes[i],
               data[i], emuNics[c->dev].name, mr->dev.base, mr->dev.size);
      r->used = 0;
      return ncclInternalError;
    }
  }
  for (int i = 0; i < n; i++) {
    r->data[i] = data[i];
    r->cap[i] = sizes[i];
    r->tags[i] = tags[i];
    r->mr[i] = mhandles ? mhandles[i] : NULL;
    r->filled[i] = 0;
    r->got[i] = 0;
  }
  c->fifo[(c->head + c->count) % EMU_POOL] = r;
  c->count++;
  *request = r;
  return ncclSuccess;
}

/* Staged bytes were copied to the device and the copy waited for before the receive reported done. */
ncclResult_t emuIflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)n;
  (void)data;
  (void)sizes;
  (void)mhandles;
  struct emuComm* c = recvComm;
  struct emuReq* r = takeReq(c, EMU_FLUSH);
  *request = r;
  if (r == NULL) return ncclSuccess;
  r->done = 1;
  c->flushes++;
  return ncclSuccess;
}

ncclResult_t emuTest(void* request, int* done, int* sizes) {
  struct emuReq* r = request;
  struct emuComm* c = r->comm;
  *done = 0;
  if (!c->failed && r->kind != EMU_FLUSH && (c->isSend ? progressSend(c) : progressRecv(c)) != 0) c->failed = 1;
  if (c->failed) return ncclSystemError;
  if (!r->done) return ncclSuccess;
  *done = 1;
  if (sizes) {
    if (r->kind == EMU_SEND) sizes[0] = (int)r->size;
    if (r->kind == EMU_RECV) for (int i = 0; i < r->n; i++) sizes[i] = (int)r->got[i];
  }
  r->used = 0;
  return ncclSuccess;
}

static ncclResult_t closeComm(struct emuComm* c) {
  EMU_INFO(NCCL_NET, "%s NIC %s %s NIC %s closed: %llu messages, %llu bytes, %llu staged through host, %llu flushes",
           c->isSend ? "send" : "recv", emuNics[c->dev].name, c->isSend ? "->" : "<-", c->peer,
           (unsigned long long)c->msgs, (unsigned long long)c->bytes, (unsigned long long)c->staged,
           (unsigned long long)c->flushes);
  close(c->fd);
  free(c);
  return ncclSuccess;
}

ncclResult_t emuCloseSend(void* sendComm) { return closeComm(sendComm); }
ncclResult_t emuCloseRecv(void* recvComm) { return closeComm(recvComm); }

ncclResult_t emuCloseListen(void* listenComm) {
  struct emuListen* l = listenComm;
  close(l->fd);
  free(l);
  return ncclSuccess;
}

ncclResult_t emuFinalize(void* ctx) {
  free(ctx);
  return ncclSuccess;
}

/* No device offload, no NIC fusion (makeVDevice NULL: NCCL uses the physical NICs, src/graph/topo.cc:1374), no
 * per-connection attributes: those entries stay NULL, which NCCL checks before calling them. */
EMU_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
  .name = "emu",
  .init = emuInit,
  .devices = emuDevices,
  .getProperties = emuGetProperties,
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
