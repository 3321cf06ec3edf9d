/* A stand-in libtensorflow_framework for the loader-oracle child's failure paths: TSL-named
 * DsoLoader functions returning absl::StatusOr<void*> through the hidden result pointer, one
 * answering OK (a real dlopen handle), one an absl StatusRep error, one an inlined error code, and
 * one that crashes or hangs (-DCRASH / -DHANG), as a broken build or an ABI we misread would. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  out->rep = (uintptr_t)rep;
  out->value = NULL;
}

void _ZN3tsl8internal9DsoLoader23GetCudaRuntimeDsoHandleEv(struct status_or *out) {
  out->rep = 1;
  out->value = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
}

void _ZN3tsl8internal9DsoLoader18GetCublasDsoHandleEv(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libcublas.so.12'; dlerror: libcublas.so.12: "
                "cannot open shared object file: No such file or directory");
}

void _ZN3tsl8internal9DsoLoader17GetCufftDsoHandleEv(struct status_or *out) {
  out->rep = (5u << 2) | 1u; /* inlined NOT_FOUND, no message */
  out->value = NULL;
}

void _ZN3tsl8internal9DsoLoader17GetCudnnDsoHandleEv(struct status_or *out) {
#if defined(CRASH)
  volatile int *p = NULL;
  *p = 1;
#elif defined(HANG)
  for (;;) pause();
#endif
  out->rep = 1;
  out->value = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
}

void _ZN3tsl8internal9DsoLoader16GetNcclDsoHandleEv(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libnccl.so.2'; dlerror: libnccl.so.2: "
                "cannot open shared object file: No such file or directory");
}
