# pytest setup for the Python binding's tests: imports bindings/python, gives
# the fixtures both test files use (lib, workdir) and prints a closing
# "python: N passed, M failed" line.
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bindings", "python"))

import iap_bridge as iap  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    path = os.environ.get("IAP_LIB")
    assert path, "set IAP_LIB to the library's path"
    return iap.load(path)


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="iap-python-test.")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line("python: %d passed, %d failed" % (passed, failed))
