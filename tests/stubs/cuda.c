/* Stub libcuda.so.1: the CUDA driver API calls tfdoctor makes, with cuda.h's real symbol names,
 * signatures and CUresult codes. Configured by the JSON file named in $TFDOCTOR_FAKE_CUDA
 * (docs/scenarios.md):
 *   "driver_version": 13000, "devices": [{"name", "compute_capability": "9.0", "memory_total_mib"}]
 *   "errors": {"<symbol>": "CUDA_ERROR_..." | code}, "crash": ["<symbol>"], "hang": ["<symbol>"]
 * Calls other than cuDriverGetVersion and the error-string functions answer
 * CUDA_ERROR_NOT_INITIALIZED until cuInit has succeeded, as the real driver does.
 * Build with -DOMIT_<symbol> to leave a symbol out. */
#include <stddef.h>
#include <unistd.h>

#include "stub_json.h"

typedef int CUresult;
typedef int CUdevice;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_UNKNOWN 999
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

static const struct { int code; const char *name, *text; } ERRORS[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "API call is not supported in the installed CUDA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};
#define N_ERRORS (int)(sizeof ERRORS / sizeof ERRORS[0])

static const jv *config;
static int initialised;

static const jv *scenario(void) {
    if (!config) config = json_load_file(getenv("TFDOCTOR_FAKE_CUDA"), "stub libcuda");
    return config;
}

static CUresult fault(const char *symbol) {
    const jv *cfg = scenario();
    if (!cfg) return CUDA_ERROR_UNKNOWN;
    if (jlist_has(jget(cfg, "crash"), symbol)) *(volatile int *)0 = 0; /* a real SIGSEGV */
    if (jlist_has(jget(cfg, "hang"), symbol)) for (;;) pause();
    const jv *e = jget(jget(cfg, "errors"), symbol);
    if (!e) return CUDA_SUCCESS;
    if (e->type == J_NUM) return (CUresult)e->num;
    for (int i = 0; i < N_ERRORS; i++)
        if (!strcmp(ERRORS[i].name, jstr(e, ""))) return ERRORS[i].code;
    return CUDA_ERROR_UNKNOWN;
}

/* Prologue of a device call: initialised, scenario faults, a valid ordinal. */
static CUresult device_call(const char *symbol, CUdevice dev, const jv **device) {
    *device = NULL;
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = fault(symbol);
    if (rc) return rc;
    *device = jat(jget(scenario(), "devices"), dev);
    return *device ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

#ifndef OMIT_cuInit
CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = fault("cuInit");
    initialised = rc == CUDA_SUCCESS;
    return rc;
}
#endif

#ifndef OMIT_cuDriverGetVersion
CUresult cuDriverGetVersion(int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = fault("cuDriverGetVersion");
    if (rc) return rc;
    *version = (int)jnum(jget(scenario(), "driver_version"), 0);
    return CUDA_SUCCESS;
}
#endif

#ifndef OMIT_cuDeviceGetCount
CUresult cuDeviceGetCount(int *count) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = fault("cuDeviceGetCount");
    if (rc) return rc;
    *count = jcount(jget(scenario(), "devices"));
    return CUDA_SUCCESS;
}
#endif

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGet", ordinal, &d);
    if (!rc) *device = ordinal;
    return rc;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGetName", dev, &d);
    if (rc) return rc;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", jstr(jget(d, "name"), "NVIDIA Stub GPU"));
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGetAttribute", dev, &d);
    if (rc) return rc;
    int major = 0, minor = 0;
    sscanf(jstr(jget(d, "compute_capability"), "0.0"), "%d.%d", &major, &minor);
    if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *value = major;
    else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *value = minor;
    else return CUDA_ERROR_INVALID_VALUE; /* only what the probe asks is modelled */
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceTotalMem_v2", dev, &d);
    if (!rc) *bytes = (size_t)jnum(jget(d, "memory_total_mib"), 0) * 1024u * 1024u;
    return rc;
}

static CUresult lookup(CUresult error, const char **out, int want_name) {
    for (int i = 0; i < N_ERRORS; i++)
        if (ERRORS[i].code == error) {
            *out = want_name ? ERRORS[i].name : ERRORS[i].text;
            return CUDA_SUCCESS;
        }
    *out = NULL; /* cuda.h: unrecognised codes give NULL and CUDA_ERROR_INVALID_VALUE */
    return CUDA_ERROR_INVALID_VALUE;
}

#ifndef OMIT_cuGetErrorString
CUresult cuGetErrorString(CUresult error, const char **text) { return lookup(error, text, 0); }
#endif
#ifndef OMIT_cuGetErrorName
CUresult cuGetErrorName(CUresult error, const char **name) { return lookup(error, name, 1); }
#endif
