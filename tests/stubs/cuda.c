/* Stub libcuda.so.1: the CUDA driver API that tfdoctor and real TensorFlow call during GPU
 * discovery and device creation, with cuda.h's real symbol names, signatures and CUresult codes.
 * Configured by the JSON file named in $TFDOCTOR_FAKE_CUDA (docs/scenarios.md):
 *   "driver_version": 13000, "devices": [{"name", "compute_capability": "9.0", "memory_total_mib",
 *   "uuid", "pci_bus_id", "attributes": {"<CUdevice_attribute number>": value}}]
 *   "errors": {"<symbol>": "CUDA_ERROR_..." | code}, "crash": ["<symbol>"], "hang": ["<symbol>"]
 * Calls other than cuDriverGetVersion and the error-string functions answer
 * CUDA_ERROR_NOT_INITIALIZED until cuInit has succeeded, as the real driver does. cuInit honours
 * CUDA_VISIBLE_DEVICES (indices or GPU- UUID prefixes, up to the first invalid entry; none
 * visible of a non-empty list is CUDA_ERROR_NO_DEVICE); with MIG devices in the scenario ("mig":
 * true) it enumerates one of them, as the real driver does (see enumerate_mig). Contexts, streams
 * and events are real objects; device memory
 * is host memory (copies work); modules load nothing and kernel launches answer
 * CUDA_ERROR_NO_BINARY_FOR_GPU, so a program sees its GPUs but cannot run kernels on them.
 * Build with -DOMIT_<symbol> to leave a symbol out. */
#include <stddef.h>
#include <stdint.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "stub_json.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct { char bytes[16]; } CUuuid;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_PEER_ACCESS_UNSUPPORTED 217
#define CUDA_ERROR_NOT_SUPPORTED 801
#define CUDA_ERROR_UNKNOWN 999
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define MAX_DEVICES 64

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
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
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
static int visible[MAX_DEVICES]; /* CUDA ordinal -> index in the scenario's "devices" */
static int n_visible;

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

/* The scenario index an entry of CUDA_VISIBLE_DEVICES names, or -1: an ordinal, or a prefix of a
 * "GPU-..." UUID (the CUDA C Programming Guide, "CUDA Environment Variables"). */
static int visible_entry(const char *entry, size_t len) {
    const jv *devices = jget(scenario(), "devices");
    int total = jcount(devices);
    if (len == 0) return -1;
    if (len > 4 && !strncmp(entry, "GPU-", 4)) {
        int found = -1;
        for (int i = 0; i < total; i++)
            if (!strncmp(jstr(jget(jat(devices, i), "uuid"), ""), entry, len)) {
                if (found >= 0) return -1; /* an ambiguous prefix is invalid */
                found = i;
            }
        return found;
    }
    int value = 0;
    for (size_t i = 0; i < len; i++) {
        if (entry[i] < '0' || entry[i] > '9') return -1;
        value = value * 10 + (entry[i] - '0');
    }
    return value < total ? value : -1;
}

/* MIG (the MIG user guide, "CUDA Device Enumeration"): a CUDA process enumerates a single MIG
 * device, the one CUDA_VISIBLE_DEVICES names by its MIG- UUID, else the first one. The scenario
 * lists each MIG device as its own entry with "mig": true; entries without it (the parent GPUs)
 * are then never enumerated. Mixing MIG and non-MIG GPUs in one scenario is not modelled. */
static int enumerate_mig(const char *env) {
    const jv *devices = jget(scenario(), "devices");
    int total = jcount(devices), first = -1;
    for (int i = 0; i < total && first < 0; i++)
        if (jnum(jget(jat(devices, i), "mig"), 0)) first = i;
    if (first < 0) return 0;
    n_visible = 0;
    if (!env) {
        visible[n_visible++] = first;
        return 1;
    }
    for (const char *p = env; *p;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ') len--;
        if (len <= 4 || strncmp(p, "MIG-", 4)) return 1; /* the first invalid entry ends the list */
        for (int i = 0; i < total; i++) {
            const jv *d = jat(devices, i);
            if (jnum(jget(d, "mig"), 0) && !strncmp(jstr(jget(d, "uuid"), ""), p, len)) {
                visible[n_visible++] = i;
                return 1; /* one MIG device per process */
            }
        }
        return 1; /* a MIG- UUID of no device is an invalid entry too */
    }
    return 1;
}

