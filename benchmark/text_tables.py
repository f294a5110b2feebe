"""Tables as text for papers and notes: Markdown (pipe tables) and LaTeX (booktabs), escaped.

Names in the cells come from users and imports; a `|` would split a Markdown cell and `_`, `&`,
`%` break LaTeX, so every cell is escaped here, in one place, for every export that needs it.
"""

from __future__ import annotations

from collections.abc import Sequence

_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def markdown_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(head: Sequence[str], body: Sequence[Sequence[str]], *, numeric_from: int = 1) -> str:
    """A pipe table; columns from `numeric_from` on are right-aligned (numbers)."""
    align = ["---" if i < numeric_from else "---:" for i in range(len(head))]
    lines = ["| " + " | ".join(markdown_escape(h) for h in head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(markdown_escape(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def latex_tabular(head: Sequence[str], body: Sequence[Sequence[str]], *, numeric_from: int = 1) -> list[str]:
    """booktabs tabular lines; a "±" in a cell becomes $\\pm$."""
    spec = "l" * numeric_from + "r" * (len(head) - numeric_from)
    lines = [r"\begin{tabular}{" + spec + "}", r"\toprule", " & ".join(latex_escape(h) for h in head) + r" \\"]
    lines.append(r"\midrule")
    lines += [" & ".join(latex_escape(c).replace("±", r"$\pm$") for c in row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return lines
