// Can a second thread write device memory while the first waits for a kernel that waits for that write?
//
// The emu net plugin's proxy thread must land received bytes in device memory (a NIC claiming GPUDirect) while
// NCCL's kernel spins for them. In a PyTorch job the main thread meanwhile often waits for that kernel: `.cpu()` or
// `.item()` copy on the legacy default stream, which follows NCCL's stream. A real NIC writes over PCIe and needs no
// CUDA call; the plugin has only the driver. This probe makes that situation on one GPU without NCCL and reports, for
// each way of waiting (main thread) and each way of writing (helper thread), "ok" or "HANG at STEP".
//   waits:  legacy-memcpy    cudaMemcpy into pageable memory on the legacy stream (torch's .cpu())
//           legacy-async     cudaMemcpyAsync into page-locked memory on the legacy stream, cudaStreamSynchronize(0)
//           legacy-sync      cudaStreamSynchronize(0) with no copy (torch.cuda.synchronize())
//           event-sync       cudaEventSynchronize on the kernel's event (a work handle's wait())
//           stream-sync      cudaStreamSynchronize on the kernel's own stream (a plain C program)
//   writes: ce               cuMemcpyHtoDAsync from page-locked memory on a non-blocking stream made beforehand
//           ce-lazy          the same, the stream and the page-locked memory made only now
//           ce-query         as ce, completion polled with cuStreamQuery instead of cuStreamSynchronize
//           ce-pageable      as ce, from pageable memory
//           kernel           a copy kernel on a non-blocking stream made beforehand, reading mapped page-locked memory
//           ce-connections   as ce, with CUDA_DEVICE_MAX_CONNECTIONS=32
//           ctx2             as ce, from a second context of the same device (cuCtxCreate) made beforehand
//           ctx2-vmm         as ctx2, the device memory a cuMem (VMM) allocation as NCCL's buffers are
//           proc2            another process (started before CUDA), handed the cuMem allocation as a POSIX file
//                            descriptor over a Unix socket; it maps it and copies from its own page-locked memory
//
//   nvcc -O2 -arch=sm_90 staging-probe.cu -lcuda -o staging-probe && ./staging-probe [SECONDS [WAITS [WRITES]]]
// (WAITS, WRITES: comma-separated names; default all)
// Each case runs in a child process of its own (SECONDS each, default 3), so one hang does not stop the others.
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BYTES 704  // an LL receive of 352 bytes: DDP's first shape broadcast on 44 parameters

__global__ void spin(volatile unsigned long long* flag, int* out) {
  while (*flag != 1ull) {
  }
  *out = 1;
}

