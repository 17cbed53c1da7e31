# SPDX-License-Identifier: MIT
"""A pytest plugin printing each test's outcome as a TAP line on stdout,
as the other host tests report (scripts/run-tap.py reads them): a skip
is "ok ... # SKIP reason", never a plain pass."""
import sys

import pytest

_count = 0


def _emit(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def pytest_runtest_logreport(report):
    global _count
    # One line per test: its call, or the phase that kept it from running
    # or failed after it (setup, teardown).
    if report.when == "call" or (report.when == "setup" and not report.passed) or \
            (report.when == "teardown" and report.failed):
        _count += 1
        name = report.nodeid.replace("#", "%23")
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            _emit("ok %d - %s # SKIP %s" % (_count, name, reason.replace("Skipped: ", "")))
        elif report.failed:
            _emit("not ok %d - %s%s" % (_count, name, "" if report.when == "call"
                                       else " (%s)" % report.when))
        else:
            _emit("ok %d - %s" % (_count, name))


def pytest_sessionfinish(session, exitstatus):
    _emit("\n1..%d" % _count)


@pytest.hookimpl(hookwrapper=True)
def pytest_report_teststatus(report, config):
    """pytest's progress letters would share the TAP lines' lines."""
    outcome = yield
    result = outcome.get_result()
    if result:
        outcome.force_result((result[0], "", result[2]))
