/* The version lines of the nccl.h bundled in the tensorflow 2.21.0 wheel. */
#define NCCL_MAJOR 2
#define NCCL_MINOR 27
#define NCCL_PATCH 7
