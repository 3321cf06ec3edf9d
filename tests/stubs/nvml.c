/* Stub libnvidia-ml.so.1: the NVML calls tfdoctor's probe makes, with NVML's real symbol names,
 * C signatures, struct layouts and return codes (nvml.h; the layouts nvidia-ml-py's pynvml.py
 * passes). Configured by the JSON file named in $TFDOCTOR_FAKE_NVML (docs/scenarios.md):
 *   "errors": {"<symbol>": "NVML_ERROR_..." | code}   any call fails with any code
 *   "crash": ["<symbol>"], "hang": ["<symbol>"]       a real SIGSEGV / blocks forever
 *   "driver_version", "cuda_driver_version", "gpus": [{field: value, "errors": {...}}]
 *   per GPU "nvlink": [1, 1, 0, ...] the state of each link (a link past the list: INVALID_ARGUMENT,
 *   as NVML answers past a board's links), "p2p_read" / "p2p_nvlink": [status per peer GPU]
 *   (nvmlGpuP2PStatus_t codes: 0 OK, 1 chipset, 2 GPU, 3 IOH topology, 4 regkey, 5 not supported)
 *   per GPU "mig_mode": 1 with "mig_devices": [{"uuid": "MIG-...", "name", "memory_total_mib"}] and
 *   optionally "mig_max_devices": the GPU's MIG devices, reached through their own handles
 *   per GPU "memory_used_mib": memory other processes hold (absent: 0, an idle GPU)
 * A GPU field that is absent or null answers NVML_ERROR_NOT_SUPPORTED, as real NVML does for a
 * counter the board lacks. Build with -DOMIT_<symbol> to leave a symbol out (an older driver). */
#include <signal.h>
#include <unistd.h>

#include "stub_json.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st { int index, mig; } *nvmlDevice_t; /* mig: -1, or the MIG device index */

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999
#define nvmlMemory_v2 0x02000028u /* NVML_STRUCT_VERSION(Memory, 2): sizeof | 2 << 24 */
#define MAX_GPUS 64
#define MAX_MIG 8 /* nvml.h NVML_MAX_MIG_DEVICES_PER_GPU... is 7 on A100/H100; one spare */

