"""ndgrad.optim: PyTorch's optimizers and learning-rate schedulers.

    opt = ndgrad.optim.Adam(model.parameters(), lr=1e-3)
    sched = ndgrad.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)

Each algorithm has a module of PyTorch's name (optim.adam: the Adam class, the functional `adam`
and its single- and multi-tensor kernels; see optimizer.py's Note [optimizer structure]).
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from ._adafactor import Adafactor
from .sparse_adam import SparseAdam
from ._muon import Muon
from .lbfgs import LBFGS
from ._stateless import swap_in_optimizer_params_and_state
from . import lr_scheduler
from . import swa_utils

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler",
           "swa_utils", "swap_in_optimizer_params_and_state"]
