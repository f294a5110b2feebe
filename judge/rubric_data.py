"""Version 1 of Referee's rubrics, written in our own words after the MLR-Bench paper's tables 24-28.

Data, not code: `judge.rubrics.rubric_load_defaults` loads each entry as version 1 of its stage
(idempotently). A later version is made on the rubric page by an admin, never by editing this file
in place for a stage that already has judgments.

Every score dimension has questions the judge answers for itself and an anchor per score band.
Kinds: "score" (integer min..max, averaged across judges), "confidence" (the judge's own certainty,
1-5, reported but not a quality criterion), "flag" (0 = no, 1 = yes), "findings" (a list of typed
findings with evidence; hallucination audit).
"""

from __future__ import annotations

from typing import Any

BANDS = ("9-10", "7-8", "5-6", "3-4", "1-2")


def _dim(key: str, name: str, questions: list[str], anchors: list[str], **extra: Any) -> dict[str, Any]:
    if len(anchors) != len(BANDS):
        raise ValueError(f"{key}: one anchor per band {BANDS}")
    return {
        "key": key,
        "name": name,
        "questions": questions,
        "anchors": dict(zip(BANDS, anchors, strict=True)),
        "min": 1,
        "max": 10,
        "kind": "score",
        **extra,
    }


# Dimensions shared by several stages, phrased for the thing being judged ({item}).
def _consistency(item: str) -> dict[str, Any]:
    return _dim(
        "consistency",
        "Consistency",
        [
            f"Does the {item} answer the task it was written for, and stay within its scope?",
            f"Does the {item} follow from the material it builds on (idea, literature, proposal) without contradicting it?",
        ],
        [
            "Fully aligned with the task and its inputs; every part serves the stated goal.",
            "Aligned overall, with minor drift or a small unexplained departure.",
            "Partly aligned: some sections wander from the task or ignore earlier material.",
            "Largely off-task or contradicts its inputs in important places.",
            "Unrelated to the task or self-contradictory throughout.",
        ],
    )


def _clarity(item: str) -> dict[str, Any]:
    return _dim(
        "clarity",
        "Clarity",
        [
            f"Could a researcher in the area restate the {item}'s main point after one reading?",
            "Are terms defined, the structure logical, and the claims stated precisely?",
        ],
        [
            "Crisp and precise; nothing needs rereading.",
            "Clear, with a few vague phrases or loosely defined terms.",
            "Understandable with effort; some important points are ambiguous.",
            "Hard to follow; key ideas are muddled or undefined.",
            "Incomprehensible or missing the essential content.",
        ],
    )


def _novelty(item: str) -> dict[str, Any]:
    return _dim(
        "novelty",
        "Novelty",
        [
            f"What does the {item} offer that existing work does not?",
            "Is the difference from prior work substantive, or a renaming or small recombination?",
        ],
        [
            "A genuinely new perspective or method that could open a line of work.",
            "A clear, non-obvious advance over prior work.",
            "An incremental variation; the new part is modest.",
            "Mostly known ideas with little that is new.",
            "Nothing new, or a restatement of well-known work.",
        ],
    )


def _significance(item: str) -> dict[str, Any]:
    return _dim(
        "significance",
        "Significance",
        [
            f"If the {item} succeeds, who benefits and how much?",
            "Does it address an important open problem of the workshop's area?",
        ],
        [
            "Would change how the community approaches an important problem.",
            "A valuable contribution many researchers in the area would use or cite.",
            "Useful to a narrow audience, or important only if strong assumptions hold.",
            "Marginal impact; the problem or the answer matters little.",
            "No discernible impact.",
        ],
    )


def _soundness(item: str) -> dict[str, Any]:
    return _dim(
        "soundness",
        "Soundness",
        [
            f"Are the {item}'s methods, derivations and arguments correct and well justified?",
            "Do the conclusions follow from the evidence, with limitations acknowledged?",
        ],
        [
            "Rigorous: correct, complete reasoning; evidence fully supports the claims.",
            "Sound, with minor gaps that do not threaten the main claims.",
            "Plausible, but important steps are unjustified or the evidence is thin.",
            "Serious flaws in method or reasoning undermine the main claims.",
            "Fundamentally wrong, or claims with no support at all.",
        ],
    )


def _completeness(item: str) -> dict[str, Any]:
    return _dim(
        "completeness",
        "Completeness",
        [
            f"Does the {item} contain every part it should (setup, baselines, results, analysis, limitations)?",
            "Could someone reproduce or build on it from what is given?",
        ],
        [
            "Everything needed is present and reproducible.",
            "Nearly complete; a minor part is thin or missing.",
            "Noticeable gaps: a baseline, an analysis or key details are missing.",
            "Large parts are missing; hard to reproduce or assess.",
            "A fragment; most of what was required is absent.",
        ],
    )


