"""What the export checkers (tests/check_ch08_export.py, tests/check_ch12_export.py) share: numpy or
exit 77 (ctest: skipped), the list of failed checks, and the closing report."""
import sys

try:
    import numpy as np  # noqa: F401  (re-exported: `from export_check import np`)
except ImportError:
    print("skipped: numpy is not installed for /usr/bin/python3 (apt-get install python3-numpy)")
    sys.exit(77)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def report(chapter, d):
    """Print the failures, or one ok line; return the exit status (0 ok, 1 a check failed)."""
    if failures:
        for f in failures:
            print("FAIL:", f)
        return 1
    print(f"ok: chapter {chapter}'s export ({d}) recomputed with numpy")
    return 0
