"""Safe markdown with math: the shared renderer of papers, proposals, task texts and reviews."""

from benchmark.markdown import markdown_html


def test_it_keeps_math_intact_for_katex_and_leaves_prices_alone():
    html = markdown_html("Loss $a_i * b_i$ costs $5 and $10.\n\n$$\n\\sum_{i} x_i < 3\n$$\n\nand \\(y_1\\)")
    assert '<span class="math">$a_i * b_i$</span>' in html  # no <em> from the underscores/asterisks
    assert "costs $5 and $10." in html
    assert '<span class="math">$$\n\\sum_{i} x_i &lt; 3\n$$</span>' in html
    assert '<span class="math">\\(y_1\\)</span>' in html


def test_it_strips_script_and_unsafe_links():
    html = markdown_html("<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)> $<b>$")
    assert "<script" not in html and "&lt;script&gt;" in html  # shown as text, never run
    assert "href=" not in html and "<img" not in html and "<b>" not in html


def test_it_maps_figures_through_the_given_function_and_marks_missing_ones():
    html = markdown_html(
        "![A](figures/a.png) ![B](figures/b.png)", image_url=lambda s: "/f/a" if s.endswith("a.png") else None
    )
    assert '<img src="/f/a" alt="A" loading="lazy">' in html
    assert "[figure not found: figures/b.png - B]" in html
