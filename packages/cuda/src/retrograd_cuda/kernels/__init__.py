"""The package's CUDA kernels.

* ``sources``: every line of CUDA C the package owns (no CuPy import);
* ``nvrtc``: compiles those sources with NVRTC alone, for the no-GPU checks;
* ``fused``: the host-side launchers the backend installs (imports CuPy).
"""
