"""``python -m mewcode_kernel install|uninstall`` manages the kernelspec;
``python -m mewcode_kernel -f CONNECTION_FILE`` runs the kernel."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

KERNEL_NAME = "mewcode"
DISPLAY_NAME = "MewCode (Python 3)"


def kernel_json() -> dict[str, object]:
    return {
        "argv": [sys.executable, "-m", "mewcode_kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install(user: bool, sys_prefix: bool, prefix: str | None) -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        spec_dir = Path(tmp) / KERNEL_NAME
        spec_dir.mkdir()
        (spec_dir / "kernel.json").write_text(json.dumps(kernel_json(), indent=1))
        if sys_prefix:
            prefix = sys.prefix
        return KernelSpecManager().install_kernel_spec(
            str(spec_dir), KERNEL_NAME, user=user, prefix=prefix
        )


def uninstall() -> str:
    from jupyter_client.kernelspec import KernelSpecManager

    return KernelSpecManager().remove_kernel_spec(KERNEL_NAME)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in {"install", "uninstall"}:
        parser = argparse.ArgumentParser(prog="python -m mewcode_kernel")
        sub = parser.add_subparsers(dest="cmd", required=True)
        inst = sub.add_parser("install", help="install the mewcode kernelspec")
        where = inst.add_mutually_exclusive_group()
        where.add_argument("--user", action="store_true", help="install for the current user")
        where.add_argument(
            "--sys-prefix", action="store_true", help="install into sys.prefix (venv)"
        )
        where.add_argument("--prefix", help="install under this prefix")
        sub.add_parser("uninstall", help="remove the mewcode kernelspec")
        args = parser.parse_args(argv)
        if args.cmd == "install":
            path = install(args.user, args.sys_prefix, args.prefix)
            print(f"Installed kernelspec {KERNEL_NAME} ({DISPLAY_NAME}) in {path}")
        else:
            try:
                path = uninstall()
            except KeyError:
                print(f"No kernelspec named {KERNEL_NAME} is installed.", file=sys.stderr)
                return 1
            print(f"Removed kernelspec {KERNEL_NAME} from {path}")
        return 0

    from ipykernel.kernelapp import IPKernelApp

    from .kernel import MewcodeKernel

    IPKernelApp.launch_instance(argv=argv, kernel_class=MewcodeKernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
