"""Shared fixtures of the tasks tests."""
import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny batched matmuls are much slower with several threads on a shared 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
