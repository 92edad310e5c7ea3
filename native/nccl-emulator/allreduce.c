/*
 * A plain NCCL program (no torch) for the emulator: for an NCCL whose symbols torch does not accept (the seed's
 * 2.22.3 under torch 2.11), each rank process runs AllReduce Sum float32 over the given sizes on CUDA device 0 and
 * checks the result. Rank 0 writes the ncclUniqueId to ID_FILE; the others wait for it.
 *
 *   allreduce RANK NRANKS ID_FILE BYTES [BYTES ...]
 *
 * Build (on the GPU node): gcc -O2 allreduce.c -I LIB_DIR -I $CUDA/include -L LIB_DIR -L $CUDA/lib64
 *                          -l:libnccl.so.2 -lcudart -o allreduce
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "rank %d: %s failed\n", rank, what); return 1; } } while (0)

static __attribute__((unused)) int rank;

static void fill(float* h, size_t n, float v) {
  for (size_t i = 0; i < n; i++) h[i] = v;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s RANK NRANKS ID_FILE BYTES...\n", argv[0]);
    return 2;
  }
  rank = atoi(argv[1]);
  int n = atoi(argv[2]);
  const char* idFile = argv[3];
  ncclUniqueId id;
  if (rank == 0) {
    CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", idFile);
    FILE* f = fopen(tmp, "wb");
    CHECK(f != NULL && fwrite(&id, sizeof(id), 1, f) == 1 && fclose(f) == 0, "writing the id");
    CHECK(rename(tmp, idFile) == 0, "publishing the id");
  } else {
    FILE* f = NULL;
    for (int i = 0; i < 6000 && (f = fopen(idFile, "rb")) == NULL; i++) usleep(10000);
    CHECK(f != NULL && fread(&id, sizeof(id), 1, f) == 1, "reading the id");
    fclose(f);
  }
  CHECK(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice");
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, n, id, rank) == ncclSuccess, "ncclCommInitRank");
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  int bad = 0;
  for (int a = 4; a < argc; a++) {
    size_t bytes = strtoull(argv[a], NULL, 10), count = bytes / sizeof(float);
    float *d, *h = malloc(bytes);
    CHECK(h != NULL && cudaMalloc((void**)&d, bytes) == cudaSuccess, "allocating");
    fill(h, count, (float)(rank + 1));
    CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "copy in");
    CHECK(ncclAllReduce(d, d, count, ncclFloat, ncclSum, comm, s) == ncclSuccess, "ncclAllReduce");
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "copy out");
    float want = (float)n * (n + 1) / 2;
    size_t wrong = 0;
    for (size_t i = 0; i < count; i++) wrong += h[i] != want;
    printf("rank %d allreduce %zu bytes: %s (bad %zu)\n", rank, bytes, wrong ? "WRONG" : "correct", wrong);
    bad |= wrong != 0;
    cudaFree(d);
    free(h);
  }
  ncclCommDestroy(comm);
  return bad;
}
