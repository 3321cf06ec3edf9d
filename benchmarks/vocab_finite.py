"""The finite vocabularies around TensorFlow: CUDA driver, NVML, cuDNN, NCCL, Keras 3, pip, tensorflow-gpu,
nvidia-container-cli. Each miner reads one artefact on this machine (or the test environments) and
returns entries for mine_vocabulary.py; an artefact that is absent yields nothing (the coverage
output says so) rather than an error.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
from pathlib import Path

import vocab_artefacts as art
import vocab_extract as ex
from vocab_toml import load_toml

ROOT = Path(__file__).resolve().parents[1]
VOCAB = ROOT / "doctor/tfdoctor/knowledge/vocabulary"
CUDA_H = Path(os.environ.get("TFDOCTOR_CUDA_H", "/usr/local/cuda-13.0/include/cuda.h"))

HEADERS = {
    "cuda_driver": "CUDA driver API CUresult names and the first sentence of their documentation, from\n"
    "# cuda.h of the CUDA toolkit (releases = toolkit version). TensorFlow and XLA print these names.",
    "nvml": "NVML return codes (NVML_ERROR_*) and the exception pynvml raises for each, as a Python\n"
    "# traceback prints it (NVMLError_<Name>: <pynvml's text>), from nvidia-ml-py's pynvml.py.",
    "cudnn": "cuDNN status names (CUDNN_STATUS_*) with their header documentation, from the cudnn\n"
    "# headers of the nvidia-cudnn wheels in the test environments (releases = cuDNN versions).",
    "nccl": "NCCL results (ncclResult_t) from nccl.h of the nvidia-nccl wheel in the test environment.",
    "keras": "Keras 3's errors and warnings about Keras 2, legacy formats and tf_keras, from the keras\n"
    "# wheel's Python (raise / warnings / logging calls).",
    "pip": "pip's resolver, index and build errors, from pip's own source (raise / logger calls and the\n"
    "# `reference` ids of its diagnostic errors, printed as 'error: <reference>').",
    "tensorflow_gpu": "The tensorflow-gpu placeholder's messages, from its sdist (setup.py, setup.cfg).",
    "container": "nvidia-container-cli's errors, from container_sources.toml (read from\n"
    "# libnvidia-container's sources).",
}


def _venv_site(venv: str) -> Path | None:
    found = sorted((art.ENVS / venv).glob("lib/python3*/site-packages"))
    return found[0] if found else None


def _entry(source: str, text: str, level: str, releases: list[str], **extra: str | None) -> dict:
    return {
        "source": source,
        "text": text,
        "level": level,
        "releases": releases,
        "origin": "artefact",
        **extra,
    }


def mine_cuda_driver() -> list[dict]:
    if not CUDA_H.exists():
        return []
    header = CUDA_H.read_text(errors="replace")
    version = re.search(r"#define CUDA_VERSION (\d+)", header)
    rel = [f"{int(version.group(1)) // 1000}.{int(version.group(1)) % 1000 // 10}"] if version else []
    enum = header[header.index("typedef enum cudaError_enum") : header.index("} CUresult;")]
    return [
        _entry(
            "cuda_driver",
            name,
            "info" if name == "CUDA_SUCCESS" else "error",
            rel,
            doc=doc or None,
            source_file=f"include/{CUDA_H.name}",
        )
        for name, doc in ex.c_enum_docs(enum, "CUDA_")
    ]


def mine_nvml() -> list[dict]:
    try:
        import pynvml
    except ImportError:
        return []
    rel = [importlib.metadata.version("nvidia-ml-py")]
    out = []
    texts = pynvml.NVMLError._errcode_to_string
    for name in sorted(n for n in dir(pynvml) if n.startswith("NVML_ERROR_")):
        code = getattr(pynvml, name)
        out.append(_entry("nvml", name, "error", rel, source_file="pynvml.py"))
        # pynvml names its exception classes this way (_extractNVMLErrorsAsClasses).
        cls = "NVMLError_" + "".join(p.capitalize() for p in name[len("NVML_ERROR_") :].split("_"))
        if code in texts and hasattr(pynvml, cls):
            out.append(_entry("nvml", f"{cls}: {texts[code]}", "error", rel, source_file="pynvml.py"))
    return out


def mine_cudnn() -> list[dict]:
    found: dict[str, dict] = {}
    for venv in ("tf-cuda", "tf-cuda-2-17"):
        site = _venv_site(venv)
        inc = site / "nvidia/cudnn/include" if site else None
        if inc is None or not inc.is_dir():
            continue
        vh = (inc / "cudnn_version.h").read_text()
        parts = [re.search(rf"#define CUDNN_{k} (\d+)", vh) for k in ("MAJOR", "MINOR")]
        ver = ".".join(m.group(1) for m in parts if m)
        for h in sorted(inc.glob("cudnn*.h")):
            if h.name.endswith("_v9.h") or h.name.endswith("_v8.h"):
                continue
            text = h.read_text(errors="replace")
            if "cudnnStatus_t;" not in text:
                continue
            enum = text[
                text.rindex("typedef enum", 0, text.index("cudnnStatus_t;")) : text.index("cudnnStatus_t;")
            ]
            for name, doc in ex.c_enum_docs(enum, "CUDNN_STATUS_"):
                e = found.setdefault(
                    name,
                    _entry(
                        "cudnn",
                        name,
                        "info" if name.endswith("SUCCESS") else "error",
                        [],
                        doc=doc or None,
                        source_file=f"include/{h.name}",
                    ),
                )
                if ver not in e["releases"]:
                    e["releases"].append(ver)
        # cuDNN's own loader (libcudnn.so.N loads its sub-libraries, cudnn_ops_infer and the rest,
        # with dlopen): its printf templates, kept whole (no GPU word in them)
        for lib in sorted((site / "nvidia/cudnn/lib").glob("libcudnn.so.*")):
            for text in sorted(t for t in art.strings_of_file(lib) if _CUDNN_LOADER.match(t)):
                e = found.setdefault(text, _entry("cudnn", text, "error", [], source_file=f"lib/{lib.name}"))
                if ver not in e["releases"]:
                    e["releases"].append(ver)
    return list(found.values())


_CUDNN_LOADER = re.compile(r"Could not load (?:library|symbol) %s(?: from %s)?\. (?:Error: %s|NULL Error)$")


def mine_nccl() -> list[dict]:
    site = _venv_site("tf-cuda")
    if site is None or not (site / "nvidia/nccl/include/nccl.h").exists():
        return []
    h = site / "nvidia/nccl/include/nccl.h"
    text = h.read_text()
    v = re.search(r"#define NCCL_MAJOR (\d+)\s+#define NCCL_MINOR (\d+)", text)
    rel = [f"{v.group(1)}.{v.group(2)}"] if v else []
    enum = text[text.index("typedef enum { ncclSuccess") : text.index("} ncclResult_t;")]
    names = [n for n in re.findall(r"(nccl[A-Za-z]+)\s*=", enum) if n != "ncclNumResults"]
    out = [
        _entry(
            "nccl",
            n,
            "info" if n in ("ncclSuccess", "ncclInProgress") else "error",
            rel,
            source_file="include/nccl.h",
        )
        for n in names
    ]
    return out + _nccl_error_strings(site, names, rel)


def _nccl_error_strings(site: Path, names: list[str], rel: list[str]) -> list[dict]:
    """ncclGetErrorString's texts: libnccl.so.2 keeps them as one run, in ncclResult_t order, from
    "no error" on (read in file order). Short ones ("no error", "timeout") are too common to match."""
    lib = site / "nvidia/nccl/lib/libnccl.so.2"
    if not lib.exists():
        return []
    if shutil.which("strings"):
        out = subprocess.run(["strings", "-a", "-n", "5", str(lib)], capture_output=True, check=True).stdout
        run = out.decode("ascii", "replace").split("\n")
    else:  # the same runs, in file order, without binutils
        run = [m.group().decode() for m in re.finditer(rb"[\x20-\x7e\t]{5,}", lib.read_bytes())]
    for i, line in enumerate(run):
        if line == "no error" and i + 1 < len(run) and "(run with NCCL_DEBUG" in run[i + 1]:
            texts = run[i : i + len(names)]
            break
    else:
        return []
    return [
        _entry(
            "nccl",
            t,
            "info" if n in ("ncclSuccess", "ncclInProgress") else "error",
            rel,
            source_file="lib/libnccl.so.2",
            doc=f"ncclGetErrorString({n})",
        )
        for n, t in zip(names, texts, strict=False)
        if " " in t and len(t) >= 15
    ]


_KERAS_MIGRATION = re.compile(
    r"(?i)keras ?[23]\b|tf_keras|tf-keras|legacy|TF_USE_LEGACY_KERAS|keras\.src|\.h5\b|SavedModel"
    r"|`\.keras`"  # Keras 3's own format, which it requires where Keras 2 wrote .h5
    # Keras 3's operation.py: a layer's input/output exists only once it was called on a tensor,
    # where Keras 2 gave a Sequential model's layers theirs from its input shape
    r"|has never been called and thus has no defined"
)


def _python_package(
    root: Path, package: str, source: str, keep: re.Pattern[str], rel: list[str], *, literals: bool = False
) -> list[dict]:
    out: dict[str, dict] = {}
    for path in sorted((root / package).rglob("*.py")):
        rel_path = path.relative_to(root).as_posix()
        if "/tests/" in rel_path or rel_path.endswith("_test.py"):
            continue
        for text, level in ex.python_messages(path.read_text(errors="replace"), literals=literals):
            text = ex.clean_python_template(text)
            if len(ex.fixed_text(text)) >= 20 and keep.search(text):
                out.setdefault(text, _entry(source, text, level, rel, source_file=rel_path))
    # A literal that is only a piece of a longer message found too ("No matching distribution found
    # for" beside "No matching distribution found for {}") adds nothing: keep the longer one.
    fixed = {t: " ".join(ex.fixed_text(t).split()) for t in out}
    return [e for t, e in out.items() if not any(fixed[t] in f and fixed[t] != f for f in fixed.values())]


def mine_keras() -> list[dict]:
    site = _venv_site("tf-cuda")
    if site is None or not (site / "keras").is_dir():
        return []
    dist = next(site.glob("keras-*.dist-info"), None)
    rel = [dist.name.removeprefix("keras-").removesuffix(".dist-info")] if dist else []
    return _python_package(site, "keras", "keras", _KERAS_MIGRATION, rel)


_PIP = re.compile(
    r"(?i)resolution|No matching distribution|Could not find a version|externally.managed|conflict|"
    r"Requires-Python|requires a different Python|not a supported wheel|yanked|"
    r"Failed (?:to )?build|subprocess-exited|metadata-generation|legacy-install|build dependencies|"
    r"Cannot install|different python|which is not installed|which is incompatible|dependency resolver|"
    r"ResolutionImpossible"
)


def mine_pip() -> list[dict]:
    import pip

    root = Path(pip.__file__).resolve().parents[1]
    rel = [pip.__version__]
    out = _python_package(root, "pip/_internal", "pip", _PIP, rel, literals=True)
    exc = (root / "pip/_internal/exceptions.py").read_text()
    for ref in sorted(set(re.findall(r'reference = "([a-z0-9-]+)"', exc))):
        out.append(_entry("pip", f"error: {ref}", "error", rel, source_file="pip/_internal/exceptions.py"))
    return out


def mine_tensorflow_gpu() -> list[dict]:
    d = art.CACHE / "tensorflow-gpu" / "2.12.0"
    if not (d / "setup.py").exists():
        return []
    out = []
    setup = (d / "setup.py").read_text()
    warning = re.search(r'TF_REMOVAL_WARNING = """(.*?)"""', setup, re.S)
    if warning:
        for para in re.split(r"\n\s*\n", warning.group(1)):
            line = " ".join(para.split()).strip("= ")
            if len(line) > 15:
                out.append(_entry("tensorflow_gpu", line, "error", ["2.12.0"], source_file="setup.py"))
    cfg = (d / "setup.cfg").read_text()
    req = re.search(r"install_requires = \s*\n\s*(\S.*)", cfg)
    if req:
        out.append(
            _entry(
                "tensorflow_gpu",
                req.group(1).strip(),
                "error",
                ["2.12.0"],
                source_file="setup.cfg",
                doc="its only requirement, which packaging 22+ rejects as invalid",
            )
        )
    return out


def mine_container() -> list[dict]:
    data = load_toml(VOCAB / "container_sources.toml")
    rel = ["libnvidia-container"]
    return [
        _entry("container", t["text"], t["level"], rel, source_file=t.get("source_file"))
        for t in data.get("template", [])
    ]


MINERS = {
    "cuda_driver": mine_cuda_driver,
    "nvml": mine_nvml,
    "cudnn": mine_cudnn,
    "nccl": mine_nccl,
    "keras": mine_keras,
    "pip": mine_pip,
    "tensorflow_gpu": mine_tensorflow_gpu,
    "container": mine_container,
}


def mine_finite() -> list[dict]:
    out = []
    for miner in MINERS.values():
        out.extend(miner())
    return out
