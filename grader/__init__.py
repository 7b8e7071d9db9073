"""attention-kit: exercises, hidden suites and a sandboxed grader for attention in PyTorch."""

__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
    """`%load_ext grader` in IPython, Jupyter, VS Code or Colab: the %%grade cell magic (grader/notebook.py)."""
    from grader.notebook import load_ipython_extension as load

    load(ipython)
