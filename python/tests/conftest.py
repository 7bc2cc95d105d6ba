import glob
import os

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def fields():
    """The shipped fields (data/) and, when present, ../shared/datasets."""
    found = {}
    for d in (os.path.join(ROOT, "data"), os.path.join(ROOT, "..", "shared", "datasets")):
        for f in sorted(glob.glob(os.path.join(d, "*.f32")) + glob.glob(os.path.join(d, "*.f64"))):
            found.setdefault(os.path.basename(f), f)
    return list(found.values())


def load_field(path):
    from zcoll.cli import load
    return np.ascontiguousarray(load(path))


@pytest.fixture(scope="session")
def cesm():
    return load_field(os.path.join(ROOT, "data", "cesm_TS_10x192x288.f32"))
