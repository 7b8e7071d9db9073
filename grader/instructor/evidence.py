"""Attention weights of a submission and of the reference, for the heat maps of a report.

The function lives in grader/probes.py (the runner uses it too, below the instructor layer).
"""
from grader.probes import attention_weights

__all__ = ["attention_weights"]
