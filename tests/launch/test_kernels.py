"""Jupyter kernels: `tfdoctor kernels`, `tfdoctor --kernel NAME`, and the notebook extension
run in a real kernel (jupyter_client + ipykernel), its HTML and JSON read back."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import need
from tfdoctor.cli import cli
from tfdoctor.kernels.specs import (
    KernelSpec,
    describe,
    differences,
    find_specs,
    interpreter,
    kernel_env,
    search_path,
)

ROOT = Path(__file__).resolve().parents[2]


def write_spec(kernels: Path, name: str, python: str, env: dict[str, str] | None = None,
               raw: str | None = None) -> Path:
    d = kernels / name
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(raw if raw is not None else json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python ({name})", "language": "python", "env": env or {}}))
    return d


def test_search_path_follows_jupyters_order():
    """$JUPYTER_PATH first, then the user data dir, the environments, then the system dirs,
    as jupyter_core.paths.jupyter_path("kernels") orders them."""
    dirs = search_path({"JUPYTER_PATH": "/a:/b", "HOME": "/home/u"}, ("/env",))
    assert dirs == ("/a/kernels", "/b/kernels", "/home/u/.local/share/jupyter/kernels",
                    "/env/share/jupyter/kernels", "/usr/local/share/jupyter/kernels",
                    "/usr/share/jupyter/kernels")
    assert search_path({"JUPYTER_DATA_DIR": "/d"})[0] == "/d/kernels"


def test_first_spec_of_a_name_wins_and_a_broken_one_is_a_row(tmp_path):
    """Jupyter uses the first kernel of a name on its path; a kernel.json that is not JSON is
    reported, never a traceback."""
    write_spec(tmp_path / "one", "tf", "/first/python")
    write_spec(tmp_path / "two", "tf", "/second/python")
    write_spec(tmp_path / "two", "bad", "", raw="{not json")
    specs = {s.name: s for s in find_specs([str(tmp_path / "one"), str(tmp_path / "two")])}
    assert specs["tf"].argv[0] == "/first/python"
    assert specs["bad"].error and "kernel.json" in specs["bad"].error


def test_kernel_env_and_differences_from_the_shell():
    """kernel.json's env overrides the server's (with ${VAR} expanded from it); the rows name
    what differs from the shell and where it comes from."""
    spec = KernelSpec("tf", "/k/tf", "TF", "python", (sys.executable, "-m", "ipykernel"),
                      env={"LD_LIBRARY_PATH": "/opt/cuda/lib64:${LD_LIBRARY_PATH}",
                           "CUDA_VISIBLE_DEVICES": "-1"})
    shell = {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/x"}
    env = kernel_env(spec, shell)
    assert env["LD_LIBRARY_PATH"] == "/opt/cuda/lib64:/x" and env["PATH"] == "/usr/bin"
    diffs = {d.name: d for d in differences(spec, shell, "/other/python")}
    assert set(diffs) == {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "python"}
    assert describe(diffs["CUDA_VISIBLE_DEVICES"]) == (
        "CUDA_VISIBLE_DEVICES: shell (unset), kernel -1 [kernel.json env]")
    assert diffs["python"].kernel == sys.executable


def test_native_python3_spec_runs_the_environments_python(tmp_path):
    """argv ["python", ...] is replaced by jupyter_client with the server's interpreter, so the
    spec ipykernel ships in an environment runs that environment's Python, not PATH's."""
    prefix = tmp_path / "env"
    (prefix / "bin").mkdir(parents=True)
    os.symlink(sys.executable, prefix / "bin" / "python")
    d = write_spec(prefix / "share" / "jupyter" / "kernels", "python3", "python")
    spec = find_specs([str(d.parent)])[0]
    assert interpreter(spec, {"PATH": "/usr/bin"}) == str(prefix / "bin" / "python")


@pytest.fixture
def kernels_env(tmp_path, tf_cpu_python, monkeypatch):
    """A kernel dir with a real TensorFlow kernel (tf-cpu venv) that hides the GPUs in its env
    block, and no `jupyter` on PATH (the standard search path is read)."""
    kernels = tmp_path / "jupyter" / "kernels"
    write_spec(kernels, "tf-cpu", tf_cpu_python, env={"CUDA_VISIBLE_DEVICES": "-1"})
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return kernels


def test_kernels_command_lists_with_a_verdict(kernels_env, tf_cpu_python):
    """`tfdoctor kernels --json`: each kernel's interpreter, env block, differences, verdict."""
    done = CliRunner().invoke(cli, ["kernels", "--json"])
    assert done.exit_code in (0, 1), done.output
    rows = {r["name"]: r for r in json.loads(done.stdout)["kernels"]}
    row = rows["tf-cpu"]
    assert row["python"] == tf_cpu_python and row["env"] == {"CUDA_VISIBLE_DEVICES": "-1"}
    assert {"name": "CUDA_VISIBLE_DEVICES", "shell": None, "kernel": "-1",
            "source": "kernel.json env"} in row["differences"]
    assert row["verdict"] and row["findings"] is not None
    text = CliRunner().invoke(cli, ["kernels"])
    assert "tf-cpu" in text.stdout and "CUDA_VISIBLE_DEVICES: shell (unset), kernel -1" in text.stdout


