"""Package listings (pip list / freeze / show, conda list) and TensorFlow's own prints, from real text."""

from __future__ import annotations

from tfdoctor.triage.recognisers import build_info, pip_list
from triage_fixtures import lines_of, observe_all, observed


def _packages(obs):
    return [value for path, value in obs if path == "python.package"]


def test_pip_list_of_the_tf_cuda_venv():
    """A whole `pip list` is a listing (absent packages are absent) and names TensorFlow's distribution."""
    obs = observed(pip_list, "pip_list/tf_cuda_pip_list.txt")
    assert obs[0] == ("python.package_list", "pip list")
    assert len(_packages(obs)) == 45
    assert ("nvidia-cudnn-cu12", "9.28.0.42") in _packages(obs)
    assert ("ml-dtypes", "0.6.0") in _packages(obs)  # "ml_dtypes" normalised
    assert [(p, v) for p, v in obs if p.startswith("tensorflow.")] == [
        ("tensorflow.distribution", ("tensorflow", "2.21.0")),
        ("tensorflow.version", "2.21.0"),
    ]


def test_pip_freeze_without_header():
    """A freeze has no header: five or more name==version rows make it a listing."""
    obs = observed(pip_list, "pip_list/tf_cuda_pip_freeze.txt")
    assert obs[0] == ("python.package_list", "pip freeze")
    assert len(_packages(obs)) == 42
    assert ("tensorflow.distribution", ("tensorflow", "2.21.0")) in obs


def test_pip_show():
    """`pip show tensorflow` gives the package and the TensorFlow version, but is no whole listing."""
    assert observed(pip_list, "pip_list/tf_cuda_pip_show.txt") == [
        ("python.package", ("tensorflow", "2.21.0")),
        ("tensorflow.distribution", ("tensorflow", "2.21.0")),
        ("tensorflow.version", "2.21.0"),
    ]


def test_conda_list_marks_conda_and_keeps_cuda_rows():
    """conda list marks a conda env; cudatoolkit and cudnn rows are packages like any other."""
    obs = observed(pip_list, "pip_list/anaconda11063_conda_list.txt")
    assert obs[:2] == [("python.conda", True), ("python.package_list", "conda list")]
    packages = _packages(obs)
    assert len(packages) == 16
    assert ("cudatoolkit", "9.0") in packages and ("cudnn", "7.6.0") in packages
    assert ("-tflow-select", "2.3.0") in packages


def test_windows_conda_list_with_pip_rows():
    """Old conda's "<pip>" build rows and rows without a channel are read too."""
    obs = observed(pip_list, "pip_list/omnia813_windows_conda.txt")
    assert obs[:2] == [("python.conda", True), ("python.package_list", "conda list")]
    assert _packages(obs) == [
        ("bleach", "1.5.0"),
        ("bokeh", "0.12.14"),
        ("ca-certificates", "2017.08.26"),
        ("certifi", "2018.1.18"),
        ("click", "6.7"),
        ("cloudpickle", "0.5.2"),
        ("cudatoolkit", "8.0"),
        ("cudnn", "6.0"),
        ("cycler", "0.10.0"),
    ]


def test_conda_list_cut_short():
    """A conda list cut after five rows still reads those rows."""
    obs = observed(pip_list, "pip_list/tf88676_conda_pypi.txt")
    assert _packages(obs) == [
        ("-libgcc-mutex", "0.1"),
        ("-openmp-mutex", "5.1"),
        ("absl-py", "2.1.0"),
        ("astunparse", "1.6.3"),
        ("bzip2", "1.0.8"),
    ]


def test_install_commands_and_report_lines_are_not_listings():
    """`pip install 'tensorflow[and-cuda]'` and another tool's "name : version" lines install nothing."""
    assert observed(pip_list, "pip_list/tf62328_install_commands.txt") == []
    assert observed(pip_list, "pip_list/cudnn_frontend400_not_a_listing.txt") == []


