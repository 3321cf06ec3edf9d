"""Python packages that break TensorFlow: numpy, protobuf, ml-dtypes, Keras and tf-keras."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from tfdoctor import compat
from tfdoctor.checks.advice import install_tf_keras
from tfdoctor.checks.common import pip_install, pip_uninstall, version
from tfdoctor.facts import Facts, ProbeIssue
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.registry import CheckConfig, CouldNotCheck, NotApplicable, check

PINNED = ("numpy", "protobuf", "ml-dtypes", "h5py")
KERAS3 = "https://keras.io/getting_started/#tensorflow--keras-2-backwards-compatibility"


# Signals that come from another process (the OOM killer, a scheduler's limit, a terminal): the
# interpreter may be fine. Any other (SIGSEGV, SIGABRT, SIGILL, SIGBUS, ...) it raised itself while
# running a child that imports only the standard library, and will raise again.
FROM_OUTSIDE = frozenset({"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGPIPE"})
KILLED_BY = re.compile(r"\bkilled by (SIG[A-Z0-9]+)")
"""How host.CommandResult.describe_failure names the signal in a ProbeIssue's message."""


def _did_not_finish(issue: ProbeIssue) -> bool:
    """A timeout, a kill from outside, or a crash of the probe itself: says nothing about the
    interpreter."""
    if issue.kind == "timeout":
        return True
    signal = KILLED_BY.search(issue.message) if issue.kind == "crash" else None
    return issue.kind == "crash" and (signal is None or signal[1] in FROM_OUTSIDE)


@check("python-interpreter", "The target Python interpreter runs", "python",
       emits=("python-unusable",))
