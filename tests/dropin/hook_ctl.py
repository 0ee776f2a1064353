"""tests/dropin/hook_ctl.py — the preloaded libozgemm_hook.so seen from Python through ctypes, for the
device scripts (device_frameworks.py, device_lt.py): its switch (ozgemmHookSetEnabled), its counters as
JSON (ozgemmHookStatsJson) and their reset (ozgemmHookResetStats); docs/dropin.md, "Verifying
interception"."""
import argparse
import ctypes
import json
import os
import sys


def arguments(framework_choices):
    """The device scripts' common command line: --framework, --lib, --json, --only (add more, then
    parse_args)."""
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=framework_choices, required=True)
    p.add_argument("--lib", required=True, help="path of the preloaded libozgemm_hook.so")
    p.add_argument("--json", help="append one JSON line per case here")
    p.add_argument("--only", help="comma-separated case names")
    return p


def load(lib, script):
    """The preloaded hook at path `lib` (exits, naming `script`, when it is not in LD_PRELOAD: a
    second, separately loaded copy would count nothing)."""
    preload = os.environ.get("LD_PRELOAD", "")
    if lib not in preload and os.path.basename(lib) not in preload:
        sys.exit("%s: run with LD_PRELOAD=%s" % (script, lib))
    hook = ctypes.CDLL(lib)  # the preloaded copy
    hook.ozgemmHookSetEnabled.restype = ctypes.c_int
    hook.ozgemmHookSetEnabled.argtypes = [ctypes.c_int]
    hook.ozgemmHookStatsJson.restype = ctypes.c_size_t
    hook.ozgemmHookStatsJson.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return hook


def stats(hook):
    """The hook's counters (a dict: the JSON of ozgemmHookStatsJson)."""
    buf = ctypes.create_string_buffer(65536)
    hook.ozgemmHookStatsJson(buf, len(buf))
    return json.loads(buf.value.decode())
