"""The library fix in every way Python starts (issue 13), on a copy of the real CUDA TF venv.

TensorFlow 2.21's libtensorflow_framework.so.2 has no nvidia/cusolver/lib in its RUNPATH, so
libcusolver.so.11 does not load. In each launch mode, TensorFlow's own DSO loader is asked
(`_tfloader_child.py`: ctypes, `DsoLoader::GetCusolverDsoHandle()`, after the same
`find_spec("tensorflow")` an import starts with) whether it opens cuSOLVER: before
`tfdoctor fix --apply`, after it, and after `tfdoctor fix --undo`. The modes are real: bash,
dash, zsh, fish and tcsh sourcing the venv's own activate scripts, the bare interpreter, `env -i`,
and a Jupyter kernel started through jupyter_client with ipykernel installed in the copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixing.cached_envs import cached_env, copy_env, differences, site_packages, tree
from helpers import need

ROOT = Path(__file__).resolve().parents[2]
LOADER = ROOT / "doctor" / "tfdoctor" / "probes" / "_tfloader_child.py"
CLEAN = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
"""No LD_LIBRARY_PATH: the fix must work without one (CI's or a developer's must not leak in)."""
SHELLS = {
    "bash (activated)": ["bash", "-c", '. "$1/bin/activate" && exec python "$2" "$3"'],
    "dash (activated)": ["dash", "-c", '. "$1/bin/activate" && exec python "$2" "$3"'],
    "zsh (activated)": ["zsh", "-c", 'source "$1/bin/activate" && exec python "$2" "$3"'],
    # fish has no $0: its $argv starts with the word the others take as $0.
    "fish (activated)": ["fish", "-c",
                         "source $argv[2]/bin/activate.fish; and exec python $argv[3] $argv[4]"],
    # tcsh puts the words after -c's in $argv, from the one the others take as $0; the venv's
    # activate.csh reads $prompt, which only an interactive csh has.
    "tcsh (activated)": ["tcsh", "-f", "-c",
                         "set prompt=''; source $argv[2]/bin/activate.csh && exec python $argv[3] $argv[4]"],
}
"""Each runs `python` as found on PATH after activation: the venv's own."""
PROBE = '''
import json, runpy, sys, io, contextlib
out = io.StringIO()
sys.argv = [{loader!r}, {framework!r}]
with contextlib.redirect_stdout(out):
    try:
        runpy.run_path({loader!r}, run_name="__main__")
    except SystemExit:
        pass
answers = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{{")]
answer = [a for a in answers if a.get("name") == {library!r}]
print("TFDOCTOR-PROBE " + json.dumps({{"exe": sys.executable, "answer": answer[:1]}}))
'''
"""Asks TensorFlow's loader for every library, prints its answer for `library` (default cuSOLVER)."""


def write_probe(path: Path, venv: Path, library: str = "cusolver") -> Path:
    """The probe script for `venv`'s TensorFlow, at `path`."""
    framework = site_packages(venv) / "tensorflow" / "libtensorflow_framework.so.2"
    path.write_text(PROBE.format(loader=str(LOADER), framework=str(framework), library=library))
    return path


def verdict(stdout: str, venv: Path) -> str:
    """loads / fails from the probe's line; also checks the venv's own interpreter answered."""
    line = next(ln for ln in stdout.splitlines() if ln.startswith("TFDOCTOR-PROBE "))
    data = json.loads(line.split(" ", 1)[1])
    assert data["exe"].startswith(str(venv)), f"another python answered: {data['exe']}"
    answer = data["answer"][0]
    return "loads" if answer.get("path") and not answer.get("error") else "fails"