static const struct { int code; const char *name, *text; } ERRORS[] = {
    {0, "NVML_SUCCESS", "Success"},
    {1, "NVML_ERROR_UNINITIALIZED", "Uninitialized"},
    {2, "NVML_ERROR_INVALID_ARGUMENT", "Invalid Argument"},
    {3, "NVML_ERROR_NOT_SUPPORTED", "Not Supported"},
    {4, "NVML_ERROR_NO_PERMISSION", "Insufficient Permissions"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED", "Already Initialized"},
    {6, "NVML_ERROR_NOT_FOUND", "Not Found"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE", "Insufficient Size"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER", "Insufficient External Power"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED", "Driver Not Loaded"},
    {10, "NVML_ERROR_TIMEOUT", "Timeout"},
    {11, "NVML_ERROR_IRQ_ISSUE", "Interrupt Request Issue"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND", "Function Not Found"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM", "Corrupted infoROM"},
    {15, "NVML_ERROR_GPU_IS_LOST", "GPU is lost"},
    {16, "NVML_ERROR_RESET_REQUIRED", "GPU requires restart"},
    {17, "NVML_ERROR_OPERATING_SYSTEM", "The operating system has blocked the request."},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."},
    {19, "NVML_ERROR_IN_USE", "In use by another client"},
    {20, "NVML_ERROR_MEMORY", "Insufficient Memory"},
    {21, "NVML_ERROR_NO_DATA", "No data"},
    {25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "Argument version mismatch"},
    {28, "NVML_ERROR_GPU_NOT_FOUND", "GPU not found"},
    {999, "NVML_ERROR_UNKNOWN", "Unknown Error"},
};
#define N_ERRORS (int)(sizeof ERRORS / sizeof ERRORS[0])

/* nvmlClocksEventReason* bits (nvml.h), by the names tfdoctor reports. */
static const struct { const char *name; unsigned long long bit; } REASONS[] = {
    {"gpu_idle", 0x1}, {"applications_clocks_setting", 0x2}, {"sw_power_cap", 0x4},
    {"hw_slowdown", 0x8}, {"sync_boost", 0x10}, {"sw_thermal_slowdown", 0x20},
    {"hw_thermal_slowdown", 0x40}, {"hw_power_brake_slowdown", 0x80},
    {"display_clock_setting", 0x100},
};

static const jv *config;
static int init_count;
static struct nvmlDevice_st devices[MAX_GPUS];
static struct nvmlDevice_st mig_handles[MAX_GPUS][MAX_MIG];

static const jv *scenario(void) {
    if (!config) config = json_load_file(getenv("TFDOCTOR_FAKE_NVML"), "stub libnvidia-ml");
    return config;
}

static int error_code(const jv *v) {
    if (v->type == J_NUM) return (int)v->num;
    for (int i = 0; i < N_ERRORS; i++)
        if (!strcmp(ERRORS[i].name, jstr(v, ""))) return ERRORS[i].code;
    return NVML_ERROR_UNKNOWN;
}

/* What the scenario says `symbol` does before it works: crash, hang, or fail with a code. */
static nvmlReturn_t fault(const char *symbol, const jv *errors) {
    const jv *cfg = scenario();
    if (!cfg) return NVML_ERROR_UNKNOWN;
    if (jlist_has(jget(cfg, "crash"), symbol)) *(volatile int *)0 = 0; /* a real SIGSEGV */
    if (jlist_has(jget(cfg, "hang"), symbol)) for (;;) pause();
    const jv *e = jget(errors ? errors : jget(cfg, "errors"), symbol);
    return e ? error_code(e) : NVML_SUCCESS;
}

/* Common prologue of a device call: initialised, valid handle, global then per-GPU faults. */
static nvmlReturn_t device_call(const char *symbol, nvmlDevice_t dev, const jv **gpu) {
    *gpu = NULL;
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = fault(symbol, NULL);
    if (rc) return rc;
    int is_gpu = dev >= devices && dev < devices + MAX_GPUS;
    int is_mig = dev >= &mig_handles[0][0] && dev < &mig_handles[0][0] + MAX_GPUS * MAX_MIG;
    if (!dev || !(is_gpu || is_mig)) return NVML_ERROR_INVALID_ARGUMENT;
    *gpu = jat(jget(scenario(), "gpus"), dev->index);
    /* A MIG device handle answers the per-GPU queries from its own entry (name, uuid, memory). */
    if (*gpu && is_mig) *gpu = jat(jget(*gpu, "mig_devices"), dev->mig);
    if (!*gpu) return NVML_ERROR_INVALID_ARGUMENT;
    return fault(symbol, jget(*gpu, "errors"));
}

static nvmlReturn_t copy_string(const char *value, char *buf, unsigned int length) {
    if (!buf) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(value) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(buf, value);
    return NVML_SUCCESS;
}

/* A numeric GPU field into *out; NOT_SUPPORTED when the scenario leaves it out. */
#define GPU_UINT(symbol, field, out)                                     \
    const jv *gpu;                                                       \
    nvmlReturn_t rc = device_call(symbol, dev, &gpu);                    \
    if (rc) return rc;                                                   \
    const jv *v = jget(gpu, field);                                      \
    if (!jhas(v)) return NVML_ERROR_NOT_SUPPORTED;                       \
    *(out) = (unsigned int)jnum(v, 0);                                   \
    return NVML_SUCCESS

static nvmlReturn_t init(const char *symbol) {
    nvmlReturn_t rc = fault(symbol, NULL);
    if (rc) return rc;
    init_count++;
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlInit
nvmlReturn_t nvmlInit(void) { return init("nvmlInit"); }
#endif
#ifndef OMIT_nvmlInit_v2
nvmlReturn_t nvmlInit_v2(void) { return init("nvmlInit_v2"); }
#endif
#ifndef OMIT_nvmlInitWithFlags
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return init("nvmlInitWithFlags"); }
#endif

nvmlReturn_t nvmlShutdown(void) {
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    init_count--;
    return fault("nvmlShutdown", NULL);
}

const char *nvmlErrorString(nvmlReturn_t result) {
    for (int i = 0; i < N_ERRORS; i++)
        if (ERRORS[i].code == result) return ERRORS[i].text;
    return "Unknown Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = fault("nvmlSystemGetDriverVersion", NULL);
    return rc ? rc : copy_string(jstr(jget(scenario(), "driver_version"), "0.0"), version, length);
}

static nvmlReturn_t cuda_version(const char *symbol, int *out) {
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = fault(symbol, NULL);
    if (rc) return rc;
    *out = (int)jnum(jget(scenario(), "cuda_driver_version"), 0);
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlSystemGetCudaDriverVersion
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion", v); }
#endif
#ifndef OMIT_nvmlSystemGetCudaDriverVersion_v2
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v); }
#endif

#ifndef OMIT_nvmlDeviceGetCount_v2
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = fault("nvmlDeviceGetCount_v2", NULL);
    if (rc) return rc;
    int n = jcount(jget(scenario(), "gpus"));
    *count = (unsigned int)(n < MAX_GPUS ? n : MAX_GPUS);
    return NVML_SUCCESS;
}
#endif

