"""Moved to grader/probes.py (shared by the checks and the diagnosis); kept for old imports."""
from grader.probes import *  # noqa: F401,F403
from grader.probes import init_cases, input_shapes, output_shape, probe_params, read_weights  # noqa: F401
