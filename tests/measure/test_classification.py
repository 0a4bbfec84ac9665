"""Chapter 30's measure of class structure: the share of variance between class means."""

import torch

from minibert.measure import probes


def test_between_class_share_ends():
    labels = torch.tensor([0, 0, 1, 1])
    on_points = torch.tensor([[1.0, 0.0], [1.0, 0.0], [-1.0, 2.0], [-1.0, 2.0]])
    assert abs(probes.between_class_share(on_points, labels) - 1.0) < 1e-6  # no spread within
    same_mean = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    assert abs(probes.between_class_share(same_mean, labels)) < 1e-6  # one shared mean


def test_between_class_share_by_hand():
    vectors = torch.tensor([[0.0], [2.0], [4.0], [6.0]])  # mean 3, total sum of squares 20
    labels = torch.tensor([0, 0, 1, 1])  # class means 1 and 5: between 2 * (4 + 4) = 16
    assert abs(probes.between_class_share(vectors, labels) - 16 / 20) < 1e-6
