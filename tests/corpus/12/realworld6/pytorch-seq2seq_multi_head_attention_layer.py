# expect: tensor_on_cpu
# bug-lines: 25
# source: bentrevett/pytorch-seq2seq @041994c351cc1d743fc589756dd888d146336cc2, 6 - Attention is All You Need.ipynb (MultiHeadAttentionLayer cell, used as DecoderLayer.encoder_attention; make_src_mask)
# changes: constructor and layer names from the contract (fc_q/fc_k/fc_v/fc_o -> W_query/W_key/W_value/out_proj, hid_dim split into d_in, d_context and d_out, n_heads -> num_heads, qkv_bias); the dropout and device arguments, which the contract lacks, removed (dropout layer dropped; the scale tensor is built as with device='cpu'); forward(x, context, context_padding_mask) passes query=x, key=value=context and the keep-mask make_src_mask builds, (src != pad).unsqueeze(1).unsqueeze(2), from ~context_padding_mask; returns x only (not attention)
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()

        assert d_out % num_heads == 0

        self.hid_dim = d_out
        self.n_heads = num_heads
        self.head_dim = d_out // num_heads

        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)

        self.out_proj = nn.Linear(d_out, d_out)

        self.scale = torch.sqrt(torch.FloatTensor([self.head_dim]))

    def forward(self, x, context, context_padding_mask=None):
        query, key, value = x, context, context
        mask = None
        if context_padding_mask is not None:
            mask = (~context_padding_mask).unsqueeze(1).unsqueeze(2)

        batch_size = query.shape[0]

        #query = [batch size, query len, hid dim]
        #key = [batch size, key len, hid dim]
        #value = [batch size, value len, hid dim]

        Q = self.W_query(query)
        K = self.W_key(key)
        V = self.W_value(value)

        #Q = [batch size, query len, hid dim]
        #K = [batch size, key len, hid dim]
        #V = [batch size, value len, hid dim]

        Q = Q.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        K = K.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        V = V.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)

        #Q = [batch size, n heads, query len, head dim]
        #K = [batch size, n heads, key len, head dim]
        #V = [batch size, n heads, value len, head dim]

        energy = torch.matmul(Q, K.permute(0, 1, 3, 2)) / self.scale

        #energy = [batch size, n heads, query len, key len]

        if mask is not None:
            energy = energy.masked_fill(mask == 0, -1e10)

        attention = torch.softmax(energy, dim = -1)

        #attention = [batch size, n heads, query len, key len]

        x = torch.matmul(attention, V)

        #x = [batch size, n heads, query len, head dim]

        x = x.permute(0, 2, 1, 3).contiguous()

        #x = [batch size, query len, n heads, head dim]

        x = x.view(batch_size, -1, self.hid_dim)

        #x = [batch size, query len, hid dim]

        x = self.out_proj(x)

        #x = [batch size, query len, hid dim]

        return x
