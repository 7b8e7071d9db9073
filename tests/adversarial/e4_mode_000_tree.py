# attack: leave a directory tree in its own folder that nobody may read or enter (mode 000 inside 0o111) so it survives cleanup; correct code -> fail (unsafe_code)
# runtime: fail (PermissionError)
# Invariant: nothing is left behind: seccomp refuses mkdir and chmod (not in the allowlist), and were a tree
# left, Sandbox.close opens every directory up before it removes it (never following a symlink).
import os

import torch
import torch.nn as nn

os.makedirs("trap/inner/deeper")
with open("trap/inner/deeper/data", "w") as f:
    f.write("x" * 1000)
os.chmod("trap/inner/deeper", 0)
os.chmod("trap/inner", 0)
os.chmod("trap", 0o111)


class MultiHeadAttention(nn.Module):
    pass
