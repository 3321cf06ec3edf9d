/* The version lines of the nccl.h bundled in the tensorflow 2.22.0rc0 wheel. */
#define NCCL_MAJOR 2
#define NCCL_MINOR 30
#define NCCL_PATCH 7
