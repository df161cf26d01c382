"""DOIs, arXiv ids and ORCID iDs as the readers check and write them."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kg.text.identifiers import arxiv_iri, check_arxiv, check_doi, check_orcid, doi_iri, orcid_iri


@pytest.mark.parametrize("given", ["10.7717/peerj.4375", "10.7717/PEERJ.4375", "doi:10.7717/peerj.4375", "DOI: 10.7717/peerj.4375",
                                   "https://doi.org/10.7717/peerj.4375", "http://dx.doi.org/10.7717/peerj.4375",
                                   " doi.org/10.7717/peerj.4375 ", "https://doi.org/10.7717%2Fpeerj.4375"])
def test_a_doi_is_read_in_any_of_its_usual_forms(given):
    assert check_doi(given).value == "10.7717/peerj.4375" and check_doi(given).problem is None


@pytest.mark.parametrize("given", ["", "  ", "10.1000", "10.12/abc", "11.1234/abc", "10.1234/", "10.1234/a b", "https://example.org/x",
                                   None, 10.1234, ["10.1234/abc"], "10.1234/\x00x"])
def test_what_is_not_a_doi_gives_a_reason_not_an_error(given):
    checked = check_doi(given)
    assert checked.value is None and "is not a DOI" in checked.problem


@pytest.mark.parametrize("doi", ["10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0", "10.1000/a#b?c%d", "10.1000/naïve",
                                 "10.1103/physrevd.76.013009"])
def test_every_doi_makes_a_valid_iri_that_reads_back(doi):
    iri = doi_iri(doi)
    ox.NamedNode(iri)  # Oxigraph's strict IRI check
    assert iri.startswith("https://doi.org/10.") and check_doi(iri).value == doi


@pytest.mark.parametrize("given, expected", [("2401.00001", "2401.00001"), ("arXiv:2401.00001v3", "2401.00001"),
                                             ("0704.0002", "0704.0002"), ("hep-th/9608091", "hep-th/9608091"),
                                             ("math.CO/0601001v2", "math.CO/0601001"), ("https://arxiv.org/abs/1706.03762v7", "1706.03762"),
                                             ("http://arxiv.org/pdf/2401.12345.pdf", "2401.12345")])
def test_arxiv_ids_new_and_old_style_lose_their_version(given, expected):
    assert check_arxiv(given).value == expected
    assert arxiv_iri(expected) == f"https://arxiv.org/abs/{expected}"


@pytest.mark.parametrize("given", ["", "2401.001", "arXiv", "hep-th/96080", "https://example.org/abs/2401.00001", None])
def test_what_is_not_an_arxiv_id_gives_a_reason(given):
    assert check_arxiv(given).value is None and "is not an arXiv id" in check_arxiv(given).problem


@pytest.mark.parametrize("given, held", [("10.5555/abc\u202e1", "U+202E RIGHT-TO-LEFT OVERRIDE"), ("10.5555/ab\ufffd", "U+FFFD"),
                                         ("10.5555/a\u200bb", "U+200B ZERO WIDTH SPACE"), ("10.5555/a\u2066b", "U+2066"),
                                         ("https://doi.org/10.5555/a%E2%80%AEb", "U+202E"), ("10.5555/x\x85y", "U+0085"),
                                         ("10.5555/x\x7f", "U+007F")])
def test_a_doi_holding_a_bidi_format_or_control_character_or_u_fffd_is_refused(given, held):
    """Issue 43: a right-to-left override or U+FFFD was accepted; DOIs are shown in the graph and the map."""
    checked = check_doi(given)
    assert checked.value is None and "is not a DOI: it holds " + held in checked.problem


@pytest.mark.parametrize("given", ["2401.0000\u202e1", "\u202e2401.00001", "2401.00001\u200b", "hep-th/9608091\ufffd"])
def test_an_arxiv_id_holding_a_bidi_format_or_control_character_or_u_fffd_is_refused(given):
    checked = check_arxiv(given)
    assert checked.value is None and "is not an arXiv id: it holds U+" in checked.problem


@pytest.mark.parametrize("given", ["10.\u0661\u0662\u0663\u0664/x", "10.１２３４/x"])
def test_a_doi_registrant_of_other_digits_than_ascii_is_refused(given):
    assert check_doi(given).value is None


def test_an_arxiv_id_of_other_digits_than_ascii_is_refused():
    assert check_arxiv("\u0662\u0664\u0660\u0661.00001").value is None and check_arxiv("２４０１.００００１").value is None


def test_an_orcid_of_other_digits_than_ascii_is_refused():
    """Python's \\d takes any script's digits, and int() reads them: the iD was kept in Arabic-Indic digits."""
    assert check_orcid("\u0660\u0660\u0660\u0660-\u0660\u0660\u0660\u0662-\u0661\u0668\u0662\u0665-\u0660\u0660\u0669\u0667").value is None


@pytest.mark.parametrize("given", ["0000-0002-1825-0097", "https://orcid.org/0000-0002-1825-0097", "0000000218250097",
                                   "http://orcid.org/0000-0002-1825-0097"])
def test_an_orcid_is_read_bare_or_as_its_url(given):
    assert check_orcid(given).value == "0000-0002-1825-0097"
    assert orcid_iri("0000-0002-1825-0097") == "https://orcid.org/0000-0002-1825-0097"


def test_an_orcid_with_x_as_its_check_digit():
    assert check_orcid("0000-0002-9079-593x").value == "0000-0002-9079-593X"


@pytest.mark.parametrize("given, why", [("0000-0002-1825-0098", "check digit"), ("0000-0002-1825", "ORCID iD"), ("", "ORCID iD"),
                                        ("https://orcid.org/", "ORCID iD")])
def test_a_wrong_orcid_gives_the_reason(given, why):
    checked = check_orcid(given)
    assert checked.value is None and why in checked.problem
