"""Runs symmem's Python test files: with pytest where it is installed, else with a small runner of
the same files (test_* functions, plain asserts). Exit code 77: every test skipped (ctest's SKIP).

    python runner.py test_host.py [more files]"""
import importlib.util
import os
import sys
import traceback


class Skip(Exception):
    pass


def skip(reason):
    """Skips the calling test (pytest.skip where pytest runs it)."""
    try:
        import pytest
        pytest.skip(reason)
    except ImportError:
        raise Skip(reason)


def _plain(files):
    # The test files import runner: a second copy of this file where it runs as __main__, whose
    # Skip is another class (before session 101 a skipped test counted as failed without pytest).
    import runner
    skips = (Skip, runner.Skip)
    passed = failed = skipped = 0
    for path in files:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            fn = getattr(mod, name)
            try:
                fn()
                passed += 1
                print(f"{path}::{name} PASSED", flush=True)
            except skips as e:
                skipped += 1
                print(f"{path}::{name} SKIPPED ({e})", flush=True)
            except Exception:
                failed += 1
                print(f"{path}::{name} FAILED", flush=True)
                traceback.print_exc()
    print(f"===== {failed} failed, {passed} passed, {skipped} skipped =====", flush=True)
    if failed:
        return 1
    return 77 if passed == 0 and skipped > 0 else 0


def main():
    files = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import pytest
    except ImportError:
        sys.exit(_plain(files))
    rc = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", *files])
    sys.exit(77 if rc == 5 else int(rc))  # 5: nothing collected ran


if __name__ == "__main__":
    main()
