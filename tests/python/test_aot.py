"""Ahead-of-time packages: a torch.export program with linear layers, attention and LayerNorm is packaged for AMD,
NVIDIA and cpu targets on this machine (no GPU), loaded without starting any compiler, and run on the cpu target
against eager; corrupt, truncated, wrong-version and wrong-target packages give errors naming the file or target."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
import torch

import hipinductor
from hipinductor import PackageError, aot, aot_compile, load_package

TARGETS = ["gfx90a", "gfx942", "gfx1100", "sm_90", "cpu"]


class Block(torch.nn.Module):
    """A transformer block's shape: LayerNorm, q/k/v projections, scaled_dot_product_attention, an MLP."""

    def __init__(self, dim=32, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return {"out": x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm2(x)))), "scale": x.mean()}


@pytest.fixture(scope="session")
def block():
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 8, 32)
    return model, x, torch.export.export(model, (x,))


@pytest.fixture(scope="session")
def package(block, tmp_path_factory):
    """The block packaged once for every target (compiling for 5 targets is the slow part of this file)."""
    path = str(tmp_path_factory.mktemp("aot") / "block.hipi")
    manifest = aot_compile(block[2], ",".join(TARGETS), path)
    assert manifest == _manifest(path)  # what aot_compile returns is what it wrote
    return path


def _manifest(path):
    with open(os.path.join(path, "manifest.json")) as f:
        return json.load(f)


def test_package_holds_every_target_and_the_eager_steps(package):
    m = _manifest(package)
    assert m["format"] == "hipinductor-package" and m["version"] == 1
    assert m["hipinductor"] == hipinductor.__version__ and m["torch"] == torch.__version__
    assert [t["target"] for t in m["targets"]] == TARGETS
    kernels_steps = [s for s in m["steps"] if s["kind"] == "kernels"]
    ops = {s["op"] for s in m["steps"] if s["kind"] == "aten"}
    assert kernels_steps and "aten.scaled_dot_product_attention.default" in ops, ops
    assert ops & {"aten.addmm.default", "aten.mm.default"}, ops  # the linear layers' products run eagerly
    assert "aten.native_layer_norm.default" in m["ops_lowered"] or "aten.layer_norm.default" in m["ops_lowered"]
    assert [i["sizes"] for i in m["inputs"]] == [[2, 8, 32]] and m["inputs"][0]["dtype"] == "float32"
    assert m["weights"]["format"] == "safetensors" and len(m["weights"]["tensors"]) == 12
    for t in m["targets"]:
        assert len(t["segments"]) == len(kernels_steps)
        for seg in t["segments"]:
            assert seg["kernels"] and m["files"][seg["code_object"]]["size"] > 0
            assert os.path.getsize(os.path.join(package, seg["code_object"])) == m["files"][seg["code_object"]]["size"]
            if t["kind"] == "amd":
                assert all(k["facts"]["vgpr_count"] > 0 and k["facts"]["vgpr_spill_count"] == 0 for k in seg["kernels"])
    magic = {"gfx90a": b"\x7fELF", "sm_90": b"\x7fELF", "cpu": b"\x7fELF"}
    for t in m["targets"]:
        if t["target"] in magic:
            with open(os.path.join(package, t["segments"][0]["code_object"]), "rb") as f:
                head = f.read(64)
            assert head.startswith(magic[t["target"]]) or b"__CLANG_OFFLOAD_BUNDLE__" in head, (t["target"], head)
    assert not [n for n in os.listdir(os.path.dirname(package)) if ".tmp-" in n]


def test_cpu_target_matches_eager(block, package):
    model, x, _ = block
    loaded = load_package(package, "cpu")
    assert loaded.target == "cpu"
    got = loaded(x)
    want = model(x)
    assert set(got) == {"out", "scale"}
    torch.testing.assert_close(got["out"], want["out"], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got["scale"], want["scale"], rtol=1e-4, atol=1e-4)
    x2 = torch.randn(2, 8, 32)
    torch.testing.assert_close(loaded(x2)["out"], model(x2)["out"], rtol=1e-4, atol=1e-4)


