"""Jupyter kernels as targets: find the kernelspecs, diagnose one as Jupyter starts it, and the
notebook extension (`%load_ext tfdoctor`, `tfdoctor.check()`) that diagnoses the running kernel.

specs.py reads kernelspecs (pure but for reading kernel.json files); command.py is the
`tfdoctor kernels` command and the `--kernel NAME` target; notebook.py renders a report as HTML.
"""
