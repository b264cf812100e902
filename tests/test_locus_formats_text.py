"""Municode text, TEI and PDF parsers: the real Georgia exports, generated PDFs, bad input."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from fpdf import FPDF
from hypothesis import given, settings
from hypothesis import strategies as st
from neurips26.corpora.locus.formats import Folder, FormatError, Section, detect, line_kinds, municode, pdf, tei
from PIL import Image, ImageDraw, ImageFont

GEORGIA = ("adairsville", "arcade", "athens-clarke", "baldwin-county", "edison", "fairmount")
PDF_DUMPS = ("baldwin-county", "edison", "fairmount")
# A section line: `Sec. 1-1.11. - `, `Secs. 2-3—2-22. - `, Baldwin's `[Sec. 4.3. - `, the
# `Section 1.10. - ` lines of Fairmount's charter and the `1.01. - ` lines of Edison's personnel policies.
RAW_SECTION_LINE = re.compile(r"^(?:\[?Secs?\. |Section [0-9.]+\. - |\d+\.\d+\. - [A-Z])", re.M)
HEADING_NUMBER = re.compile(rf"(?:{line_kinds.HEADING_WORDS}) ")  # a section of a heading's text (`Appendix A`)
NOTE_LINE = re.compile(r"^\((?:Ord|Code)\b.*\)$|^(?:Cross|State [Ll]aw) reference—", re.M)
ADAIRSVILLE_TEI = "adairsville/ga-muni-adairsville-code-full-markup.xml"


def txt_path(locus_raw: Path, name: str) -> Path:
    return next((locus_raw / "georgia" / name).glob("*.txt"))


def raw_text(locus_raw: Path, name: str) -> str:
    """The export as Python reads text: a bare CR (paragraph break) becomes a line break."""
    return txt_path(locus_raw, name).read_text(encoding="utf-8-sig")


@pytest.fixture(scope="module")
def parsed(locus_raw: Path) -> dict[str, list[Section]]:
    out = {}
    for name in GEORGIA:
        path = txt_path(locus_raw, name)
        assert detect(path).name == "municode-text"
        out[name] = list(detect(path).parse(path, Folder(path.parent)))
    return out


def by_number(sections: list[Section], number: str) -> Section:
    return next(s for s in sections if s.number == number)


# --- Municode text exports -------------------------------------------------------------

@pytest.mark.parametrize("name", GEORGIA)
def test_every_section_line_is_one_section(parsed: dict[str, list[Section]], locus_raw: Path,
                                           name: str) -> None:
    raw = raw_text(locus_raw, name)
    lines = [line for line in raw.splitlines() if RAW_SECTION_LINE.match(line)]
    sections = [s for s in parsed[name] if not HEADING_NUMBER.match(s.number)]
    assert len(sections) == len(lines)
    # in order, each section's number and heading are its own line's `Sec. <num>. - <heading>`
    for section, line in zip(sections, lines, strict=True):
        line = municode.normalize(line).lstrip("[")
        line = line.split(" ", 1)[1] if line.startswith("S") else line
        assert line.startswith(f"{section.number}. - {section.heading}"), (section, line)
        assert section.number and section.heading and section.path
    ranges = [s for s, line in zip(sections, lines, strict=True) if line.startswith("Secs. ")]
    assert all(s.status == "reserved" and not s.text for s in ranges)
    assert len(ranges) == len(re.findall(r"^Secs\. ", raw, re.M))


@pytest.mark.parametrize(("name", "number", "heading", "in_path"), [
    ("adairsville", "1-1.11", "Corporate boundaries", "ARTICLE I. - INCORPORATION AND POWERS"),
    ("adairsville", "47-128", "C-1. Central Business District", "Chapter 47 - ZONING"),
    ("adairsville", "12-73", "Life insurance agency license fees; independent life insurance agencies, "
                             "brokers, etc., not otherwise licensed", "DIVISION 2. - LIFE INSURERS"),
    ("adairsville", "2-3—2-22", "Reserved", "ARTICLE I. - IN GENERAL"),
    ("arcade", "22-2", "Enforcement", "Chapter 22 - FIRE PREVENTION AND PROTECTION"),
    ("athens-clarke", "2-3-6", "Exemptions", "CHAPTER 2-3. - HOTEL-MOTEL EXCISE TAX"),
    ("baldwin-county", "1A", "Chairman", "ARTICLE I. - BOARD OF COMMISSIONERS"),
    ("baldwin-county", "4.3", "Reserved", "Appendix A - LAND DEVELOPMENT CODE"),
    ("edison", "2-130", "Fiscal year", "DIVISION 2. - BUDGET"),
    ("fairmount", "1.10", "Incorporation", "ARTICLE I. - CREATION, INCORPORATION, POWERS"),
    ("fairmount", "10-136, 10-137", "Reserved", "Chapter 10 - BUSINESSES"),
])
def test_known_sections(parsed: dict[str, list[Section]], name: str, number: str, heading: str,
                        in_path: str) -> None:
    section = by_number(parsed[name], number)
    assert section.heading == heading
    assert in_path in section.path
    assert section.status == ("reserved" if heading == "Reserved" else "active")


def test_paths_history_and_cross_references(parsed: dict[str, list[Section]]) -> None:
    adairsville = parsed["adairsville"]
    assert by_number(adairsville, "1-1.11").path == [
        "PART I - CHARTER", "ARTICLE I. - INCORPORATION AND POWERS"]
    assert by_number(adairsville, "2-23").path == [  # footnote tail `[1] Footnotes: ...` stripped
        "PART II - CODE OF ORDINANCES", "Chapter 2 - ADMINISTRATION", "ARTICLE II. - MAYOR AND COUNCIL",
        "DIVISION 1. - GENERALLY"]
    s = by_number(adairsville, "1-2")
    assert s.history == ["Code 2004, § 1-2"]
    assert s.cross_references == [
        "State Law reference— Computation of time, O.C.G.A. § 1-3-1; construction of definitions, "
        "O.C.G.A. § 1-3-2; meaning of certain words, O.C.G.A. § 1-3-3."]
    assert "Code 2004" not in s.text and "State Law reference" not in s.text
    assert s.text.startswith("In the construction of this Code")
    s = by_number(parsed["edison"], "2-130")  # PDF dump: notes on their own lines
    assert s.text == ("The fiscal year of the city shall begin on July 1 of each year "
                      "and end on the following June 30th.")
    assert s.history == ["Ord. of 7-1-1979"]
    assert s.cross_references == ["State law reference— Establishment of fiscal year, O.C.G.A. § 36-81-3."]
    s = by_number(parsed["fairmount"], "1-2")  # a cross-reference wrapped over two lines is one
    assert s.cross_references[-1].endswith("meaning of certain words, O.C.G.A. § 1-3-3.")
    assert by_number(parsed["baldwin-county"], "1A").history == [
        "1992 Ga. Laws (Act. No. 1339), § 1(d), p. 6668"]
    for name, sections in parsed.items():
        for s in sections:
            where = (name, s.number)
            assert all(not h.startswith("(") and h.count("(") == h.count(")") for h in s.history), where
            assert not NOTE_LINE.search(s.text), where
            assert "Footnotes:" not in s.text and "FOOTNOTE(S)" not in s.text, where
    assert all(s.history for s in parsed["athens-clarke"])  # each of its sections ends with one


@pytest.mark.parametrize("name", PDF_DUMPS)
def test_page_boilerplate_is_not_text(parsed: dict[str, list[Section]], locus_raw: Path, name: str) -> None:
    raw = raw_text(locus_raw, name)
    lines = [line.strip() for line in raw.splitlines()]
    pages = Counter(m[1] for line in lines if (m := re.fullmatch(r"\d+/(\d+)", line)))
    n_pages = max(pages.values(), default=0)
    repeated = {line for line, n in Counter(lines).items() if line and n_pages and n >= n_pages / 2}
    texts = [s.text for s in parsed[name]]
    for text in texts:
        assert "GA Code of Ordinances" not in text
        assert not re.search(r"^\d+/\d+$", text, re.M)
        assert not repeated & set(text.splitlines())
    if name == "edison":
        assert n_pages == 192 and "5/9/2019 Edison, GA Code of Ordinances" in repeated


def test_adairsville_headings_agree_with_tei(locus_raw: Path) -> None:
    """The TEI twin puts each heading on its own line: ground truth for the heading/text split,
    also when the export's paragraph breaks (bare CRs) are lost and everything is one line."""
    markup = (locus_raw / "georgia" / ADAIRSVILLE_TEI).read_text(encoding="utf-8")
    truth = [(m[1], m[2]) for m in re.finditer(r"^\s*\[?Secs?\. (\S+?)\. - (.*?)\.? *$", markup, re.M)]
    raw = txt_path(locus_raw, "adairsville").read_bytes().decode("utf-8-sig")
    lf = raw.replace("\r\n", "\n")
    for variant in (raw, lf.replace("\r", ""), lf.replace("\r", " ")):
        got = [(s.number, s.heading) for s in municode.sections_from_text(variant)
               if not HEADING_NUMBER.match(s.number)]
        assert len(got) == len(truth) == 870
        agree = sum(a == b for a, b in zip(got, truth, strict=True)) / len(truth)
        assert agree == 1.0


