"""Ask CUDA user-space libraries for their own version. Standalone: run as `python -I this.py JSON`.

argv[1] is a JSON list of [short name, absolute path]. For each library this prints, flushing
after every line, {"event": "start"} before loading it, {"event": "call"} before calling its
version entry point, and {"event": "result"} with the raw answer, so that when a library kills
this process (SIGSEGV, abort) the parent knows which one did it and in which step. Decoding the
numbers is the parent's job. Imports nothing from tfdoctor.
"""

import ctypes
import json
import os
import signal
import sys

# libraryPropertyType (library_types.h): MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL.
PROPERTIES = (0, 1, 2)


def int_out(lib, symbol):
    """`status symbol(int *version)`: cudaRuntimeGetVersion, ncclGetVersion, ..."""
    value = ctypes.c_int(0)
    func = getattr(lib, symbol)
    func.restype = ctypes.c_int
    func.argtypes = [ctypes.POINTER(ctypes.c_int)]
    status = func(ctypes.byref(value))
    return status, value.value


def uint_out(lib, symbol):
    """`CUptiResult cuptiGetVersion(uint32_t *version)`."""
    value = ctypes.c_uint32(0)
    func = getattr(lib, symbol)
    func.restype = ctypes.c_int
    func.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
    status = func(ctypes.byref(value))
    return status, value.value


def size_t_return(lib, symbol):
    """`size_t symbol(void)`: cudnnGetVersion, cublasLtGetVersion (no status)."""
    func = getattr(lib, symbol)
    func.restype = ctypes.c_size_t
    func.argtypes = []
    return 0, func()


def properties(lib, symbol):
    """`status symbol(libraryPropertyType type, int *value)` for major, minor and patch."""
    func = getattr(lib, symbol)
    func.restype = ctypes.c_int
    func.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    parts = []
    for prop in PROPERTIES:
        value = ctypes.c_int(0)
        status = func(prop, ctypes.byref(value))
        if status != 0:
            return status, None
        parts.append(value.value)
    return 0, parts


def major_minor(lib, symbol):
    """`nvJitLinkResult nvJitLinkVersion(unsigned int *major, unsigned int *minor)`."""
    major, minor = ctypes.c_uint(0), ctypes.c_uint(0)
    func = getattr(lib, symbol)
    func.restype = ctypes.c_int
    func.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
    status = func(ctypes.byref(major), ctypes.byref(minor))
    return status, [major.value, minor.value]


# Short name -> (entry point, calling convention). None of these needs a GPU or a driver:
# "As of CUDA 12.0, [cudaRuntimeGetVersion] no longer initializes CUDA" (CUDA Runtime API docs).
ASK = {
    "cudart": ("cudaRuntimeGetVersion", int_out),
    "cublas": ("cublasGetProperty", properties),
    "cublasLt": ("cublasLtGetVersion", size_t_return),
    "cufft": ("cufftGetProperty", properties),
    "curand": ("curandGetProperty", properties),
    "cusolver": ("cusolverGetProperty", properties),
    "cusparse": ("cusparseGetProperty", properties),
    "cupti": ("cuptiGetVersion", uint_out),
    "cudnn": ("cudnnGetVersion", size_t_return),
    "nccl": ("ncclGetVersion", int_out),
    "nvjitlink": ("nvJitLinkVersion", major_minor),
}


def ask(name, path, emit):
    """Load one library by absolute path and call its version entry point; emits three events."""
    emit({"event": "start", "name": name, "path": path})
    try:
        lib = ctypes.CDLL(path)
    except OSError as exc:
        emit({"event": "result", "name": name, "error": f"dlopen failed: {exc}"})
        return
    symbol, convention = ASK[name]
    if not hasattr(lib, symbol):
        emit({"event": "result", "name": name, "error": f"no symbol {symbol}"})
        return
    emit({"event": "call", "name": name, "symbol": symbol})
    status, value = convention(lib, symbol)
    if status != 0:
        emit({"event": "result", "name": name, "error": f"{symbol} returned status {status}"})
        return
    emit({"event": "result", "name": name, "symbol": symbol, "value": value})


def main(argv):
    # Libraries may print banners on stdout: keep fd 1 for our JSON lines only, and send
    # anything they write there to stderr instead.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def emit(event):
        out.write(json.dumps(event) + "\n")
        out.flush()

    for name, path in json.loads(argv[1]):
        if name in ASK:
            ask(name, path, emit)
    emit({"event": "done"})
    # Skip interpreter teardown and the libraries' destructors: faster, and a destructor that
    # crashes after the answers are out cannot turn a good run into a failure.
    os._exit(0)


if __name__ == "__main__":
    # Die with the parent's time limit even if tfdoctor itself was killed (no orphan stuck in a
    # driver call): SIGALRM's default action ends the process, wherever it is blocked.
    signal.alarm(int(os.environ.get("TFDOCTOR_CHILD_DEADLINE", "0") or 0))
    main(sys.argv)
