"""crossfile's tracer for `crossfile bench mine-functions` (a pytest plugin it loads with `-p`).

For each test: the functions of the workspace it calls, in its setup, call and teardown, as
(path relative to the workspace, first line of the code object), and whether it passed. Written
as JSON to .crossfile-trace/trace.json when the session ends. The workspace is the directory the
test command starts in.
"""

import json
import os
import sys
import threading

import pytest

_ROOT = os.path.realpath(os.getcwd())
_OUT = os.path.join(_ROOT, ".crossfile-trace", "trace.json")
_TESTS = {}
_FILES = {}
_IDS = {}


def _relative(filename):
    rel = _FILES.get(filename)
    if rel is None:
        path = os.path.realpath(filename)
        rel = os.path.relpath(path, _ROOT) if path.startswith(_ROOT + os.sep) else ""
        if rel.startswith(".crossfile-trace"):
            rel = ""
        _FILES[filename] = rel
    return rel


def _test_id(item):
    """The test's id from the workspace: its file relative to it, then the rest of pytest's id
    (pytest's own is relative to its rootdir, which may be another folder)."""
    path = getattr(item, "path", None) or item.fspath
    rel = os.path.relpath(os.path.realpath(str(path)), _ROOT)
    parts = item.nodeid.split("::", 1)
    return rel + ("::" + parts[1] if len(parts) == 2 else "")


def _entry(nodeid):
    return _TESTS.setdefault(nodeid, {"passed": False, "failed": False, "calls": []})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            rel = _relative(code.co_filename)
            if rel:
                seen.add((rel, code.co_firstlineno))

    test_id = _test_id(item)
    _IDS[item.nodeid] = test_id
    entry = _entry(test_id)
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        entry["calls"] = sorted(seen)


def pytest_runtest_logreport(report):
    entry = _entry(_IDS.get(report.nodeid, report.nodeid))
    if report.failed:
        entry["failed"] = True
    if report.when == "call" and report.passed:
        entry["passed"] = True


def pytest_sessionfinish(session, exitstatus):
    tests = {
        nodeid: {"passed": e["passed"] and not e["failed"], "calls": e["calls"]}
        for nodeid, e in _TESTS.items()
    }
    with open(_OUT, "w") as out:
        json.dump(tests, out)
