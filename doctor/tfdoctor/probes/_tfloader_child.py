"""Ask TensorFlow's own DSO loader which CUDA libraries it opens; runs in the target interpreter.

    python -I _tfloader_child.py FRAMEWORK [SKIP_FUNCTION ...]

Loads libtensorflow_framework (ctypes, never `import tensorflow`) and calls its
`DsoLoader::Get*DsoHandle()` functions, which return `absl::StatusOr<void*>` (an
`xla`/`tsl` StatusOr in older releases). Prints one JSON object per line as it goes, so the
answers given before a crash survive it; "@step NAME" on stderr names the call in progress.
Standard library only, Python 3.7+: it runs in whatever interpreter TensorFlow is installed in.
"""

import ctypes
import json
import sys

# Itanium mangling of the namespaces TensorFlow's loader has lived in (dso_loader.h): TSL since
# TF 2.12, stream_executor before it.
NAMESPACES = (
    ("tsl::internal::DsoLoader", "_ZN3tsl8internal9DsoLoader"),
    ("stream_executor::internal::DsoLoader", "_ZN15stream_executor8internal9DsoLoader"),
)
# tfdoctor's short library name -> the loader function's middle part.
FUNCTIONS = (
    ("cudart", "CudaRuntime"),
    ("cublas", "Cublas"),
    ("cublasLt", "CublasLt"),
    ("cufft", "Cufft"),
    ("curand", "Curand"),
    ("cusolver", "Cusolver"),
    ("cusparse", "Cusparse"),
    ("cupti", "Cupti"),
    ("cudnn", "Cudnn"),
    ("nccl", "Nccl"),
    ("nvshmem", "Nvshmem"),
    ("cuda", "CudaDriver"),
)
RTLD_DI_LINKMAP = 2
MAX_MESSAGE = 4000


class LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def step(name):
    sys.stderr.write(f"@step {name}\n")
    sys.stderr.flush()


def mangled(prefix, middle):
    name = f"Get{middle}DsoHandle"
    return f"{prefix}{len(name)}{name}Ev"


def handle_path(libc, handle):
    """The file behind a dlopen handle (dlinfo RTLD_DI_LINKMAP), or None."""
    link = ctypes.POINTER(LinkMap)()
    if libc.dlinfo(ctypes.c_void_p(handle), RTLD_DI_LINKMAP, ctypes.byref(link)) != 0 or not link:
        return None
    name = link.contents.l_name
    return name.decode("utf-8", "replace") if name else None


def read_string(at):
    """The libstdc++ std::string at address `at`, in either ABI, or None.

    C++11 ABI (wheels from TF 2.9): {char* data; size_t size; capacity or a 16-byte buffer}.
    The old copy-on-write ABI (manylinux2010 wheels, TF <= 2.8): {char* data}, with the length
    and capacity in the _Rep 24 bytes before the data. Both keep a NUL after the last character,
    which tells them apart.
    """
    data = ctypes.c_void_p.from_address(at).value
    if not data:
        return None
    size = ctypes.c_size_t.from_address(at + 8).value
    spare = ctypes.c_size_t.from_address(at + 16).value
    if (data == at + 16 and size < 16 or size <= spare <= 1 << 20) \
            and ctypes.c_char.from_address(data + size).value == b"\0":
        return ctypes.string_at(data, min(size, MAX_MESSAGE)).decode("utf-8", "replace")
    length = ctypes.c_size_t.from_address(data - 24).value
    capacity = ctypes.c_size_t.from_address(data - 16).value
    if length <= capacity <= 1 << 20 and ctypes.c_char.from_address(data + length).value == b"\0":
        return ctypes.string_at(data, min(length, MAX_MESSAGE)).decode("utf-8", "replace")
    return None