__attribute__((unused)) static void enumerate(void) {
    int total = jcount(jget(scenario(), "devices"));
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    n_visible = 0;
    if (enumerate_mig(env)) return;
    if (!env) {
        for (int i = 0; i < total && i < MAX_DEVICES; i++) visible[n_visible++] = i;
        return;
    }
    /* Devices up to the first invalid entry are visible; repeats make the list invalid there. */
    for (const char *p = env; *p && n_visible < MAX_DEVICES;) {
        while (*p == ' ') p++;
        size_t len = strcspn(p, ",");
        while (len && p[len - 1] == ' ') len--;
        int index = visible_entry(p, len);
        if (index < 0) break;
        for (int i = 0; i < n_visible; i++)
            if (visible[i] == index) return;
        visible[n_visible++] = index;
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
}

static const jv *device_at(CUdevice dev) {
    if (dev < 0 || dev >= n_visible) return NULL;
    return jat(jget(scenario(), "devices"), visible[dev]);
}

/* Prologue of a device call: initialised, scenario faults, a valid ordinal. */
static CUresult device_call(const char *symbol, CUdevice dev, const jv **device) {
    *device = NULL;
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = fault(symbol);
    if (rc) return rc;
    *device = device_at(dev);
    return *device ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* Prologue of any other call after cuInit. */
static CUresult call(const char *symbol) {
    if (!initialised) return CUDA_ERROR_NOT_INITIALIZED;
    return fault(symbol);
}

#ifndef OMIT_cuInit
CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = fault("cuInit");
    if (rc == CUDA_SUCCESS) {
        enumerate();
        /* CUDA_VISIBLE_DEVICES hiding every GPU; an empty "devices" list stays as the scenario
         * says (set "errors" for a cuInit that fails). */
        if (n_visible == 0 && jcount(jget(scenario(), "devices")) > 0) rc = CUDA_ERROR_NO_DEVICE;
    }
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
    *count = n_visible;
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

static void pci_of(const jv *d, CUdevice dev, unsigned *domain, unsigned *bus, unsigned *slot) {
    *domain = 0, *bus = 0x18 + 0x10 * (unsigned)dev, *slot = 0;
    unsigned function = 0;
    const char *id = jstr(jget(d, "pci_bus_id"), NULL);
    if (id) sscanf(id, "%x:%x:%x.%x", domain, bus, slot, &function);
}

/* CUdevice_attribute values of an H100 SXM (cuda.h numbering), for whatever a program asks;
 * a scenario device's "attributes" overrides any of them; unlisted attributes answer 0. */
static int attribute_default(int attribute) {
    switch (attribute) {
    case 1: return 1024;             /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: return 1024;     /* MAX_BLOCK_DIM_X, _Y */
    case 4: return 64;               /* MAX_BLOCK_DIM_Z */
    case 5: return 2147483647;       /* MAX_GRID_DIM_X */
    case 6: case 7: return 65535;    /* MAX_GRID_DIM_Y, _Z */
    case 8: return 49152;            /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 9: return 65536;            /* TOTAL_CONSTANT_MEMORY */
    case 10: return 32;              /* WARP_SIZE */
    case 11: return 2147483647;      /* MAX_PITCH */
    case 12: return 65536;           /* MAX_REGISTERS_PER_BLOCK */
    case 13: return 1980000;         /* CLOCK_RATE (kHz) */
    case 14: return 512;             /* TEXTURE_ALIGNMENT */
    case 15: return 1;               /* GPU_OVERLAP */
    case 16: return 132;             /* MULTIPROCESSOR_COUNT */
    case 19: return 1;               /* CAN_MAP_HOST_MEMORY */
    case 31: return 1;               /* CONCURRENT_KERNELS */
    case 32: return 1;               /* ECC_ENABLED */
    case 36: return 2619000;         /* MEMORY_CLOCK_RATE (kHz) */
    case 37: return 5120;            /* GLOBAL_MEMORY_BUS_WIDTH */
    case 38: return 52428800;        /* L2_CACHE_SIZE */
    case 39: return 2048;            /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 40: return 3;               /* ASYNC_ENGINE_COUNT */
    case 41: return 1;               /* UNIFIED_ADDRESSING */
    case 78: case 79: case 80: return 1; /* STREAM_PRIORITIES, GLOBAL/LOCAL_L1_CACHE_SUPPORTED */
    case 81: return 233472;          /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 82: return 65536;           /* MAX_REGISTERS_PER_MULTIPROCESSOR */
    case 83: return 1;               /* MANAGED_MEMORY */
    case 86: return 1;               /* HOST_NATIVE_ATOMIC_SUPPORTED */
    case 87: return 2;               /* SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO */
    case 88: case 89: return 1;      /* PAGEABLE_MEMORY_ACCESS, CONCURRENT_MANAGED_ACCESS */
    case 95: return 1;               /* COOPERATIVE_LAUNCH */
    case 97: return 232448;          /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 102: return 1;              /* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
    case 106: return 32;             /* MAX_BLOCKS_PER_MULTIPROCESSOR */
    case 111: return 1024;           /* RESERVED_SHARED_MEMORY_PER_BLOCK */
    case 115: return 1;              /* MEMORY_POOLS_SUPPORTED */
    case 120: return 1;              /* CLUSTER_LAUNCH */
    default: return 0;
    }
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGetAttribute", dev, &d);
    if (rc) return rc;
    if (!value || attribute <= 0 || attribute > 200) return CUDA_ERROR_INVALID_VALUE;
    int major = 0, minor = 0;
    unsigned domain, bus, slot;
    sscanf(jstr(jget(d, "compute_capability"), "0.0"), "%d.%d", &major, &minor);
    pci_of(d, dev, &domain, &bus, &slot);
    char key[16];
    snprintf(key, sizeof key, "%d", attribute);
    const jv *override = jget(jget(d, "attributes"), key);
    if (override) *value = (int)jnum(override, 0);
    else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *value = major;
    else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *value = minor;
    else if (attribute == 33) *value = (int)bus;    /* PCI_BUS_ID */
    else if (attribute == 34) *value = (int)slot;   /* PCI_DEVICE_ID */
    else if (attribute == 50) *value = (int)domain; /* PCI_DOMAIN_ID */
    else *value = attribute_default(attribute);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceTotalMem_v2", dev, &d);
    if (!rc) *bytes = (size_t)jnum(jget(d, "memory_total_mib"), 0) * 1024u * 1024u;
    return rc;
}

CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGetPCIBusId", dev, &d);
    if (rc) return rc;
    if (!id || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    unsigned domain, bus, slot;
    pci_of(d, dev, &domain, &bus, &slot);
    snprintf(id, (size_t)len, "%04x:%02x:%02x.0", domain, bus, slot);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *id) {
    CUresult rc = call("cuDeviceGetByPCIBusId");
    if (rc) return rc;
    for (int i = 0; i < n_visible; i++) {
        char mine[32];
        cuDeviceGetPCIBusId(mine, sizeof mine, i);
        if (id && !strcasecmp(mine, id + (strlen(id) > strlen(mine) ? strlen(id) - strlen(mine) : 0))) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDeviceGetUuid", dev, &d);
    if (rc) return rc;
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    /* "GPU-5ca1ab1e-1d2c-4e0f-9a7b-000000000000": the 16 bytes in its hex digits */
    const char *text = jstr(jget(d, "uuid"), "GPU-00000000-0000-0000-0000-000000000000");
    memset(uuid->bytes, 0, sizeof uuid->bytes);
    int n = 0;
    for (const char *p = strncmp(text, "GPU-", 4) ? text : text + 4; *p && n < 32; p++) {
        int v = (*p >= '0' && *p <= '9') ? *p - '0' : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
                : (*p >= 'A' && *p <= 'F') ? *p - 'A' + 10 : -1;
        if (v < 0) continue;
        uuid->bytes[n / 2] = (char)(uuid->bytes[n / 2] | (n % 2 ? v : v << 4));
        n++;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid(uuid, dev); }

CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev) {
    CUresult rc = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    return rc ? rc : cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
    const jv *d;
    CUresult rc = device_call("cuDeviceCanAccessPeer", dev, &d);
    if (rc) return rc;
    if (!device_at(peer)) return CUDA_ERROR_INVALID_DEVICE;
    *can = (int)jnum(jget(scenario(), "peer_access"), 1) && dev != peer;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetP2PAttribute(int *value, int attribute, CUdevice dev, CUdevice peer) {
    int can = 0;
    CUresult rc = cuDeviceCanAccessPeer(&can, dev, peer);
    if (!rc) *value = attribute == 1 ? 0 : can; /* PERFORMANCE_RANK 0, the rest "supported" */
    return rc;
}

/* --- contexts: one primary context per device, and a per-thread current-context stack ---- */

typedef struct context { int magic; CUdevice device; unsigned flags; int refs; } *CUcontext;
#define CONTEXT_MAGIC 0x43545854
static struct context primary[MAX_DEVICES];
static __thread CUcontext stack[16];
static __thread int depth;

static CUresult valid_context(CUcontext ctx) {
    return ctx && ctx->magic == CONTEXT_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUcontext current(void) { return depth ? stack[depth - 1] : NULL; }

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDevicePrimaryCtxRetain", dev, &d);
    if (rc) return rc;
    primary[dev].magic = CONTEXT_MAGIC;
    primary[dev].device = dev;
    primary[dev].refs++;
    *ctx = &primary[dev];
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDevicePrimaryCtxRelease_v2", dev, &d);
    if (!rc && primary[dev].refs > 0) primary[dev].refs--;
    return rc;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active) {
    const jv *d;
    CUresult rc = device_call("cuDevicePrimaryCtxGetState", dev, &d);
    if (rc) return rc;
    if (flags) *flags = primary[dev].flags;
    if (active) *active = primary[dev].refs > 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned flags) {
    const jv *d;
    CUresult rc = device_call("cuDevicePrimaryCtxSetFlags_v2", dev, &d);
    if (!rc) primary[dev].flags = flags;
    return rc;
}
CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned flags) {
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
    const jv *d;
    CUresult rc = device_call("cuDevicePrimaryCtxReset_v2", dev, &d);
    if (!rc) primary[dev].refs = 0;
    return rc;
}

CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev) {
    CUresult rc = cuDevicePrimaryCtxRetain(ctx, dev);
    if (rc) return rc;
    (*ctx)->flags = flags;
    if (depth < 16) stack[depth++] = *ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx) {
    CUresult rc = call("cuCtxDestroy_v2");
    return rc ? rc : valid_context(ctx);
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    CUresult rc = call("cuCtxSetCurrent");
    if (rc) return rc;
    if (ctx && valid_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {
        if (depth) depth--;
        return CUDA_SUCCESS;
    }
    if (depth) stack[depth - 1] = ctx;
    else stack[depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *ctx) {
    CUresult rc = call("cuCtxGetCurrent");
    if (!rc) *ctx = current();
    return rc;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    CUresult rc = call("cuCtxPushCurrent_v2");
    if (rc) return rc;
    if (valid_context(ctx) || depth >= 16) return CUDA_ERROR_INVALID_CONTEXT;
    stack[depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
    CUresult rc = call("cuCtxPopCurrent_v2");
    if (rc) return rc;
    if (!depth) return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext top = stack[--depth];
    if (ctx) *ctx = top;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev) {
    CUresult rc = call("cuCtxGetDevice");
    if (rc) return rc;
    if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
    *dev = current()->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetFlags(unsigned *flags) {
    CUresult rc = call("cuCtxGetFlags");
    if (rc) return rc;
    if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
    *flags = current()->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned *version) {
    (void)ctx;
    CUresult rc = call("cuCtxGetApiVersion");
    if (!rc) *version = 3020;
    return rc;
}

CUresult cuCtxSynchronize(void) { return call("cuCtxSynchronize"); }
CUresult cuCtxSetLimit(int limit, size_t value) { (void)limit, (void)value; return call("cuCtxSetLimit"); }
CUresult cuCtxGetLimit(size_t *value, int limit) {
    CUresult rc = call("cuCtxGetLimit");
    if (!rc) *value = limit == 0 ? 1024 : 0; /* STACK_SIZE */
    return rc;
}
CUresult cuCtxSetCacheConfig(int config) { (void)config; return call("cuCtxSetCacheConfig"); }
CUresult cuCtxGetCacheConfig(int *config) { *config = 0; return call("cuCtxGetCacheConfig"); }
CUresult cuCtxSetSharedMemConfig(int config) { (void)config; return call("cuCtxSetSharedMemConfig"); }
CUresult cuCtxGetSharedMemConfig(int *config) { *config = 1; return call("cuCtxGetSharedMemConfig"); }
CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) {
    CUresult rc = call("cuCtxGetStreamPriorityRange");
    if (rc) return rc;
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return CUDA_SUCCESS;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuCtxEnablePeerAccess");
    return rc ? rc : valid_context(peer);
}
CUresult cuCtxDisablePeerAccess(CUcontext peer) {
    CUresult rc = call("cuCtxDisablePeerAccess");
    return rc ? rc : valid_context(peer);
}

/* --- memory: device memory is host memory reserved lazily, so copies really copy --------- */

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) {
    CUresult rc = call("cuMemGetInfo_v2");
    if (rc) return rc;
    if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
    size_t bytes = 0;
    cuDeviceTotalMem_v2(&bytes, current()->device);
    if (total) *total = bytes;
    if (free_bytes) *free_bytes = bytes / 100 * 98;
    return CUDA_SUCCESS;
}

static void *reserve(size_t bytes) {
    /* MAP_NORESERVE: a BFC allocator that takes "all" of an 80 GB GPU only costs what it touches. */
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
    CUresult rc = call("cuMemAlloc_v2");
    if (rc) return rc;
    if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
    void *p = reserve(bytes + 4096);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *(size_t *)p = bytes + 4096; /* the mapping's length, before the aligned block we hand out */
    *ptr = (CUdeviceptr)(uintptr_t)p + 4096;
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
    CUresult rc = call("cuMemFree_v2");
    if (rc || !ptr) return rc;
    void *base = (void *)(uintptr_t)(ptr - 4096);
    munmap(base, *(size_t *)base);
    return CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags) {
    (void)flags;
    return cuMemAlloc_v2(ptr, bytes);
}

CUresult cuMemHostAlloc(void **ptr, size_t bytes, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuMemHostAlloc");
    if (rc) return rc;
    *ptr = malloc(bytes ? bytes : 1);
    return *ptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemAllocHost_v2(void **ptr, size_t bytes) { return cuMemHostAlloc(ptr, bytes, 0); }
CUresult cuMemFreeHost(void *ptr) {
    CUresult rc = call("cuMemFreeHost");
    if (!rc) free(ptr);
    return rc;
}
CUresult cuMemHostRegister_v2(void *ptr, size_t bytes, unsigned flags) {
    (void)ptr, (void)bytes, (void)flags;
    return call("cuMemHostRegister_v2");
}
CUresult cuMemHostUnregister(void *ptr) { (void)ptr; return call("cuMemHostUnregister"); }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *dptr, void *ptr, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuMemHostGetDevicePointer_v2");
    if (!rc) *dptr = (CUdeviceptr)(uintptr_t)ptr;
    return rc;
}

static CUresult copy(const char *symbol, void *dst, const void *src, size_t bytes) {
    CUresult rc = call(symbol);
    if (!rc && bytes) memmove(dst, src, bytes);
    return rc;
}
#define DPTR(p) ((void *)(uintptr_t)(p))
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy("cuMemcpy", DPTR(dst), DPTR(src), n); }
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
    (void)s;
    return copy("cuMemcpyAsync", DPTR(dst), DPTR(src), n);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return copy("cuMemcpyHtoD_v2", DPTR(dst), src, n); }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return copy("cuMemcpyDtoH_v2", dst, DPTR(src), n); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy("cuMemcpyDtoD_v2", DPTR(dst), DPTR(src), n); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *s) {
    (void)s;
    return copy("cuMemcpyHtoDAsync_v2", DPTR(dst), src, n);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *s) {
    (void)s;
    return copy("cuMemcpyDtoHAsync_v2", dst, DPTR(src), n);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
    (void)s;
    return copy("cuMemcpyDtoDAsync_v2", DPTR(dst), DPTR(src), n);
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, void *s) {
    (void)dc, (void)sc, (void)s;
    return copy("cuMemcpyPeerAsync", DPTR(dst), DPTR(src), n);
}

static CUresult fill(const char *symbol, CUdeviceptr dst, unsigned value, size_t size, size_t n) {
    CUresult rc = call(symbol);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) memcpy((char *)DPTR(dst) + i * size, &value, size);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return fill("cuMemsetD8_v2", d, v, 1, n); }
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return fill("cuMemsetD16_v2", d, v, 2, n); }
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { return fill("cuMemsetD32_v2", d, v, 4, n); }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *s) {
    (void)s;
    return fill("cuMemsetD8Async", d, v, 1, n);
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) {
    (void)s;
    return fill("cuMemsetD16Async", d, v, 2, n);
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) {
    (void)s;
    return fill("cuMemsetD32Async", d, v, 4, n);
}

CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
    (void)ptr;
    CUresult rc = call("cuPointerGetAttribute");
    if (rc) return rc;
    if (attribute == 2) *(unsigned *)data = 2; /* MEMORY_TYPE: CU_MEMORYTYPE_DEVICE */
    else if (attribute == 9) *(int *)data = current() ? current()->device : 0; /* DEVICE_ORDINAL */
    else memset(data, 0, sizeof(void *));
    return CUDA_SUCCESS;
}

/* --- streams and events: work completes at once, events read the clock ------------------ */

typedef struct { int magic; double when; int recorded; } event_t;
#define STREAM_MAGIC 0x5354524d
#define EVENT_MAGIC 0x45564e54

CUresult cuStreamCreate(void **stream, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuStreamCreate");
    if (rc) return rc;
    int *s = malloc(sizeof *s);
    *s = STREAM_MAGIC;
    *stream = s;
    return CUDA_SUCCESS;
}
CUresult cuStreamCreateWithPriority(void **stream, unsigned flags, int priority) {
    (void)priority;
    return cuStreamCreate(stream, flags);
}
CUresult cuStreamDestroy_v2(void *stream) {
    CUresult rc = call("cuStreamDestroy_v2");
    if (!rc) free(stream);
    return rc;
}
CUresult cuStreamSynchronize(void *stream) { (void)stream; return call("cuStreamSynchronize"); }
CUresult cuStreamQuery(void *stream) { (void)stream; return call("cuStreamQuery"); }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
    (void)stream, (void)event, (void)flags;
    return call("cuStreamWaitEvent");
}
CUresult cuStreamGetPriority(void *stream, int *priority) {
    (void)stream;
    *priority = 0;
    return call("cuStreamGetPriority");
}
CUresult cuStreamAddCallback(void *stream, void (*cb)(void *, CUresult, void *), void *data, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuStreamAddCallback");
    if (!rc) cb(stream, CUDA_SUCCESS, data);
    return rc;
}
CUresult cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data) {
    (void)stream;
    CUresult rc = call("cuLaunchHostFunc");
    if (!rc) fn(data);
    return rc;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

CUresult cuEventCreate(void **event, unsigned flags) {
    (void)flags;
    CUresult rc = call("cuEventCreate");
    if (rc) return rc;
    event_t *e = calloc(1, sizeof *e);
    e->magic = EVENT_MAGIC;
    *event = e;
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(void *event) {
    CUresult rc = call("cuEventDestroy_v2");
    if (!rc) free(event);
    return rc;
}
CUresult cuEventRecord(void *event, void *stream) {
    (void)stream;
    CUresult rc = call("cuEventRecord");
    if (rc) return rc;
    ((event_t *)event)->when = now();
    ((event_t *)event)->recorded = 1;
    return CUDA_SUCCESS;
}
CUresult cuEventRecordWithFlags(void *event, void *stream, unsigned flags) {
    (void)flags;
    return cuEventRecord(event, stream);
}
CUresult cuEventQuery(void *event) { (void)event; return call("cuEventQuery"); }
CUresult cuEventSynchronize(void *event) { (void)event; return call("cuEventSynchronize"); }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
    CUresult rc = call("cuEventElapsedTime");
    if (rc) return rc;
    *ms = (float)(((event_t *)end)->when - ((event_t *)start)->when);
    return CUDA_SUCCESS;
}

/* --- modules and kernels: nothing loads, nothing launches ------------------------------- */

CUresult cuModuleLoadData(void **module, const void *image) {
    (void)module, (void)image;
    CUresult rc = call("cuModuleLoadData");
    return rc ? rc : CUDA_ERROR_NO_BINARY_FOR_GPU;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *opts, void **vals) {
    (void)n, (void)opts, (void)vals;
    return cuModuleLoadData(module, image);
}
CUresult cuModuleLoadFatBinary(void **module, const void *image) { return cuModuleLoadData(module, image); }
CUresult cuModuleUnload(void *module) { (void)module; return call("cuModuleUnload"); }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
    (void)function, (void)module, (void)name;
    CUresult rc = call("cuModuleGetFunction");
    return rc ? rc : CUDA_ERROR_NOT_FOUND;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr *ptr, size_t *bytes, void *module, const char *name) {
    (void)ptr, (void)bytes, (void)module, (void)name;
    CUresult rc = call("cuModuleGetGlobal_v2");
    return rc ? rc : CUDA_ERROR_NOT_FOUND;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
    (void)stream, (void)params, (void)extra;
    CUresult rc = call("cuLaunchKernel");
    return rc ? rc : CUDA_ERROR_NO_BINARY_FOR_GPU;
}
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) {
    (void)config, (void)f, (void)params, (void)extra;
    CUresult rc = call("cuLaunchKernelEx");
    return rc ? rc : CUDA_ERROR_NO_BINARY_FOR_GPU;
}
CUresult cuFuncGetAttribute(int *value, int attribute, void *f) {
    (void)attribute, (void)f;
    *value = 0;
    return call("cuFuncGetAttribute");
}
CUresult cuFuncSetAttribute(void *f, int attribute, int value) {
    (void)f, (void)attribute, (void)value;
    return call("cuFuncSetAttribute");
}
CUresult cuFuncSetCacheConfig(void *f, int config) { (void)f, (void)config; return call("cuFuncSetCacheConfig"); }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *f, int size, size_t shared) {
    (void)f, (void)size, (void)shared;
    *blocks = 1;
    return call("cuOccupancyMaxActiveBlocksPerMultiprocessor");
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
