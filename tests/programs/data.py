import numpy as np
import torch
from torch.utils.data import Dataset, DataLoader, TensorDataset, Subset, ConcatDataset, random_split, SequentialSampler, BatchSampler, default_collate

class D(Dataset):
    def __len__(self):
        return 7
    def __getitem__(self, i):
        return {"img": np.full((2, 2), i, dtype=np.float32), "label": i % 3, "meta": (i, float(i) / 2, "s%d" % i)}

dl = DataLoader(D(), batch_size=3, drop_last=False, num_workers=0)
print(len(dl))
for b in dl:
    print(b["img"].shape, b["img"].dtype, b["label"], b["meta"][0].dtype, b["meta"][1].dtype, b["meta"][2])
dl2 = DataLoader(D(), batch_sampler=BatchSampler(SequentialSampler(range(7)), 2, drop_last=True))
print(len(dl2), [b["label"].tolist() for b in dl2])
td = TensorDataset(torch.arange(10).float(), torch.arange(10) * 2)
print(len(Subset(td, [1, 3])), Subset(td, [1, 3])[1], len(ConcatDataset([td, td])), ConcatDataset([td, td])[12])
a, b = random_split(td, [0.7, 0.3], generator=torch.Generator().manual_seed(0))
print(len(a), len(b))
print(default_collate([(1, 2.0), (3, 4.0)]), default_collate([np.array([1, 2]), np.array([3, 4])]))
dl3 = DataLoader(td, batch_size=4, collate_fn=lambda batch: [x for x, _ in batch])
print(next(iter(dl3)))
print(DataLoader(td, batch_size=None).__iter__().__next__())
result = {}
