"""Settings for every test, notebooks included (their kernels inherit this environment)."""

import os

# Tests run two at a time on small machines. OpenMP's default is to spin while waiting for
# work, so two busy processes on two cores slow each other down many times over; a passive
# wait keeps small-model runs fast.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
