"""Running untrusted submissions: the worker process and the trusted side that drives it."""
from grader.sandbox.limits import Limits
from grader.sandbox.session import Sandbox, SubmissionError, WorkerGone

__all__ = ["Limits", "Sandbox", "SubmissionError", "WorkerGone"]
