"""Start llama-cpp-python's own server with the same load fix Parley applies (see
server/models/local.py: llama.cpp's extra buffer types crash batched decode on these VMs).
Used only by bench/llama_server.py; runs in the llama-server venv."""

import runpy

import llama_cpp.llama_cpp as low_level

_defaults = low_level.llama_model_default_params


def _params_without_extra_buffers():  # type: ignore[no-untyped-def]
    params = _defaults()
    params.use_extra_bufts = False
    return params


low_level.llama_model_default_params = _params_without_extra_buffers
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
