/* A stand-in libtensorflow_framework for the loader-oracle child's failure paths: TSL-named
 * DsoLoader functions returning absl::StatusOr<void*> through the hidden result pointer, one
 * answering OK (a real dlopen handle), one an absl StatusRep error, one an inlined error code, and
 * one that crashes or hangs (-DCRASH / -DHANG), as a broken build or an ABI we misread would.
 * Newer Abseil (TF 2.21) tags inlined codes with the low bit (OK = 1) and keeps StatusRep
 * pointers untagged; older Abseil (TF 2.17, -DOLD_ABSL) does the opposite (OK = 0). TF <= 2.11
 * (-DPRE_ABSL) names the loader stream_executor::internal and returns its own Status, a State*
 * {int32 code; std::string msg; ...}, null when OK. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PRE_ABSL
#define FN(name) _ZN15stream_executor8internal9DsoLoader##name##Ev
#else
#define FN(name) _ZN3tsl8internal9DsoLoader##name##Ev
#endif

#if defined(OLD_ABSL) || defined(PRE_ABSL)
#define OK_REP 0u
#define INLINED(code) ((uintptr_t)(code) << 2)
#ifdef PRE_ABSL
#define POINTER(rep) ((uintptr_t)(rep))
#else
#define POINTER(rep) ((uintptr_t)(rep) | 1u)
#endif
#else
#define OK_REP 1u
#define INLINED(code) (((uintptr_t)(code) << 2) | 1u)
#define POINTER(rep) ((uintptr_t)(rep))
#endif

struct status_or { uintptr_t rep; void *value; };
/* absl::status_internal::StatusRep: ref, code, then a libstdc++ (C++11 ABI) std::string, whose
 * heap buffer keeps its capacity where a short string keeps its characters. */
struct string_rep { char *data; size_t size; union { size_t capacity; char local[16]; }; };
#ifdef PRE_ABSL
struct status_rep { int32_t code; int32_t pad; struct string_rep message; void *payloads; };
#else
struct status_rep { int32_t ref; int32_t code; struct string_rep message; void *payloads; };
#endif

static void error(struct status_or *out, int code, const char *text) {
  struct status_rep *rep = calloc(1, sizeof *rep);
#ifndef PRE_ABSL
  rep->ref = 1;
#endif
  rep->code = code;
  rep->message.size = strlen(text);
  rep->message.capacity = strlen(text);
  rep->message.data = strdup(text);
  out->rep = POINTER(rep);
  out->value = NULL;
}

void FN(23GetCudaRuntimeDsoHandle)(struct status_or *out) {
  out->rep = OK_REP;
  out->value = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
}

void FN(18GetCublasDsoHandle)(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libcublas.so.12'; dlerror: libcublas.so.12: "
                "cannot open shared object file: No such file or directory");
}

void FN(17GetCufftDsoHandle)(struct status_or *out) {
  out->rep = INLINED(5); /* NOT_FOUND, no message */
  out->value = NULL;
}

void FN(17GetCudnnDsoHandle)(struct status_or *out) {
#if defined(CRASH)
  volatile int *p = NULL;
  *p = 1;
#elif defined(HANG)
  for (;;) pause();
#endif
  out->rep = OK_REP;
  out->value = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
}

void FN(16GetNcclDsoHandle)(struct status_or *out) {
  error(out, 9, "Could not load dynamic library 'libnccl.so.2'; dlerror: libnccl.so.2: "
                "cannot open shared object file: No such file or directory");
}
