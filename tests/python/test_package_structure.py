"""The hipinductor package's structure: every module imports, its modules depend on each other one way (no import
cycle, and no import of a package module inside a function, which is how a cycle hides), and no module imports or
reads another module's private (`_name`) names; the `_C` extension is the package's public way to the C++ side."""

import ast
import importlib
import importlib.util
import pathlib
import pkgutil

import hipinductor

PACKAGE = "hipinductor"
ROOT = pathlib.Path(hipinductor.__file__).resolve().parent


def _modules() -> dict[str, pathlib.Path]:
    """Every Python module of the package: dotted name -> source file."""
    out = {PACKAGE: ROOT / "__init__.py"}
    for info in pkgutil.walk_packages(hipinductor.__path__, prefix=PACKAGE + "."):
        spec = importlib.util.find_spec(info.name)
        if spec.origin and spec.origin.endswith(".py"):
            out[info.name] = pathlib.Path(spec.origin)
    return out


def _is_package(name: str, modules: dict) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, modules: dict) -> str:
    """The absolute name `from <node.module> import ...` names, inside `module`."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module, modules):
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, modules: dict):
    """(imported package module, imported name or None, line, at module level?) for each import of `module`."""
    tree = ast.parse(modules[module].read_text(), filename=str(modules[module]))
    top_level = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        at_top = id(node) in top_level
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    yield alias.name, None, node.lineno, at_top
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node, modules)
            if source != PACKAGE and not source.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules or submodule == f"{PACKAGE}._C":
                    yield submodule, None, node.lineno, at_top  # `from . import fast_path`: the module itself
                else:
                    yield source, alias.name, node.lineno, at_top


def test_every_module_imports():
    modules = _modules()
    assert {f"{PACKAGE}.graph_module", f"{PACKAGE}.fast_path", f"{PACKAGE}.passes.channels_last"} <= set(modules)
    for name in modules:
        importlib.import_module(name)


def test_modules_import_each_other_one_way_and_at_module_level():
    modules = _modules()
    graph: dict[str, set] = {name: set() for name in modules}
    inside_functions = []
    for name in modules:
        for target, _, line, at_top in _imports(name, modules):
            if target in modules and target != name:
                graph[name].add(target)
                if not at_top:
                    inside_functions.append(f"{modules[name].name}:{line} imports {target}")
    assert not inside_functions, inside_functions

    # Depth-first search for a back edge; the path to it is the cycle.
    state: dict[str, str] = {}

    def visit(n, path):
        state[n] = "open"
        for m in sorted(graph[n]):
            if state.get(m) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(m):] + [n, m]))
            if m not in state:
                visit(m, path + [n])
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n, [])


def test_no_module_uses_another_modules_private_names():
    modules = _modules()
    found = []
    for name, path in modules.items():
        imported_modules = set()
        for target, imported, line, _ in _imports(name, modules):
            if imported is not None and imported.startswith("_"):
                found.append(f"{path.name}:{line} imports {imported} from {target}")
            if imported is None:
                imported_modules.add(target.rsplit(".", 1)[-1])
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in imported_modules and node.value.id != "_C" and node.attr.startswith("_")):
                found.append(f"{path.name}:{node.lineno} reads {node.value.id}.{node.attr}")
    assert not found, found
