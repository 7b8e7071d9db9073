# attack: raise KeyboardInterrupt while being imported (a BaseException the worker must contain) -> fail (KeyboardInterrupt)
import torch.nn as nn

raise KeyboardInterrupt


class MultiHeadAttention(nn.Module):
    pass