#ifndef OMIT_nvmlDeviceGetHandleByIndex_v2
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!init_count) return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = fault("nvmlDeviceGetHandleByIndex_v2", NULL);
    if (rc) return rc;
    const jv *gpu = jat(jget(scenario(), "gpus"), (int)index);
    if (!gpu || index >= MAX_GPUS) return NVML_ERROR_INVALID_ARGUMENT;
    rc = fault("nvmlDeviceGetHandleByIndex_v2", jget(gpu, "errors"));
    if (rc) return rc;
    devices[index].index = (int)index;
    devices[index].mig = -1;
    *device = &devices[index];
    return NVML_SUCCESS;
}
#endif

static nvmlReturn_t gpu_string(const char *symbol, const char *field, nvmlDevice_t dev,
                               char *buf, unsigned int length) {
    const jv *gpu;
    nvmlReturn_t rc = device_call(symbol, dev, &gpu);
    if (rc) return rc;
    const jv *v = jget(gpu, field);
    return jhas(v) ? copy_string(jstr(v, ""), buf, length) : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int length) {
    return gpu_string("nvmlDeviceGetName", "name", dev, name, length);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int length) {
    return gpu_string("nvmlDeviceGetUUID", "uuid", dev, uuid, length);
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t dev, char *serial, unsigned int length) {
    return gpu_string("nvmlDeviceGetSerial", "serial", dev, serial, length);
}

#ifndef OMIT_nvmlDeviceGetPciInfo_v3
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetPciInfo_v3", dev, &gpu);
    if (rc) return rc;
    const char *bus_id = jstr(jget(gpu, "pci_bus_id"), "00000000:00:00.0");
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", bus_id);
    /* The legacy field holds the 13-character "0000:BB:DD.F" form (nvml.h). */
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", strlen(bus_id) > 4 ? bus_id + 4 : bus_id);
    unsigned int bus = 0;
    sscanf(bus_id, "%*x:%x:", &bus);
    pci->bus = bus;
    pci->pciDeviceId = (unsigned int)jnum(jget(gpu, "pci_device_id"), 0x233010de);
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t dev, int *major, int *minor) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetCudaComputeCapability", dev, &gpu);
    if (rc) return rc;
    const jv *cc = jget(gpu, "compute_capability");  /* "9.0" */
    if (!jhas(cc)) return NVML_ERROR_NOT_SUPPORTED;
    if (sscanf(jstr(cc, ""), "%d.%d", major, minor) != 2) return NVML_ERROR_UNKNOWN;
    return NVML_SUCCESS;
}

