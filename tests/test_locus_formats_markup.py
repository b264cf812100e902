"""Markup formats of LOCUS: Spanish Fork semantic HTML + JSON TOCs, and D.C. Code XML."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from neurips26.corpora.locus.formats import (
    SNIFF_BYTES,
    Folder,
    FormatError,
    dc_xml,
    detect,
    get_format,
    html_toc,
)

# --- Spanish Fork City (semantic HTML) -------------------------------------------------


@pytest.fixture(scope="module")
def spanish_fork(locus_raw: Path) -> Path:
    return locus_raw / "spanish-fork-ut"


@pytest.fixture(scope="module")
def sf_sections(spanish_fork: Path) -> dict[str, list]:
    folder = Folder(spanish_fork)
    return {p.name: list(html_toc.parse_html(p, folder)) for p in sorted(spanish_fork.glob("title_*.html"))}


def _clean(text: str) -> str:
    return " ".join(text.split())


def test_each_title_yields_its_distinct_sections(spanish_fork: Path, sf_sections: dict[str, list]) -> None:
    assert len(sf_sections) == 4
    for name, sections in sf_sections.items():
        doc = lxml.html.parse(str(spanish_fork / name)).getroot()
        # Independent count: one section per distinct (id, catchline) among <section>s with <p> text.
        expected = {("".join(s.get("id").split()), _clean(s.findtext("h3")))
                    for s in doc.iter("section") if any(_clean(p.text_content()) for p in s.iter("p"))}
        assert len(sections) == len(expected), name
        assert all(s.text and s.heading and s.path[0].startswith("Title ") for s in sections)


def test_no_paragraph_is_lost(spanish_fork: Path, sf_sections: dict[str, list]) -> None:
    for name, sections in sf_sections.items():
        doc = lxml.html.parse(str(spanish_fork / name)).getroot()
        texts = "\n".join(s.text for s in sections)
        chapters = {s.path[-1] for s in sections}
        for p in {_clean(p.text_content()) for p in doc.iter("p")} - {""}:
            # a chapter heading that trails a chapter's last section is moved into the path
            assert p in texts or f"Chapter {p}" in chapters, (name, p)


def test_nbsp_ids_and_headings_normalised(sf_sections: dict[str, list]) -> None:
    sections = sf_sections["title_5_business_licenses.html"]
    numbers = [s.number for s in sections]
    assert len(numbers) == len(set(numbers))  # the nbsp copies of 5_44_0x0 collapse
    assert {"5.44.010", "5.44.020", "5.44.060"} <= set(numbers)
    assert not any("\xa0" in s.number + s.heading + s.text or "  " in s.heading for s in sections)
    by_number = {s.number: s for s in sections}
    assert by_number["5.44.020"].heading == "License and Other Requirements for Use of the Rights-of-Way"
    assert by_number["5.48.040"].text.startswith("Application Requirements")  # fuller copy kept


def test_same_id_with_different_content_kept_twice(sf_sections: dict[str, list]) -> None:
    twins = [s for s in sf_sections["title_8_nuisances.html"] if s.number == "8.20.010"]
    assert [s.heading for s in twins] == ["Purpose, Inspection, And Notice", "Penalties"]
    assert twins[0].text.startswith("It is the purpose of this chapter")
    assert "$500.00 for the first offense" in twins[1].text


def test_stubs_are_not_sections(sf_sections: dict[str, list]) -> None:
    numbers = {s.number for s in sf_sections["title_8_nuisances.html"]}
    assert "8.20.020" not in numbers and "8.20.030" in numbers


def test_chapter_path_and_status(sf_sections: dict[str, list]) -> None:
    sections = {s.number: s for name in sf_sections for s in sf_sections[name] if s.number != "8.20.010"}
    assert sections["5.08.010"].path == ["Title 5 – Business Licenses", "Chapter 5.08 Auctioneers"]
    assert sections["5.04.160"].path == ["Title 5 – Business Licenses", "Chapter 5.04"]  # first: name unknown
    assert not sections["5.04.160"].text.endswith("Auctioneers")
    assert sections["5.04.010"].status == "active"
    assert sections["6.08.140"].status == "repealed"  # "Repealed 12-12-2023"
    assert sections["8.04.010"].status == "repealed"  # "(Ord No. 12-15, Repealed 06/16/2015)"
    assert sections["9.12.020"].status == "reserved"  # heading "(Reserved)"


def test_toc_gaps(spanish_fork: Path) -> None:
    folder = Folder(spanish_fork)
    gaps = {p.name: html_toc.toc_gaps(p, folder) for p in sorted(spanish_fork.glob("title_*.html"))}
    assert gaps.pop("title_8_nuisances.html") == [
        "toc lists 8.20.020 Penalties but title_8_nuisances.html has no text for it"]
    assert all(g == [] for g in gaps.values())


def test_sniffing(spanish_fork: Path) -> None:
    html, toc = get_format("semantic-html"), get_format("toc-json")
    others = [*spanish_fork.glob("*.txt"), spanish_fork / "municipal_code_v1_1.schema.json"]
    assert len(others) == 5
    for path in others:
        head = path.read_bytes()[:SNIFF_BYTES]
        assert not html.sniff(head, path) and not toc.sniff(head, path), path.name
    for path in spanish_fork.glob("toc_*.json"):
        assert detect(path).name == "toc-json"
        assert list(toc.parse(path, Folder(spanish_fork))) == []
    assert detect(spanish_fork / "title_6_animals.html").name == "semantic-html"


def test_html_and_toc_without_real_data(tmp_path: Path) -> None:
    page = tmp_path / "title_1.html"
    page.write_text(
        "<!DOCTYPE html><html><head><link rel='alternate' type='application/json' href='toc_1.json'></head>"
        "<body><h1>Title 1 - General</h1>"
        "<section id='1_04_010'><h3>1.04.010 Scope</h3></section>"
        "<section id='1_04_020'><h3>1.04.020 Gone</h3></section>"
        "<section id='1_04_010\u00a0\u00a0'><h3>1.04.010\u00a0\u00a0 Scope</h3><p>A.</p><p>B.</p></section>"
        "<section id='1_04_010'><h3>1.04.010 Scope</h3><p>A.</p></section>"
        "<section id='1_04_010'><h3>1.04.010 Penalty</h3><p>C.</p></section>"
        "</body></html>", encoding="utf-8")
    (tmp_path / "toc_1.json").write_text(
        '{"title": "Title 1", "file": "title_1.html", "sections": ['
        '{"id": "1_04_010", "label": "1.04.010 Scope"}, {"id": "1_04_020", "label": "1.04.020 Gone"}]}')
    folder = Folder(tmp_path)
    sections = list(html_toc.parse_html(page, folder))
    assert [(s.number, s.heading, s.text) for s in sections] == [
        ("1.04.010", "Scope", "A.\nB."), ("1.04.010", "Penalty", "C.")]
    assert html_toc.toc_gaps(page, folder) == ["toc lists 1.04.020 Gone but title_1.html has no text for it"]


@pytest.mark.parametrize(("content", "reason"), [
    ("<html><body><h1>Title 1</h1><p>No sections here.</p></body></html>", "no <section>"),
    ("<html><body><section id='a'><h3>1.04.010 X</h3></section></body></html>", "has <p> text"),
    ("<html><body><section id='a'><h3>Scope</h3><p>Text.</p></section></body></html>", "no numbered <h3>"),
])
def test_bad_html(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "bad.html"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=reason):
        list(html_toc.parse_html(path, Folder(tmp_path)))


@pytest.mark.parametrize(("content", "reason"), [
    ('{"title": "T", "sections": [{"id": "1_04_010"', "invalid JSON at line 1"),
    ('{"title": "T", "sections": [{"id": "1_04_010"}]}', "sections entry 0 has no string 'label'"),
    ('{"title": "T", "sections": {"id": "1"}}', "no 'sections' list"),
    ('[{"title": "T", "file": "t.html"}]', "master table of contents entry 0 has no string 'toc'"),
])
def test_bad_toc(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "toc.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=reason):
        list(html_toc.parse_toc(path, Folder(tmp_path)))


# --- D.C. Code XML -------------------------------------------------------------------


@pytest.fixture(scope="module")
def dc(locus_raw: Path) -> Path:
    return locus_raw / "dc-code"


def _dc_section(dc: Path, number: str):
    (section,) = dc_xml.parse_section(dc / "titles/8/sections" / f"{number}.xml", Folder(dc))
    return section


def test_every_dc_file_is_one_section(dc: Path) -> None:
    files = sorted((dc / "titles/8/sections").glob("*.xml"))
    assert len(files) == 625
    folder = Folder(dc)
    for path in files:
        sections = list(dc_xml.parse_section(path, folder))
        assert len(sections) == 1 and sections[0].number == path.stem
        assert sections[0].path[0] == "Title 8. Environmental and Animal Control and Protection."
    assert detect(files[0]).name == "dc-code-xml"
    assert detect(dc / "titles/8/index.xml").name == "dc-code-index"
    assert list(dc_xml.parse_index(dc / "titles/8/index.xml", folder)) == []


def test_dc_section_content(dc: Path) -> None:
    s = _dc_section(dc, "8-101.01")
    assert s.path == ["Title 8. Environmental and Animal Control and Protection.",
                      "Chapter 1. Environmental Controls.", "Subchapter I. Air Pollution Control.",
                      "Part A. General."]
    assert s.history[0] == "July 30, 1968, 82 Stat. 458, Pub. L. 90-440, § 2"
    assert len(s.cross_references) == 6 and s.cross_references[-1].startswith("Acid rain")
    assert (s.text, s.status) == ("Repealed.", "repealed")

    s = _dc_section(dc, "8-1771.03")
    lines = s.text.split("\n")
    assert lines[0].startswith("(a) On or after January 1, 2009")
    assert any(line.startswith("(1) Bottle-type water dispensers") for line in lines)
    assert any(line.startswith("(4) (A) State-regulated") for line in lines)  # label of a para without text
    assert "Greater than 49 watts\t0.84" in lines  # table row
    assert s.history == ["Dec. 11, 2007, D.C. Law 17-64, § 4, 54 DCR 10964"] and s.status == "active"


def test_dc_status(dc: Path) -> None:
    assert _dc_section(dc, "8-105.51").status == "repealed"  # <reason> absent, text "[Expired]."
    assert _dc_section(dc, "8-704").status == "repealed"  # <reason>Transferred</reason>
    assert _dc_section(dc, "8-1774.12").status == "reserved"  # heading "[Reserved]."


def test_dc_index_parsed_once(dc: Path) -> None:
    dc_xml.index_paths.cache_clear()
    for number in ("8-101.01", "8-102.01", "8-1602"):
        assert _dc_section(dc, number).path
    info = dc_xml.index_paths.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_dc_without_index_has_empty_path(tmp_path: Path, dc: Path) -> None:
    path = tmp_path / "8-101.01.xml"
    path.write_bytes((dc / "titles/8/sections/8-101.01.xml").read_bytes())
    (section,) = dc_xml.parse_section(path, Folder(tmp_path))
    assert section.path == [] and section.number == "8-101.01"


DC_HEAD = f'<?xml version="1.0" encoding="utf-8"?>\n<section xmlns="{dc_xml.NS}">\n  <num>8-1</num>\n'


def test_dc_bad_input(tmp_path: Path) -> None:
    truncated = tmp_path / "8-1.xml"
    truncated.write_text(DC_HEAD + "  <heading>Scope</heading>\n  <text>Cut off her", encoding="utf-8")
    assert get_format("dc-code-xml").sniff(truncated.read_bytes(), truncated)
    with pytest.raises(FormatError, match=r"malformed XML at line 5: Premature end of data"):
        list(dc_xml.parse_section(truncated, Folder(tmp_path)))

    other = tmp_path / "other.xml"
    other.write_text('<section xmlns="urn:else"><num>1</num></section>', encoding="utf-8")
    assert not get_format("dc-code-xml").sniff(other.read_bytes(), other)
    with pytest.raises(FormatError, match="not a D.C. Code <section>"):
        list(dc_xml.parse_section(other, Folder(tmp_path)))

    index = tmp_path / "index.xml"
    index.write_text(f'<container xmlns="{dc_xml.NS}"><num>8', encoding="utf-8")
    with pytest.raises(FormatError, match="malformed XML at line 1"):
        list(dc_xml.parse_index(index, Folder(tmp_path)))
