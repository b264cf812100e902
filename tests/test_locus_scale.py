"""LOCUS at scale, no silent loss: multi-part codes, per-section twins, malformed TEI, three-factor numbering,
Word exports, and a report whose section counts reconcile file by file."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import docx
import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus.formats import SNIFF_BYTES, Folder, FormatError, detect, tei
from neurips26.corpora.locus.formats.base import OLE2_MAGIC
from neurips26.corpora.locus.formats.word import WORD_STREAM

FRONT_MATTER = "".join(f"Supplement history table entry {i}: ordinances adopted and codified.\n" for i in range(1500))
TEI_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/><text><body>'


def sections(chapter: int, numbers: range, style: str = "Sec. {c}-{n}. - ") -> list[str]:
    """Municode section records: a heading line with a distinct catchline, then the text."""
    return [f"{style.format(c=chapter, n=n)}Heading {chapter} {n}.\nText of section {chapter}-{n}: it applies."
            for n in numbers]


def text_code(chapters: dict[int, range], front: str = "") -> str:
    body = [f"Chapter {c} - CHAPTER {c}\n" + "\n".join(sections(c, numbers)) for c, numbers in chapters.items()]
    return front + "\n".join(body) + "\n"


def tei_code(chapters: dict[int, range], cut: bool = False, amp: bool = False) -> str:
    divs = []
    for c, numbers in chapters.items():
        text = "\n".join(sections(c, numbers))
        if amp:
            text = text.replace("it applies", "it applies to dogs & cats", 1)  # a bare &: not well-formed
        divs.append(f'<div type="chapter"><head>Chapter {c} - CHAPTER {c}</head><p>\n{text}\n</p></div>')
    doc = f'{TEI_HEAD}<div type="code">{"".join(divs)}</div></body></text></TEI>\n'
    return doc[: doc.index("Heading 1 4.")] if cut else doc  # cut: the file ends inside section 1-4


def word_docx(path: Path, lines: list[str]) -> bytes:
    document = docx.Document()
    for line in lines:
        document.add_paragraph(line)
    document.save(path)
    return path.read_bytes()


def fake_doc() -> bytes:
    """An OLE2 container naming a WordDocument stream (what detection looks for), with no valid Word body."""
    return OLE2_MAGIC + bytes(504) + WORD_STREAM + bytes(1024)


JURISDICTIONS = ["multipart", "twin", "broken", "cutoff", "onefile", "threefactor", "worddocx", "worddoc", "word97",
                 "junk"]
# A real Word 97-2003 file: a python-docx document of four Municode sections, converted by LibreOffice
# (`soffice --headless --convert-to doc:"MS Word 97" wordville.docx`), kept as a fixture since no Word 97
# writer is installed for the tests.
WORD97 = Path(__file__).parent / "fixtures" / "locus_wordville.doc"
ANTIWORD = shutil.which("antiword") is not None
THREE_FACTOR = """CODE OF ORDINANCES OF THE CITY OF TESTVALE
CHARTER
ARTICLE I. - INCORPORATION AND POWERS
SECTION 1.10. - Corporate powers.
The city shall have all powers.
SECTION 1.11. - Boundaries.
The boundaries are as recorded.
Title 2 - ADMINISTRATION AND PERSONNEL
Chapter 2.12 - CITY COUNCIL
2.12.010 - Meetings.
The council shall meet monthly.
(Ord. 2005-3 § 1)
2.12.020 - Quorum.
A majority is a quorum.
Chapter 2.16 - CITY CLERK
2.16.010 - Duties.
The clerk keeps the records.
"""


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scale") / "raw"
    docx_dir = root.parent / "docx"
    docx_dir.mkdir()
    files: dict[str, bytes | str] = {
        # a code in two parts, the first with front matter longer than any fixed sniffing head
        "multipart/testvale1-code-full.txt": text_code({1: range(1, 31)}, FRONT_MATTER),
        "multipart/testvale2-code-full.txt": text_code({2: range(1, 21)}),
        # a complete text export beside an incomplete TEI twin (9 of 12 sections)
        "twin/code-full.txt": text_code({1: range(1, 13)}),
        "twin/code-full-markup.xml": tei_code({1: range(1, 10)}),
        # a TEI twin that is not well-formed (a bare &) but complete once recovered
        "broken/code-full.txt": text_code({1: range(1, 7)}),
        "broken/code-full-markup.xml": tei_code({1: range(1, 7)}, amp=True),
        # a TEI twin cut off inside its fourth section: recovery loses sections, the text export wins
        "cutoff/code-full.txt": text_code({1: range(1, 7)}),
        "cutoff/code-full-markup.xml": tei_code({1: range(1, 7)}, cut=True),
        # a whole code beside a one-section Word extract: the extract is not the code's twin
        "onefile/code-full.txt": text_code({1: range(1, 9)}),
        "onefile/extract.docx": word_docx(docx_dir / "extract.docx", sections(1, range(3, 4))[0].split("\n")),
        "threefactor/testvale-code.txt": FRONT_MATTER + THREE_FACTOR,
        "worddocx/code.docx": word_docx(docx_dir / "code.docx", text_code({5: range(1, 5)}).splitlines()),
        "worddoc/code.doc": fake_doc(),
        "word97/wordville.doc": WORD97.read_bytes(),
        "junk/minutes.txt": "Minutes of the council meeting of May 4.\nPresent: all members.\n",
    }
    root.mkdir(parents=True)
    (root / "jurisdictions.csv").write_text("jurisdiction_id,name,kind,state,counties,source\n" + "".join(
        f"{j},Town of {j.title()},town,GA,Bartow County,test\n" for j in JURISDICTIONS), encoding="utf-8")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data.encode() if isinstance(data, str) else data)
    return root


@pytest.fixture(scope="module")
def built(raw: Path) -> tuple[Path, locus.BuildReport, dict]:
    out = raw.parent / "locus"
    report = locus.build(raw=raw, out=out)
    return out, report, json.loads((out / "build_report.json").read_text())


def rows(folder: Path, config: str) -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob("train-*.parquet"))).to_pylist()


def test_front_matter_longer_than_a_head_is_still_detected(raw: Path) -> None:
    path = raw / "multipart/testvale1-code-full.txt"
    assert path.read_bytes().index(b"Sec. 1-1.") > SNIFF_BYTES
    assert detect(path).name == "municode-text"
    assert detect(raw / "threefactor/testvale-code.txt").name == "municode-text"


def test_section_counts_are_exact(built: tuple[Path, locus.BuildReport, dict]) -> None:
    out, _, _ = built
    n = {j["jurisdiction_id"]: j["n_sections"] for j in rows(out, "jurisdictions")}
    assert n == {"multipart": 50, "twin": 12, "broken": 6, "cutoff": 6, "onefile": 8, "threefactor": 5,
                 "worddocx": 4, "worddoc": 0, "word97": 4 if ANTIWORD else 0, "junk": 0}
    by_jid: dict[str, list[dict]] = {}
    for r in rows(out, "sections"):
        by_jid.setdefault(r["jurisdiction_id"], []).append(r)
    assert [r["number"] for r in by_jid["multipart"]] == [f"1-{k}" for k in range(1, 31)] + \
        [f"2-{k}" for k in range(1, 21)]  # parts concatenated in order
    # the union of the twins, in the complete export's order, each section from the most structured format
    assert [r["number"] for r in by_jid["twin"]] == [f"1-{k}" for k in range(1, 13)]
    assert [r["format"] for r in by_jid["twin"]] == ["tei-xml"] * 9 + ["municode-text"] * 3
    assert {r["format"] for r in by_jid["cutoff"]} == {"municode-text"}
    assert all(r["text"].endswith("it applies.") for r in by_jid["cutoff"])
    assert Counter(r["format"] for r in by_jid["onefile"]) == {"municode-text": 7, "word-docx": 1}
    three = by_jid["threefactor"]
    assert [(r["number"], r["heading"]) for r in three] == [
        ("1.10", "Corporate powers"), ("1.11", "Boundaries"), ("2.12.010", "Meetings"), ("2.12.020", "Quorum"),
        ("2.16.010", "Duties")]
    assert three[2]["path"] == ["Title 2 - ADMINISTRATION AND PERSONNEL", "Chapter 2.12 - CITY COUNCIL"]
    assert three[2]["history"] == ["Ord. 2005-3 § 1"]
    assert [r["number"] for r in by_jid["worddocx"]] == ["5-1", "5-2", "5-3", "5-4"]
    assert by_jid["worddocx"][0]["path"] == ["Chapter 5 - CHAPTER 5"]


def test_report_reconciles_sections_file_by_file(built: tuple[Path, locus.BuildReport, dict]) -> None:
    out, report, payload = built
    assert report.reconciles() and payload["reconciles"]
    files = {f["path"]: f for f in payload["files"]}
    kept_rows = Counter(r["source_file"] for r in rows(out, "sections"))
    for f in files.values():
        assert f["kept"] + f["dropped"] == f["sections"], f["path"]
        assert kept_rows.get(f["path"], 0) == f["kept"], f["path"]
    assert report.sections_parsed == report.sections + report.sections_dropped == sum(f["sections"] for f in
                                                                                       files.values())
    expect = {  # path: (status, sections, kept, dropped)
        "twin/code-full-markup.xml": ("parsed", 9, 9, 0),
        "twin/code-full.txt": ("parsed", 12, 3, 9),
        "broken/code-full-markup.xml": ("parsed", 6, 6, 0),
        "broken/code-full.txt": ("duplicate", 6, 0, 6),
        "cutoff/code-full.txt": ("parsed", 6, 6, 0),
        "cutoff/code-full-markup.xml": ("duplicate", 4, 0, 4),  # the 4th cut short
        "onefile/extract.docx": ("parsed", 1, 1, 0),
        "onefile/code-full.txt": ("parsed", 8, 7, 1),
    }
    for path, (status, n, kept, dropped) in expect.items():
        assert (files[path]["status"], files[path]["sections"], files[path]["kept"], files[path]["dropped"]) == \
            (status, n, kept, dropped), path
    assert files["twin/code-full.txt"]["reason"] == \
        "9 of 12 section(s) dropped: 9 as twins of twin/code-full-markup.xml"


def test_malformed_tei_is_recovered_with_a_record_warning(built: tuple[Path, locus.BuildReport, dict]) -> None:
    out, _, _ = built
    warnings = {e["source_file"]: e["reason"] for e in rows(out, "errors") if e["level"] == "record"}
    assert "malformed XML at line" in warnings["broken/code-full-markup.xml"]
    assert "recovering XML parser" in warnings["broken/code-full-markup.xml"]
    assert "cutoff/code-full-markup.xml" in warnings
    text = next(r["text"] for r in rows(out, "sections") if r["section_id"] == "broken:1-1")
    assert "dogs" in text and "cats" in text  # the recovered TEI keeps the text around the bad character


def test_files_not_understood_say_what_they_looked_like(built: tuple[Path, locus.BuildReport, dict]) -> None:
    out, _, _ = built
    reasons = {e["source_file"]: e["reason"] for e in rows(out, "errors") if e["level"] == "file"}
    assert "first line 'Minutes of the council meeting of May 4.'" in reasons["junk/minutes.txt"]
    assert "antiword" in reasons["worddoc/code.doc"]  # detected as Word 97-2003 and handed to antiword


def test_word_doc_through_antiword(tmp_path: Path) -> None:
    if not ANTIWORD:
        pytest.skip("Debian's antiword is not installed (scripts/setup installs it as root)")
    path = tmp_path / "code.doc"
    path.write_bytes(fake_doc())
    fmt = detect(path)
    assert fmt.name == "word-doc"
    with pytest.raises(FormatError, match="antiword could not read it"):
        list(fmt.parse(path, Folder(tmp_path)))


def test_a_real_word_97_file_gives_its_sections(built: tuple[Path, locus.BuildReport, dict]) -> None:
    if not ANTIWORD:
        pytest.skip("Debian's antiword is not installed (scripts/setup installs it as root)")
    out, _, payload = built
    word = [r for r in rows(out, "sections") if r["jurisdiction_id"] == "word97"]
    assert [(r["number"], r["heading"]) for r in word] == [
        ("6-1", "Dogs at large"), ("6-2", "Rabies vaccination"), ("6-3", "Impoundment"), ("6-4", "Penalties")]
    assert {r["format"] for r in word} == {"word-doc"}
    assert word[0]["path"] == ["Chapter 6 - ANIMALS"]
    assert word[0]["text"] == "No owner shall permit a dog to run at large in the town."
    assert word[3]["history"] == ["Ord. No. 2019-4, § 1, 3-4-2019"]
    report = next(f for f in payload["files"] if f["path"] == "word97/wordville.doc")
    assert (report["status"], report["format"], report["sections"], report["kept"]) == ("parsed", "word-doc", 4, 4)


@pytest.mark.parametrize("damage", ["amp", "cut"])
def test_real_tei_twin_damaged_still_gives_every_section(locus_raw: Path, tmp_path: Path, damage: str) -> None:
    real = locus_raw / "georgia/adairsville"
    txt = next(real.glob("*-full.txt"))
    markup = next(real.glob("*-markup.xml")).read_bytes()
    if damage == "amp":  # a bare & in the middle of the code
        at = markup.index(b"Sec. ", len(markup) // 2)
        markup = markup[:at] + b"Fees & charges " + markup[at:]
    else:  # an incomplete twin: the TEI ends half-way
        markup = markup[: len(markup) // 2]
    raw = tmp_path / "raw"
    (raw / "adairsville").mkdir(parents=True)
    (raw / "jurisdictions.csv").write_text("jurisdiction_id,name,kind,state,counties,source\n"
                                           "adairsville,City of Adairsville,city,GA,Bartow County,test\n")
    shutil.copy(txt, raw / "adairsville" / txt.name)
    (raw / "adairsville" / "code-markup.xml").write_bytes(markup)
    text_only = list(detect(txt).parse(txt, Folder(real)))
    report = locus.build(raw=raw, out=tmp_path / "locus")
    assert report.reconciles()
    # every section of the text export; the damaged TEI adds at most its damaged paragraph, kept as the text of
    # its division (`Fees charges Sec. 10-392. - ...` is no section line, so it is the division's own text)
    extra = 1 if damage == "amp" else 0
    assert report.sections == len(text_only) + extra == 872 + extra
    files = {f["path"]: f for f in json.loads((tmp_path / "locus/build_report.json").read_text())["files"]}
    assert sum(f["kept"] for f in files.values()) == 872 + extra
    recovered = list(tei.parse(raw / "adairsville/code-markup.xml", Folder(raw / "adairsville")))
    assert files["adairsville/code-markup.xml"]["sections"] == len(recovered)


FAULTS_AFTER = """
import resource, sys
from neurips26.corpora.locus import raw
if sys.argv[1] == "worker":
    assert raw.keep_freed_memory()
def one_file():  # what a worker does per file: many blocks (a code's text, lines, rows) made, touched and freed
    blocks = [bytearray(16384) for _ in range(1024)]
    del blocks
one_file()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    one_file()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_a_worker_process_reuses_freed_memory_instead_of_faulting_it_in_again() -> None:
    faults = {mode: int(subprocess.run([sys.executable, "-c", FAULTS_AFTER, mode], capture_output=True, text=True,
                                       check=True).stdout) for mode in ("default", "worker")}
    assert faults["default"] > 20 * 16 * 2**20 // 4096 // 2  # the 16 MB given back and faulted in again each time
    assert faults["worker"] < 200  # the same memory reused
