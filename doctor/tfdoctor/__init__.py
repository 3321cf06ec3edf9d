"""tfdoctor: an environment doctor for TensorFlow on NVIDIA GPUs."""

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext tfdoctor`: registers the `%tfdoctor` line magic (docs/jupyter-and-conda.md)."""
    from tfdoctor.kernels.notebook import load

    load(ipython)


def check(*, full: bool = False, as_json: bool = False, budget: float = 300.0) -> object:
    """Diagnose the running interpreter as it is (in a notebook: this kernel); shown as HTML.
    `as_json=True` returns the `tfdoctor --json` document as a dict."""
    from tfdoctor.kernels.notebook import check as run_check

    return run_check(full=full, as_json=as_json, budget=budget)
