/* A stand-in libtensorflow_framework for the loader-oracle child's failure paths: TSL-named
 * DsoLoader functions returning absl::StatusOr<void*> through the hidden result pointer, one
 * answering OK (a real dlopen handle), one an absl StatusRep error, one an inlined error code, and
 * one that crashes or hangs (-DCRASH / -DHANG), as a broken build or an ABI we misread would.
 * Newer Abseil (TF 2.21) tags inlined codes with the low bit (OK = 1) and keeps StatusRep
 * pointers untagged; older Abseil (TF 2.17, -DOLD_ABSL) does the opposite (OK = 0). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef OLD_ABSL
#define OK_REP 0u
#define INLINED(code) ((uintptr_t)(code) << 2)
#define POINTER(rep) ((uintptr_t)(rep) | 1u)
#else
#define OK_REP 1u
#define INLINED(code) (((uintptr_t)(code) << 2) | 1u)
#define POINTER(rep) ((uintptr_t)(rep))
#endif

struct status_or { uintptr_t rep; void *value; };
/* absl::status_internal::StatusRep: ref, code, then a libstdc++ std::string. */
struct string_rep { char *data; size_t size; char local[16]; };
struct status_rep { int32_t ref; int32_t code; struct string_rep message; void *payloads; };

static void error(struct status_or *out, int code, const char *text) {
  struct status_rep *rep = calloc(1, sizeof *rep);
  rep->ref = 1;
  rep->code = code;
  rep->message.size = strlen(text);
  rep->message.data = strdup(text);
  out->rep = POINTER(rep);
  out->value = NULL;
}

void _ZN3tsl8internal9DsoLoader23GetCudaRuntimeDsoHandleEv(struct status_or *out) {
  out->rep = OK_REP;
  out->value = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
}

void _ZN3tsl8internal9DsoLoader18GetCublasDsoHandleEv(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libcublas.so.12'; dlerror: libcublas.so.12: "
                "cannot open shared object file: No such file or directory");
}

void _ZN3tsl8internal9DsoLoader17GetCufftDsoHandleEv(struct status_or *out) {
  out->rep = INLINED(5); /* NOT_FOUND, no message */
  out->value = NULL;
}

void _ZN3tsl8internal9DsoLoader17GetCudnnDsoHandleEv(struct status_or *out) {
#if defined(CRASH)
  volatile int *p = NULL;
  *p = 1;
#elif defined(HANG)
  for (;;) pause();
#endif
  out->rep = OK_REP;
  out->value = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
}

void _ZN3tsl8internal9DsoLoader16GetNcclDsoHandleEv(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libnccl.so.2'; dlerror: libnccl.so.2: "
                "cannot open shared object file: No such file or directory");
}
