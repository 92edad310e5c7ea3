/*
 * Drives the built plugin the way NCCL 2.28 does (dlopen, dlsym "ncclProfiler_v5", init, task and kernel-channel
 * events in NCCL's order: the task event stops before its channels report, src/enqueue.cc:1307-1315 and
 * src/transport/profiler.cc:34-43@v2.28.9-1), then checks the lines it wrote. Run by build.sh --selftest.
 *   selftest LIB DIR
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "profiler.h"

static int failures;
#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "selftest: FAIL %s\n", what); failures++; } } while (0)

static char* slurp(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

int main(int argc, char** argv) {
  if (argc != 3) { fprintf(stderr, "usage: selftest LIB DIR\n"); return 2; }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "selftest: %s\n", dlerror()); return 2; }
  ncclProfiler_v5_t* p = dlsym(lib, "ncclProfiler_v5");
  CHECK(p != NULL, "exports ncclProfiler_v5");
  CHECK(dlsym(lib, "ncclProfiler_v4") == NULL, "exports no other version");
  if (!p) return 1;
  setenv("PATHPROOF_NCCL_PROFILER_DIR", argv[2], 1);

  /* A 4-rank communicator, rank 2: one AllReduce over 2 channels, kernel channels reported after the task stops. */
  void* ctx = NULL;
  int mask = 0;
  CHECK(p->init(&ctx, 0xabcdef0123456789ull, &mask, "pg\"0", 1, 4, 2, NULL) == ncclSuccess, "init");
  CHECK(mask & ncclProfileColl, "asks for collective events");
  CHECK(mask & ncclProfileKernelCh, "asks for kernel-channel events");
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.rank = 2;
  d.coll.seqNumber = 7;
  d.coll.func = "AllReduce";
  d.coll.count = 16777216;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2;
  d.coll.nWarps = 20;
  d.coll.algo = "RING";
  d.coll.proto = "SIMPLE";
  void* coll = NULL;
  p->startEvent(ctx, &coll, &d);
  CHECK(coll != NULL, "collective handle");
  p->stopEvent(coll);
  void* ch[2];
  for (int c = 0; c < 2; c++) {
    memset(&d, 0, sizeof d);
    d.type = ncclProfileKernelCh;
    d.parentObj = coll;
    d.kernelCh.channelId = (uint8_t)c;
    d.kernelCh.pTimer = 1000 + 10 * c;
    p->startEvent(ctx, &ch[c], &d);
    CHECK(ch[c] != NULL, "kernel-channel handle");
  }
  for (int c = 0; c < 2; c++) {
    ncclProfilerEventStateArgs_v5_t a;
    memset(&a, 0, sizeof a);
    a.kernelCh.pTimer = 5000 - 100 * c;
    p->recordEventState(ch[c], ncclProfilerKernelChStop, &a);
    p->stopEvent(ch[c]);
  }
  /* A p2p task (not ours) and a collective whose channels never report: written at finalize, marked incomplete. */
  memset(&d, 0, sizeof d);
  d.type = ncclProfileP2p;
  void* h = (void*)1;
  p->startEvent(ctx, &h, &d);
  CHECK(h == NULL, "p2p events are not recorded");
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.coll.seqNumber = 8;
  d.coll.func = "AllReduce";
  d.coll.count = 1;
  d.coll.datatype = "ncclUint32";
  d.coll.nChannels = 1;
  d.coll.nWarps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "LL";
  p->startEvent(ctx, &coll, &d);
  p->stopEvent(coll);
  p->finalize(ctx);

  char path[4096];
  snprintf(path, sizeof path, "%s/nccl-profiler-rank2-abcdef0123456789.jsonl", argv[2]);
  char* text = slurp(path);
  CHECK(text != NULL, "file written");
  if (text) {
    CHECK(strstr(text, "\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5") != NULL, "comm line");
    CHECK(strstr(text, "\"commName\":\"pg0\"") != NULL, "comm name without a quote");
    CHECK(strstr(text, "\"seq\":7,\"func\":\"AllReduce\",\"count\":16777216,\"datatype\":\"ncclFloat32\"") != NULL, "coll fields");
    CHECK(strstr(text, "\"algorithm\":\"RING\",\"protocol\":\"SIMPLE\",\"channels\":2,\"warps\":20") != NULL, "decision fields");
    CHECK(strstr(text, "\"startNs\":1000,\"endNs\":5000,\"clock\":\"gpu-globaltimer\",\"kernelChannels\":2,\"complete\":true") != NULL, "GPU span");
    CHECK(strstr(text, "\"seq\":8,") != NULL && strstr(text, "\"complete\":false") != NULL, "incomplete written at finalize");
    CHECK(strstr(text, "\"event\":\"finalize\",\"rank\":2,\"written\":3,\"lost\":0") != NULL, "finalize line");
  }

  /* The harness's switch: off writes the mask NCCL reads to 0, on restores it. */
  int (*enable)(int) = (int (*)(int))dlsym(lib, "pathproof_profiler_enable");
  CHECK(enable != NULL, "exports pathproof_profiler_enable");
  if (enable) {
    void* ctx2 = NULL;
    int m2 = -1;
    p->init(&ctx2, 0x2ull, &m2, "", 1, 2, 0, NULL);
    CHECK(enable(0) == 1 && m2 == 0, "off clears NCCL's mask");
    CHECK(enable(1) == 1 && (m2 & ncclProfileColl), "on restores it");
    enable(0);
    int m3 = -1;
    void* ctx3 = NULL;
    p->init(&ctx3, 0x3ull, &m3, "", 1, 2, 1, NULL);
    CHECK(m3 == 0, "a communicator made while off starts silent");
    enable(1);
    p->finalize(ctx2);
    p->finalize(ctx3);
  }

  /* API and group events get no handle: NCCL starts them whenever Coll is on. */
  memset(&d, 0, sizeof d);
  d.type = ncclProfileCollApi;
  h = (void*)1;
  ctx = NULL;
  p->init(&ctx, 0x1ull, &mask, "", 1, 1, 0, NULL);
  CHECK(!(mask & ncclProfileCollApi), "asks for no API events");
  p->startEvent(ctx, &h, &d);
  CHECK(h == NULL, "API events are not recorded");
  p->finalize(ctx);
  snprintf(path, sizeof path, "%s/nccl-profiler-rank0-0000000000000001.jsonl", argv[2]);
  text = slurp(path);
  CHECK(text != NULL && strstr(text, "\"nRanks\":1") != NULL && strstr(text, "\"written\":1,") != NULL,
        "a one-rank communicator: comm and finalize lines only");
  if (failures) return 1;
  printf("selftest: ok (%s)\n", argv[2]);
  return 0;
}