__global__ void copyKernel(char* dst, const char* src, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

static const char* waits[] = {"legacy-memcpy", "legacy-async", "legacy-sync", "event-sync", "stream-sync"};
static const char* writes[] = {"ce",     "ce-lazy", "ce-query", "ce-pageable",
                               "kernel", "ce-connections", "ctx2", "ctx2-vmm", "proc2"};

static int stepFd;
static void step(const char* s) {
  char b[32];
  snprintf(b, sizeof(b), "%-12s", s);  // fixed width: the parent reads the last one
  (void)!write(stepFd, b, 12);
}

struct helperArgs {
  const char* how;
  CUcontext ctx, ctx2;
  CUstream s;
  char* host;
  char* dev;
  int ok;
  int peer;  // proc2: the socket to the other process
};

static void* helper(void* p) {
  helperArgs* a = (helperArgs*)p;
  cuCtxSetCurrent(a->ctx2 ? a->ctx2 : a->ctx);
  usleep(300 * 1000);  // the main thread is waiting by now
  CUstream s = a->s;
  char* host = a->host;
  if (strcmp(a->how, "ce-lazy") == 0) {
    step("create");
    if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return NULL;
    step("alloc");
    if (cuMemHostAlloc((void**)&host, BYTES, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) return NULL;
    memset(host, 0, BYTES);
  }
  if (strcmp(a->how, "proc2") == 0) {
    step("enqueue");
    char go = 1;
    if (write(a->peer, &go, 1) != 1) return NULL;
    step("complete");
    if (read(a->peer, &go, 1) != 1 || go != 0) return NULL;
    step("written");
    a->ok = 1;
    return NULL;
  }
  unsigned long long one = 1;
  memcpy(host + BYTES - 8, &one, 8);
  step("enqueue");
  if (strcmp(a->how, "kernel") == 0) {
    copyKernel<<<1, 128, 0, (cudaStream_t)s>>>(a->dev, host, BYTES);
    if (cudaGetLastError() != cudaSuccess) return NULL;
  } else if (cuMemcpyHtoDAsync((CUdeviceptr)a->dev, host, BYTES, s) != CUDA_SUCCESS) {
    return NULL;
  }
  step("complete");
  if (strcmp(a->how, "ce-query") == 0) {
    CUresult r;
    while ((r = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY) usleep(100);
    if (r != CUDA_SUCCESS) return NULL;
  } else if (cuStreamSynchronize(s) != CUDA_SUCCESS) {
    return NULL;
  }
  step("written");
  a->ok = 1;
  return NULL;
}

// One int-sized descriptor beside the allocation's size, over a Unix socket.
struct fdMessage {
  struct msghdr m;
  struct iovec io;
  char ctl[CMSG_SPACE(sizeof(int))];
};

static void fdMessageInit(fdMessage* f, size_t* size) {
  memset(f, 0, sizeof(*f));
  f->io.iov_base = size;
  f->io.iov_len = sizeof(*size);
  f->m.msg_iov = &f->io;
  f->m.msg_iovlen = 1;
  f->m.msg_control = f->ctl;
  f->m.msg_controllen = sizeof(f->ctl);
}

static int sendFd(int sock, int fd, size_t size) {
  fdMessage f;
  fdMessageInit(&f, &size);
  struct cmsghdr* c = CMSG_FIRSTHDR(&f.m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &f.m, 0) == (ssize_t)sizeof(size) ? 0 : -1;
}

// proc2: receives the allocation's descriptor, maps it into its own context, and on each byte from the socket
// writes the flag from its own page-locked memory, answering 0 when the copy has completed.
static int otherProcess(int sock) {
  size_t size = 0;
  fdMessage f;
  fdMessageInit(&f, &size);
  if (recvmsg(sock, &f.m, 0) != (ssize_t)sizeof(size) || CMSG_FIRSTHDR(&f.m) == NULL) return 1;
  int fd;
  memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&f.m)), sizeof(int));
  cudaSetDevice(0);
  cudaFree(0);
  CUmemGenericAllocationHandle h;
  CUdeviceptr va;
  CUmemAccessDesc acc;
  memset(&acc, 0, sizeof(acc));
  acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  acc.location.id = 0;
  acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemImportFromShareableHandle(&h, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0 ||
      cuMemAddressReserve(&va, size, size, 0, 0) != 0 || cuMemMap(va, size, 0, h, 0) != 0 ||
      cuMemSetAccess(va, size, &acc, 1) != 0) {
    return 1;
  }
  CUstream s;
  char* host;
  if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != 0 || cuMemHostAlloc((void**)&host, BYTES, 0) != 0) return 1;
  memset(host, 0, BYTES);
  unsigned long long one = 1;
  memcpy(host + BYTES - 8, &one, 8);
  char go;
  if (read(sock, &go, 1) != 1) return 1;
  char r = cuMemcpyHtoDAsync(va, host, BYTES, s) == 0 && cuStreamSynchronize(s) == 0 ? 0 : 1;
  return write(sock, &r, 1) == 1 ? 0 : 1;
}