def _overall(item: str) -> dict[str, Any]:
    return _dim(
        "overall",
        "Overall",
        [
            f"Weighing everything above, how good is this {item} for the workshop it targets?",
            "Would you recommend accepting it, and how strongly?",
        ],
        [
            "Excellent: a clear accept, among the best submissions.",
            "Good: accept, with minor revisions.",
            "Borderline: merits and flaws roughly balance.",
            "Weak: reject, needs major work.",
            "Very poor: a clear reject.",
        ],
    )


_FEASIBILITY = _dim(
    "feasibility",
    "Feasibility",
    [
        "Can this be carried out with the data, compute and methods available to a small research team?",
        "Are the risks and dependencies identified, with a credible path around them?",
    ],
    [
        "Straightforward to execute with current resources; risks are small and handled.",
        "Feasible with moderate effort; some risks, mostly addressed.",
        "Feasible only with significant resources or if uncertain assumptions hold.",
        "Major obstacles with no credible plan to overcome them.",
        "Not executable as described.",
    ],
)

_INSIGHTFULNESS = _dim(
    "insightfulness",
    "Insightfulness",
    [
        "Do the results come with analysis that explains why things happened, not just what happened?",
        "Are surprising or negative results examined honestly?",
    ],
    [
        "Deep analysis that teaches the reader something beyond the numbers.",
        "Good analysis of the main results, with some explanation of causes.",
        "Results are described but barely interpreted.",
        "Superficial or misleading interpretation.",
        "No analysis, or analysis contradicted by the results.",
    ],
)

_HALLUCINATION_FLAG = {
    "key": "hallucination",
    "name": "Hallucination",
    "questions": [
        "Do the reported results come from code that actually ran (visible in the code and trace), not from invented or placeholder numbers?",
        "Are the methods described the ones that were implemented?",
    ],
    "anchors": {
        "1": "Yes: at least one result, method or citation is fabricated or not backed by the code and trace.",
        "0": "No: everything reported is backed by what was run.",
    },
    "min": 0,
    "max": 1,
    "kind": "flag",
}

_CONFIDENCE = {
    "key": "confidence",
    "name": "Confidence",
    "questions": [
        "How sure are you of this assessment, given your familiarity with the area and what you could check?"
    ],
    "anchors": {
        "5": "Certain: I checked the details and know the area well.",
        "4": "Confident, though I may have missed something.",
        "3": "Fairly confident; some parts were beyond what I could check.",
        "2": "Unsure; my assessment may be wrong in places.",
        "1": "A guess.",
    },
    "min": 1,
    "max": 5,
    "kind": "confidence",
}

FINDING_TYPES = {
    "faked_results": "numbers, tables or figures that no code produced, or that contradict the logs",
    "hallucinated_methodology": "a method, dataset, baseline or experiment described but never implemented or run",
    "incorrect_citation": "a reference that does not exist or does not say what it is cited for",
    "math_error": "a wrong derivation, equation, or claim about a formula",
}

_FINDINGS = {
    "key": "findings",
    "name": "Findings",
    "questions": [
        "List each hallucination you can point to. For each: its type, the exact passage (quote it), where it is, and the evidence that it is wrong (a log line, a code path, the missing reference).",
        "Report nothing you cannot support with evidence from the material given.",
    ],
    "anchors": {},
    "types": FINDING_TYPES,
    "kind": "findings",
}

_INTEGRITY = _dim(
    "integrity",
    "Integrity",
    [
        "How far can a reader trust that what the paper reports actually happened?",
        "How much of the paper do the findings above affect?",
    ],
    [
        "No hallucination found; every checked claim is backed by code, logs or real references.",
        "Minor slips (e.g. one imprecise citation) that do not affect the results.",
        "Some unsupported claims or citations; core results still appear real.",
        "Core results or methods are unsupported or contradicted by the trace.",
        "The main results are fabricated.",
    ],
)

