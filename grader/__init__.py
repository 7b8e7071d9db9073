"""attention-kit: exercises, hidden suites and a sandboxed grader for attention in PyTorch."""

__version__ = "0.1.0"
