"""No import cycles among the project's modules, read with `ast` (migrations and tests aside).

Module-level imports always count. An import inside a function counts when it crosses apps (the
top-level packages): hiding such an import in a function keeps Python quiet, not the reader. The one
exception is the Django + Celery pattern inside one app: a service imports its own app's task, and the
task imports the service inside its function.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
APPS = ("tutor", "quizzes", "labs", "workers", "frontend")


def project_modules(root: Path, apps: tuple[str, ...] = APPS) -> dict[str, Path]:
    modules = {}
    for app in apps:
        for path in (root / app).rglob("*.py"):
            rel = path.relative_to(root)
            if "migrations" in rel.parts:
                continue
            modules[".".join(rel.with_suffix("").parts).removesuffix(".__init__")] = path
    return modules


def _imports(tree: ast.AST, in_function: bool = False):
    """(import node, whether it sits inside a function) for every import statement."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function
        yield from _imports(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    app = name.split(".")[0]
    found: set[str] = set()
    for node, in_function in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = {alias.name for alias in node.names}
        else:
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            targets = {base} | {f"{base}.{alias.name}" for alias in node.names}
        found |= {t for t in targets if not in_function or t.split(".")[0] != app}
    return {t for t in found if t in modules and t != name}


def import_cycles(root: Path, apps: tuple[str, ...] = APPS) -> list[list[str]]:
    """Every strongly connected group of more than one module, each sorted (Tarjan's algorithm)."""
    modules = project_modules(root, apps)
    graph = {name: imported_modules(name, path, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def test_the_project_has_no_import_cycle():
    assert import_cycles(REPO) == []


def test_workers_import_no_app_that_enqueues_through_them():
    modules = project_modules(REPO)
    for name, path in modules.items():
        if name.startswith("workers"):
            apps = {
                m
                for m in imported_modules(name, path, modules)
                if m.startswith(("labs", "quizzes", "frontend", "tutor.review", "tutor.teacher"))
            }
            assert not apps, f"{name} imports {sorted(apps)}"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_cycle_hidden_in_functions_across_apps_is_found(tmp_path):
    _write(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/services.py": "def buy():\n    from jobs.tasks import send\n",
            "jobs/__init__.py": "",
            "jobs/tasks.py": "def send():\n    from shop.services import buy\n",
        },
    )
    assert import_cycles(tmp_path, ("shop", "jobs")) == [["jobs.tasks", "shop.services"]]


def test_a_module_level_cycle_inside_one_app_is_found(tmp_path):
    _write(tmp_path, {"shop/__init__.py": "", "shop/a.py": "from . import b\n", "shop/b.py": "from shop import a\n"})
    assert import_cycles(tmp_path, ("shop",)) == [["shop.a", "shop.b"]]


def test_a_service_and_its_own_apps_task_may_import_each_other(tmp_path):
    _write(
        tmp_path,
        {
            "shop/__init__.py": "",
            "shop/services.py": "from shop.tasks import send as send_task\n",
            "shop/tasks.py": "def send():\n    from shop.services import buy\n",
        },
    )
    assert import_cycles(tmp_path, ("shop",)) == []
