# FGSM, after PyTorch's "Adversarial Example Generation" tutorial
# (https://pytorch.org/tutorials/beginner/fgsm_tutorial.html): fgsm_attack(image, epsilon, data_grad) with
# data_grad.sign() and torch.clamp(perturbed_image, 0, 1), data.requires_grad = True, F.nll_loss on log_softmax,
# model.zero_grad(), init_pred/final_pred via max(1, keepdim=True)[1], a test() over epsilons.
# The LeNet is a small MLP with fixed weights; the "MNIST" images are fixed.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(9, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def fgsm_attack(image, epsilon, data_grad):
    sign_data_grad = data_grad.sign()
    perturbed_image = image + epsilon * sign_data_grad
    perturbed_image = torch.clamp(perturbed_image, 0, 1)
    return perturbed_image


model = Net()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.9 + i).reshape(p.shape))
model.eval()
images = (torch.sin(torch.arange(6 * 9) * 0.45) + 1) / 2
images = images.reshape(6, 1, 3, 3)
labels = torch.tensor([0, 1, 2, 0, 1, 2])


def test(model, epsilon):
    correct = 0
    adv_examples = []
    for data, target in zip(images, labels):
        data, target = data.unsqueeze(0), target.unsqueeze(0)
        data.requires_grad = True
        output = model(data)
        init_pred = output.max(1, keepdim=True)[1]
        if init_pred.item() != target.item():
            continue
        loss = F.nll_loss(output, target)
        model.zero_grad()
        loss.backward()
        data_grad = data.grad.data
        perturbed_data = fgsm_attack(data, epsilon, data_grad)
        output = model(perturbed_data)
        final_pred = output.max(1, keepdim=True)[1]
        if final_pred.item() == target.item():
            correct += 1
        else:
            adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
            adv_examples.append((init_pred.item(), final_pred.item(), adv_ex.shape))
    final_acc = correct / float(len(images))
    print(f"Epsilon: {epsilon}\tTest Accuracy = {correct} / {len(images)} = {final_acc}")
    return final_acc, adv_examples


for eps in [0, .05, .1, .2, .3]:
    acc, ex = test(model, eps)
    print(ex)
