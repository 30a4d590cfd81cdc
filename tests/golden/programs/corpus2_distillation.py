# Knowledge distillation, after PyTorch's "Knowledge Distillation Tutorial"
# (https://pytorch.org/tutorials/beginner/knowledge_distillation_tutorial.html): train_knowledge_distillation with
# teacher.eval(), student.train(), with torch.no_grad(): teacher_logits = teacher(inputs);
# soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1); soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1);
# soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2);
# loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss. Fixed data; plus Hinton's KLDivLoss form.
import torch
import torch.nn as nn
import torch.optim as optim


def init(m, scale):
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * scale)
    return m


teacher = init(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)), 0.5)
student = init(nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 4)), 0.3)
inputs = torch.sin(torch.arange(8 * 6) * 0.41).reshape(8, 6)
labels = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0])


def train_knowledge_distillation(teacher, student, epochs, learning_rate, T, soft_target_loss_weight, ce_loss_weight):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)
    teacher.eval()
    student.train()
    for epoch in range(epochs):
        running_loss = 0.0
        optimizer.zero_grad()
        with torch.no_grad():
            teacher_logits = teacher(inputs)
        student_logits = student(inputs)
        soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
        soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
        soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
        label_loss = ce_loss(student_logits, labels)
        loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        print(f"Epoch {epoch+1}/{epochs}, Loss: {running_loss / 1:.5g}")


train_knowledge_distillation(teacher, student, epochs=3, learning_rate=0.001, T=2,
                             soft_target_loss_weight=0.25, ce_loss_weight=0.75)
T = 4.0
kd = nn.KLDivLoss(reduction='batchmean')(nn.functional.log_softmax(student(inputs) / T, dim=1),
                                          nn.functional.softmax(teacher(inputs) / T, dim=1)) * (T * T)
print(kd)
print(nn.KLDivLoss(reduction='batchmean', log_target=True)(torch.log_softmax(student(inputs), 1), torch.log_softmax(teacher(inputs), 1)))
