"""enCodePlus HTML (the code viewer Somerville, MA publishes with): the project's fixture page, other page shapes,
detection from content, malformed pages, and a build of a raw folder holding such a code."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus.build import SAMPLE_DIR
from neurips26.corpora.locus.formats import FORMATS, Folder, FormatError, Section, detect, encodeplus, get_format

FIXTURE = Path(__file__).parent / "fixtures" / "locus_encodeplus.html"
NAME = "encodeplus-html"

PART = ["Code of Ordinances", "PART II - CODE OF ORDINANCES"]  # the page's breadcrumb, then its first node
CHAPTER_1 = [*PART, "Chapter 1 - GENERAL PROVISIONS"]
ARTICLE_1 = [*PART, "Chapter 2 - ADMINISTRATION", "ARTICLE I. - IN GENERAL"]
ARTICLE_2 = [*PART, "Chapter 2 - ADMINISTRATION", "ARTICLE II. - CITY COUNCIL"]
EXPECTED = [  # (number, heading, path, status), in document order
    ("1-1", "How Code designated and cited", CHAPTER_1, "active"),
    ("1-2", "Definitions and rules of construction", CHAPTER_1, "active"),
    ("1-3", "Repealed", CHAPTER_1, "repealed"),
    ("1-4—1-10", "Reserved", CHAPTER_1, "reserved"),
    ("2-1", "Fiscal year", ARTICLE_1, "active"),
    ("2-2", "Reserved", ARTICLE_1, "reserved"),
    ("2-21", "Regular meetings", [*ARTICLE_2, "DIVISION 1. - GENERALLY"], "active"),
    ("2-22", "Quorum", [*ARTICLE_2, "DIVISION 1. - GENERALLY"], "active"),
    ("2-41", "Standing committees", [*ARTICLE_2, "DIVISION 2. - COMMITTEES"], "active"),
]


def parse(path: Path) -> tuple[list[Section], list[str]]:
    """Sections and the record-level warnings of one file, through format detection as the builder does it."""
    folder = Folder(path.parent)
    sections = list(detect(path).parse(path, folder))
    return sections, [message for _, message in folder.warnings]


def write(tmp_path: Path, text: str | bytes, name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- the fixture page -------------------------------------------------------------------------------------------

def test_fixture_sections_in_document_order() -> None:
    sections, _ = parse(FIXTURE)
    assert [(s.number, s.heading, s.path, s.status) for s in sections] == EXPECTED


def test_fixture_text_history_and_cross_references() -> None:
    by_number = {s.number: s for s in parse(FIXTURE)[0]}
    assert by_number["1-1"].history == ["Code 1969, § 1-1"]  # the 1/1/1901 placeholder date is not history
    assert by_number["1-1"].text.startswith('The ordinances embraced in the following chapters shall constitute')
    assert by_number["1-2"].text.splitlines()[1:] == [  # a list label runs into its item
        '(a) City. The words "the city" mean the City of Testport.',
        '(b) Shall. "Shall" is mandatory and "may" is permissive.']
    assert by_number["1-2"].history == ["Code 1969, § 1-2; Ord. No. 2003-14, § 1, 7-10-2003"]
    assert by_number["1-3"].text.startswith("Editor's note— Ord. No. 2011-05")
    assert by_number["1-4—1-10"].text == "" and by_number["2-2"].text == ""
    assert by_number["2-1"].history == ["Ord. No. 1998-3, § 1, 2-12-1998", "Effective on: 3/14/2019"]
    assert by_number["2-1"].cross_references == ["State law reference— Fiscal year, M.G.L. c. 44, § 56."]
    # the node without a heading continues 2-21: its lettered part, its table (a line per row), its history
    assert by_number["2-21"].text.splitlines() == [
        "(a) The city council shall hold regular meetings on the second and fourth Thursday of each month.",
        "(b) Meetings begin at the times below:", "Month | Time", "January to June | 7:00 p.m.",
        "July to December | 6:30 p.m."]
    assert by_number["2-21"].history == ["Ord. No. 2015-22, § 1, 9-24-2015"]
    # a history note run into the paragraph's end is split off
    assert by_number["2-22"].text == "A majority of the members of the council shall constitute a quorum."
    assert by_number["2-22"].history == ["Code 1969, § 2-22"]
    assert by_number["2-22"].cross_references == ["Cross reference— Rules of the city council, App. B."]


def test_viewer_chrome_is_never_text() -> None:
    sections, _ = parse(FIXTURE)
    everything = "\n".join(f"{s.heading}\n{s.text}\n{s.history}\n{s.path}" for s in sections)
    for chrome in ("Print", "Effective on: 1/1/1901", "Sec. 1-2. - Definitions", "current through", "Powered by",
                   "clearEffDate", "Testport, MA Code of Ordinances", "secid"):
        assert chrome not in everything, chrome
    assert not any("\xa0" in s.text or "  " in s.text for s in sections)


def test_text_under_a_container_is_skipped_with_a_warning() -> None:
    _, warnings = parse(FIXTURE)
    assert len(warnings) == 1
    assert "secid 2606" in warnings[0] and "'Chapter 2 - ADMINISTRATION'" in warnings[0]
    assert "Cross reference— Personnel, Ch. 9." in warnings[0] and "skipped" in warnings[0]


# --- other page shapes ------------------------------------------------------------------------------------------

ZONING = """<html><body><div id="pageControls"><div class="breadCrumbs">Zoning Ordinance &gt; 1. INTRODUCTORY
PROVISIONS</div></div><div id="thePage" class="textPage" secid="440">
<section id='secid-440' class='secLvl1'><h1>1. INTRODUCTORY PROVISIONS</h1></section>
<section id='secid-441' class='secLvl2'><h2>1.1 GENERAL</h2></section>
<section id='secid-442' class='secLvl3'><h3>1.1.10 Text &amp; Graphics</h3><p>Text governs over photos.</p></section>
<section id='secid-443' class='secLvl3'><h3>1.1.11 Rules of Measurement</h3></section>
<section id='secid-444' class='secLvl4'><div class="li-cont">a. Heights are measured in stories.</div></section>
<section id='secid-445' class='secLvl3'><h3>1.1.12 Definitions</h3><p>These terms are defined:</p></section>
<section id='secid-446' class='secLvl4'><h4>Story</h4><p>A habitable level of a building.</p></section>
<section id='secid-447' class='secLvl2'><h2>1.2 ZONING MAP</h2><p>The map is adopted.</p></section>
</div></body></html>"""


def test_zoning_numbering(tmp_path: Path) -> None:
    """Decimal numbers: a numbered node without text over deeper numbered ones is a container; an unnumbered
    heading below a section (a defined term) continues it."""
    sections, warnings = parse(write(tmp_path, ZONING))
    general = ["Zoning Ordinance", "1. INTRODUCTORY PROVISIONS", "1.1 GENERAL"]
    assert [(s.number, s.heading, s.path) for s in sections] == [
        ("1.1.10", "Text & Graphics", general), ("1.1.11", "Rules of Measurement", general),
        ("1.1.12", "Definitions", general), ("1.2", "ZONING MAP", general[:2])]
    assert sections[1].text == "a. Heights are measured in stories."
    assert sections[2].text == "These terms are defined:\nStory\nA habitable level of a building."
    assert warnings == []


NESTED = """<div id="thePage"><section id="secid-1"><h2>Chapter 4 - ANIMALS</h2>
<section id="secid-2"><h3>Section 4-1: Dogs at large</h3><p>No dog shall run at large.</p>
<section id="secid-3"><p>(b) Leashes are required.</p></section><p>(Ord. No. 7, 2001)</p></section>
<section id="secid-4"><h3>Section 4-2: Cats</h3><p>Cats may roam.</p></section></section></div>"""


def test_nested_sections_without_level_classes(tmp_path: Path) -> None:
    sections, warnings = parse(write(tmp_path, NESTED, "fragment.aspx"))
    assert [(s.number, s.heading, s.path) for s in sections] == [
        ("4-1", "Dogs at large", ["Chapter 4 - ANIMALS"]), ("4-2", "Cats", ["Chapter 4 - ANIMALS"])]
    assert sections[0].text == "No dog shall run at large.\n(b) Leashes are required."
    assert sections[0].history == ["Ord. No. 7, 2001"] and warnings == []


def test_a_page_without_numbered_sections_is_rejected(tmp_path: Path) -> None:
    preface = write(tmp_path, "<div id='thePage'><section id='secid-1' class='secLvl1'><h1>Preface</h1>"
                              "<p>This code was codified in 1969.</p></section></div>")
    with pytest.raises(FormatError, match="none of the 1 <section> nodes has a numbered section heading"):
        parse(preface)
    with pytest.raises(FormatError, match="no <section> elements"):
        list(encodeplus.parse(write(tmp_path, "<div id='thePage'><p>Loading...</p></div>", "empty.html"),
                              Folder(tmp_path)))


# --- malformed pages --------------------------------------------------------------------------------------------

def test_a_cut_off_page_keeps_what_it_has_with_a_recovered_warning(tmp_path: Path) -> None:
    data = FIXTURE.read_bytes()
    sections, warnings = parse(write(tmp_path, data[: data.index(b"Sec. 2-22.")]))
    assert [s.number for s in sections] == [number for number, *_ in EXPECTED[:7]]
    assert sections[-1].heading == "Regular meetings"
    assert any("cut off" in w and "(recovered)" in w for w in warnings)


def test_broken_markup_and_bytes_are_recovered(tmp_path: Path) -> None:
    data = FIXTURE.read_bytes()
    unclosed = data.replace(b"</section>", b"", 4).replace(b"</p>", b"", 3)  # later nodes nest in earlier ones
    assert [(s.number, s.heading, s.path, s.status) for s in parse(write(tmp_path, unclosed))[0]] == EXPECTED
    spliced = data.replace(b"catchlines of sections", b"catchlines \xff\xfe of sections")
    sections, warnings = parse(write(tmp_path, spliced, "spliced.html"))
    assert [s.number for s in sections] == [number for number, *_ in EXPECTED]
    assert "\ufffd" in next(s.text for s in sections if s.number == "1-3")
    assert any("invalid UTF-8 sequence" in w and "(recovered)" in w for w in warnings)
    nested = data.replace(b"<p>The fiscal year", b"<div>" * 2000 + b"<p>The fiscal year")
    sections, warnings = parse(write(tmp_path, nested, "deep.html"))  # libxml2 stops at depth 256: warned
    assert [s.number for s in sections][:4] == [number for number, *_ in EXPECTED[:4]]
    assert any("(recovered)" in w for w in warnings)


def test_declared_charset(tmp_path: Path) -> None:
    page = FIXTURE.read_text(encoding="utf-8").replace('charset="utf-8"', 'charset="windows-1252"')
    page = page.replace("standing committees: finance", "standing committees: financ\u00e9")
    page = page.replace("&mdash;", "-").replace("&sect;", "S")
    sections, warnings = parse(write(tmp_path, page.encode("cp1252")))
    assert "financ\u00e9" in sections[-1].text and not any("recovered" in w for w in warnings)


# --- detection --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["code.html", "code.htm", "doc-view.aspx", "code.txt", "code.xml", "code.json",
                                  "code"])
def test_detected_from_content_under_any_name(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, FIXTURE.read_bytes(), name)
    assert detect(path).name == NAME
    data = path.read_bytes()
    assert [n for n in FORMATS.names() if get_format(n).sniff(data, path)] == [NAME]  # not semantic-html too


def _detected(path: Path) -> str | None:
    try:
        return detect(path).name
    except FormatError:
        return None


def _detected_without_encodeplus(path: Path) -> str | None:
    """What detection gave before this format existed: the first other candidate whose sniffer claims the file."""
    data = path.read_bytes()
    suffix = path.suffix.lower()
    candidates = sorted((get_format(n) for n in FORMATS.names() if n != NAME), key=lambda f: suffix not in f.extensions)
    return next((f.name for f in candidates if f.sniff(data, path)), None)


def _check_other_formats_unchanged(root: Path) -> Counter[str | None]:
    detected: Counter[str | None] = Counter()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        assert not encodeplus.sniff(path.read_bytes(), path), path
        name = _detected(path)
        assert name == _detected_without_encodeplus(path), path
        detected[name] += 1
    return detected


def test_claims_no_file_of_the_embedded_sample() -> None:
    detected = _check_other_formats_unchanged(SAMPLE_DIR)
    assert set(detected) == {"municode-text", "tei-xml", "semantic-html", "toc-json", "dc-code-xml",
                             "dc-code-index", "pdf", None}  # None: jurisdictions.csv
    assert detected[None] == 1


def test_claims_no_file_of_the_real_data(locus_raw: Path) -> None:
    detected = _check_other_formats_unchanged(locus_raw)
    assert NAME not in detected
    assert detected["semantic-html"] == len(list(locus_raw.rglob("*.html")))


# --- a build ----------------------------------------------------------------------------------------------------

TWIN_TEXT = (  # the same code's first sections as a Municode text export, a twin in a less structured format
    "Chapter 1 - GENERAL PROVISIONS\n"
    "Sec. 1-1. - How Code designated and cited. The ordinances embraced in the following chapters shall constitute "
    "the code.\n"
    "Sec. 1-2. - Definitions and rules of construction. In the construction of this Code these rules apply.\n"
)


def test_build_of_a_raw_folder_with_an_encodeplus_code(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    (raw / "testport-ma").mkdir(parents=True)
    (raw / "jurisdictions.csv").write_text("jurisdiction_id,name,kind,state,counties,source\n"
                                           "testport-ma,City of Testport,city,MA,Middlesex County,test\n")
    shutil.copy(FIXTURE, raw / "testport-ma" / "code-of-ordinances.html")
    (raw / "testport-ma" / "code-of-ordinances.txt").write_text(TWIN_TEXT, encoding="utf-8")
    out = tmp_path / "locus"
    report = locus.build(raw=raw, out=out)
    assert report.reconciles()
    # the text export's every section is a twin of the page's: a duplicate file
    assert (report.files_in, report.files_parsed, report.files_duplicate, report.files_rejected) == (2, 1, 1, 0)
    assert report.by_format == {NAME: 1}
    assert report.sections == len(EXPECTED)
    assert (report.sections_parsed, report.sections_dropped) == (len(EXPECTED) + 2, 2)  # the twins of 1-1, 1-2
    rows = pq.read_table(sorted((out / "data" / "sections").glob("train-*.parquet"))).to_pylist()
    assert [(r["number"], r["heading"], list(r["path"]), r["status"]) for r in rows] == EXPECTED
    assert {r["format"] for r in rows} == {NAME}  # the more structured twin is kept
    assert {r["source_file"] for r in rows} == {"testport-ma/code-of-ordinances.html"}
    errors = pq.read_table(sorted((out / "data" / "errors").glob("*.parquet"))).to_pylist()
    assert [(e["level"], e["source_file"]) for e in errors] == [("record", "testport-ma/code-of-ordinances.html")]
    assert "Chapter 2 - ADMINISTRATION" in errors[0]["reason"]