/* Total and used memory of the scenario's GPU: "memory_total_mib" (NOT_SUPPORTED without it)
 * and "memory_used_mib" (0 when it has none: no other process holds any). */
static nvmlReturn_t memory_info(const char *symbol, nvmlDevice_t dev, unsigned long long *total,
                                unsigned long long *used) {
    const jv *gpu;
    nvmlReturn_t rc = device_call(symbol, dev, &gpu);
    if (rc) return rc;
    const jv *mib = jget(gpu, "memory_total_mib");
    if (!jhas(mib)) return NVML_ERROR_NOT_SUPPORTED;
    *total = (unsigned long long)jnum(mib, 0) * 1024ULL * 1024ULL;
    *used = (unsigned long long)jnum(jget(gpu, "memory_used_mib"), 0) * 1024ULL * 1024ULL;
    if (*used > *total) *used = *total;
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlDeviceGetMemoryInfo
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *memory) {
    memset(memory, 0, sizeof *memory);
    nvmlReturn_t rc = memory_info("nvmlDeviceGetMemoryInfo", dev, &memory->total, &memory->used);
    memory->free = memory->total - memory->used;
    return rc;
}
#endif

#ifndef OMIT_nvmlDeviceGetMemoryInfo_v2
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *memory) {
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlReturn_t rc = memory_info("nvmlDeviceGetMemoryInfo_v2", dev, &memory->total, &memory->used);
    memory->free = memory->total - memory->used;
    return rc;
}
#endif

#define PCIE(symbol, field) \
    nvmlReturn_t symbol(nvmlDevice_t dev, unsigned int *out) { GPU_UINT(#symbol, field, out); }
PCIE(nvmlDeviceGetCurrPcieLinkGeneration, "pcie_gen_current")
PCIE(nvmlDeviceGetMaxPcieLinkGeneration, "pcie_gen_max")
PCIE(nvmlDeviceGetCurrPcieLinkWidth, "pcie_width_current")
PCIE(nvmlDeviceGetMaxPcieLinkWidth, "pcie_width_max")

#ifndef OMIT_nvmlDeviceGetMigMode
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *current, unsigned int *pending) {
    *pending = 0;
    GPU_UINT("nvmlDeviceGetMigMode", "mig_mode", current);
}
#endif

/* MIG (nvml.h; the NVML API reference, "Multi Instance GPU Management"). A GPU entry describes
 * its MIG devices as "mig_devices": [{"uuid": "MIG-...", "name", "memory_total_mib"}] and may set
 * "mig_max_devices" (default: the number listed). With MIG off the maximum count is 0; a slot
 * below the maximum without a MIG device answers NVML_ERROR_NOT_FOUND. */
static int mig_enabled(const jv *gpu) { return (int)jnum(jget(gpu, "mig_mode"), 0) == 1; }

#ifndef OMIT_nvmlDeviceGetMaxMigDeviceCount
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetMaxMigDeviceCount", dev, &gpu);
    if (rc) return rc;
    if (dev->mig >= 0) return NVML_ERROR_INVALID_ARGUMENT;
    const jv *max = jget(gpu, "mig_max_devices");
    *count = !mig_enabled(gpu) ? 0
        : (unsigned int)(jhas(max) ? jnum(max, 0) : jcount(jget(gpu, "mig_devices")));
    return NVML_SUCCESS;
}
#endif

#ifndef OMIT_nvmlDeviceGetMigDeviceHandleByIndex
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index,
                                                 nvmlDevice_t *mig) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetMigDeviceHandleByIndex", dev, &gpu);
    if (rc) return rc;
    unsigned int max = 0;
    if (dev->mig >= 0 || !mig || nvmlDeviceGetMaxMigDeviceCount(dev, &max) || index >= max)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((int)index >= jcount(jget(gpu, "mig_devices")) || index >= MAX_MIG) return NVML_ERROR_NOT_FOUND;
    mig_handles[dev->index][index].index = dev->index;
    mig_handles[dev->index][index].mig = (int)index;
    *mig = &mig_handles[dev->index][index];
    return NVML_SUCCESS;
}
#endif

