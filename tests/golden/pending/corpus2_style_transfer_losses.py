# Neural style transfer's losses, after PyTorch's "Neural Transfer Using PyTorch" tutorial
# (https://pytorch.org/tutorials/advanced/neural_style_tutorial.html): ContentLoss and StyleLoss modules with
# target.detach(), gram_matrix (a, b, c, d = input.size(); features = input.view(a * b, c * d); G = torch.mm(features,
# features.t()); G.div(a * b * c * d)), Normalization with .view(-1, 1, 1), input_img.requires_grad_(True), LBFGS
# with a closure and with torch.no_grad(): input_img.clamp_(0, 1). A tiny fixed Conv2d stack stands in for VGG19.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class ContentLoss(nn.Module):
    def __init__(self, target):
        super(ContentLoss, self).__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
with torch.no_grad():
    for i, p in enumerate(cnn.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
style_img = (torch.sin(torch.arange(3 * 6 * 6) * 0.31) + 1).reshape(1, 3, 6, 6) / 2
content_img = (torch.cos(torch.arange(3 * 6 * 6) * 0.17) + 1).reshape(1, 3, 6, 6) / 2
normalization = Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
content_losses, style_losses = [], []
model = nn.Sequential(normalization)
i = 0
for layer in cnn.children():
    if isinstance(layer, nn.Conv2d):
        i += 1
        name = 'conv_{}'.format(i)
    elif isinstance(layer, nn.ReLU):
        name = 'relu_{}'.format(i)
        layer = nn.ReLU(inplace=False)
    model.add_module(name, layer)
    if name == 'conv_2':
        target = model(content_img).detach()
        content_loss = ContentLoss(target)
        model.add_module("content_loss_{}".format(i), content_loss)
        content_losses.append(content_loss)
    if name in ('conv_1', 'conv_2'):
        target_feature = model(style_img).detach()
        style_loss = StyleLoss(target_feature)
        model.add_module("style_loss_{}".format(i), style_loss)
        style_losses.append(style_loss)
print(model)
input_img = content_img.clone()
input_img.requires_grad_(True)
model.eval()
model.requires_grad_(False)
optimizer = optim.LBFGS([input_img])
style_weight, content_weight = 1000000, 1
run = [0]
for outer in range(2):
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = 0
        content_score = 0
        for sl in style_losses:
            style_score += sl.loss
        for cl in content_losses:
            content_score += cl.loss
        style_score *= style_weight
        content_score *= content_weight
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        if run[0] % 5 == 0:
            print("run {}:".format(run))
            print('Style Loss : {:4f} Content Loss: {:4f}'.format(style_score.item(), content_score.item()))
        return style_score + content_score
    optimizer.step(closure)
with torch.no_grad():
    input_img.clamp_(0, 1)
print(input_img[0, 0, :2])