def test_one_line_sections_split_heading_text_and_notes() -> None:
    text = (
        "THE CODE OF TESTVILLE\nPREFACE Sec. 1 of this preface is not a section.\n"
        "Chapter 2 - ADMINISTRATION[1] Footnotes: --- (1) --- State Law reference— Cities, § 36-30-1.\n"
        "ARTICLE I. - IN GENERAL\n"
        "Sec. 2-1. - Fees, etc. Fees are set by the council. (Ord. of 6-17-2008, § 1) "
        "Cross reference— Finance, § 2-50. State Law reference— Fees, O.C.G.A. § 36-1-1.\n"
        "Sec. 2-2. - Sec. 2-1 applied. (a)  Section 2-1 applies here.\n"
        "Secs. 2-3—2-20. - Reserved.\n"
        "Sec. 2-21. - Repealed.\n"
    )
    s1, s2, s3, s4 = municode.sections_from_text(text)
    assert (s1.number, s1.heading, s1.text) == ("2-1", "Fees, etc.", "Fees are set by the council.")
    assert s1.path == ["Chapter 2 - ADMINISTRATION", "ARTICLE I. - IN GENERAL"]
    assert s1.history == ["Ord. of 6-17-2008, § 1"]
    assert s1.cross_references == ["Cross reference— Finance, § 2-50.",
                                   "State Law reference— Fees, O.C.G.A. § 36-1-1."]
    assert (s2.heading, s2.text) == ("Sec. 2-1 applied", "(a) Section 2-1 applies here.")
    assert (s3.number, s3.status, s4.status) == ("2-3—2-20", "reserved", "repealed")
    with pytest.raises(FormatError, match="no section line"):
        municode.sections_from_text("THE CODE OF TESTVILLE\nChapter 1 - GENERAL PROVISIONS\n")