#ifndef OMIT_nvmlDeviceIsMigDeviceHandle
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t dev, unsigned int *is_mig) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceIsMigDeviceHandle", dev, &gpu);
    if (rc) return rc;
    *is_mig = dev->mig >= 0;
    return NVML_SUCCESS;
}
#endif

#ifndef OMIT_nvmlDeviceGetDeviceHandleFromMigDeviceHandle
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig, nvmlDevice_t *dev) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetDeviceHandleFromMigDeviceHandle", mig, &gpu);
    if (rc) return rc;
    if (mig->mig < 0) return NVML_ERROR_INVALID_ARGUMENT;
    *dev = &devices[mig->index];
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, unsigned int *mode) {
    GPU_UINT("nvmlDeviceGetPersistenceMode", "persistence_mode", mode);
}

static nvmlReturn_t clock_reasons(const char *symbol, nvmlDevice_t dev, unsigned long long *out) {
    const jv *gpu;
    nvmlReturn_t rc = device_call(symbol, dev, &gpu);
    if (rc) return rc;
    const jv *names = jget(gpu, "clocks_event_reasons");
    if (!jhas(names)) return NVML_ERROR_NOT_SUPPORTED;
    *out = 0;
    for (size_t r = 0; r < sizeof REASONS / sizeof REASONS[0]; r++)
        if (jlist_has(names, REASONS[r].name)) *out |= REASONS[r].bit;
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlDeviceGetCurrentClocksEventReasons
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t dev, unsigned long long *r) {
    return clock_reasons("nvmlDeviceGetCurrentClocksEventReasons", dev, r);
}
#endif
#ifndef OMIT_nvmlDeviceGetCurrentClocksThrottleReasons
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long *r) {
    return clock_reasons("nvmlDeviceGetCurrentClocksThrottleReasons", dev, r);
}
#endif

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int errorType, int counterType,
                                         unsigned long long *count) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetTotalEccErrors", dev, &gpu);
    if (rc) return rc;
    /* NVML_MEMORY_ERROR_TYPE_CORRECTED = 0 / UNCORRECTED = 1; NVML_VOLATILE_ECC = 0 / AGGREGATE = 1 */
    static const char *fields[2][2] = {
        {"ecc_corrected_volatile", "ecc_corrected_aggregate"},
        {"ecc_uncorrected_volatile", "ecc_uncorrected_aggregate"},
    };
    if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    const jv *v = jget(gpu, fields[errorType][counterType]);
    if (!jhas(v)) return NVML_ERROR_NOT_SUPPORTED;
    *count = (unsigned long long)jnum(v, 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int *temp) {
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_TEMPERATURE_GPU */
    GPU_UINT("nvmlDeviceGetTemperature", "temperature_c", temp);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int *milliwatts) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetEnforcedPowerLimit", dev, &gpu);
    if (rc) return rc;
    const jv *watts = jget(gpu, "power_limit_w");  /* NVML answers in milliwatts */
    if (!jhas(watts)) return NVML_ERROR_NOT_SUPPORTED;
    *milliwatts = (unsigned int)(jnum(watts, 0) * 1000.0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t dev, unsigned int *milliwatts) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetPowerManagementDefaultLimit", dev, &gpu);
    if (rc) return rc;
    const jv *watts = jget(gpu, "power_default_limit_w");  /* NVML answers in milliwatts */
    if (!jhas(watts)) return NVML_ERROR_NOT_SUPPORTED;
    *milliwatts = (unsigned int)(jnum(watts, 0) * 1000.0);
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlDeviceGetPowerUsage
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int *milliwatts) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetPowerUsage", dev, &gpu);
    if (rc) return rc;
    const jv *watts = jget(gpu, "power_w");  /* NVML answers in milliwatts */
    if (!jhas(watts)) return NVML_ERROR_NOT_SUPPORTED;
    *milliwatts = (unsigned int)(jnum(watts, 0) * 1000.0);
    return NVML_SUCCESS;
}
#endif

