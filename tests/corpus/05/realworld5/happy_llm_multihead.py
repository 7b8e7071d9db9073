# expect: pass
# source: Nofireash/happy-llm @2519e03d29fcd1c3318246efa7d02fb03dcb9672, chapter2/transformer.py (MultiHeadAttention)
# changes: constructor (args: ModelArgs, is_causal=False) -> (hidden_size, num_heads) with args.dim = args.n_embd = hidden_size, args.n_heads = num_heads; wq/wk/wv/wo renamed w_q/w_k/w_v/w_o and given bias=True (contract layers); forward(q, k, v) -> forward(X) with q = k = v = X; the causal-mask branch (is_causal) and the two dropouts (args.dropout) removed: the contract has no such inputs and is not causal; the config dataclass and the rest of the file removed
import torch
import math
from torch import nn
import torch.nn.functional as F


'''多头自注意力计算模块'''
class MultiHeadAttention(nn.Module):

    def __init__(self, hidden_size, num_heads):
        # 构造函数
        # args: 配置对象
        super().__init__()
        # 隐藏层维度必须是头数的整数倍，因为后面我们会将输入拆成头数个矩阵
        assert hidden_size % num_heads == 0
        # 每个头的维度，等于模型维度除以头的总数
        self.head_dim = hidden_size // num_heads
        self.n_heads = num_heads

        # Wq, Wk, Wv 参数矩阵，每个参数矩阵为 n_embd x dim
        # 这里通过三个组合矩阵来代替了n个参数矩阵的组合，其逻辑在于矩阵内积再拼接其实等同于拼接矩阵再内积，
        # 不理解的读者可以自行模拟一下，每一个线性层其实相当于n个参数矩阵的拼接
        self.w_q = nn.Linear(hidden_size, self.n_heads * self.head_dim, bias=True)
        self.w_k = nn.Linear(hidden_size, self.n_heads * self.head_dim, bias=True)
        self.w_v = nn.Linear(hidden_size, self.n_heads * self.head_dim, bias=True)
        # 输出权重矩阵，维度为 dim x dim（head_dim = dim / n_heads）
        self.w_o = nn.Linear(self.n_heads * self.head_dim, hidden_size, bias=True)
    
    def forward(self, X: torch.Tensor):
        q, k, v = X, X, X

        # 获取批次大小和序列长度,[batch_size, seq_len, dim]
        bsz, seqlen, _ = q.shape
        # 计算查询（Q）、键（K）、值（V）,输入通过参数矩阵层，维度为 (B, T, n_embd) x (n_embd, dim) -> (B, T, dim)
        xq, xk, xv = self.w_q(q), self.w_k(k), self.w_v(v)
        
        # 将 Q、K、V 拆分成多头，维度为 (B, T, n_head, dim // n_head)，然后交换维度，变成 (B, n_head, T, dim // n_head)
        # 因为在注意力计算中我们是取了后两个维度参与计算
        # 为什么要先按B*T*n_head*C//n_head展开再互换1、2维度而不是直接按注意力输入展开，是因为view的展开方式是直接把输入全部排开，
        # 然后按要求构造，可以发现只有上述操作能够实现我们将每个头对应部分取出来的目标
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
        xq = xq.transpose(1, 2)
        xk = xk.transpose(1, 2)
        xv = xv.transpose(1, 2)

        # 注意力计算
        # 计算 QK^T / sqrt(d_k)，维度为 (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        scores = torch.matmul(xq, xk.transpose(2,3)) / math.sqrt(self.head_dim)

        # 计算 softmax，维度为 (B, nh, T, T)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        # V * Score，维度为(B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        output = torch.matmul(scores, xv)

        # 恢复时间维度并合并头。
        # 将多头的结果拼接起来, 先交换维度为 (B, T, n_head, dim // n_head)，再拼接成 (B, T, n_head * dim // n_head)
        # contiguous 函数用于重新开辟一块新内存存储，因为Pytorch设置先transpose再view会报错，
        # 因为view直接基于底层存储得到，然而transpose并不会改变底层存储，因此需要额外存储
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)

        # 最终投影回残差流。
        output = self.w_o(output)
        return output
