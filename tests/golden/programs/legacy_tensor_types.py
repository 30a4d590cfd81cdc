# Legacy spellings many tutorials still use: torch.FloatTensor(...) and friends as constructors and in
# isinstance, Tensor.type(torch.LongTensor), and float() of a tensor that requires grad (PyTorch's warning).
import torch

print(torch.FloatTensor([1, 2]), torch.FloatTensor(2, 3).shape, torch.FloatTensor().shape)
print(torch.LongTensor([1.7, -2.5]), torch.LongTensor([2 ** 40 + 1]))
print(torch.ByteTensor([1, 2]), torch.BoolTensor([1, 0]), torch.IntTensor([1]), torch.HalfTensor([1.0]).dtype)
print(torch.DoubleTensor([[1, 2]]).dtype, torch.ShortTensor(2).dtype, torch.CharTensor([-1]).dtype)
print(type(torch.FloatTensor(2)).__name__, torch.FloatTensor)
print(isinstance(torch.ones(2), torch.FloatTensor), isinstance(torch.ones(2), torch.LongTensor))
print(isinstance(torch.ones(2, dtype=torch.float64), torch.DoubleTensor), isinstance(torch.ones(2), torch.DoubleTensor))
print(isinstance(torch.nn.Parameter(torch.ones(2)), torch.FloatTensor), isinstance(3.0, torch.FloatTensor))
print(torch.ones(2).type(torch.LongTensor), torch.ones(2).type(), torch.ones(2).long().type())
print(torch.FloatTensor([[1, 2]]).requires_grad)
for bad in [lambda: torch.FloatTensor(torch.ones(2, dtype=torch.float64)), lambda: torch.FloatTensor(2.5)]:
    try:
        bad()
    except TypeError as e:
        print("TypeError:", e)
x = torch.ones(1, requires_grad=True)
print(float(x * 2))
print(int(x * 3), (x * 4).item(), float((x * 5).detach()))