def test_kernel_option_diagnoses_the_kernel_as_it_starts(kernels_env, tf_cpu_python):
    """`--kernel NAME` diagnoses the kernel's Python with its env block applied, and says on
    stderr how the kernel differs from this shell; an unknown name is a usage error."""
    done = CliRunner().invoke(cli, ["--kernel", "tf-cpu", "--quick", "--json"])
    assert done.exit_code in (0, 1), done.output
    doc = json.loads(done.stdout)
    assert doc["facts"]["python"]["executable"].startswith(str(Path(tf_cpu_python).parent.parent))
    assert doc["facts"]["env"].get("CUDA_VISIBLE_DEVICES") == "-1"
    assert "Jupyter kernel tf-cpu" in doc["facts"]["python"]["chosen_by"]
    assert "differs from this shell: CUDA_VISIBLE_DEVICES" in done.stderr
    unknown = CliRunner().invoke(cli, ["--kernel", "nope", "--quick"])
    assert unknown.exit_code == 2 and "installed: tf-cpu" in unknown.stderr


def test_notebook_extension_in_a_real_kernel(tmp_path, python_without_tf):
    """`%load_ext tfdoctor`, `%tfdoctor` and `tfdoctor.check(as_json=True)` in a real ipykernel:
    the HTML has the findings and their fix commands, and the JSON names this kernel's Python.
    The kernel's Python has no TensorFlow, whatever .venv holds, so the verdict is known."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    kernels = tmp_path / "kernels"
    write_spec(kernels, "own", python_without_tf,
               env={"PYTHONPATH": str(ROOT / "doctor"), "CUDA_VISIBLE_DEVICES": "-1"})
    km = KernelManager(kernel_name="own",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    km.start_kernel(env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    outputs: list[dict] = []
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        cells = ["%load_ext tfdoctor", "%tfdoctor",
                 "import tfdoctor, json\n"
                 "doc = tfdoctor.check(as_json=True)\n"
                 "print(json.dumps({'exe': doc['facts']['python']['executable'], "
                 "'cvd': doc['facts']['env'].get('CUDA_VISIBLE_DEVICES'), "
                 "'ids': [f['id'] for f in doc['findings']]}))"]
        for cell in cells:
            reply = kc.execute_interactive(cell, timeout=120, output_hook=outputs.append)
            if reply["content"]["status"] != "ok":
                break
        kc.stop_channels()
    finally:
        km.shutdown_kernel(now=True)
    errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "ok", errors
    html = next(m["content"]["data"]["text/html"] for m in outputs
                if m["msg_type"] in ("display_data", "execute_result")
                and "text/html" in m["content"].get("data", {}))
    printed = json.loads("".join(m["content"]["text"] for m in outputs
                                 if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"))
    assert printed["exe"] == python_without_tf and printed["cvd"] == "-1"
    assert "Verdict:" in html
    for finding_id in printed["ids"]:
        assert f"data-id='{finding_id}'" in html
    assert "tf-not-installed" in printed["ids"]
    assert "<pre" in html, "fix commands are shown"


def test_kernelspec_env_fix_applies_and_undoes(tmp_path):
    """A kernel whose kernel.json env hides the GPUs and puts a stub libcuda first: the fix
    edits that block (no activation script reaches a kernel), through the real applier, with a
    diff first; undo puts kernel.json back byte for byte."""
    from helpers import change, healthy, judge
    from tfdoctor.fixing.apply import apply_plan, undo_last
    from tfdoctor.fixing.preview import preview_files
    from tfdoctor.kernels.fix import plan_kernel_fix
    from tfdoctor.kernels.specs import read_spec

    stubs = "/usr/local/cuda/lib64/stubs"
    d = write_spec(tmp_path / "kernels", "tf", sys.executable,
                   env={"CUDA_VISIBLE_DEVICES": "-1", "LD_LIBRARY_PATH": f"{stubs}:/opt/x",
                        "KEEP": "1"})
    original = (d / "kernel.json").read_bytes()
    spec = read_spec("tf", str(d))
    facts = change(healthy(gpus=2), env={"CUDA_VISIBLE_DEVICES": "-1"},
                   cuda_driver={"is_stub": True, "library": f"{stubs}/libcuda.so.1"})
    plan = plan_kernel_fix(spec, judge(facts))
    (step,) = plan.steps
    assert step.args == ("--unset", "CUDA_VISIBLE_DEVICES", "--set", "LD_LIBRARY_PATH", "/opt/x",
                         str(d / "kernel.json"))
    (diff,) = [c.diff() for c in preview_files(step)]
    assert any(ln.startswith("-") and "CUDA_VISIBLE_DEVICES" in ln for ln in diff.splitlines())
    assert (d / "kernel.json").read_bytes() == original, "the preview changes nothing"
    result = apply_plan(plan, lambda s: True, lambda s: False)
    assert result.changed
    env = json.loads((d / "kernel.json").read_text())["env"]
    assert env == {"LD_LIBRARY_PATH": "/opt/x", "KEEP": "1"}
    undo_last(str(d))
    assert (d / "kernel.json").read_bytes() == original


def test_kernelspec_env_fix_leaves_a_healthy_block_alone(kernels_env):
    """`kernels --fix NAME` plans nothing when kernel.json's env breaks nothing found here (no
    GPU: CUDA_VISIBLE_DEVICES=-1 hides nothing), and --apply without --fix is a usage error."""
    done = CliRunner().invoke(cli, ["kernels", "--fix", "tf-cpu", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["plan"]["steps"] == []
    assert CliRunner().invoke(cli, ["kernels", "--apply"]).exit_code == 2


def test_kernels_asks_jupyter_when_it_is_on_path(kernels_env, tf_cpu_python, monkeypatch):
    """With `jupyter` on PATH its own `kernelspec list --json` answer is used (its paths, its
    precedence), here the real jupyter_client command installed with the dev extra."""
    import shutil

    jupyter = Path(sys.executable).with_name("jupyter")
    if not jupyter.exists():
        need(False, "no jupyter command beside this interpreter (pip install jupyter_client)")
    monkeypatch.setenv("PATH", f"{jupyter.parent}:/usr/bin:/bin")
    assert shutil.which("jupyter") == str(jupyter)
    from tfdoctor.kernels.command import installed_specs

    specs = {s.name: s for s in installed_specs(dict(os.environ))}
    assert specs["tf-cpu"].argv[0] == tf_cpu_python
    assert specs["tf-cpu"].resource_dir == str(kernels_env / "tf-cpu")