def read_status(rep):
    """(code, message) of a non-OK status whose representation word is `rep`.

    An absl::Status word is either an inlined code (code << 2, tagged with the low bit in newer
    Abseil, as in TF 2.21, untagged in older, as in TF 2.17) or a pointer to a heap StatusRep
    {int32 ref; int32 code; std::string message; ...} (untagged in newer Abseil, tagged with the
    low bit in older). The pre-absl tensorflow::Status (TF <= 2.12) is a State* {int32 code;
    std::string msg; ...}. Codes are at most 16, so a small word is inlined, a large one a
    pointer; every layout keeps the message at offset 8.
    """
    if rep < 0x100:
        return rep >> 2, None
    base = rep & ~1
    first = ctypes.c_int32.from_address(base).value
    second = ctypes.c_int32.from_address(base + 4).value
    code = second if 0 < second <= 16 else first
    return code, read_string(base + 8)


UNWRITTEN = 0x5E5E5E5E5E5E5E5E
"""What the StatusOr buffer holds before the call: a word the callee did not write keeps it."""


def ask(libc, func):
    """One loader call: {"path": ...} or {"error": ..., "code": N}."""
    func.restype = None
    func.argtypes = [ctypes.c_void_p]
    # A StatusOr<void*> is not trivially copyable, so the SysV ABI returns it through a hidden
    # pointer: {status word; void* value}, with room to spare. TF 2.10's is {three zero words;
    # State*; void* value} (measured on its wheel): three zeros never start the usual layout,
    # whose OK value is a non-null handle and whose error leaves the value word unwritten.
    out = (ctypes.c_uint64 * 8)(*[UNWRITTEN] * 8)
    func(ctypes.addressof(out))
    at = 3 if out[0] == out[1] == out[2] == 0 and out[3] != UNWRITTEN else 0
    rep, value = out[at], out[at + 1]
    value = 0 if value == UNWRITTEN else value
    # OK: kOk inlined is 1 (newer Abseil) or 0 (older Abseil; the pre-absl null State*).
    if rep in (0, 1):
        if not value:
            return {"error": "the loader returned OK with a null handle", "abi": "unexpected"}
        path = handle_path(libc, value)
        if path is None:
            return {"error": "dlinfo could not name the loaded handle", "abi": "unexpected"}
        return {"path": path}
    if rep == UNWRITTEN:
        return {"error": "the loader wrote no status", "abi": "unexpected"}
    code, message = read_status(rep)
    answer = {"code": code, "error": message or f"status code {code}"}
    if not 0 < code <= 16:
        answer["abi"] = "unexpected"
    return answer


def mapped(fragment):
    """Path of the mapped file whose name starts with `fragment`, from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].strip().rsplit("/", 1)[-1].startswith(fragment):
                    return parts[5].strip()
    except OSError:
        pass
    return None


def main(argv):
    framework, skip = argv[1], set(argv[2:])
    step("find_spec tensorflow")
    # What `import tensorflow` does before any of TensorFlow runs: the finders on sys.meta_path
    # are asked, so start-up hooks that act there (tfdoctor's preload .pth) act here too.
    import importlib.util

    try:
        importlib.util.find_spec("tensorflow")
    except Exception:  # noqa: BLE001  (a broken finder must not hide the loader's answers)
        pass
    step("dlopen " + framework)
    try:
        lib = ctypes.CDLL(framework, mode=ctypes.RTLD_LOCAL)
    except OSError as exc:
        emit({"load_error": str(exc)})
        return 0
    libc = ctypes.CDLL(None)
    found = [(ns, prefix) for ns, prefix in NAMESPACES if hasattr(lib, mangled(prefix, "CudaRuntime"))]
    if not found:
        emit({"load_error": "no DsoLoader symbols (tsl::internal or stream_executor::internal)"})
        return 0
    namespace, prefix = found[0]
    emit({"loader": namespace})
    for name, middle in FUNCTIONS:
        function = f"Get{middle}DsoHandle"
        if function in skip:
            continue
        symbol = mangled(prefix, middle)
        if not hasattr(lib, symbol):
            continue
        step(function)
        answer = ask(libc, getattr(lib, symbol))
        answer.update(name=name, function=function)
        emit(answer)
    # nvJitLink is no DsoLoader call: CUDA 12's cuSOLVER and cuSPARSE pull it in as DT_NEEDED.
    step("maps")
    jitlink = mapped("libnvJitLink.so")
    if jitlink:
        emit({"name": "nvjitlink", "function": "DT_NEEDED of cusolver/cusparse", "path": jitlink})
    emit({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
