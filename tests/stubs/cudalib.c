/*
 * One source for every versioned CUDA user-space library stub (libcudart.so.N, libcublas.so.N,
 * libcublasLt.so.N, libcufft.so.N, libcurand.so.N, libcusolver.so.N, libcusparse.so.N,
 * libcupti.so.N, libcudnn.so.N, libnccl.so.2, libnvJitLink.so.N) and for the stub
 * libtensorflow_framework.so.2 (no KIND_*: it only carries a DT_RUNPATH given at link time).
 *
 * Each stub exports the real version entry points with their real C signatures, returning the
 * numbers the real headers encode:
 *   -DKIND_CUDNN -DVMAJOR=9 -DVMINOR=1 -DVPATCH=0   one library kind, its version
 *   -DCRASH=1            the version entry point raises SIGSEGV
 *   -DCRASH_ON_LOAD=1    a constructor raises SIGSEGV while the library is being loaded
 *   -DHANG=1             the version entry point never returns
 *   -DFAIL_STATUS=N      the version entry point returns status N (e.g. 35, insufficient driver)
 *   -DOMIT_VERSION=1     leave the version entry point out (older nvJitLink had none)
 *   -DBANNER=1           print a line on stdout when loaded, as some vendor libraries do
 *   -DCUPTI_API=N        the CUPTI_API_VERSION a pre-13 libcupti reports (default 28, CUDA 12.9)
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#ifndef VMAJOR
#define VMAJOR 0
#endif
#ifndef VMINOR
#define VMINOR 0
#endif
#ifndef VPATCH
#define VPATCH 0
#endif
#ifndef CUPTI_API
#define CUPTI_API 28
#endif

/* library_types.h */
typedef enum libraryPropertyType_t { MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL } libraryPropertyType;

#if defined(CRASH) && CRASH
#define MAYBE_CRASH() raise(SIGSEGV)
#elif defined(HANG) && HANG
#define MAYBE_CRASH() for (;;) pause()
#else
#define MAYBE_CRASH() ((void)0)
#endif

#ifdef FAIL_STATUS
#define STATUS FAIL_STATUS
#else
#define STATUS 0
#endif

#if defined(CRASH_ON_LOAD) && CRASH_ON_LOAD
__attribute__((constructor)) static void crash_on_load(void) { raise(SIGSEGV); }
#endif

#if defined(BANNER) && BANNER
__attribute__((constructor)) static void banner(void) {
    printf("stub library loaded: this line must not reach the doctor's JSON\n");
    fflush(stdout);
}
#endif

/* The *GetProperty entry points share one shape: status f(libraryPropertyType, int *value). */
static int property(libraryPropertyType type, int *value) {
    MAYBE_CRASH();
    if (STATUS != 0) return STATUS;
    *value = type == MAJOR_VERSION ? VMAJOR : type == MINOR_VERSION ? VMINOR : VPATCH;
    return 0;
}

#define DEFINE_PROPERTY(symbol) \
    int symbol(libraryPropertyType type, int *value) { return property(type, value); }

/* major*1000 + minor*100 + patch: CUFFT_VERSION, CURAND_VERSION, CUSOLVER_VERSION. */
#define DEFINE_INT_VERSION(symbol) \
    int symbol(int *version) { \
        MAYBE_CRASH(); \
        if (STATUS != 0) return STATUS; \
        *version = VMAJOR * 1000 + VMINOR * 100 + VPATCH; \
        return 0; \
    }

#if defined(OMIT_VERSION) && OMIT_VERSION
int stub_without_version_entry_point(void) { return VMAJOR; }

#elif defined(KIND_CUDART)
/* cuda_runtime_api.h: cudaError_t cudaRuntimeGetVersion(int *runtimeVersion); 1000*major + 10*minor. */
int cudaRuntimeGetVersion(int *runtimeVersion) {
    MAYBE_CRASH();
    if (STATUS != 0) return STATUS;
    *runtimeVersion = VMAJOR * 1000 + VMINOR * 10;
    return 0;
}

