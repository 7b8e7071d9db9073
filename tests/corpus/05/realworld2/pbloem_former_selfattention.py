# expect: pass
# source: pbloem/former/former/modules.py, class SelfAttention (https://github.com/pbloem/former/blob/ad9cc703b0b82a24a12e777f5946296f352c9d11/former/modules.py)
# license: MIT
# changes: class renamed MultiHeadAttention; constructor (emb, heads=8, mask=False, kqnorm=False, scalefactor=None)
#          -> the contract's (hidden_size, num_heads) with the defaults mask=False, kqnorm=False, scalefactor=None
#          hard-wired (so the mask_() helper from former.util and the LayerNorms are not needed and were dropped);
#          tokeys/toqueries/tovalues/unifyheads renamed w_k/w_q/w_v/w_o, the first three lose bias=False (the
#          contract's layers have a bias); forward(x) -> forward(X). The fold-heads-into-batch bmm code is the author's.
import math

import torch
from torch import nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    """
    Canonical implementation of multi-head self attention.
    """

    def __init__(self, hidden_size, num_heads):
        """

        :param emb: The dimension of the input and output vectors.
        :param heads: The number of heads (parallel executions of the self-attention)
        """

        super().__init__()

        emb, heads = hidden_size, num_heads

        assert emb % heads == 0, f'Embedding dimension ({emb}) should be divisible by nr. of heads ({heads})'

        self.emb = emb
        self.heads = heads

        s = emb // heads
        # - We will break the embedding into `heads` chunks and feed each to a different attention head

        self.w_k = nn.Linear(emb, emb)
        self.w_q = nn.Linear(emb, emb)
        self.w_v = nn.Linear(emb, emb)

        self.w_o = nn.Linear(emb, emb)

        self.scalefactor = 1/math.sqrt(emb // heads)

    def forward(self, X):
        x = X

        b, t, e = x.size()
        h = self.heads
        assert e == self.emb, f'Input embedding dim ({e}) should match layer embedding dim ({self.emb})'

        s = e // h

        keys    = self.w_k(x)
        queries = self.w_q(x)
        values  = self.w_v(x)

        keys    = keys.view(b, t, h, s)
        queries = queries.view(b, t, h, s)
        values  = values.view(b, t, h, s)

        # -- We first compute the k/q/v's on the whole embedding vectors, and then split into the different heads.
        #    See the following video for an explanation: https://youtu.be/KmAISyVvE1Y

        # Compute scaled dot-product self-attention

        # - fold heads into the batch dimension
        keys = keys.transpose(1, 2).contiguous().view(b * h, t, s)
        queries = queries.transpose(1, 2).contiguous().view(b * h, t, s)
        values = values.transpose(1, 2).contiguous().view(b * h, t, s)

        queries = queries
        keys    = keys

        # - get dot product of queries and keys, and scale
        dot = torch.bmm(queries, keys.transpose(1, 2))
        dot = dot * self.scalefactor

        assert dot.size() == (b*h, t, t)

        dot = F.softmax(dot, dim=2)
        # -- dot now has row-wise self-attention probabilities

        # apply the self attention to the values
        out = torch.bmm(dot, values).view(b, h, t, s)

        # swap h, t back, unify heads
        out = out.transpose(1, 2).contiguous().view(b, t, s * h)

        return self.w_o(out)
