"""A fake NVIDIA stack for tests: stub libraries laid out on a fake machine (see machine.py).

docs/scenarios.md describes the scenario documents `machine.from_scenario` builds from.
"""