# What each kind of line is, written plainly (the first kind that matches at a line's start decides; a heading may
# look at the line break after its line): the parser's one-scan form must agree with it on any text.
LINE_KINDS = [(kind, re.compile(pattern, re.M)) for kind, pattern in [
    ("page", r"(?i:page )?\d{1,5} ?(?i:/|of) ?\d{1,5}$"),
    ("date", r"\d{1,2}/\d{1,2}/\d{2,4},? \S.*$"),
    ("furniture", r"(?:https?://|about:blank)\S* \d{1,5}/\d{1,5}$"),
    ("marker", r"(?:•|(?:• ?)?(?:\((?:\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,6})\)|\d{1,3}\.|[a-zA-Z]\.))$"),
    ("section", r"\[(?:Secs?\.? ?\d|Secs?\. |Sections? |SECTIONS? |§|\d+[A-Z]?\.\d+[A-Z]?\.\d)"
                r"|Secs?\.? ?\d|Secs?\. |Sections? |SECTIONS? |§|\d+[A-Z]?\.\d+[A-Z]?(?:\.\d|\.? [-—–] |[—–]\d)"),
    ("special", r"\[?(?:PART|Part|TITLE|Title|CHAPTER|Chapter|APPENDIX|Appendix|ARTICLE|Article|ARTCILE|Artcile"
                r"|DIVISION|Division|SUBDIVISION|Subdivision)\s|[IVXLC]+\s"
                r"|(?:[A-Z]+ )*(?:COMPARATIVE TABLES?|REFERENCE TABLE)\b"),
]]
LINE_PIECES = ["Page ", "page ", "PAGE ", "1", "12", "123", "123456", "/", " of ", "Of", " ", "•", "(a)", "(iv)",
               "(12)", "a.", "B.", "3.", "[", "]", "Sec. ", "Secs. ", "Section ", "SECTION ", "1.2.3", "2A.1B.3",
               "PART ", "Part", "TITLE ", "Chapter ", "APPENDIX ", "Article ", "ARTCILE ", "DIVISION", "Subdivision ",
               "IV", "XLC ", "C ", "COMPARATIVE TABLES", "REFERENCE TABLE", "STATE ", "x", "The ", "5/9/2019 ", "\t",
               "—", "\u00a0", "é", "\u0663", "Sec ", "Sec.", "Sections ", "SECTIONS ", "§", "1.01", " - ", "–",
               "https://x.gov/c?n=1", "about:blank", ",", "5"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(LINE_PIECES), max_size=5).map("".join), min_size=1, max_size=6))
