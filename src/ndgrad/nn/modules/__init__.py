"""The layer classes of ndgrad.nn (torch.nn.modules)."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .pooling import (MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveMaxPool2d, LPPool2d)
from .activation import (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Tanh, Sigmoid,
                         Softplus, Softsign, Tanhshrink, Hardtanh, Hardsigmoid, Hardswish,
                         LogSigmoid, Softmax, LogSoftmax, Softmin, Threshold, GLU, PReLU)
from .flatten import Flatten, Unflatten
from .dropout import Dropout, Dropout1d, Dropout2d, AlphaDropout
from .loss import (L1Loss, MSELoss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, BCELoss,
                   BCEWithLogitsLoss, KLDivLoss, SoftMarginLoss, PoissonNLLLoss, GaussianNLLLoss,
                   MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, TripletMarginLoss)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, InstanceNorm1d,
                            InstanceNorm2d, RMSNorm)
from .sparse import Embedding
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell
from .transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerEncoder,
                          TransformerDecoderLayer, TransformerDecoder, Transformer)
from .padding import (ConstantPad1d, ConstantPad2d, ZeroPad1d, ZeroPad2d, ReflectionPad1d,
                      ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, CircularPad1d,
                      CircularPad2d)
from .upsampling import (Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle,
                         CosineSimilarity, PairwiseDistance, Softmax2d)
from .activation_more import Hardshrink, Softshrink, RReLU
from .fold import Fold, Unfold, PixelUnshuffle
from .pooling_more import (MaxUnpool1d, MaxUnpool2d, AdaptiveMaxPool1d, LPPool1d,
                           LocalResponseNorm)
from .embedding_bag import EmbeddingBag
from .lazy import LazyLinear
from .loss import (MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   TripletMarginWithDistanceLoss, CTCLoss)
from .conv import Conv3d, ConvTranspose3d
from .pooling import MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, LPPool3d
from .pooling_more import (MaxUnpool3d, FractionalMaxPool2d, FractionalMaxPool3d, CrossMapLRN2d,
                           ChannelShuffle)
from .normalization import InstanceNorm3d, SyncBatchNorm
from .dropout import Dropout3d, FeatureAlphaDropout
from .padding import ConstantPad3d, ZeroPad3d, ReflectionPad3d, ReplicationPad3d, CircularPad3d
from .lazy import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .container import Container
from .loss import NLLLoss2d
from .rnn import RNNCellBase
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions
# PyTorch's module names for the same classes (libraries import from them)
from . import batchnorm, instancenorm, channelshuffle, distance, pixelshuffle, utils  # noqa: E402,F401
