import torch
from torchinfo import summary
net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10))
s = summary(net, input_size=(2, 1, 8, 8), verbose=0, col_names=("output_size", "num_params"))
print(s.total_params, s.trainable_params)
print("\n".join(line for line in str(s).splitlines() if "MB" not in line))
