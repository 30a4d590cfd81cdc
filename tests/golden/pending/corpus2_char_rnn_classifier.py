# A character-level RNN name classifier, after PyTorch's "NLP From Scratch: Classifying Names with a Character-Level RNN"
# (https://pytorch.org/tutorials/intermediate/char_rnn_classification_tutorial.html): lineToTensor one-hot
# (line_length x 1 x n_letters), CharRNN with nn.RNN(input_size, hidden_size), self.h2o, nn.LogSoftmax(dim=1),
# output, hidden = self.rnn(line_tensor); output = self.h2o(hidden[0]); nn.NLLLoss; clip_grad_norm_(3); SGD.
import string
import torch
import torch.nn as nn

allowed_characters = string.ascii_letters + " .,;'"
n_letters = len(allowed_characters)


def letterToIndex(letter):
    return allowed_characters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(CharRNN, self).__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)
        return output


print(lineToTensor('Jones').size())
rnn = CharRNN(n_letters, 8, 3)
print(rnn)
with torch.no_grad():
    for i, (n, p) in enumerate(rnn.named_parameters()):
        print(n, tuple(p.shape))
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
data = [('Albert', 0), ('Nguyen', 1), ('Satoshi', 2), ('Dubois', 0)]
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.15)
for epoch in range(3):
    rnn.zero_grad()
    batch_loss = 0
    for name, label in data:
        output = rnn(lineToTensor(name))
        loss = criterion(output, torch.tensor([label]))
        batch_loss += loss
    batch_loss.backward()
    nn.utils.clip_grad_norm_(rnn.parameters(), 3)
    optimizer.step()
    print(epoch, f"{batch_loss.item() / len(data):.5f}")
output = rnn(lineToTensor('Nguyen'))
top_n, top_i = output.topk(1)
print(top_i[0].item(), output.grad_fn)
