"""What a file-writing step would change: run its script on scratch copies and diff them."""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tfdoctor.errors import FixError
from tfdoctor.fixing.model import FixStep
from tfdoctor.fixing.scripts import load_scripts, script_for
from tfdoctor.host import run_command


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file before and after a step (None: the file does not exist)."""

    path: str
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff, as shown before anything is written."""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=self.path if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after tfdoctor fix)")
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def script_argv(step: FixStep, python: str) -> list[str]:
    """How a script step runs: `sh fixes/<id>.sh [python] ARGS` (pip scripts take the python)."""
    script = load_scripts().get(step.fix_id) or (script_for(step.fix_id) if step.kind == "hook"
                                                   else None)
    if script is None:
        raise FixError(f"no fix script {step.fix_id}.sh in this tfdoctor")
    head = [python] if step.kind == "pip" else []
    return ["sh", str(script.path), *head, *step.args]


def preview_files(step: FixStep) -> list[FileChange]:
    """Run a hook step's script on copies of its files in a scratch root: nothing real changes."""
    if not step.files:
        return []
    with tempfile.TemporaryDirectory(prefix="tfdoctor-preview-") as tmp:
        def scratch(path: str) -> str:
            return os.path.join(tmp, path.lstrip("/"))

        before = {}
        for path in step.files:
            before[path] = _read(path)
            if before[path] is not None:
                os.makedirs(os.path.dirname(scratch(path)), exist_ok=True)
                shutil.copy2(path, scratch(path))
        target = step.args[-1]
        os.makedirs(os.path.dirname(scratch(target)), exist_ok=True)
        argv = script_argv(step, "")[:-1] + [scratch(target)]
        result = run_command(argv, timeout=60)
        if not result.ok:
            raise FixError(f"{step.fix_id}: preview failed ({result.describe_failure()}): "
                           f"{result.stderr.strip()[-300:]}")
        # A file that names another it writes (the preload .pth names its .py) names it under the
        # scratch root here: the real run writes the real path.
        return [FileChange(p, before[p], _unscratched(_read(scratch(p)), tmp)) for p in step.files]


def _unscratched(text: str | None, root: str) -> str | None:
    return text.replace(root + "/", "/") if text is not None else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return None
