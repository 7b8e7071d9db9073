# expect: runtime_error
# also: heads_not_divisible
# bug-lines: 50, 90
# source: QiGoki/MyLLaMA2 @2c15aa8f5e2d3123e6237bebc23286725c48cd46, Attention.py (repeat_kv, Attention)
# changes: class renamed GroupedQueryAttention with the contract's signature instead of a ModelConfig; wq/wk/wv/wo renamed
#          W_query/W_key/W_value/out_proj, d_in -> ..., out_proj with bias (contract); the flash branch
#          (F.scaled_dot_product_attention, forbidden here) is dropped so the author's manual branch always runs, and its
#          mask buffer is therefore always registered; RoPE (apply_rotary_emb, freqs_cos/freqs_sin arguments) and the two
#          dropouts are removed (not in this contract); Chinese comments kept; ModelConfig import dropped.
import math

import torch
from torch import nn


def repeat_kv(x: torch.Tensor, n_rep: int):
    # 获取输入张量的形状：批量大小、序列长度、键/值对头的数量、每个头的维度大小
    bs, slen, n_kv_heads, head_dim = x.shape

    # 如果重复次数为1，则不需要重复，直接返回原始张量
    if n_rep == 1:
        return x

    # 对张量进行扩展和重塑操作以重复键值对
    return (
        x[:, :, :, None, :]  # 在第四个维度（头的维度）前添加一个新的维度
        .expand(bs, slen, n_kv_heads, n_rep, head_dim)  # 将新添加的维度扩展到n_rep大小，实现重复的效果
        .reshape(bs, slen, n_kv_heads * n_rep, head_dim)  # 重新苏醒，合并键/值对头的数量和重复次数的维度
    )


# 组装Attention
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        # 根据是否指定n_kv_heads，确定用于键和值的头的数量
        self.n_kv_heads = num_heads if num_kv_groups is None else num_kv_groups
        # 确保总头数可以被键值头数整除
        assert num_heads % self.n_kv_heads == 0

        # 模型并行处理大小，默认为1
        model_parallel_size = 1
        # 本地计算头数，等于总头数除以模型并行处理大小
        self.n_local_heads = num_heads // model_parallel_size
        # 本地键值头数，等于键值头数除以模型并行处理大小
        self.n_local_kv_heads = self.n_kv_heads // model_parallel_size
        # 重复次数，用于扩展键和值的尺寸
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        # 每个头的维度，等于模型维度除以头的总数
        self.head_dim = d_out // num_heads

        # 定义权重矩阵
        self.W_query = nn.Linear(d_in, num_heads * self.head_dim, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, self.n_kv_heads * self.head_dim, bias=qkv_bias)
        # 输出权重矩阵
        self.out_proj = nn.Linear(num_heads * self.head_dim, d_out)

        # 使用手动实现的注意力机制，并设置mask。
        # 创建一个上三角矩阵，用于遮蔽未来信息。
        mask = torch.full((1, 1, context_length, context_length), float("-inf"))
        mask = torch.triu(mask, diagonal=1)
        # 注册为模型的缓冲区
        self.register_buffer('mask', mask)

    def forward(self, x: torch.Tensor):
        # 获取批次大小和序列长度，[batch_size, seq_len, dim]
        bsz, seqlen, _ = x.shape

        # 计算查询（Q）、键（K）、值（V）
        xq, xk, xv = self.W_query(x), self.W_key(x), self.W_value(x)
        # 调整形状以适应头的维度
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        # 对键和值进行扩展以适应重复次数
        xk = repeat_kv(xk, self.n_rep)
        xv = repeat_kv(xv, self.n_rep)

        # 将头作为批次维度处理
        xq = xq.transpose(1, 2)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)

        # 使用手动实现的注意力机制
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        assert hasattr(self, 'mask')
        scores = scores + self.mask[:, :, :seqlen, :seqlen]
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, xv)

        # 恢复时间维度并合并头
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

        # 最终投影回残差流
        output = self.out_proj(output)
        return output