def shell_mode(argv: list[str], venv: Path, probe: Path) -> str:
    if not shutil.which(argv[0]):
        need(False, f"{argv[0]} not installed (tests/envs/apt.sh installs it)")
    done = subprocess.run([*argv, argv[0], str(venv), str(probe), "x"], env=dict(CLEAN),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return verdict(done.stdout, venv)


def bare_mode(venv: Path, probe: Path) -> str:
    done = subprocess.run([str(venv / "bin" / "python"), str(probe)], env=dict(CLEAN),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return verdict(done.stdout, venv)


def env_i_mode(venv: Path, probe: Path) -> str:
    done = subprocess.run(["env", "-i", str(venv / "bin" / "python"), str(probe)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return verdict(done.stdout, venv)


def kernel_mode(venv: Path, probe: Path, kernels: Path, name: str = "tfcopy") -> str:
    """A real kernel: jupyter_client starts the kernelspec's argv (the venv's python, as
    `python -m ipykernel install` writes it) with its env block, the probe runs in it, its
    output comes back."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=name,
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    km.start_kernel(env=dict(CLEAN))
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=90)
        chunks: list[str] = []

        def hook(msg: dict) -> None:
            if msg["msg_type"] == "stream":
                chunks.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                chunks.append("\n".join(msg["content"]["traceback"]))

        reply = kc.execute_interactive(f"exec(open({str(probe)!r}).read())", timeout=120,
                                       output_hook=hook)
        assert reply["content"]["status"] == "ok", "".join(chunks)
        kc.stop_channels()
        return verdict("".join(chunks), venv)
    finally:
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return launch_venv(tmp_path_factory.mktemp("launch") / "venv")


def launch_venv(dest: Path) -> Path:
    """A copy at `dest` of the cached tensorflow[and-cuda] venv with ipykernel, its activate
    scripts pointing at the copy."""
    dest = copy_env(cached_env("tf-cuda"), dest)
    src = str(cached_env("tf-cuda"))
    for script in (dest / "bin").glob("activate*"):
        script.write_text(script.read_text().replace(src, str(dest)))
    pip = subprocess.run([str(dest / "bin" / "python"), "-m", "pip", "install", "-q",
                          "--disable-pip-version-check", "ipykernel"],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    return dest


def run_modes(venv: Path, tmp: Path) -> dict[str, str]:
    probe = write_probe(tmp / "probe.py", venv)
    kernels = tmp / "kernels" / "tfcopy"
    kernels.mkdir(parents=True, exist_ok=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"], "display_name": "tf copy", "language": "python"}))
    modes = {name: shell_mode(argv, venv, probe) for name, argv in SHELLS.items()}
    modes["bare venv/bin/python"] = bare_mode(venv, probe)
    modes["env -i venv/bin/python"] = env_i_mode(venv, probe)
    modes["Jupyter kernel"] = kernel_mode(venv, probe, tmp / "kernels")
    return modes


def missing_sonames(venv: Path, tmp: Path) -> set[str]:
    """The sonames `tfdoctor --quick` reports as not loading for the bare interpreter."""
    done = tfdoctor("--quick", "--json", "--python", str(venv / "bin" / "python"), state=tmp)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return {f["evidence"]["library.soname"] for f in json.loads(done.stdout)["findings"]
            if f["id"] == "cuda-library-missing"}


def tfdoctor(*args: str, state: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tfdoctor", *args], capture_output=True,
                          text=True, timeout=600,
                          env={**CLEAN, "XDG_STATE_HOME": str(state), "HOME": str(state)})


def test_fix_works_in_every_launch_mode_and_undo_removes_it(venv, tmp_path, capsys):
    """The issue-13 table: cuSOLVER fails everywhere before, loads everywhere after the fix,
    fails everywhere again after the undo, and the venv is byte for byte as before."""
    site = site_packages(venv)
    before_tree = tree(venv)
    assert {"libcusolver.so.11", "libcurand.so.10"} <= missing_sonames(venv, tmp_path)
    before = run_modes(venv, tmp_path)
    applied = tfdoctor("fix", "--python", str(venv / "bin" / "python"), "--apply", "--yes",
                       "--json", state=tmp_path / "state")
    assert applied.returncode in (0, 1), applied.stderr[-3000:]
    doc = json.loads(applied.stdout)
    hook = next(s for s in doc["plan"]["steps"] if s["fix_id"] == "activation-hook-ld-library-path")
    assert hook["files"] == [str(site / "tfdoctor-preload.pth"), str(site / "tfdoctor-preload.py")]
    assert not [s for s in doc["plan"]["steps"] if s["kind"] == "hook" and s is not hook], \
        "nothing else needs a shell hook here: bin/activate stays untouched"
    assert "cuda-library-missing" in doc["before"]
    assert missing_sonames(venv, tmp_path) == {"libnvshmem_host.so.3"}, \
        "the static model sees the preload (nvSHMEM has no pip copy here: nothing to preload)"
    from tfdoctor.fixing.launch import judge_report
    from tfdoctor.fixing.model import FixPlan

    loaded = {lib.name: lib for lib in judge_report(FixPlan.from_dict(doc["plan"]), dict(CLEAN),
                                                    loader=True).facts.libraries}
    assert loaded["cusolver"].found_via == "preload" and not loaded["cusolver"].model_disagrees, \
        "TensorFlow's own loader agrees with the model: the preload is what it opens"
    after = run_modes(venv, tmp_path)
    undone = tfdoctor("fix", "--undo", "--python", str(venv / "bin" / "python"),
                      state=tmp_path / "state")
    assert undone.returncode == 0, undone.stderr[-3000:]
    after_undo = run_modes(venv, tmp_path)
    with capsys.disabled():
        print("\nlaunch mode                 before  after   after undo")
        for mode in before:
            print(f"{mode:<27} {before[mode]:<7} {after[mode]:<7} {after_undo[mode]}")
    assert set(before.values()) == {"fails"}, before
    assert set(after.values()) == {"loads"}, after
    assert set(after_undo.values()) == {"fails"}, after_undo
    assert differences(venv, before_tree) == [], "undo leaves the venv byte for byte as it was"


def test_preload_costs_nothing_without_tensorflow(venv):
    """An interpreter that never imports TensorFlow loads no CUDA library (the hook only waits)."""
    pth = site_packages(venv) / "tfdoctor-preload.pth"
    subprocess.run(["sh", str(ROOT / "fixes" / "activation-hook-ld-library-path.sh"),
                    "--preload", str(site_packages(venv) / "nvidia/cusolver/lib/libcusolver.so.11"),
                    "--preload", "/nonexistent/libgone.so.1",
                    "--only-for", str(site_packages(venv) / "tensorflow-2.21.0.dist-info"),
                    "preload", str(pth)], check=True)
    try:
        code = ("import sys, importlib.util\n"
                "maps = lambda: open('/proc/self/maps').read()\n"
                "assert 'libcusolver' not in maps()\n"
                "importlib.util.find_spec('tensorflow')\n"
                "assert 'libcusolver' in maps(), 'loaded at the first tensorflow lookup'\n"
                "print('ok')")
        done = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=dict(CLEAN),
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "ok" and not done.stderr, done.stderr
    finally:
        pth.unlink()
