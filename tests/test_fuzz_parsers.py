"""Property-based tests of every parser of outside input: random bytes, random text, truncations and deep
nesting are either parsed or rejected with a reason, never a traceback.

Deterministic (``derandomize=True``) and small (``max_examples`` in the tens), so the suite stays fast.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neurips26.corpora.locus import formats, raw
from neurips26.corpora.locus.build import SAMPLE_DIR
from neurips26.corpora.locus.records import BuildError
from neurips26.corpora.rolebench_unlearn import raw as rolebench_raw
from neurips26.corpora.rolebench_unlearn.records import BuildError as RoleBuildError
from neurips26.corpora.video import ingest
from neurips26.leaderboard import jsonlimits
from neurips26.leaderboard.intake import Submission, check_results
from neurips26.leaderboard.modelinfo import SubmissionRejected
from neurips26.space import submitting

from neurips26 import output
from neurips26.output import Format, emit

FUZZ = settings(max_examples=30, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# one file per LOCUS format (the embedded sample; for enCodePlus the project's fixture page), mutated below
SEEDS = {
    "municode-text": SAMPLE_DIR / "harrow-mill-ga" / "ga-muni-harrow-mill-code-full.txt",
    "tei-xml": SAMPLE_DIR / "putnam-county-ga" / "ga-muni-putnam-county-code-full-markup.xml",
    "semantic-html": SAMPLE_DIR / "sage-hollow-ut" / "title_6_animals.html",
    "toc-json": SAMPLE_DIR / "sage-hollow-ut" / "toc_title_6_animals.json",
    "dc-code-index": SAMPLE_DIR / "wrenfield-wi" / "titles" / "3" / "index.xml",
    "dc-code-xml": SAMPLE_DIR / "wrenfield-wi" / "titles" / "3" / "sections" / "3-101.xml",
    "pdf": SAMPLE_DIR / "caddis-lake-wi" / "caddis-lake-wi-code-of-ordinances.pdf",
    "encodeplus-html": Path(__file__).parent / "fixtures" / "locus_encodeplus.html",
}
NESTING = {".txt": (b"(", b")"), ".xml": (b"<a>", b"</a>"), ".html": (b"<div>", b"</div>"), ".json": (b"[", b"]"),
           ".pdf": (b"%PDF-1.4\n<<", b">>")}


@st.composite
def mutated(draw: st.DrawFn, seed: bytes, suffix: str) -> bytes:
    """A seed file truncated, overwritten with random bytes in places, nested deeply, or replaced outright."""
    kind = draw(st.sampled_from(["truncate", "splice", "nest", "bytes", "text"]))
    if kind == "truncate":
        return seed[:draw(st.integers(0, len(seed)))]
    if kind == "splice":
        at = draw(st.integers(0, len(seed)))
        return seed[:at] + draw(st.binary(max_size=64)) + seed[at + draw(st.integers(0, 64)):]
    if kind == "nest":
        opening, closing = NESTING[suffix]
        depth = draw(st.sampled_from([100, 5_000, 50_000]))
        return opening * depth + draw(st.binary(max_size=16)) + closing * draw(st.integers(0, depth))
    if kind == "bytes":
        return draw(st.binary(max_size=512))
    return draw(st.text(max_size=256)).encode("utf-8", "surrogatepass")


def parse_locus(path: Path) -> list[formats.Section] | str:
    """What the builder does with one file: sections, or the FormatError's reason."""
    try:
        fmt = formats.detect(path)
        return list(fmt.parse(path, formats.Folder(path.parent)))
    except formats.FormatError as exc:
        assert str(exc).strip(), "a rejection without a reason"
        return str(exc)


