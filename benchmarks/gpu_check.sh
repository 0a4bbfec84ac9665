#!/usr/bin/env bash
# Everything the book asks of a GPU, in one run: the training benchmarks on CUDA and every
# notebook executed unchanged (minibert.get_device() picks the GPU). Writes the tables to
# ${OUT:-benchmarks/gpu_results}. Run from the repository root on a CUDA machine:
#     bash benchmarks/gpu_check.sh
set -euo pipefail
results=${OUT:-benchmarks/gpu_results}
mkdir -p "$results"
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; \
print(torch.cuda.get_device_name())" | tee "$results/device.txt"
python benchmarks/train_step.py --device cuda --quick 2>&1 | tee "$results/train_step.txt"
python benchmarks/ensemble.py --device cuda --repeats 1 2>&1 | tee "$results/ensemble.txt"
MINIBERT_CACHE=$(mktemp -d) python benchmarks/book_time.py alone 2>&1 \
  | grep -v "Kernel is running over TCP" | tee "$results/book_time.txt"