def test_the_line_kind_scan_follows_its_definition(lines: list[str]) -> None:
    joined = "\n" + "\n".join(lines)
    starts = [m.end() for m in re.finditer("\n", joined)]
    expected = [(i, next(kind for kind, p in LINE_KINDS if p.match(joined, start)))
                for i, start in enumerate(starts) if any(p.match(joined, start) for _, p in LINE_KINDS)]
    found = [(joined.count("\n", 0, m.start()), line_kinds.KIND_OF_GROUP[m.lastindex])
             for m in line_kinds.LINE_KIND.finditer(joined)]
    assert found == expected


def test_municode_sniff() -> None:
    assert municode.sniff(b"PREFACE\r\nSec. 1-1. - Title.\r\n", Path("x.txt"))
    assert not municode.sniff(b"just some prose about Sec. 1-1. - Title.", Path("x.txt"))
    assert not municode.sniff(b'<?xml version="1.0"?>\n<a>\nSec. 1-1. - Title.\n</a>', Path("x.xml"))
    assert not municode.sniff(b"%PDF-1.7\nSec. 1-1. - Title.\n", Path("x.pdf"))


# --- TEI --------------------------------------------------------------------------------

def test_tei_gives_the_same_sections_as_the_text_export(parsed: dict[str, list[Section]],
                                                       locus_raw: Path) -> None:
    path = locus_raw / "georgia" / ADAIRSVILLE_TEI
    assert detect(path).name == "tei-xml"
    sections = list(tei.parse(path, Folder(path.parent)))
    txt = parsed["adairsville"]
    assert [s.number for s in sections] == [s.number for s in txt]
    assert [s.heading for s in sections] == [s.heading for s in txt]
    assert [s.path for s in sections] == [s.path for s in txt]
    assert [s.history for s in sections] == [s.history for s in txt]
    assert by_number(sections, "1-1.11").text == by_number(txt, "1-1.11").text


TEI_DOC = """<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader/><text><body>
  <div type="cover-info"><p>THE CODE OF TESTVILLE
Sec. 9-9. - Not a section.
</p></div>
  <div type="code">
    <div type="chapter" n="3"><head>Chapter 3 - ANIMALS[1] </head>
      <p>
        Footnotes:
        --- (1) ---
        State Law reference— Animals, O.C.G.A. § 4-1-1.
        ARTICLE I. - IN GENERAL
        Sec. 3-1. - Dogs at large.
        No dog shall run at large.
        (Ord. of 1-2-2003, § 1)
      </p>
    </div>
  </div>
</body></text></TEI>
"""


def test_tei_small_document(tmp_path: Path) -> None:
    path = tmp_path / "code-markup.xml"
    path.write_text(TEI_DOC, encoding="utf-8")
    assert detect(path).name == "tei-xml"
    (s,) = tei.parse(path, Folder(tmp_path))
    assert (s.number, s.heading, s.text, s.history) == ("3-1", "Dogs at large", "No dog shall run at large.",
                                                        ["Ord. of 1-2-2003, § 1"])
    assert s.path == ["Chapter 3 - ANIMALS", "ARTICLE I. - IN GENERAL"]


def test_truncated_tei_is_recovered_with_line_and_reason(tmp_path: Path) -> None:
    path = tmp_path / "code-markup.xml"
    path.write_text(TEI_DOC[: TEI_DOC.index("No dog")], encoding="utf-8")
    assert detect(path).name == "tei-xml"
    folder = Folder(tmp_path)
    (s,) = tei.parse(path, folder)  # what recovery keeps: the section line, its text cut off
    assert (s.number, s.heading, s.text) == ("3-1", "Dogs at large", "")
    ((where, message),) = folder.warnings
    assert where == path and re.match(r"malformed XML at line \d+: \w+", message)
    nothing = tmp_path / "nothing-markup.xml"
    nothing.write_text(TEI_DOC[: TEI_DOC.index("Sec. 3-1")], encoding="utf-8")
    with pytest.raises(FormatError, match=r"malformed XML at line \d+: .*after recovery: no section line"):
        list(tei.parse(nothing, Folder(tmp_path)))
    assert not tei.sniff(b'<?xml version="1.0"?><root xmlns="urn:other"/>', path)


