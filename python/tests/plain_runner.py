"""Runs a test module's test_* functions without pytest (Debian's system python3 may lack
it): `if __name__ == "__main__": sys.exit(plain_runner.run(globals()))`. Tests skip with
`plain_runner.skip(reason)`, which is pytest.skip under pytest."""

try:
    import pytest
except ImportError:  # the system python3 without python3-pytest
    pytest = None

PLAIN = False  # set by run(): not under pytest


def skip(reason):
    if pytest is not None and not PLAIN:
        pytest.skip(reason)
    raise SystemExit("SKIP: " + reason)


def run(module_globals):
    global PLAIN
    PLAIN = True
    failed = 0
    tests = [v for k, v in sorted(module_globals.items()) if k.startswith("test_") and callable(v)]
    for fn in tests:
        try:
            fn()
            print("PASS", fn.__name__)
        except SystemExit as e:
            if str(e).startswith("SKIP"):
                print(fn.__name__, str(e))
            else:
                print("FAIL", fn.__name__, e)
                failed += 1
        except Exception as e:  # noqa: BLE001
            print("FAIL", fn.__name__, repr(e))
            failed += 1
    return 1 if failed else 0
