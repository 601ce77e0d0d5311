"""Print which sandbox layers are active on this machine: ``python -m tablereason.sandbox``."""

from __future__ import annotations

from tablereason.sandbox.python import PythonSandbox, active_layers


def main() -> int:
    """Probe the layers with a throwaway pool and print one line per layer.

    Returns:
        0 when every layer is active, 1 otherwise.
    """
    with PythonSandbox(workers=1) as box:
        layers = active_layers(box)
    width = max(len(name) for name in layers)
    for name, active in layers.items():
        print(f"{name:<{width}}  {'active' if active else 'NOT ACTIVE'}")
    return 0 if all(layers.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
