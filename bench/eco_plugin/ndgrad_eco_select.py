"""pytest plugin for bench/ecosystem.py (`-p ndgrad_eco_select`, this folder on PYTHONPATH).

NDGRAD_ECO_SAMPLE=k   keep the tests whose node id hashes (crc32) to 0 modulo k: a
                      deterministic sample of about 1/k of a suite, the same ids under PyTorch
                      and under ndgrad, whatever order or failures collection has.
NDGRAD_ECO_IDS=FILE   keep only the node ids listed in FILE (one a line).
NDGRAD_ECO_OUT=FILE   write "outcome node-id" lines (passed, failed, skipped) as tests finish,
                      and "node-id<TAB>message" lines for failures to FILE.why (the exception's
                      one-line summary: what groups a suite's failures by cause).
"""
import os
import zlib


def _keep(nodeid, k, ids):
    if ids is not None and nodeid not in ids:
        return False
    return k <= 1 or zlib.crc32(nodeid.encode()) % k == 0


def pytest_collection_modifyitems(config, items):
    k = int(os.environ.get("NDGRAD_ECO_SAMPLE", "1") or 1)
    path = os.environ.get("NDGRAD_ECO_IDS")
    ids = None
    if path:
        with open(path, encoding="utf-8") as f:
            ids = {line.strip() for line in f if line.strip()}
    if k <= 1 and ids is None:
        return
    keep, drop = [], []
    for item in items:
        (keep if _keep(item.nodeid, k, ids) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


_outcomes = {}


def _why(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    msg = crash.message if crash is not None else str(report.longrepr).strip().splitlines()[-1:]
    if isinstance(msg, list):
        msg = msg[0] if msg else ""
    return " ".join(str(msg).split())[:300]


def pytest_runtest_logreport(report):
    prev = _outcomes.get(report.nodeid)
    if report.when == "call" or prev is None:
        outcome = report.outcome
    else:
        outcome = prev
    if report.failed:
        outcome = "failed"
        out = os.environ.get("NDGRAD_ECO_OUT")
        if out and prev != "failed":
            with open(out + ".why", "a", encoding="utf-8") as f:
                f.write(f"{report.nodeid}\t{_why(report)}\n")
    elif report.skipped and report.when == "setup":
        outcome = "skipped"
    if prev == "failed":
        outcome = "failed"
    _outcomes[report.nodeid] = outcome
    if report.when == "teardown":
        out = os.environ.get("NDGRAD_ECO_OUT")
        if out:
            with open(out, "a", encoding="utf-8") as f:
                f.write(f"{_outcomes[report.nodeid]} {report.nodeid}\n")