# --- PDF --------------------------------------------------------------------------------

PAGE_1 = """5/9/2019 Testville, GA Code of Ordinances
1/2
Chapter 1 - GENERAL PROVISIONS
Sec. 1-1. - Short title.
This chapter may be cited as the Testville Code.
(Ord. of 1-1-2020)
Sec. 1-2. - Definitions.
Words have their ordinary meaning.
State law reference— Construction of words, O.C.G.A. § 1-3-1.
"""
PAGE_2 = """5/9/2019 Testville, GA Code of Ordinances
2/2
Sec. 1-3. - Penalty.
Whoever violates this chapter shall be fined.
"""
SCANNED = ["Sec. 1-4. - Severability.", "If any part of this chapter is held invalid,",
           "the rest remains in force.", "(Ord. No. 7, 2-2-2020)"]


def scan_of(lines: list[str]) -> Image.Image:
    """A page image of typed lines, as a scanner would give it (no text layer)."""
    image = Image.new("L", (1700, 900), 255)
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 40)
    except OSError:
        font = ImageFont.load_default(size=40)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((100, 100 + 70 * i), line, fill=0, font=font)
    return image


def make_pdf(path: Path, pages: list[str | Image.Image]) -> Path:
    doc = FPDF()
    doc.core_fonts_encoding = "windows-1252"  # has the em dash of `State law reference—`
    doc.set_font("Helvetica", size=11)
    for page in pages:
        doc.add_page()
        if isinstance(page, str):
            doc.multi_cell(0, 6, page)
        else:
            doc.image(page, x=10, y=10, w=190)
    doc.output(str(path))
    return path


def test_pdf_text_layer(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "code.pdf", [PAGE_1, PAGE_2])
    assert detect(path).name == "pdf"
    sections = list(pdf.parse(path, Folder(tmp_path)))
    assert [(s.number, s.heading) for s in sections] == [
        ("1-1", "Short title"), ("1-2", "Definitions"), ("1-3", "Penalty")]
    assert sections[0].history == ["Ord. of 1-1-2020"]
    assert sections[0].path == ["Chapter 1 - GENERAL PROVISIONS"]
    assert sections[1].cross_references == ["State law reference— Construction of words, O.C.G.A. § 1-3-1."]
    assert sections[2].text == "Whoever violates this chapter shall be fined."
    assert all("Code of Ordinances" not in s.text and "2/2" not in s.text for s in sections)


@pytest.mark.skipif(shutil.which("tesseract") is None,
                    reason="tesseract not on PATH (apt-get install tesseract-ocr tesseract-ocr-eng)")
def test_pdf_page_without_text_layer_is_read_by_ocr(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "code.pdf", [PAGE_1, scan_of(SCANNED)])
    sections = list(pdf.parse(path, Folder(tmp_path)))
    assert [s.number for s in sections] == ["1-1", "1-2", "1-4"]
    scanned = sections[-1]
    assert scanned.heading == "Severability"
    assert "held invalid" in scanned.text and scanned.history == ["Ord. No. 7, 2-2-2020"]


def test_pdf_page_needing_ocr_without_tesseract_is_rejected(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_pdf(tmp_path / "code.pdf", [PAGE_1, scan_of(SCANNED)])
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(FormatError, match="page 2 has no text layer and OCR is unavailable: install Debian's "
                                          "tesseract-ocr tesseract-ocr-eng"):
        list(pdf.parse(path, Folder(tmp_path)))


def test_corrupt_pdf_is_rejected(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(FormatError, match="binary|no supported format"):
        detect(junk)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 4)
    assert detect(broken).name == "pdf"
    with pytest.raises(FormatError, match="corrupt or unreadable PDF"):
        list(pdf.parse(broken, Folder(tmp_path)))
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(make_pdf(tmp_path / "whole.pdf", [PAGE_1]).read_bytes()[:300])
    with pytest.raises(FormatError, match="corrupt or unreadable PDF"):
        list(pdf.parse(truncated, Folder(tmp_path)))
