# attack: SIGKILL the parent (the grader) and its process group at import -> fail (unsafe_code)
# runtime: fail (PermissionError)
import os
import signal

parent = os.getppid()
try:
    os.killpg(os.getpgid(parent), signal.SIGKILL)
except OSError:
    pass
os.kill(parent, signal.SIGKILL)


def scaled_dot_product_attention(query, key, value, mask=None):
    raise RuntimeError("unreachable")