def test_requirements_and_prose_are_not_listings():
    """Pins next to a ">=" line are a requirements file; a lone "tensorflow 2.15.0" is prose."""
    requirements = ["numpy>=1.23", "tensorflow==2.15.0", "keras==2.15.0", "absl-py==2.1.0", "h5py==3.10.0"]
    requirements += ["six==1.16.0", "wrapt==1.14.1"]
    assert observe_all(pip_list, requirements) == []
    assert observe_all(pip_list, ["I have", "tensorflow 2.15.0", "installed"]) == []


def test_rows_right_after_a_filtered_command():
    """`pip list | grep tensorflow` rows count as installed, though not as a whole listing."""
    lines = [
        "$ pip list | grep tensorflow",
        "tensorflow               2.15.0",
        "tensorflow-io-gcs-filesystem 0.35.0",
    ]
    assert [(o.path, o.value) for o in observe_all(pip_list, lines)] == [
        ("python.package", ("tensorflow", "2.15.0")),
        ("tensorflow.distribution", ("tensorflow", "2.15.0")),
        ("tensorflow.version", "2.15.0"),
        ("python.package", ("tensorflow-io-gcs-filesystem", "0.35.0")),
    ]


def test_build_info_and_version_prints_of_the_tf_cuda_venv():
    """One-line get_build_info(), tf.__version__ after log lines, and is_built_with_cuda()'s True."""
    assert observed(build_info, "build_info/tf_cuda_venv.txt") == [
        ("tensorflow.is_cuda_build", True),
        ("tensorflow.version", "2.21.0"),
        ("tensorflow.compute_capabilities", ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")),
        ("tensorflow.cuda_version", "12.5.1"),
        ("tensorflow.cudnn_version", "9"),
        ("tensorflow.is_cuda_build", True),
    ]
    assert lines_of(build_info, "build_info/tf_cuda_venv.txt")[:2] == [
        (10, "tensorflow.is_cuda_build"),
        (8, "tensorflow.version"),
    ]


def test_build_info_pretty_printed():
    """pprint's OrderedDict wraps the capabilities over lines; every build field is still read."""
    assert observed(build_info, "build_info/conda_forge157_pprint.txt") == [
        (
            "tensorflow.compute_capabilities",
            ("sm_35", "sm_50", "sm_60", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "compute_86"),
        ),
        ("tensorflow.cuda_version", "11.2"),
        ("tensorflow.cudnn_version", "8"),
        ("tensorflow.is_cuda_build", True),
    ]


def test_issue_template_headings_and_claimed_cuda():
    """The template's TensorFlow and Python versions are read; its CUDA/cuDNN line is the toolkit
    the user says is installed (a claim, never TensorFlow's build)."""
    assert observed(build_info, "build_info/tf61689_template.txt") == [
        ("tensorflow.version", "2.13.0"),
        ("python.version", "3.8.10"),
        ("toolkit.claimed_version", "12.0"),
    ]


def test_old_template_with_git_version():
    """TF 1's template line "b'v1.12.0-rc2-3-ga6d8ffae09' 1.12.0" is GIT_VERSION then VERSION."""
    assert observed(build_info, "build_info/tf26395_old_template.txt") == [
        ("tensorflow.version", "1.12.0"),
        ("python.version", "3.6"),
        ("toolkit.claimed_version", "9.0"),
    ]


def test_a_family_under_the_templates_heading_is_the_family():
    """ "tf 2.13" or a bare "2.10" under "### TensorFlow version" names the release family and no
    release: the family is what the ticket says (tensorflow/tensorflow#76038 wrote "2.10")."""
    assert observed(build_info, "build_info/tf88122_tf_213_prose.txt") == [("tensorflow.version", "2.13")]
    template = ["### TensorFlow version", "", "2.10", "", "### Custom code"]
    assert [o.value for o in build_info.recognise(template) if o.path == "tensorflow.version"] == ["2.10"]
    # a number that is no TensorFlow family is not read
    assert [o for o in build_info.recognise(["### TensorFlow version", "", "latest"])] == []