#elif defined(KIND_CUBLAS)
/* cublas_api.h: cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value); */
DEFINE_PROPERTY(cublasGetProperty)

#elif defined(KIND_CUBLASLT)
/* cublasLt.h: size_t cublasLtGetVersion(void); CUBLAS_VERSION is major*10000 + minor*100 + patch
 * since CUDA 12, major*1000 + minor*100 + patch before. */
size_t cublasLtGetVersion(void) {
    MAYBE_CRASH();
    return VMAJOR >= 12 ? VMAJOR * 10000 + VMINOR * 100 + VPATCH : VMAJOR * 1000 + VMINOR * 100 + VPATCH;
}

#elif defined(KIND_CUFFT)
/* cufft.h: cufftResult cufftGetVersion(int *version); cufftGetProperty(type, int *value); */
DEFINE_INT_VERSION(cufftGetVersion)
DEFINE_PROPERTY(cufftGetProperty)

#elif defined(KIND_CURAND)
/* curand.h: curandStatus_t curandGetVersion(int *version); curandGetProperty(type, int *value); */
DEFINE_INT_VERSION(curandGetVersion)
DEFINE_PROPERTY(curandGetProperty)

#elif defined(KIND_CUSOLVER)
/* cusolver_common.h: cusolverGetVersion(int *version); cusolverGetProperty(type, int *value); */
DEFINE_INT_VERSION(cusolverGetVersion)
DEFINE_PROPERTY(cusolverGetProperty)

#elif defined(KIND_CUSPARSE)
/* cusparse.h: cusparseStatus_t cusparseGetProperty(libraryPropertyType type, int *value); */
DEFINE_PROPERTY(cusparseGetProperty)

#elif defined(KIND_CUPTI)
/* cupti_version.h: CUptiResult cuptiGetVersion(uint32_t *version); CUDA 13 encodes the toolkit
 * ("v130001 : CUDA Toolkit 13.0 Update 1"), earlier releases a bare API level. */
int cuptiGetVersion(uint32_t *version) {
    MAYBE_CRASH();
    if (STATUS != 0) return STATUS;
    *version = VMAJOR >= 13 ? VMAJOR * 10000 + VMINOR * 100 + VPATCH : CUPTI_API;
    return 0;
}

#elif defined(KIND_CUDNN)
/* cudnn_graph.h (9.x) / cudnn_ops_infer.h (8.x): size_t cudnnGetVersion(void); CUDNN_VERSION is
 * major*10000 + minor*100 + patch from 9.0, major*1000 + minor*100 + patch before. */
size_t cudnnGetVersion(void) {
    MAYBE_CRASH();
    return VMAJOR >= 9 ? VMAJOR * 10000 + VMINOR * 100 + VPATCH : VMAJOR * 1000 + VMINOR * 100 + VPATCH;
}
DEFINE_PROPERTY(cudnnGetProperty)

#elif defined(KIND_NCCL)
/* nccl.h: ncclResult_t ncclGetVersion(int *version); NCCL_VERSION(X, Y, Z). */
int ncclGetVersion(int *version) {
    MAYBE_CRASH();
    if (STATUS != 0) return STATUS;
    *version = (VMAJOR <= 2 && VMINOR <= 8) ? VMAJOR * 1000 + VMINOR * 100 + VPATCH
                                             : VMAJOR * 10000 + VMINOR * 100 + VPATCH;
    return 0;
}

#elif defined(KIND_NVJITLINK)
/* nvJitLink.h: nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor); */
int nvJitLinkVersion(unsigned int *major, unsigned int *minor) {
    MAYBE_CRASH();
    if (STATUS != 0) return STATUS;
    *major = VMAJOR;
    *minor = VMINOR;
    return 0;
}

#else
/* libtensorflow_framework.so.2 stand-in: what matters is its DT_SONAME and DT_RUNPATH. */
int tensorflow_framework_stub(void) { return 0; }
#endif
