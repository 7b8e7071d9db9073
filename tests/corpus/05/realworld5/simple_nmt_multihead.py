# expect: pass
# source: kh-kim/simple-nmt @2098ce8fc235a81b5931ed02e84430b2917b593d, simple_nmt/models/transformer.py (Attention, MultiHead)
# changes: MultiHead(hidden_size, n_splits) renamed MultiHeadAttention(hidden_size, num_heads); Q_linear/K_linear/V_linear/linear renamed w_q/w_k/w_v/w_o and given bias=True (contract layers); forward(Q, K, V, mask=None) -> forward(X) with Q = K = V = X (self-attention); the mask arguments and their handling removed (no mask in the contract); simple_nmt imports removed
import torch
import torch.nn as nn


class Attention(nn.Module):

    def __init__(self):
        super().__init__()

        self.softmax = nn.Softmax(dim=-1)

    def forward(self, Q, K, V, dk=64):
        # |Q| = (batch_size, m, hidden_size)
        # |K| = |V| = (batch_size, n, hidden_size)

        w = torch.bmm(Q, K.transpose(1, 2))
        # |w| = (batch_size, m, n)

        w = self.softmax(w / (dk**.5))
        c = torch.bmm(w, V)
        # |c| = (batch_size, m, hidden_size)

        return c


class MultiHeadAttention(nn.Module):

    def __init__(self, hidden_size, num_heads):
        super().__init__()

        self.hidden_size = hidden_size
        self.n_splits = num_heads

        # Note that we don't have to declare each linear layer, separately.
        self.w_q = nn.Linear(hidden_size, hidden_size, bias=True)
        self.w_k = nn.Linear(hidden_size, hidden_size, bias=True)
        self.w_v = nn.Linear(hidden_size, hidden_size, bias=True)
        self.w_o = nn.Linear(hidden_size, hidden_size, bias=True)

        self.attn = Attention()

    def forward(self, X):
        Q, K, V = X, X, X
        # |Q|    = (batch_size, m, hidden_size)
        # |K|    = (batch_size, n, hidden_size)
        # |V|    = |K|

        QWs = self.w_q(Q).split(self.hidden_size // self.n_splits, dim=-1)
        KWs = self.w_k(K).split(self.hidden_size // self.n_splits, dim=-1)
        VWs = self.w_v(V).split(self.hidden_size // self.n_splits, dim=-1)
        # |QW_i| = (batch_size, m, hidden_size / n_splits)
        # |KW_i| = |VW_i| = (batch_size, n, hidden_size / n_splits)

        # By concatenating splited linear transformed results,
        # we can remove sequential operations,
        # like mini-batch parallel operations.
        QWs = torch.cat(QWs, dim=0)
        KWs = torch.cat(KWs, dim=0)
        VWs = torch.cat(VWs, dim=0)
        # |QWs| = (batch_size * n_splits, m, hidden_size / n_splits)
        # |KWs| = |VWs| = (batch_size * n_splits, n, hidden_size / n_splits)

        c = self.attn(
            QWs, KWs, VWs,
            dk=self.hidden_size // self.n_splits,
        )
        # |c| = (batch_size * n_splits, m, hidden_size / n_splits)

        # We need to restore temporal mini-batchfied multi-head attention results.
        c = c.split(Q.size(0), dim=0)
        # |c_i| = (batch_size, m, hidden_size / n_splits)
        c = self.w_o(torch.cat(c, dim=-1))
        # |c| = (batch_size, m, hidden_size)

        return c
