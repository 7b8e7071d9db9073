"""Failure codes: what went wrong, machine-readable, set where the failure is detected.

A check raises Mismatch(message, code); the worker's exceptions (SubmissionError) and a lost worker
(WorkerGone) are mapped to codes here, in one place. Diagnosis reads these codes, never messages.
"""
from __future__ import annotations

CODES = {
    "signature_mismatch": "the entry point is missing, of the wrong kind, or takes other parameters",
    "parameter_names": "the module's parameters are not named as the contract says",
    "parameter_shapes": "the parameters have the contract's names but other shapes",
    "construct_should_raise": "construction with an invalid configuration did not raise",
    "import_failed": "importing the file raised",
    "policy_blocked": "the file was not run: syntax error or policy violation",
    "output_count": "the call returned another number of tensors than the contract's",
    "output_type": "an output is not a plain tensor",
    "shape_mismatch": "an output has the wrong shape",
    "dtype_changed": "an output's dtype differs from the input's",
    "value_mismatch": "an output differs from the reference",
    "non_finite": "NaN or inf where the reference is finite",
    "no_gradient": "a gradient did not reach an input or a parameter",
    "future_token_leak": "an output depends on a later token",
    "future_weight": "a query gives weight to a future (or blocked) key",
    "diagonal_blocked": "a query gives no weight to a key it may see",
    "nothing_dropped": "training mode dropped (almost) no attention weight",
    "dropout_misplaced": "dropout changed something else than the attention weights",
    "nondeterministic": "two runs in eval mode differ",
    "check_failed": "a check failed (no finer code)",
    "not_implemented": "the submission raised NotImplementedError (a TODO is left)",
    "out_of_memory": "the submission ran out of memory",
    "tensor_too_large": "the submission created a tensor larger than the check allows (e.g. more than a tile of scores)",
    "view_noncontiguous": ".view() on a non-contiguous tensor (after a transpose)",
    "dtype_overflow": "a fill value does not fit in the dtype (e.g. -1e9 in float16)",
    "size_mismatch": "tensor sizes do not line up (a broadcast or matmul failed)",
    "device_mismatch": "tensors on different devices (a tensor created on the CPU met the inputs on the device)",
    "mask_device_mismatch": "the mask is on the CPU while the scores are on the device",
    "raised_exception": "the submission raised an exception",
    "timeout": "the submission ran out of time",
    "worker_exit": "the submission ended or crashed the worker",
    "internal_error": "the grader itself failed",
}

# (exception type or "", a fragment of torch's own message) -> code: torch names these errors only in prose
_TORCH_ERRORS = (
    ("RuntimeError", "view size is not compatible", "view_noncontiguous"),
    ("RuntimeError", "without overflow", "dtype_overflow"),
    ("RuntimeError", "must match the size of tensor", "size_mismatch"),
    ("RuntimeError", "size mismatch", "size_mismatch"),
    ("RuntimeError", "cannot be multiplied", "size_mismatch"),
    ("RuntimeError", "Sizes of tensors must match", "size_mismatch"),  # torch.cat
    ("RuntimeError", "Tensors must have same number of dimensions", "size_mismatch"),
    ("RuntimeError", "Expected all tensors to be on the same device", "device_mismatch"),
    ("RuntimeError", "expected self and mask to be on the same device", "mask_device_mismatch"),  # masked_fill's own
)
_GONE = {"timeout": "timeout", "crash": "worker_exit", "memory_limit": "out_of_memory"}


class Mismatch(AssertionError):
    """A check failed; the message is the evidence a learner reads, the code what diagnosis reads."""

    def __init__(self, message: str, code: str = "check_failed"):
        super().__init__(message)
        self.code = code


def expect(condition: bool, message: str, code: str = "check_failed") -> None:
    if not condition:
        raise Mismatch(message, code)


def submission_code(exc) -> str:
    """The code of a SubmissionError: from its structured fields, then from torch's error type and text."""
    if exc.not_implemented:
        return "not_implemented"
    if exc.memory:
        return "out_of_memory"
    if exc.type == "ForbiddenAPI":  # the worker refused a forbidden kernel at run time, however it was reached
        return "forbidden_api"
    for kind, fragment, code in _TORCH_ERRORS:
        if exc.type == kind and fragment in exc.message:
            return "mask_device_mismatch" if code == "device_mismatch" and exc.device_operand == "mask" else code
    return "raised_exception"


def code_of(exc: BaseException) -> str:
    """The failure code of anything a check or a probe raised."""
    from grader.sandbox import SubmissionError, WorkerGone

    if isinstance(exc, Mismatch):
        return exc.code
    if isinstance(exc, SubmissionError):
        return submission_code(exc)
    if isinstance(exc, WorkerGone):
        return _GONE.get(exc.reason, "worker_exit")
    return "internal_error"
