"""Code-scanning and test-report forms of a prefix `Report`: SARIF 2.1.0 (GitHub code scanning:
one result per break, a rule per class, the log line as its location; OASIS SARIF 2.1.0,
https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html) and JUnit XML (one testcase per
request, one failure per failing break; the schema CI servers read, as written by pytest's
`--junitxml`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from ctxbench.bench.prefix.breaks import CLASSES, Break, Report
from ctxbench.bench.prefix.report import culprit, describe

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RULES = {
    "side_request": "A side-branch request (a helper or summarizer call) does not start with its parent.",
    "new_conversation": "A new task on the same static prefix: none of the parent's messages kept.",
    "reset_after_compaction": "The conversation restarts shorter after a compaction.",
    "tail_edit": "Only the parent's newest message changed: the tail is re-billed.",
    "mid_conversation_edit": "An earlier message changed: everything after it is re-billed.",
    "static_prefix_edit": "Tools or system prompt changed and the conversation kept the change.",
}


def _version() -> str:
    try:
        return version("ctxbench")
    except PackageNotFoundError:
        return "0"


def _message(b: Break, failing: bool) -> str:
    what = culprit(b)
    return describe(b, failing) + (f". {what}" if what else "")


def format_sarif(report: Report, path: str) -> str:
    """A SARIF 2.1.0 log: an `error` result per failing break, a `note` per other break."""
    failing = {id(b) for b in report.failing}
    rules = [{"id": c, "name": c, "shortDescription": {"text": RULES[c]}} for c in CLASSES]
    results = []
    for b in report.breaks:
        region = {"startLine": b.line} if b.line else {}
        loc: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": path}, **({"region": region} if region else {})}
        }
        if b.path:
            loc["logicalLocations"] = [
                {"fullyQualifiedName": f"request[{b.request}].{b.path}", "kind": "member"}
            ]
        props = {"class": b.cls, "explained": b.explained, "tokens": b.tokens, "path": b.path}
        if b.dollars is not None:
            props["dollars"] = b.dollars
        results.append(
            {
                "ruleId": b.cls,
                "ruleIndex": CLASSES.index(b.cls),
                "level": "error" if id(b) in failing else "note",
                "message": {"text": _message(b, id(b) in failing)},
                "locations": [loc],
                "partialFingerprints": {"prefixBreak/v1": b.key} if b.key else {},
                "properties": props,
            }
        )
    run = {
        "tool": {"driver": {"name": "ctxbench check-prefix", "version": _version(), "rules": rules}},
        "results": results,
        "properties": {"requests": report.requests, "failing_dollars": report.dollars},
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)


def format_junit(report: Report, path: str) -> str:
    """JUnit XML: a testsuite for the log, a testcase per request, a failure per failing break."""
    failing = {id(b) for b in report.failing}
    by_request: dict[int, list[Break]] = {}
    for b in report.breaks:
        by_request.setdefault(b.request, []).append(b)
    suite = ET.Element(
        "testsuite",
        name=f"check-prefix {report.source or path}",
        tests=str(report.requests),
        failures=str(len(report.failing)),
        errors="0",
        skipped="0",
    )
    for i in range(report.requests):
        case = ET.SubElement(suite, "testcase", classname=path, name=f"request {i}")
        for b in by_request.get(i, []):
            if id(b) in failing:
                f = ET.SubElement(case, "failure", type=b.cls, message=_message(b, True))
                f.text = f"parent: {b.old}\nthis:   {b.new}"
            else:
                ET.SubElement(case, "system-out").text = _message(b, False)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(_wrap(suite), encoding="unicode")


def _wrap(suite: ET.Element) -> ET.Element:
    root = ET.Element("testsuites", tests=suite.get("tests", "0"), failures=suite.get("failures", "0"))
    root.append(suite)
    ET.indent(root)
    return root
