"""Host tier of the Python package: no GPU needed (and none used where one is present)."""
import os
import subprocess
import sys

import symmem


def test_import_and_errors():
    assert symmem.__version__
    assert symmem._C is not None, f"the extension did not import: {symmem._import_error}"
    for cls in (symmem.Timeout, symmem.InvalidArgument, symmem.PeerLost, symmem.Unsupported, symmem.CudaError):
        assert issubclass(cls, symmem.Error)
    assert issubclass(symmem.Error, RuntimeError)


def test_env_vars_are_listed():
    names = {n for n, _, _ in symmem.env_vars()}
    assert {"SYMMEM_TIMEOUT_MS", "SYMMEM_HEAP_CHUNK_MB", "SYMMEM_DEBUG_CHECKS"} <= names


def test_calls_before_init_name_the_fix():
    for call in (symmem.world, symmem.synchronize, symmem.check, symmem.clear_error):
        try:
            call()
        except symmem.InvalidArgument as e:
            assert "symmem.init()" in str(e), (call.__name__, str(e))
        else:
            raise AssertionError(f"{call.__name__}: expected InvalidArgument")


def test_init_without_a_gpu_is_a_clear_error():
    # A fresh interpreter with no GPU visible: init must raise Unsupported saying so, not crash.
    code = ("import symmem\n"
            "try:\n"
            "    symmem.init()\n"
            "except symmem.Unsupported as e:\n"
            "    print('UNSUPPORTED', e)\n"
            "except symmem.Error as e:\n"
            "    print('ERROR', type(e).__name__, e)\n"
            "else:\n"
            "    print('OK')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env["CUDA_VISIBLE_DEVICES"] = ""
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("UNSUPPORTED"), out.stdout + out.stderr
    assert "GPU" in out.stdout, out.stdout


def test_a_misspelt_setting_is_named_at_init():
    # SYMMEM_DEBUG_CHECK (no S) would be ignored without a word: init names it and the setting meant,
    # on stderr, before it looks for a GPU (none here).
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(CUDA_VISIBLE_DEVICES="", SYMMEM_DEBUG_CHECK="1")
    code = "import symmem\ntry:\n    symmem.init()\nexcept symmem.Error:\n    pass\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "SYMMEM_DEBUG_CHECK is no symmem setting and is ignored (did you mean SYMMEM_DEBUG_CHECKS?)" in out.stderr, out.stderr


def test_torchruns_agent_store_is_recognised():
    # Under torchrun the agent holds MASTER_PORT: init() joins its store (bootstrap_from_env's
    # agent_port) and takes GPU LOCAL_RANK / SYMMEM_RANKS_PER_GPU; without the flag, no agent port.
    code = "import symmem\nprint(sorted(symmem._C.bootstrap_from_env().items()))\n"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHELASTIC_", "SYMMEM_"))}
    base.update(RANK="3", WORLD_SIZE="4", LOCAL_RANK="3", LOCAL_WORLD_SIZE="4", MASTER_ADDR="127.0.0.1",
                MASTER_PORT="29500", TORCHELASTIC_RUN_ID="none", SYMMEM_RANKS_PER_GPU="2")
    got = {}
    for agent in ("True", "False"):
        out = subprocess.run([sys.executable, "-c", code], env=dict(base, TORCHELASTIC_USE_AGENT_STORE=agent),
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        got[agent] = dict(eval(out.stdout))
    assert got["True"]["agent_port"] == 29500 and got["False"]["agent_port"] == 0, got
    assert got["True"]["device"] == 1 and got["True"]["rank"] == 3 and got["True"]["world_size"] == 4, got


def test_torch_store_adapter_removes_keys_where_it_can():
    # The bootstrap removes a team's keys once every member has read them (else each host exchange
    # under torchrun leaves one key a rank in torch's store for good): through delete_key where the
    # store has it; a store without it keeps the key, with no error.
    class Store:
        def __init__(self):
            self.kv = {"symmem/0/world#3/1": b"x", "other": b"y"}

        def delete_key(self, key):
            return self.kv.pop(key, None) is not None

    store = Store()
    symmem._TorchStore(store).remove("symmem/0/world#3/1")
    assert store.kv == {"other": b"y"}, store.kv
    symmem._TorchStore(object()).remove("symmem/0/world#3/1")


def test_error_translation_keeps_the_message():
    # An InvalidArgument from C++ arrives as symmem.InvalidArgument with the C++ text.
    try:
        symmem._C.dlpack(0, 1, 0, None)
    except symmem.InvalidArgument as e:
        assert "null pointer" in str(e)
    else:
        raise AssertionError("expected InvalidArgument")


def test_torch_free_paths_say_what_is_missing():
    try:
        import torch  # noqa: F401
    except ImportError:
        try:
            symmem.empty(4)
        except symmem.Unsupported as e:
            assert "PyTorch" in str(e)
        else:
            raise AssertionError("expected Unsupported without torch")
        return
    # With torch but no init: the group lookup fails clearly.
    try:
        symmem.empty(4)
    except symmem.InvalidArgument as e:
        assert "symmem.init()" in str(e)


def test_operators_register_and_trace_on_fake_tensors():
    try:
        import torch
    except ImportError:
        from runner import skip
        skip("PyTorch is not installed")
    from symmem import ops
    ops._register()
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(16, dtype=torch.bfloat16, device="cuda" if torch.cuda.is_available() else "cpu")
        y = torch.ops.symmem.all_reduce(x, "sum", "symmem_world", "auto")
        assert y.shape == x.shape and y.dtype == x.dtype


def test_argument_checks_on_a_stand_in_torch():
    # The package's checks of tensors (placement, layout, sizes, dtypes, graph capture) run on
    # torch-like stand-ins in a fresh interpreter: no GPU or PyTorch needed (check_arguments.py).
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "check_arguments.py")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_plain_runner_counts_a_skip_as_a_skip():
    """Where pytest is missing, runner.py runs the files itself. A test that skips through
    runner.skip (which the test files import: a second copy of runner.py, whose Skip is another
    class than __main__'s) counts as skipped, not failed (it failed before session 101)."""
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "test_sample.py")
        with open(path, "w") as f:
            f.write("from runner import skip\n\n\ndef test_passes():\n    assert True\n\n\n"
                    "def test_skips():\n    skip('on purpose')\n")
        # As `python runner.py FILE` runs it, with pytest hidden.
        code = ("import runpy, sys; sys.modules['pytest'] = None; "
                f"sys.argv = ['runner.py', {path!r}]; runpy.run_path({os.path.join(here, 'runner.py')!r}, run_name='__main__')")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "0 failed, 1 passed, 1 skipped" in out.stdout, out.stdout + out.stderr
