"""Standalone child run in the TARGET interpreter: what it has installed, TensorFlow unimported.

Run as `python -I _target_child.py static`; prints one JSON object on stdout.
It must work on any CPython 3.8-3.13 with the standard library only (it imports nothing from
tfdoctor), and it must be quick: `static` sits inside the `tfdoctor --quick` budget, so it scans
`*.dist-info` directory names instead of parsing every METADATA through importlib.metadata.
The parent owns the time limit. (What TensorFlow says about itself at run time,
`tf.sysconfig.get_build_info()`, comes from the smoke child, which imports it anyway.)
"""

import json
import os
import re
import signal
import sys

# Distributions that provide the `tensorflow` import package (PyPI names, normalised).
TF_DISTRIBUTIONS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tensorflow-cpu-aws",
    "tensorflow-aarch64",
    "tensorflow-rocm",
    "tf-nightly",
    "tf-nightly-cpu",
    "tf-nightly-gpu",
    "intel-tensorflow",
    "intel-tensorflow-avx512",
)
# Packages whose versions break or change TensorFlow (research/compat.md section 7); nvidia-* too.
WATCHED = TF_DISTRIBUTIONS + (
    "keras",
    "keras-nightly",
    "tf-keras",
    "tf-keras-nightly",
    "numpy",
    "protobuf",
    "ml-dtypes",
    "h5py",
    "typing-extensions",
    "tensorflow-metal",
    # TF-TRT's TensorRT (tfdoctor.stack.TENSORRT_WHEELS)
    "tensorrt",
    "tensorrt-libs",
    "tensorrt-cu11",
    "tensorrt-cu11-libs",
    "tensorrt-cu12",
    "tensorrt-cu12-libs",
    "tensorrt-cu13",
    "tensorrt-cu13-libs",
)
DIST_DIR = re.compile(
    r"^([A-Za-z0-9][A-Za-z0-9._-]*?)(?:-([^-]+?))?(?:-py[0-9.]+)?\.(dist-info|egg-info)$"
)


def normalise(name):
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_watched(name):
    return name in WATCHED or name.startswith("nvidia-")


def read_headers(path):
    """The header block of a METADATA / PKG-INFO file (stops at the description)."""
    headers = []  # type: list[tuple[str, str]]
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                break
            if line[0] in " \t" and headers:
                headers[-1] = (headers[-1][0], headers[-1][1] + " " + line.strip())
            elif ":" in line:
                key, _, value = line.partition(":")
                headers.append((key.strip().lower(), value.strip()))
    return headers


def in_venv():
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix)


def user_site_enabled():
    """Whether a plain `python` (without -I) would add the user site-packages (site.py rules)."""
    if os.environ.get("PYTHONNOUSERSITE"):
        return False
    if hasattr(os, "geteuid") and os.geteuid() != os.getuid():
        return False
    if not in_venv():
        return True
    try:
        with open(os.path.join(sys.prefix, "pyvenv.cfg"), encoding="utf-8") as f:
            cfg = f.read().lower()
    except OSError:
        return False
    return bool(re.search(r"include-system-site-packages\s*=\s*true", cfg))


def import_path():
    """sys.path as a plain run of this interpreter would have it: PYTHONPATH and user site back."""
    import site

    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    path = extra + [p for p in sys.path if p not in extra]
    user_site = site.getusersitepackages() if user_site_enabled() else None
    if user_site and os.path.isdir(user_site) and user_site not in path:
        # site.py puts the user site before the global site-packages.
        first_site = next(
            (i for i, p in enumerate(path) if p.endswith(("site-packages", "dist-packages"))),
            len(path),
        )
        path.insert(first_site, user_site)
    return path, user_site


def find_distributions(path):
    """Every watched distribution on `path`, in import order (the first of a name is used)."""
    found = []
    for entry in path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in sorted(names):
            m = DIST_DIR.match(item)
            if not m or not is_watched(normalise(m.group(1))):
                continue
            found.append(read_distribution(os.path.join(entry, item), m.group(1), m.group(2)))
    return found


def read_distribution(dist_dir, dir_name, dir_version):
    """Name, version, location and Requires-Dist of one dist-info / egg-info directory."""
    headers = []
    for meta in ("METADATA", "PKG-INFO"):
        try:
            headers = read_headers(os.path.join(dist_dir, meta))
            break
        except OSError:
            continue
    first = dict(reversed(headers))
    name = first.get("name", dir_name)
    dist = {
        "name": name,
        "normalised": normalise(name),
        "version": first.get("version", dir_version),
        "location": os.path.dirname(dist_dir),
    }
    if dist["normalised"] in TF_DISTRIBUTIONS:
        dist["metadata_dir"] = dist_dir
        dist["requires_dist"] = [v for k, v in headers if k == "requires-dist"]
    return dist


