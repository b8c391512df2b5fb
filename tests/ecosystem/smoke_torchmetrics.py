import torch
import torchmetrics
from _common import show
preds = torch.tensor([0.1, 0.8, 0.6, 0.3, 0.9])
target = torch.tensor([0, 1, 1, 0, 0])
show("accuracy", torchmetrics.classification.BinaryAccuracy()(preds, target).item())
show("auroc", torchmetrics.classification.BinaryAUROC()(preds, target).item())
show("f1", torchmetrics.classification.BinaryF1Score()(preds, target).item())
m = torchmetrics.MeanSquaredError()
m.update(preds, target.float()); m.update(preds * 2, target.float())
show("mse", m.compute().item())
show("pearson", torchmetrics.PearsonCorrCoef()(preds, target.float()).item())
