"""torch-level RNN operations (lstm, gru, rnn_tanh, rnn_relu and their cells) and numerical functions (gradient, lu_solve, lu_unpack, histogramdd, nuclear_norm, ...)."""
__all__ = []