def test_wrong_input_sizes_are_named(package):
    loaded = load_package(package, "cpu")
    with pytest.raises(ValueError, match=r"input 'x' must be float32\[2, 8, 32\]"):
        loaded(torch.randn(2, 9, 32))


def test_loading_and_running_start_no_compiler(block, package, tmp_path):
    """In a fresh process: no HIPRTC or NVRTC library is loaded, the host compiler ($CXX) is never run (it would
    fail: it is /bin/false) and the code-object cache stays empty."""
    model, x, _ = block
    torch.save(x, tmp_path / "x.pt")
    torch.save(model(x)["out"], tmp_path / "want.pt")
    cache = tmp_path / "cache"
    script = textwrap.dedent(f"""
        import torch, hipinductor
        loaded = hipinductor.load_package({package!r}, "cpu")
        got = loaded(torch.load({str(tmp_path / "x.pt")!r}))["out"]
        torch.testing.assert_close(got, torch.load({str(tmp_path / "want.pt")!r}), rtol=1e-4, atol=1e-4)
        maps = open("/proc/self/maps").read()
        assert "nvrtc" not in maps and "hiprtc" not in maps, [l for l in maps.splitlines() if "rtc" in l]
        print("ok", loaded.first_call_ms)
    """)
    env = dict(os.environ, CXX="/bin/false", HIPINDUCTOR_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")
    assert not cache.exists() or not any(p.is_file() and p.name.startswith("kernel") for p in cache.rglob("*"))


def _copy(package, tmp_path):
    dest = tmp_path / "copy.hipi"
    shutil.copytree(package, dest)
    return str(dest)


def test_corrupt_code_object_is_named(package, tmp_path):
    path = _copy(package, tmp_path)
    code = os.path.join(path, [t for t in _manifest(path)["targets"] if t["target"] == "cpu"][0]["segments"][0]
                        ["code_object"])
    with open(code, "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(PackageError, match=rf"{code}: corrupt"):
        load_package(path, "cpu")


def test_truncated_weights_and_manifest_are_named(package, tmp_path):
    path = _copy(package, tmp_path)
    weights = os.path.join(path, "weights.safetensors")
    os.truncate(weights, os.path.getsize(weights) // 2)
    with pytest.raises(PackageError, match=rf"{weights}: truncated"):
        load_package(path, "cpu")
    manifest = os.path.join(path, "manifest.json")
    os.truncate(manifest, os.path.getsize(manifest) // 2)
    with pytest.raises(PackageError, match=rf"{manifest}: corrupt or truncated package manifest"):
        load_package(path, "cpu")


def test_other_format_version_is_named(package, tmp_path):
    path = _copy(package, tmp_path)
    m = _manifest(path)
    m["version"] = 99
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump(m, f)
    with pytest.raises(PackageError, match=r"manifest.json: package format version 99.*reads version 1"):
        load_package(path, "cpu")


def test_missing_target_names_the_device_and_the_packages_targets(package, tmp_path):
    path = _copy(package, tmp_path)
    m = _manifest(path)
    m["targets"] = [t for t in m["targets"] if t["target"] != "cpu"]
    with open(os.path.join(path, "manifest.json"), "w") as f:
        json.dump(m, f)
    with pytest.raises(PackageError, match=r"no code for this device: cpu is cpu, the package has gfx90a, gfx942, "
                                           r"gfx1100, sm_90; build the package with --arch cpu"):
        load_package(path, "cpu")


def test_a_failed_build_leaves_nothing(block, tmp_path, monkeypatch):
    calls = []
    real = hipinductor._C.compile_many

    def failing(*args, **kwargs):
        calls.append(args[1])
        if len(calls) > 1:
            raise hipinductor._C.CompileError("injected")
        return real(*args, **kwargs)

    monkeypatch.setattr(hipinductor._C, "compile_many", failing)
    with pytest.raises(hipinductor._C.CompileError):
        aot_compile(block[2], "cpu,sm_90", str(tmp_path / "out.hipi"))
    assert os.listdir(tmp_path) == []


def test_symbolic_sizes_are_rejected_until_supported(tmp_path):
    ep = torch.export.export(torch.nn.ReLU(), (torch.randn(4, 3),), dynamic_shapes=({0: torch.export.Dim("batch")},))
    with pytest.raises(PackageError, match=r"input '\w+' has symbolic sizes \[s\d+, 3\]: dynamic shapes are not "
                                           r"supported yet"):
        aot_compile(ep, "cpu", str(tmp_path / "relu.hipi"))
    assert os.listdir(tmp_path) == []


def test_command_line_builds_and_inspects_a_pt2(block, package, tmp_path, capsys):
    pt2 = tmp_path / "block.pt2"
    torch.export.save(block[2], str(pt2))
    out = tmp_path / "cli.hipi"
    # The command's main in this process (tests/tools/test_package.sh runs it through hipinductor-aot).
    assert aot.main([str(pt2), "--arch", "cpu", "-o", str(out)]) == 0, capsys.readouterr().err
    loaded = load_package(str(out), "cpu")
    torch.testing.assert_close(loaded(block[1])["out"], block[0](block[1])["out"], rtol=1e-4, atol=1e-4)
    capsys.readouterr()
    assert aot.main(["--inspect", package]) == 0
    listing = capsys.readouterr().out
    for t in TARGETS:
        assert f"target {t}:" in listing
    assert "vgpr_count=" in listing and "segment 0:" in listing
    (tmp_path / "bad.pt2").write_bytes(b"not an archive")
    cases = [([str(tmp_path / "missing.pt2"), "--arch", "cpu", "-o", str(tmp_path / "x.hipi")], "missing.pt2"),
             ([str(tmp_path / "bad.pt2"), "--arch", "cpu", "-o", str(tmp_path / "x.hipi")], "bad.pt2"),
             ([str(pt2), "--arch", "gfx9000", "-o", str(tmp_path / "x.hipi")], "gfx9000"),
             (["--inspect", str(tmp_path)], "manifest.json"),
             ([str(pt2), "--arch", "cpu"], "-o PACKAGE")]
    for argv, named in cases:
        assert aot.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("hipinductor-aot: ") and named in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "x.hipi").exists()


_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU machine only: run through scripts/gpu-check.sh")


@_gpu
def test_gpu_package_built_without_a_gpu_matches_the_jit(block, package):
    """The package's sm_90 (or the GPU's gfx) code objects, built on this machine's CPU without a GPU, run on the GPU
    with the JIT's results; the first call compiles nothing."""
    model, x, _ = block
    loaded = load_package(package, "cuda")
    assert loaded.target in TARGETS or loaded.target.split(":")[0] in TARGETS, loaded.target
    x = x.cuda()
    got = loaded(x)
    print(f"\naot package {loaded.target}: first call {loaded.first_call_ms:.1f} ms")
    with torch.no_grad():
        want = torch.compile(model.cuda(), backend="hipinductor")(x)
    torch.testing.assert_close(got["out"], want["out"], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got["scale"], want["scale"], rtol=1e-4, atol=1e-4)
    # The JIT above started the compiler in this process; the package alone must not: checked in a fresh one.
    # PyTorch's own CUDA start may map its libnvrtc (2.11 does), so the check is that loading and running the
    # package maps no compiler library that was not there before and calls no compile entry point.
    script = textwrap.dedent(f"""
        import torch, hipinductor
        from hipinductor import _C
        torch.ones(1, device="cuda").add_(1).item()
        def compilers():
            return {{line.split()[-1] for line in open("/proc/self/maps") if "nvrtc" in line or "hiprtc" in line}}
        def refuse(*args, **kwargs):
            raise AssertionError("loading a package compiled a graph")
        _C.compile = _C.compile_many = refuse
        before = compilers()
        loaded = hipinductor.load_package({package!r}, "cuda")
        loaded(torch.randn(2, 8, 32, device="cuda"))
        torch.cuda.synchronize()
        assert compilers() == before, sorted(compilers() - before)
        print(loaded.first_call_ms)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    print(f"aot package, fresh process: first call {float(out.stdout.strip()):.1f} ms")
