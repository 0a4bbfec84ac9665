"""Settings for every test, notebooks included (their kernels inherit this environment)."""

import os

pytest_plugins = ["notebook_run"]  # tests/notebook_run.py: notebooks once, book from them

# One intra-op thread per test worker, notebook kernels included: the workers already
# fill the cores, and two one-thread processes train faster than two two-thread ones
# (benchmarks/README.md). The zoo then trains its groups in-process, one seed after another.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("MINIBERT_TRAIN_PROCESSES", "1")

# Tests run two at a time on small machines. OpenMP's default is to spin while waiting for
# work, so two busy processes on two cores slow each other down many times over; a passive
# wait keeps small-model runs fast.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
