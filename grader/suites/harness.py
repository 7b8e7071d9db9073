"""Moved to grader/harness.py (shared by the checks and the diagnosis); kept for old imports."""
from grader.harness import *  # noqa: F401,F403
from grader.harness import Harness, Mismatch, compare, expect, load_reference  # noqa: F401