def tensorflow_package(path):
    """Directory of the `tensorflow` import package, found but never imported."""
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec("tensorflow", path)
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return locations[0]
    return os.path.dirname(spec.origin) if spec.origin else None


def marker_environment():
    """PEP 508 marker variables of this interpreter, so the parent evaluates TF's markers for it."""
    import platform

    impl = sys.implementation
    iv = impl.version
    impl_version = f"{iv.major}.{iv.minor}.{iv.micro}"
    if iv.releaselevel != "final":
        impl_version += iv.releaselevel[0] + str(iv.serial)
    return {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": "{}.{}".format(*sys.version_info[:2]),
        "sys_platform": sys.platform,
    }


def is_conda():
    for prefix in (sys.prefix, getattr(sys, "base_prefix", sys.prefix)):
        if os.path.isdir(os.path.join(prefix, "conda-meta")):
            return True
    conda_prefix = os.environ.get("CONDA_PREFIX")
    if not conda_prefix:
        return False
    return os.path.realpath(conda_prefix) == os.path.realpath(sys.prefix)


def site_packages(path, user_site):
    import site

    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if user_site and user_site in path:
        dirs.append(user_site)
    dirs += [p for p in path if p.endswith(("site-packages", "dist-packages")) and p not in dirs]
    return [d for d in dirs if os.path.isdir(d)]


PRELOAD_FILE = "tfdoctor-preload.pth"
PRELOAD_CODE = "tfdoctor-preload.py"
# The one-line preload an older tfdoctor wrote into the .pth itself
PRELOAD_CALL = re.compile(r"_tfdoctor_preload\(\((.*?)\), '([^']*)'\)")
# The readable file the .pth runs now: "LIBRARIES = ('/a/libx.so.9',)" and "ONLY_FOR = '/site/tf.dist-info'"
PRELOAD_LIBS = re.compile(r"^LIBRARIES = \((.*)\)$", re.MULTILINE)
PRELOAD_FOR = re.compile(r"^ONLY_FOR = '([^']*)'$", re.MULTILINE)


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def preloads(sites):
    """Libraries tfdoctor's start-up preload (`tfdoctor fix`) loads before TensorFlow: existing
    files only, and only while the TensorFlow it was written for is installed."""
    out = []
    for site_dir in sites:
        pth = _read(os.path.join(site_dir, PRELOAD_FILE))
        if pth is None:
            continue
        found = [(m.group(1), m.group(2)) for line in pth.splitlines()
                 if line.startswith("import") for m in [PRELOAD_CALL.search(line)] if m]
        code = _read(os.path.join(site_dir, PRELOAD_CODE)) if PRELOAD_CODE in pth else None
        libs, only_for = (PRELOAD_LIBS.search(code), PRELOAD_FOR.search(code)) if code else (None, None)
        if libs and only_for:
            found.append((libs.group(1), only_for.group(1)))
        for listed, only_for_dir in found:
            if os.path.isdir(only_for_dir):
                libs_ = re.findall(r"'([^']*)'", listed)
                out += [lib for lib in libs_ if os.path.isfile(lib) and lib not in out]
    return out


def conda_packages(prefix):
    """name -> "version build" of the conda packages that decide TensorFlow's CUDA, read from
    conda-meta/*.json (one file per package: conda's own record of what it installed)."""
    meta = os.path.join(prefix, "conda-meta")
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return None
    out = {}
    for item in names:
        if not item.endswith(".json"):
            continue
        try:
            with open(os.path.join(meta, item), encoding="utf-8") as f:
                record = json.load(f)
            name, version = record["name"], record["version"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if is_conda_watched(name):
            out[name] = (version + " " + str(record.get("build", ""))).strip()
    return out


def is_conda_watched(name):
    return (name in ("tensorflow", "tensorflow-base", "tensorflow-gpu", "tensorflow-cpu",
                     "cudatoolkit", "cudnn", "nccl", "python", "numpy", "keras")
            or name.startswith(("cuda-", "libcu", "libnv", "libnccl")))


def static():
    path, user_site = import_path()
    sites = site_packages(path, user_site)
    return {
        "version": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "is_venv": in_venv(),
        "is_conda": is_conda(),
        "site_packages": sites,
        "preloads": preloads(sites),
        "conda_packages": conda_packages(sys.prefix) if is_conda() else None,
        "distributions": find_distributions(path),
        "tensorflow_package": tensorflow_package(path),
        "marker_environment": marker_environment(),
    }


def main():
    result = static()
    sys.stdout.write(json.dumps(result, default=str))
    sys.stdout.write("\n")
    sys.stdout.flush()


if __name__ == "__main__":
    # Die with the parent's time limit even if tfdoctor itself was killed (no orphan stuck in a
    # driver call): SIGALRM's default action ends the process, wherever it is blocked.
    signal.alarm(int(os.environ.get("TFDOCTOR_CHILD_DEADLINE", "0") or 0))
    main()