def fuzz_format(name: str) -> Any:
    seed = SEEDS[name].read_bytes()

    @FUZZ
    @given(data=mutated(seed, SEEDS[name].suffix))
    def check(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / SEEDS[name].name
            path.write_bytes(data)
            parse_locus(path)

    return check


test_fuzz_municode_text = fuzz_format("municode-text")
test_fuzz_tei_xml = fuzz_format("tei-xml")
test_fuzz_semantic_html = fuzz_format("semantic-html")
test_fuzz_toc_json = fuzz_format("toc-json")
test_fuzz_dc_code_index = fuzz_format("dc-code-index")
test_fuzz_dc_code_xml = fuzz_format("dc-code-xml")
test_fuzz_pdf = fuzz_format("pdf")
test_fuzz_encodeplus_html = fuzz_format("encodeplus-html")


@FUZZ
@given(data=mutated((SAMPLE_DIR / "jurisdictions.csv").read_bytes(), ".txt"))
def test_fuzz_jurisdictions_csv(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "jurisdictions.csv").write_bytes(data)
        errors: list[dict] = []
        try:
            raw.read_jurisdictions(Path(tmp), errors)
        except BuildError as exc:
            assert str(exc).strip()
        assert all(e["reason"] for e in errors)


@FUZZ
@given(data=mutated(b'{"items": [{"video_id": "v1", "question": "q", "answer": "a"}]}', ".json"))
def test_fuzz_video_annotations(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "annotations.json"
        path.write_bytes(data)
        try:
            ingest.load_json(path)
        except ValueError as exc:
            assert str(exc).strip()


@FUZZ
@given(lines=st.lists(mutated(b'{"role": "Sherlock", "question": "Who?", "generated": ["Me."]}', ".json"),
                      min_size=1, max_size=4))
def test_fuzz_rolebench_records(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "rolebench-eng" / "instruction-generalization" / "role_specific"
        folder.mkdir(parents=True)
        (folder / "test.jsonl").write_bytes(b"\n".join(lines))
        files: list[Any] = []
        errors: list[dict] = []
        try:
            records = rolebench_raw.read_raw(Path(tmp), files, errors)
        except RoleBuildError as exc:
            assert str(exc).strip()
            return
        assert all(e["reason"] for e in errors)
        assert all(f.reason for f in files if f.status != "parsed")
        assert len(records) + len(errors) >= sum(f.records for f in files) - len(errors)


RESULTS = json.dumps({"results": {"locus_domain": {"acc,none": 0.5}}, "versions": {"locus_domain": 1.0},
                      "config": {"model": "hf", "model_args": "pretrained=x"}, "lm_eval_version": "0.4.13"}).encode()


@FUZZ
@given(data=mutated(RESULTS, ".json"), samples=mutated(b'{"doc_id": 0, "target": "A"}\n', ".json"))
def test_fuzz_submission_files(data: bytes, samples: bytes) -> None:
    sub = Submission({"submitter": "fuzz"}, raw_results=data,
                     samples=[("samples_locus_domain_2026-01-01T00-00-00.jsonl", "x", samples)])
    check_results(sub, {}, {})  # no tasks known: every results file is rejected, the question is how
    assert sub.problems and all(where and why for where, why in sub.problems)
    assert submitting.uploaded_results(_write(data)) in ({}, json.loads(data) if _is_object(data) else {})


def _write(data: bytes) -> Path:
    path = Path(tempfile.mkdtemp()) / "results.json"
    path.write_bytes(data)
    return path


def _is_object(data: bytes) -> bool:
    try:
        jsonlimits.check_json(data, "x")
        return isinstance(json.loads(data), dict)
    except (SubmissionRejected, ValueError):
        return False


@FUZZ
@given(depth=st.integers(0, 3_000), filler=st.text(alphabet='"\\[]{},: a', max_size=40))
def test_json_depth_matches_the_parser(depth: int, filler: str) -> None:
    data = ("[" * depth + json.dumps(filler) + "]" * depth).encode()
    assert jsonlimits.json_depth(data) == depth  # brackets inside strings do not count
    if depth <= jsonlimits.MAX_DEPTH:
        assert jsonlimits.loads(data, "x") is not None
    else:
        try:
            jsonlimits.loads(data, "x")
            raise AssertionError("not rejected")
        except SubmissionRejected as exc:
            assert "nested deeper" in str(exc)


CELLS = st.one_of(st.none(), st.text(max_size=60), st.integers(), st.floats(allow_nan=True),
                  st.lists(st.text(max_size=8), max_size=3), st.binary(max_size=8))


@FUZZ
@given(rows=st.lists(st.fixed_dictionaries({"a": CELLS, "b": st.text(max_size=60)}), max_size=5),
       title=st.text(max_size=40))
def test_fuzz_cli_printers(rows: list[dict[str, Any]], title: str) -> None:
    for fmt in Format:
        out = io.StringIO()
        console, output.console = output.console, output.Console(file=out, width=100)
        try:
            with redirect_stdout(out):
                emit(rows, fmt, title=title)
        finally:
            output.console = console
        if fmt is Format.json:
            assert [r["b"] for r in json.loads(out.getvalue())] == [r["b"] for r in rows]
        elif fmt is Format.csv:
            parsed = list(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
            assert [r["b"] for r in parsed] == [r["b"] for r in rows]


def test_cli_printers_take_arrow_tables_with_markup_and_escapes(capsys: Any) -> None:
    emit(pa.table({"x": ["[/x]", "[b]bold[/b]", "\x1b[31mred"]}), Format.table)
    flat = " ".join(capsys.readouterr().out.split())
    assert "[/x]" in flat and "[b]bold[/b]" in flat