# Agent trajectories (MLGym-style benchmark runs): the reviewer and the judge read the steps, not a paper.
_TRAJECTORY_DIMENSIONS = [
    _dim(
        "approach",
        "Soundness of the approach",
        [
            "Is the agent's overall plan a reasonable way to solve the task?",
            "Does it revise the plan when evidence (errors, scores) says it is not working?",
        ],
        [
            "A well-founded plan, adapted sensibly to what the runs showed.",
            "A reasonable plan with a few questionable choices.",
            "A plausible plan pursued without much reflection on the evidence.",
            "A weak plan, or one kept despite clear evidence against it.",
            "No coherent plan; actions do not serve the task.",
        ],
    ),
    _dim(
        "actions",
        "Correctness of actions",
        [
            "Are the commands and edits well formed and do they do what the agent intends?",
            "Does the agent read tool output correctly before acting on it?",
        ],
        [
            "Actions are correct and purposeful; outputs are read accurately.",
            "Mostly correct, with a few slips that are quickly fixed.",
            "Several wrong tools or misread outputs, some left unfixed.",
            "Frequent malformed or misguided actions.",
            "Actions are mostly wrong or unrelated to their stated intent.",
        ],
    ),
    _dim(
        "efficiency",
        "Efficiency",
        [
            "Does the agent reach its result without needless steps, loops or repeated failures?",
            "Are compute and steps spent where they matter?",
        ],
        [
            "Direct: nearly every step moves the work forward.",
            "Some detours, quickly abandoned.",
            "Noticeable waste: repeated commands or long unproductive stretches.",
            "Much of the run is loops or retries of the same failure.",
            "The run is dominated by loops or idle steps.",
        ],
    ),
    _dim(
        "honesty",
        "Honesty of reported results",
        [
            "Does every result the agent states match what the outputs and scores show?",
            "Does it claim success, numbers or files that the trajectory does not back?",
        ],
        [
            "Every claim is backed by an output or score in the trajectory.",
            "Minor overstatements that do not change the outcome.",
            "Some claims are unsupported by the outputs.",
            "Important results are misstated or unsupported.",
            "Results are fabricated.",
        ],
    ),
    _dim(
        "overall",
        "Overall",
        [
            "Weighing everything above, how well did the agent do this task?",
            "Would you trust this agent with a similar task unsupervised?",
        ],
        [
            "Excellent: work a careful researcher would be proud of.",
            "Good: sound work with minor flaws.",
            "Mixed: useful in parts, flawed in others.",
            "Poor: major flaws in method or honesty.",
            "Very poor: unusable or misleading.",
        ],
    ),
]

RUBRICS: list[dict[str, Any]] = [
    {
        "stage": "idea",
        "name": "Research idea",
        "instructions": (
            "You review a short research idea written for a workshop's call for papers. "
            "Judge the idea itself, not its length or style. Score each dimension on its own."
        ),
        "dimensions": [
            _consistency("idea"),
            _clarity("idea"),
            _novelty("idea"),
            _FEASIBILITY,
            _significance("idea"),
            _overall("idea"),
        ],
    },
    {
        "stage": "proposal",
        "name": "Research proposal",
        "instructions": (
            "You review a research proposal (about 2,000 words, with math) written for a workshop's call "
            "for papers. Judge whether the plan is worth doing and would work; no results exist yet."
        ),
        "dimensions": [
            _consistency("proposal"),
            _clarity("proposal"),
            _novelty("proposal"),
            _FEASIBILITY,
            _significance("proposal"),
            _soundness("proposal"),
            _overall("proposal"),
        ],
    },
    {
        "stage": "experiment",
        "name": "Experiment",
        "instructions": (
            "You review the experiment an agent ran for a research proposal: its results report and, "
            "when given, its code and execution trace. First decide whether anything reported is "
            "hallucinated (not produced by the code that ran), then score the experiment."
        ),
        "dimensions": [
            _HALLUCINATION_FLAG,
            _consistency("experiment"),
            _completeness("experiment"),
            _novelty("experiment"),
            _soundness("experiment"),
            _INSIGHTFULNESS,
            _significance("experiment"),
            _overall("experiment"),
        ],
    },
    {
        "stage": "writing",
        "name": "Paper writing",
        "instructions": (
            "You review how well a paper is written from its research materials: whether it reports "
            "the idea, proposal and results faithfully, clearly and completely."
        ),
        "dimensions": [
            _consistency("paper"),
            _clarity("paper"),
            _completeness("paper"),
            _soundness("paper"),
            _overall("paper"),
        ],
    },
    {
        "stage": "end2end",
        "name": "End-to-end paper review",
        "instructions": (
            "You review a complete workshop paper as a program-committee member would. When the code "
            "and execution trace are given, check the paper's claims against them. Then state your "
            "confidence in your own review."
        ),
        "dimensions": [
            _clarity("paper"),
            _novelty("paper"),
            _soundness("paper"),
            _significance("paper"),
            {**_overall("paper"), "extra": ["strengths", "weaknesses"]},
            _CONFIDENCE,
        ],
    },
    {
        "stage": "hallucination",
        "name": "Hallucination audit",
        "instructions": (
            "You audit a research paper (and, when given, its code and trace) for hallucinations of four "
            "kinds: faked results, hallucinated methodology, incorrect citations, math errors. Report only "
            "what you can support with evidence from the material, then rate how trustworthy it is overall."
        ),
        "dimensions": [_FINDINGS, _INTEGRITY],
    },
    {
        "stage": "trajectory",
        "name": "Agent trajectory",
        "instructions": (
            "You review the trajectory of a research agent working on a benchmark task: at each step its "
            "thought, the action it ran, the output it saw and any validation or submission score. Judge how "
            "the agent worked, not only where it ended. Score each dimension on its own."
        ),
        "dimensions": _TRAJECTORY_DIMENSIONS,
    },
]
