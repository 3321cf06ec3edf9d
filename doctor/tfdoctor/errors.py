"""Tool failures. Machine problems are Findings, never exceptions."""

from __future__ import annotations


class TfdoctorError(Exception):
    """A failure of tfdoctor itself or of its input; rendered as one line, never a traceback."""

    reference = "tfdoctor-error"
    """Stable kebab-case name of the error, for docs and scripts."""


class InputFileError(TfdoctorError):
    """A facts or report file that cannot be read, parsed or understood."""

    reference = "bad-input-file"


class OutputFileError(TfdoctorError):
    """A file tfdoctor was asked to write (saved facts, a report, a plan, metrics) that cannot be written."""

    reference = "cannot-write-file"

    def __init__(self, path: object, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path
        self.reason = reason
        """Why, without the path: the OS's words (strerror)."""


class InterpreterError(TfdoctorError):
    """The target interpreter (--python) does not exist or cannot run."""

    reference = "bad-interpreter"


class CompatTableError(TfdoctorError):
    """A compatibility table is malformed."""

    reference = "bad-compat-table"


class FixError(TfdoctorError):
    """A fix could not be planned, applied or undone."""

    reference = "fix-failed"
