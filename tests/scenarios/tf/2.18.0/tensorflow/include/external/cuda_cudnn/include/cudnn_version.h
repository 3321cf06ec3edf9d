/* The version lines of the cudnn_version.h bundled in the tensorflow 2.18.0 wheel. */
#define CUDNN_MAJOR 9
#define CUDNN_MINOR 3
#define CUDNN_PATCHLEVEL 0
