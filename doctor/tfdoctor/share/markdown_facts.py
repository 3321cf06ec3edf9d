"""The facts part of the Markdown report: one table row per area, libraries, environment, smoke."""

from __future__ import annotations

import re
from collections import Counter

from tfdoctor.docload import printable
from tfdoctor.facts import Facts, GpuFacts

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|])")


def esc(text: str) -> str:
    """Prose for Markdown: special characters backslash-escaped (CommonMark, section 2.4), control
    characters from the facts written as \\xNN (a terminal showing the file must not obey them)."""
    return _SPECIAL.sub(r"\\\1", printable(text, keep_newlines=True))


def code(value: object) -> str:
    """A value as an inline code span; backticks inside get a longer fence (CommonMark 6.1)."""
    text = printable(str(value).replace("\n", " "))
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def facts_rows(facts: Facts) -> list[tuple[str, str]]:
    """(name, Markdown value) rows: one line per area, identical GPUs folded into one row."""
    p, py, d, cu, tf, x = (
        facts.platform,
        facts.python,
        facts.driver,
        facts.cuda_driver,
        facts.tensorflow,
        facts.xla,
    )
    rows = [
        (
            "platform",
            code(_join(p.system, p.release, p.machine, p.distro, p.glibc and f"glibc {p.glibc}"))
            + _flags(("container", p.in_container), ("WSL", p.is_wsl)),
        ),
        ("CPU features", code(" ".join(p.cpu_flags)) if p.cpu_flags else "not read"),
        (
            "Python",
            code(_join(py.version, py.implementation))
            + " "
            + code(py.executable)
            + _flags(("venv", py.is_venv), ("conda", py.is_conda))
            + (f" error: {code(py.error)}" if py.error else ""),
        ),
    ]
    if tf is None:
        rows.append(("TensorFlow", "not installed"))
    else:
        dists = ", ".join(f"{x.name} {x.version}" for x in tf.distributions)
        built = _join(
            tf.cuda_version and f"CUDA {tf.cuda_version}",
            tf.cudnn_version and f"cuDNN {tf.cudnn_version}",
            tf.nccl_version and f"NCCL {tf.nccl_version}",
        )
        rows.append(
            (
                "TensorFlow",
                code(dists or tf.version or "?")
                + (
                    " CUDA build"
                    if tf.is_cuda_build
                    else " CPU-only build"
                    if tf.is_cuda_build is False
                    else ""
                )
                + (f", built with {code(built)}" if built else "")
                + (
                    f", kernels for {code(' '.join(tf.compute_capabilities))}"
                    if tf.compute_capabilities
                    else ""
                ),
            )
        )
    rows.append(
        (
            "NVIDIA driver",
            code(d.nvml_error)
            if d.nvml_error
            else code(
                _join(
                    d.driver_version,
                    d.cuda_driver_version and f"(supports CUDA {d.cuda_driver_version})",
                )
            )
            + (
                f", kernel module {code(d.kernel_module_version)}"
                if d.kernel_module_version
                else ", kernel module not loaded"
            )
            + (", **nouveau loaded**" if d.nouveau_loaded else ""),
        )
    )
    rows.append(
        (
            "libcuda",
            code(cu.library or cu.load_error or "not found")
            + " "
            + code(
                _join(
                    cu.init_result,
                    cu.device_count is not None and f"{cu.device_count} device(s)",
                    cu.is_stub and "STUB",
                    cu.crash and f"crashed: {cu.crash}",
                )
            ),
        )
    )
    rows += [("GPUs" if i == 0 else "", text) for i, text in enumerate(_gpu_groups(d.gpus))]
    if not d.gpus:
        rows.append(("GPUs", "none seen by NVML"))
    if x is not None:
        rows.append(
            (
                "XLA",
                f"ptxas {code(x.ptxas or 'not found')}"
                + (f" {code(x.ptxas_version)}" if x.ptxas_version else "")
                + f", libdevice {code(x.libdevice or 'not found')}",
            )
        )
    rows += [("probe issue", code(f"{i.probe} {i.kind}: {i.message}")) for i in facts.probe_issues]
    return rows


def _gpu_groups(gpus: tuple[GpuFacts, ...]) -> list[str]:
    groups = Counter(
        (
            g.name,
            g.compute_capability,
            g.memory_total_mib,
            g.pcie_gen_current,
            g.pcie_width_current,
            g.mig_mode,
            g.persistence_mode,
        )
        for g in gpus
    )
    out = []
    for (name, cc, mem, gen, width, mig, persist), count in groups.items():
        out.append(
            f"{count} x {code(name or '?')} "
            + code(
                _join(
                    cc and f"cc {cc}",
                    mem and f"{mem} MiB",
                    gen and f"PCIe gen{gen} x{width}",
                    mig and "MIG on",
                    persist is False and "persistence off",
                )
            )
        )
    odd = [g for g in gpus if g.throttle_reasons or g.ecc_uncorrected_volatile]
    out += [
        f"GPU {g.index}: "
        + code(
            _join(
                g.throttle_reasons and "throttle " + ",".join(g.throttle_reasons),
                g.ecc_uncorrected_volatile
                and f"{g.ecc_uncorrected_volatile} uncorrected ECC errors",
            )
        )
        for g in odd
    ]
    return out


def libraries_section(facts: Facts) -> list[str]:
    if not facts.libraries:
        return []
    lines = [
        "### CUDA libraries TensorFlow loads",
        "",
        "| library | version | origin | found via | path |",
        "| --- | --- | --- | --- | --- |",
    ]
    for lib in facts.libraries:
        version = lib.version and f"{lib.version} ({lib.version_source})"
        lines.append(
            f"| {code(lib.soname)} | {code(version or lib.error or '?')} | "
            f"{esc(lib.origin or '')} | {esc(lib.found_via or '')} | "
            f"{code(lib.path) if lib.path else '**not found**'} |"
        )
    return [*lines, ""]


def environment_section(facts: Facts) -> list[str]:
    if not facts.env:
        return []
    return [
        "### Environment (allowlisted variables)",
        "",
        *(f"- {code(f'{k}={v}')}" for k, v in facts.env.items()),
        "",
    ]


def smoke_section(facts: Facts) -> list[str]:
    s = facts.smoke
    if s is None:
        return []
    from tfdoctor.render_text import recipe_status, smoke_outcome

    lines = [
        f"### Smoke run: {code(smoke_outcome(s))}" + (f" ({code(s.exit)})" if s.exit else ""),
        "",
        "| recipe | device | status | metrics |",
        "| --- | --- | --- | --- |",
    ]
    for r in s.recipes:
        status, why = recipe_status(r)
        metrics = ", ".join(f"{k} {v:.4g}" for k, v in r.metrics.items())
        shown = f" ({esc(why)})" if why else ""
        lines.append(
            f"| {code(r.name)} | {code(r.device or '-')} | {status}{shown} | "
            f"{code(metrics) if metrics else (esc(r.detail or ''))} |"
        )
    return [*lines, ""]


def table_cell(text: str) -> str:
    # A pipe ends a table cell even inside a code span; GFM reads "\\|" as a literal one.
    return text.replace("|", "\\|")


def _join(*parts: object) -> str:
    return " ".join(str(p) for p in parts if p)


def _flags(*pairs: tuple[str, bool | None]) -> str:
    on = [name for name, value in pairs if value]
    return f" ({', '.join(on)})" if on else ""
