# attack: an exception of the file's own class whose __str__ calls nn.MultiheadAttention, raised so that the worker formats it after its guards -> fail (forbidden_api)
# Invariant: the worker formats a submission's exception under the watch (grader/sandbox/worker.py: error; tenth session's second red team).
import torch
import torch.nn as nn


class Late(Exception):
    def __str__(self):
        # runs in Worker.error(), after the call, after intact(), beneath no Watch
        layer = nn.TransformerEncoderLayer(4, 1, 1, 0.0, batch_first=True)
        x = torch.ones(1, 3, 4)
        out = layer.self_attn(x, x, x)[0]
        return "MHA ran after the guards: " + str(tuple(out.shape))


def scaled_dot_product_attention(query, key, value, mask=None):
    raise Late()
