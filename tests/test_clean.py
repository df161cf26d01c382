from kg.clean import clean_text, find_urls


def test_latex_markup_is_removed_and_its_text_kept():
    raw = r"two techniques: \emph{\small Random Reshuffling} and \textbf{LOZO+}, an \textbf{ZO} method"
    assert clean_text(raw) == "two techniques: Random Reshuffling and LOZO+, an ZO method"


def test_math_goes_but_a_name_in_math_stays():
    raw = r"faithful ( $ R^2=1 $ ) but unstable ( $ q^{\star}=0.5 $% ); we propose $HARMONIC$ (HARMONIzed Cone)"
    assert clean_text(raw) == "faithful but unstable; we propose HARMONIC (HARMONIzed Cone)"


def test_markdown_emphasis_and_links():
    raw = "we introduce ***Atom Theory*** and **bold** _x_ [the code](https://github.com/a/b)."
    assert clean_text(raw) == "we introduce Atom Theory and bold _x_ the code."


def test_a_stray_comment_runs_to_the_end_of_its_sentence_but_percentages_stay():
    raw = "sharpens the asymptotic behavior %accelerates convergence even under noise. Finally, 68.2% and 50 % stay."
    assert clean_text(raw) == "sharpens the asymptotic behavior. Finally, 68.2% and 50 % stay."


def test_typographic_dashes_quotes_and_invisible_characters():
    raw = "min\u2013max \u201cquoted\u201d it\u2019s zero\u200bwidth soft\u00adhyphen\u00a0nbsp"
    assert clean_text(raw) == "min-max \"quoted\" it's zerowidth softhyphen nbsp"


def test_urls_become_properties_in_order_without_trailing_punctuation():
    text = "Code is at https://github.com/MinhZou/OVLR. See arXiv (https://arxiv.org/abs/2509.19189) and www.x.org/y, then https://github.com/MinhZou/OVLR again."
    assert find_urls(text) == ("https://github.com/MinhZou/OVLR", "https://arxiv.org/abs/2509.19189", "http://www.x.org/y")
    assert "http" not in clean_text(text) and "www" not in clean_text(text)


def test_html_tags_are_dropped_from_the_extraction_text():
    assert clean_text("a <script>alert(1)</script> b <img src=x onerror=alert(1)> c") == "a alert(1) b c"