static int runCase(const char* wait, const char* how) {
  if (strcmp(how, "ce-connections") == 0) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 1);
  int peer = -1;
  if (strcmp(how, "proc2") == 0) {  // before this process touches CUDA: a forked CUDA process cannot use it
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 3;
    if (fork() == 0) {
      close(sv[0]);
      close(stepFd);
      _exit(otherProcess(sv[1]));
    }
    close(sv[1]);
    peer = sv[0];
  }
  step("init");
  cudaSetDevice(0);
  cudaFree(0);
  helperArgs a = {how, NULL, NULL, NULL, NULL, NULL, 0, peer};
  cuCtxGetCurrent(&a.ctx);
  int* out;
  int vmmFd = -1;
  if (strcmp(how, "ctx2-vmm") == 0 || strcmp(how, "proc2") == 0) {
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof(acc));
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (cuMemCreate(&h, gran, &prop, 0) != CUDA_SUCCESS || cuMemAddressReserve(&va, gran, gran, 0, 0) != CUDA_SUCCESS ||
        cuMemMap(va, gran, 0, h, 0) != CUDA_SUCCESS || cuMemSetAccess(va, gran, &acc, 1) != CUDA_SUCCESS) {
      return 3;
    }
    a.dev = (char*)va;
    if (a.peer >= 0) {
      CUresult e = cuMemExportToShareableHandle(&vmmFd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      if (e != CUDA_SUCCESS) return 3;
      if (sendFd(a.peer, vmmFd, gran) != 0) return 3;
    }
  } else {
    cudaMalloc((void**)&a.dev, BYTES);
  }
  cudaMalloc((void**)&out, sizeof(int));
  cudaMemset(a.dev, 0, BYTES);
  cudaMemset(out, 0, sizeof(int));
  if (strncmp(how, "ctx2", 4) == 0) {
    CUdevice d;
    cuDeviceGet(&d, 0);
    if (cuCtxCreate(&a.ctx2, NULL, 0, d) != CUDA_SUCCESS) return 3;  // makes it current: streams below are its own
  }
  if (strcmp(how, "ce-lazy") != 0) {
    cuStreamCreate(&a.s, CU_STREAM_NON_BLOCKING);
    if (strcmp(how, "ce-pageable") == 0) {
      a.host = (char*)calloc(1, BYTES);
    } else {
      cuMemHostAlloc((void**)&a.host, BYTES, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
      memset(a.host, 0, BYTES);
    }
  }
  if (a.ctx2) cuCtxSetCurrent(a.ctx);
  int* pinnedOut;
  cudaMallocHost((void**)&pinnedOut, sizeof(int));
  cudaDeviceSynchronize();
  cudaStream_t ks;
  cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking);
  spin<<<1, 1, 0, ks>>>((volatile unsigned long long*)(a.dev + BYTES - 8), out);
  cudaEvent_t done;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  cudaEventRecord(done, ks);
  pthread_t t;
  pthread_create(&t, NULL, helper, &a);
  int got = 0;
  if (strcmp(wait, "stream-sync") == 0) {
    cudaStreamSynchronize(ks);
  } else if (strcmp(wait, "event-sync") == 0) {
    cudaEventSynchronize(done);
  } else {
    cudaStreamWaitEvent(0, done, 0);  // the legacy stream follows the kernel, as torch's current stream follows NCCL's
    if (strcmp(wait, "legacy-memcpy") == 0) cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost);
    if (strcmp(wait, "legacy-async") == 0) cudaMemcpyAsync(pinnedOut, out, sizeof(int), cudaMemcpyDeviceToHost, 0);
    cudaStreamSynchronize(0);
  }
  cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost);
  pthread_join(t, NULL);
  return a.ok && got == 1 ? 0 : 1;
}

static int listed(const char* list, const char* name) {
  size_t n = strlen(name);
  for (const char* p = list; (p = strstr(p, name)) != NULL; p += n) {
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  int limit = argc > 1 ? atoi(argv[1]) : 3;
  int hangs = 0;
  for (const char* w : waits) {
    if (argc > 2 && !listed(argv[2], w)) continue;
    for (const char* h : writes) {
      if (argc > 3 && !listed(argv[3], h)) continue;
      int fds[2];
      if (pipe(fds) != 0) return 2;
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        stepFd = fds[1];
        alarm(limit);
        _exit(runCase(w, h));
      }
      close(fds[1]);
      char steps[4096];
      ssize_t n, len = 0;
      while ((n = read(fds[0], steps + len, sizeof(steps) - 1 - len)) > 0) len += n;
      close(fds[0]);
      char last[13] = "none";
      if (len >= 12) {
        memcpy(last, steps + len - 12, 12);
        last[12] = '\0';
      }
      int st = 0;
      waitpid(pid, &st, 0);
      int hung = WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
      hangs += hung;
      printf("%-14s %-15s %s%s\n", w, h,
             hung ? "HANG after " : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "error, last step ",
             hung || !(WIFEXITED(st) && WEXITSTATUS(st) == 0) ? last : "");
      fflush(stdout);
    }
  }
  return hangs;
}
