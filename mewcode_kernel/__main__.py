"""``python -m mewcode_kernel install|uninstall`` manages the ``mewcode``
kernelspec and, beside it, the Jupyter server extension that saves MewCode's
widgets as their static forms (``saved_notebooks``, enabled in the matching
``etc/jupyter/jupyter_server_config.d``); ``python -m mewcode_kernel doctor``
checks where a kernel started here would run and what stands in its way (as
``/doctor``); ``python -m mewcode_kernel -f CONNECTION_FILE`` runs the kernel
(that is what the kernelspec's ``argv`` says); ``--help`` says all this, and
an unknown command is refused (it would otherwise start a kernel).

    python -m mewcode_kernel install --sys-prefix     # into this virtualenv
    python -m mewcode_kernel install --user           # for the current user
    python -m mewcode_kernel install --prefix /tmp/x  # under a prefix (JUPYTER_PATH=/tmp/x/share/jupyter)
    python -m mewcode_kernel uninstall [--user | --sys-prefix | --prefix P]
    python -m mewcode_kernel acp                      # an ACP agent on stdio (mewcode-acp)
    python -m mewcode_kernel doctor [--json]          # exit 1 when it finds a problem
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = [
    "DISPLAY_NAME",
    "KERNEL_NAME",
    "USAGE",
    "doctor",
    "install",
    "kernel_json",
    "main",
    "server_config_file",
    "uninstall",
]
_COMMANDS = ("install", "uninstall", "doctor", "acp")

KERNEL_NAME = "mewcode"
DISPLAY_NAME = "MewCode (Python 3)"
SERVER_EXTENSION_FILE = "mewcode_kernel.json"


def kernel_json(python: str | None = None) -> dict[str, object]:
    """The kernelspec: this interpreter running ``-m mewcode_kernel``."""
    return {
        "argv": [python or sys.executable, "-m", "mewcode_kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def _prefix_for(sys_prefix: bool, prefix: str | None) -> str | None:
    return sys.prefix if sys_prefix else prefix


def server_config_file(
    *, user: bool = False, sys_prefix: bool = False, prefix: str | None = None
) -> Path:
    """Where the server extension is enabled for that location (the config
    directory Jupyter reads beside the data directory the kernelspec goes to)."""
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH, jupyter_config_dir

    where = _prefix_for(sys_prefix, prefix)
    if user:
        base = Path(jupyter_config_dir())
    elif sys_prefix:
        base = Path(ENV_CONFIG_PATH[0])
    elif where is not None:
        base = Path(where) / "etc" / "jupyter"
    else:
        base = Path(SYSTEM_CONFIG_PATH[0])
    return base / "jupyter_server_config.d" / SERVER_EXTENSION_FILE


def install(*, user: bool = False, sys_prefix: bool = False, prefix: str | None = None) -> str:
    """Install the kernelspec, and enable the saved-notebook server extension
    beside it; returns the kernelspec's directory. With no location, the
    system-wide Jupyter directories (as ``ipykernel install``)."""
    from jupyter_client.kernelspec import KernelSpecManager

    from .saved_notebooks import CONFIG

    with tempfile.TemporaryDirectory() as tmp:
        spec_dir = Path(tmp) / KERNEL_NAME
        spec_dir.mkdir()
        (spec_dir / "kernel.json").write_text(json.dumps(kernel_json(), indent=1) + "\n")
        installed = KernelSpecManager().install_kernel_spec(
            str(spec_dir), KERNEL_NAME, user=user, prefix=_prefix_for(sys_prefix, prefix)
        )
    config = server_config_file(user=user, sys_prefix=sys_prefix, prefix=prefix)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(CONFIG, indent=1) + "\n")
    return installed


def uninstall(*, user: bool = False, sys_prefix: bool = False, prefix: str | None = None) -> str:
    """Remove the kernelspec; returns the directory removed. Without a location,
    the one Jupyter would use. Raises ``KeyError`` when it is not installed."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_core.paths import jupyter_data_dir

    server_config_file(user=user, sys_prefix=sys_prefix, prefix=prefix).unlink(missing_ok=True)
    where = _prefix_for(sys_prefix, prefix)
    if where is None and not user:
        return KernelSpecManager().remove_kernel_spec(KERNEL_NAME)
    base = Path(jupyter_data_dir()) if user else Path(where or "") / "share" / "jupyter"
    spec_dir = base / "kernels" / KERNEL_NAME
    if not spec_dir.is_dir():
        raise KeyError(KERNEL_NAME)
    shutil.rmtree(spec_dir)
    return str(spec_dir)