static nvmlReturn_t sm_clock(const char *symbol, const char *field, nvmlDevice_t dev, int type,
                             unsigned int *mhz) {
    if (type != 1) return NVML_ERROR_NOT_SUPPORTED; /* only NVML_CLOCK_SM is modelled */
    GPU_UINT(symbol, field, mhz);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int *clock) {
    return sm_clock("nvmlDeviceGetClockInfo", "sm_clock_mhz", dev, type, clock);
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t dev, int type, unsigned int *clock) {
    return sm_clock("nvmlDeviceGetMaxClockInfo", "sm_clock_max_mhz", dev, type, clock);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t *util) {
    util->memory = 0;
    GPU_UINT("nvmlDeviceGetUtilizationRates", "utilization_pct", &util->gpu);
}

static nvmlReturn_t processes(const char *symbol, nvmlDevice_t dev, unsigned int *count,
                              nvmlProcessInfo_t *infos) {
    const jv *gpu;
    nvmlReturn_t rc = device_call(symbol, dev, &gpu);
    if (rc) return rc;
    const jv *n = jget(gpu, "process_count");
    if (!jhas(n)) return NVML_ERROR_NOT_SUPPORTED;
    unsigned int have = (unsigned int)jnum(n, 0);
    /* nvml.h: too small a buffer (or NULL) gets the needed count and INSUFFICIENT_SIZE. */
    if (have > *count || (!infos && have)) { *count = have; return NVML_ERROR_INSUFFICIENT_SIZE; }
    for (unsigned int i = 0; i < have; i++) {
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].pid = 1000 + i;
        infos[i].usedGpuMemory = 512ULL << 20;
    }
    *count = have;
    return NVML_SUCCESS;
}

#ifndef OMIT_nvmlDeviceGetComputeRunningProcesses_v3
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetComputeRunningProcesses_v3", dev, count, infos);
}
#endif
#ifndef OMIT_nvmlDeviceGetComputeRunningProcesses_v2
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t dev, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    return processes("nvmlDeviceGetComputeRunningProcesses_v2", dev, count, infos);
}
#endif

#ifndef OMIT_nvmlDeviceGetNvLinkState
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int *isActive) {
    const jv *gpu;
    nvmlReturn_t rc = device_call("nvmlDeviceGetNvLinkState", dev, &gpu);
    if (rc) return rc;
    const jv *links = jget(gpu, "nvlink");
    if (!jhas(links)) return NVML_ERROR_NOT_SUPPORTED; /* a board without NVLink */
    if ((int)link >= jcount(links)) return NVML_ERROR_INVALID_ARGUMENT;
    *isActive = (int)jnum(jat(links, (int)link), 0);
    return NVML_SUCCESS;
}
#endif

/* nvmlGpuP2PCapsIndex_t: 0 READ, 1 WRITE, 2 NVLINK, 3 ATOMICS, 4 PROP; the stub knows READ and
 * NVLINK (what tfdoctor asks) and answers NOT_SUPPORTED (5) for a pair it has no entry for. */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t dev1, nvmlDevice_t dev2, int index, int *status) {
    const jv *gpu, *peer;
    nvmlReturn_t rc = device_call("nvmlDeviceGetP2PStatus", dev1, &gpu);
    if (rc) return rc;
    rc = device_call("nvmlDeviceGetP2PStatus", dev2, &peer);
    if (rc) return rc;
    const jv *row = jget(gpu, index == 2 ? "p2p_nvlink" : index == 0 ? "p2p_read" : "p2p_other");
    const jv *v = jat(row, dev2->index);
    *status = jhas(v) ? (int)jnum(v, 5) : 5;
    return NVML_SUCCESS;
}
