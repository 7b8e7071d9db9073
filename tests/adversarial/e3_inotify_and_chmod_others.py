# attack: watch /tmp with inotify for other candidates' sandbox folders and chmod them (and the folder holding them) to 000 so their grades fail; correct code -> fail (unsafe_code)
# runtime: fail (PermissionError)
# Invariant: a worker cannot see or change another submission's files: seccomp refuses inotify, fanotify and
# every chmod/chown (not in the allowlist), Landlock and the private root keep other folders out of its view,
# and as root each worker has its own uid.
import ctypes
import os

import torch
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd == -1 or libc.inotify_add_watch(fd, b"/tmp", 0x100) == -1:  # IN_CREATE
    raise PermissionError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
above = os.path.dirname(os.getcwd())
for name in os.listdir(above):
    if name.startswith("attention-kit-") and os.path.join(above, name) != os.getcwd():
        os.chmod(os.path.join(above, name), 0)
os.chmod(above, 0)


class CausalAttention(nn.Module):
    pass
