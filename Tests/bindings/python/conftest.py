# pytest setup for the Python binding's test: imports bindings/python and
# prints a closing "python: N passed, M failed" line.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bindings", "python"))


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line("python: %d passed, %d failed" % (passed, failed))