def python_interpreter(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """The interpreter given with --python (or tfdoctor's own) answered the probe.

    One that hung or was killed from outside is could-not-check (exit 3, as docs/exit-codes.md
    promises for a probe that did not finish); one that answered with an error or garbage, or
    crashed by itself (a segfault), is unusable."""
    stuck = [i for i in facts.probe_issues if i.probe == "target" and _did_not_finish(i)]
    if facts.python.error and stuck:
        raise CouldNotCheck("python.version",
                            reason=f"the target interpreter did not answer ({stuck[0].kind})")
    if facts.python.error:
        yield Finding("python-unusable", Severity.ERROR,
                      f"The Python interpreter {facts.python.executable} could not be probed: "
                      f"{facts.python.error}.", {"python.executable": facts.python.executable},
                      hint="Pass --python with the interpreter of the environment TensorFlow is in.")


def _requirements(facts: Facts) -> dict[str, str]:
    """TF's own metadata first; the tables when the metadata lacks a package."""
    tf = facts.tensorflow
    if tf is None:
        return {}
    release = compat.tf_release(tf.version) if tf.version else None
    merged = dict(release.requires) if release else {}
    merged.update(tf.requirements)
    return merged


@check("python-packages", "numpy, protobuf, ml-dtypes within TensorFlow's ranges", "python",
       emits=("package-out-of-range",), needs="tensorflow", reads=("tensorflow",))
def python_packages(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """pip may leave a package outside TF's range (e.g. numpy 2 with TF < 2.18: import fails)."""
    tf = facts.tensorflow
    reqs = _requirements(facts)
    if not any(facts.known(f"python.packages.{name}") for name in PINNED):
        raise CouldNotCheck("python.packages")
    for name in PINNED:
        have, spec = facts.python.packages.get(name), reqs.get(name)
        if not have or not spec:
            continue
        try:
            ok = SpecifierSet(spec).contains(have, prereleases=True)
        except InvalidSpecifier:
            continue
        if ok:
            continue
        yield Finding(
            "package-out-of-range", Severity.ERROR,
            f"{name} {have} is outside TensorFlow {tf.version if tf else ''}'s range {spec}.",
            {"package": name, "installed": have, "required": spec},
            hint=f"Install a {name} that TensorFlow accepts.",
            remediation=Remediation("pin-python-packages", (pip_install(facts, f"{name}{spec}"),)))


@check("keras-version", "Keras matches TensorFlow (Keras 3 vs tf-keras)", "python",
       emits=("keras-2-with-tf216", "tf-keras-missing", "tf-keras-mismatch", "keras-3-with-old-tf",
              "keras-tf-mismatch", "tf-log-keras3-incompatible"), needs="tensorflow",
       reads=("tensorflow",))
def keras_version(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """TF >= 2.16 uses Keras 3; Keras 2 code needs tf-keras and TF_USE_LEGACY_KERAS=1."""
    tf = facts.tensorflow
    tfv = version(tf.version if tf else None)
    if tf is None or tfv is None:
        return
    if tfv < Version("2.16"):
        yield from _keras_before_216(facts, tf.version or "", tfv)
        return
    pk = facts.python.packages
    keras, tf_keras = version(pk.get("keras")), version(pk.get("tf-keras"))
    legacy = facts.env.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true")
    series = f"{tfv.major}.{tfv.minor}"
    if legacy and tf_keras is None and facts.known("python.packages.tf-keras"):
        yield Finding("tf-keras-missing", Severity.ERROR,
                      "TF_USE_LEGACY_KERAS=1 is set but tf-keras is not installed: tf.keras fails "
                      "to import.", {"env.TF_USE_LEGACY_KERAS": facts.env["TF_USE_LEGACY_KERAS"]},
                      hint="Install tf-keras of the same series as TensorFlow, or unset the variable.",
                      remediation=Remediation("pin-python-packages", (
                          install_tf_keras(facts, series),)), links=(KERAS3,))
    elif keras is not None and keras.major < 3 and not legacy:
        yield Finding("keras-2-with-tf216", Severity.ERROR,
                      f"Keras {pk['keras']} is installed, but TensorFlow {tf.version} needs Keras 3.",
                      {"keras": pk["keras"], "tensorflow.version": tf.version or ""},
                      hint="For Keras 2 code install tf-keras and set TF_USE_LEGACY_KERAS=1; "
                      "otherwise upgrade Keras.",
                      remediation=Remediation("pin-python-packages", (
                          pip_install(facts, "keras>=3"),)), links=(KERAS3,))
    worked = version(facts.intent.worked_with)
    if worked is not None and worked < Version("2.16") and not legacy and tf_keras is None \
            and (keras is None or keras.major >= 3):
        # The same cause as Keras 3's own errors in a log: code of a Keras 2 release run under Keras 3
        yield Finding("tf-log-keras3-incompatible", Severity.ERROR,
                      f"The code worked with TensorFlow {facts.intent.worked_with}, whose tf.keras is "
                      f"Keras 2; TensorFlow {tf.version}'s is Keras 3, which changed or removed much of "
                      "its API.",
                      {"worked_with": f"{facts.intent.worked_with} "
                                      f"({facts.provenance.get('intent.worked_with', 'the ticket')})",
                       "tensorflow.version": tf.version or ""},
                      hint="Keep the Keras 2 code: pip install tf-keras of TensorFlow's series and export "
                           "TF_USE_LEGACY_KERAS=1 before Python starts; or port the code to Keras 3.",
                      remediation=Remediation("pin-python-packages", (install_tf_keras(facts, series),)),
                      links=(KERAS3,))
    needs_keras2 = [name for name in KERAS2_PACKAGES if name in pk]
    if needs_keras2 and tf_keras is None and not (legacy and "tf-keras" not in pk):
        name = needs_keras2[0]
        listed = facts.known("python.packages.tf-keras")
        yield Finding("tf-keras-missing", Severity.ERROR,
                      f"{name} needs Keras 2 (the tf-keras package) under TensorFlow {tf.version}, whose "
                      f"tf.keras is Keras 3; tf-keras is {'not installed' if listed else 'not shown'}.",
                      {"package": name, "tensorflow.version": tf.version or "",
                       "tf-keras": "not installed" if listed else "unknown"},
                      hint=f"Install tf-keras of TensorFlow's series ({KERAS2_PACKAGES[name]}).",
                      remediation=Remediation("pin-python-packages", (
                          install_tf_keras(facts, series),)), links=(KERAS3,))
    if tf_keras is not None and (tf_keras.major, tf_keras.minor) != (tfv.major, tfv.minor):
        yield Finding("tf-keras-mismatch", Severity.WARNING,
                      f"tf-keras {pk['tf-keras']} does not match TensorFlow {tf.version}.",
                      {"tf-keras": pk["tf-keras"], "tensorflow.version": tf.version or ""},
                      hint="tf-keras releases track TensorFlow's minor version.",
                      remediation=Remediation("pin-python-packages", (
                          install_tf_keras(facts, series),)))


KERAS2_PACKAGES = {
    # deepface imports tf_keras itself from TF 2.16 and raises "You have tensorflow X and this
    # requires tf-keras package" without it (its maintainer in serengil/deepface#1272)
    "deepface": "deepface then uses it by itself",
    # hub.KerasLayer is a Keras 2 layer (tensorflow/hub#903)
    "tensorflow-hub": "and export TF_USE_LEGACY_KERAS=1 before Python starts, for hub.KerasLayer",
    # GPflow's maintainer in GPflow/GPflow#2106
    "gpflow": "and export TF_USE_LEGACY_KERAS=1 before Python starts",
}
"""Packages whose Keras code is Keras 2 only, with what else they need beside tf-keras (checked
2026-11-23)."""


def _keras_before_216(facts: Facts, tf_version: str, tfv: Version) -> Iterator[Finding]:
    """TF 2.6-2.15 require the keras of their own minor (setup.py: keras >= 2.x, < 2.x+1); Keras 3
    only works with TF >= 2.16 (keras.io), whatever older release it meets (2.4 and 2.5 carried
    their Keras inside TensorFlow, and Keras 3 imports TensorFlow modules they do not have)."""
    have = facts.python.packages.get("keras")
    keras = version(have)
    if keras is None or (tfv < Version("2.6") and keras.major < 3):
        return
    series = f"{tfv.major}.{tfv.minor}"
    fix = Remediation("pin-python-packages", (pip_install(facts, f"keras~={series}.0"),))
    if keras.major >= 3 and tfv < Version("2.6"):
        yield Finding("keras-3-with-old-tf", Severity.ERROR,
                      f"Keras {have} is installed, but TensorFlow {tf_version} carries its own Keras 2 "
                      "(tf.keras) and Keras 3 needs TensorFlow 2.16 or newer.",
                      {"keras": have or "", "tensorflow.version": tf_version},
                      hint="Uninstall keras and use tf.keras, or upgrade TensorFlow to 2.16 or newer for "
                           "Keras 3.",
                      remediation=Remediation("pin-python-packages", (pip_uninstall(facts, "keras"),)),
                      links=(KERAS3,))
    elif keras.major >= 3:
        yield Finding("keras-3-with-old-tf", Severity.ERROR,
                      f"Keras {have} is installed, but TensorFlow {tf_version} works only with Keras 2 "
                      f"({series}): tf.keras and Keras 3 code break each other.",
                      {"keras": have or "", "tensorflow.version": tf_version},
                      hint=f"Install keras~={series}.0, or upgrade TensorFlow to 2.16 or newer for Keras 3.",
                      remediation=fix, links=(KERAS3,))
    elif (keras.major, keras.minor) != (tfv.major, tfv.minor):
        yield Finding("keras-tf-mismatch", Severity.ERROR,
                      f"Keras {have} and TensorFlow {tf_version} are different releases; TensorFlow "
                      f"{series} requires keras {series}.x (a newer one fails at import).",
                      {"keras": have or "", "tensorflow.version": tf_version},
                      hint=f"Install keras~={series}.0.", remediation=fix)


COMPANIONS = ("tensorflow-estimator", "tensorflow-text", "tensorboard", "tensorflow-probability")
TFP_OFFSET = 8
"""TensorFlow Probability 0.N is the release for TensorFlow 2.(N-8), from TF 2.4 (TFP 0.12) to TF 2.16
(TFP 0.24); its release notes name the one TF release each is tested against. Data points:
0.12 for 2.4 (github.com/open-ce/open-ce/issues/226), 0.14 needs 2.6 (github.com/secondmind-labs/
GPflux/pull/52), 0.22 needs 2.14 (github.com/scikit-hep/pyhf/pull/2344, TFP's v0.22.0 notes), 0.24
for 2.16 (github.com/rs-station/careless/pull/157, TFP's v0.24.0 notes); checked 2026-11-23. Later
TFP releases do not follow the offset (2.17 has none of its own), so the rule stops at TF 2.16."""
TFP_LAST_TF = Version("2.16")


def _companion_series(name: str, tfv: Version) -> tuple[int, int] | None:
    """The (major, minor) of `name` made for TensorFlow tfv; None where no rule applies."""
    if name == "tensorflow-estimator" and tfv >= Version("2.16"):
        return None
    if name == "tensorflow-probability":
        if not Version("2.4") <= tfv < Version(f"{TFP_LAST_TF.major}.{TFP_LAST_TF.minor + 1}"):
            return None
        return 0, tfv.minor + TFP_OFFSET
    return tfv.major, tfv.minor


@check("tf-companion-packages", "tensorflow-estimator, -text, -probability, tensorboard of TF's release",
       "python", emits=("tf-companion-mismatch",), needs="tensorflow", reads=("tensorflow",))
def tf_companion_packages(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """These are released per TensorFlow minor (TF's setup.py pins tensorboard and, up to 2.15,
    tensorflow-estimator to its own minor; tensorflow-text must match TensorFlow's minor)."""
    tf = facts.tensorflow
    tfv = version(tf.version if tf else None)
    if tf is None or tfv is None:
        return
    for name in COMPANIONS:
        have = facts.python.packages.get(name)
        v = version(have)
        want = _companion_series(name, tfv) if v is not None else None
        if v is None or want is None:
            continue
        if (v.major, v.minor) != want:
            series = f"{want[0]}.{want[1]}"
            # From 0.24 TFP's Keras layers need tf-keras, which its [tf] extra brings (TFP 0.24 notes).
            spec = f"{name}[tf]" if name == "tensorflow-probability" and want >= (0, 24) else name
            yield Finding("tf-companion-mismatch",
                          Severity.WARNING if name == "tensorboard" else Severity.ERROR,
                          f"{name} {have} is not of TensorFlow {tf.version}'s release "
                          f"({name} {series} is).",
                          {"package": name, "installed": have or "", "tensorflow.version": tf.version or ""},
                          hint=f"Install {spec}~={series}.0.",
                          remediation=Remediation("pin-python-packages", (
                              pip_install(facts, f"{spec}~={series}.0"),)))


TF_BUILDS = frozenset({"tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
                       "tensorflow-aarch64", "tensorflow-rocm", "tensorflow-metal"})
"""Builds of TensorFlow itself (or its Apple plugin), not companions that follow its releases."""


@check("companion-wheel", "The TensorFlow companions the ticket needs have wheels", "python",
       emits=("tf-log-companion-no-wheel",))
def companion_wheel(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A TensorFlow companion (tensorflow-text, -io, -addons, -decision-forests, ...) that the
    ticket says pip has no wheel of: companions publish wheels per TensorFlow series and Python,
    often weeks after TensorFlow, and pip then stops on the conflict or falls back to an older
    TensorFlow. pip's own "No matching distribution found for tensorflow-text" is the same cause,
    read from the log (smoke-recipes reports it; this does not report it twice)."""
    named = [p for p in facts.intent.no_wheel if p not in TF_BUILDS]
    if not named or (facts.smoke and any(c.id == "companion-no-wheel" for c in facts.smoke.causes)):
        raise NotApplicable
    py = facts.python.version
    for name in named:
        files = f"https://pypi.org/project/{name}/#files"
        yield Finding(
            "tf-log-companion-no-wheel", Severity.ERROR,
            f"The ticket says pip has no wheel of {name}{f' for Python {py}' if py else ''}: pip then "
            "stops on the conflict, falls back to an older TensorFlow whose companion has one, or "
            "installs a placeholder release.",
            {"package": name, "where": facts.provenance.get("intent.no_wheel", "the ticket"),
             **({"python.version": py} if py else {})},
            hint=f"Use a Python version {name} publishes wheels for ({files}), or wait for a release "
            f"of it that adds this Python; keep TensorFlow at the series of the {name} you install.",
            links=(files,))