def doctor(*, as_json: bool = False) -> int:
    """Print the doctor's report for a kernel started here; 1 when it finds a problem."""
    from .core.doctor import gather, inputs_without_session, text, to_data

    checks = gather(inputs_without_session())
    if as_json:
        print(json.dumps(to_data(checks), indent=1))
    else:
        print(text(checks), end="")
    return 0 if all(c.ok for c in checks) else 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mewcode_kernel")
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name, text in (
        ("install", "install the mewcode kernelspec"),
        ("uninstall", "remove the mewcode kernelspec"),
    ):
        cmd = sub.add_parser(name, help=text)
        where = cmd.add_mutually_exclusive_group()
        where.add_argument("--user", action="store_true", help="for the current user")
        where.add_argument("--sys-prefix", action="store_true", help="in sys.prefix (a venv)")
        where.add_argument("--prefix", help="under this prefix (PREFIX/share/jupyter/kernels)")
    check = sub.add_parser("doctor", help="check where a kernel started here would run")
    check.add_argument("--json", action="store_true", help="the checks as JSON")
    return parser


USAGE = f"""usage: python -m mewcode_kernel COMMAND [options]

The MewCode kernel: IPython with the %%agent magics, as Jupyter kernel
{KERNEL_NAME!r} ("{DISPLAY_NAME}").

commands:
  install [--user | --sys-prefix | --prefix P]
                     install the {KERNEL_NAME} kernelspec and enable the Jupyter
                     server extension that saves MewCode's widgets as static
                     HTML (default: system-wide; --sys-prefix inside a virtualenv)
  uninstall [--user | --sys-prefix | --prefix P]
                     remove both
  acp                MewCode as an Agent Client Protocol agent on stdio, for
                     chat panels (Zed, JupyterLab's chat); also mewcode-acp
  doctor [--json]    check where a kernel started here would run (project root,
                     notebook, MEWCODE_HOME, provider keys by name, sandbox, trust,
                     MCP servers, gateway) and print each problem with its fix;
                     exit status 1 when there is one
  -f CONNECTION_FILE [kernel options]
                     run the kernel (what Jupyter does; see the kernelspec)
  --help-kernel      the kernel's own options (IPython's)
  -h, --help         this help
"""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in {"-h", "--help", "help"}:
        print(USAGE, end="")
        return 0
    if argv and argv[0] == "acp":
        from mewcode_acp.cli import main as acp_main

        return acp_main(argv[1:])
    if argv and argv[0] == "--help-kernel":
        argv[0] = "--help"
    elif argv and not argv[0].startswith("-") and argv[0] not in _COMMANDS:
        import difflib

        near = difflib.get_close_matches(argv[0], list(_COMMANDS), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        print(
            f"python -m mewcode_kernel: unknown command {argv[0]!r}{hint}\n\n{USAGE}",
            end="",
            file=sys.stderr,
        )
        return 2
    if argv and argv[0] == "doctor":
        return doctor(as_json=_parser().parse_args(argv).json)
    if argv and argv[0] in {"install", "uninstall"}:
        args = _parser().parse_args(argv)
        where = {"user": args.user, "sys_prefix": args.sys_prefix, "prefix": args.prefix}
        if args.cmd == "install":
            path = install(**where)
            print(f"Installed kernelspec {KERNEL_NAME} ({DISPLAY_NAME}) in {path}")
            print(f"Enabled the saved-notebook server extension in {server_config_file(**where)}")
            return 0
        try:
            path = uninstall(**where)
        except KeyError:
            print(f"No kernelspec named {KERNEL_NAME} is installed there.", file=sys.stderr)
            return 1
        print(f"Removed kernelspec {KERNEL_NAME} from {path}")
        return 0

    from ipykernel.kernelapp import IPKernelApp

    from .kernel import MewcodeKernel

    IPKernelApp.launch_instance(argv=argv, kernel_class=MewcodeKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
