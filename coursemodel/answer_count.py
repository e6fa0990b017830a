# SPDX-License-Identifier: MIT
"""How many of a lab's core questions a written answers file answers: the one count that
`./lab status` shows and the grader puts in the report and the gradebook.

Each core question of the sheet counts once, however many `## Question N` headings answer it (the
count never exceeds the sheet's total); a heading that is no core question of the sheet counts for
none. Both are listed, for the notes. Without the sheet's questions, every distinct heading counts,
up to `total` where given.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Count:
    total: int = 0  # the sheet's core questions
    predicted: int = 0  # answered with a prediction
    complete: int = 0  # with a prediction and a measurement
    duplicates: dict[str, int] = field(default_factory=dict)  # question label -> headings that answer it
    unknown: list[str] = field(default_factory=list)  # heading labels that are no core question


def label_of(questions, heading: str) -> str | None:
    """The label of the core question (coursemodel.sheets.Question) that `## Question <heading>`
    answers, or None."""
    for question in questions:
        if question.accepts(heading) or question.accepts(heading.lower()):
            return question.label
    return None


def count(parsed: list[dict], questions=(), total: int = 0) -> Count:
    """parsed: coursemodel.answers_template.parse()'s headings; questions: the sheet's core
    questions (coursemodel.sheets.core_questions), or none known."""
    questions = tuple(questions)
    by_question: dict[str, list[dict]] = {}
    unknown: dict[str, int] = {}
    for answer in parsed:
        label = label_of(questions, answer["label"]) if questions else answer["label"]
        if label is None:
            unknown[answer["label"]] = unknown.get(answer["label"], 0) + 1
        else:
            by_question.setdefault(label, []).append(answer)
    limit = len(questions) if questions else total or len(by_question)
    return Count(total=limit,
                 predicted=min(limit, sum(1 for group in by_question.values() if any(a["prediction"] for a in group))),
                 complete=min(limit, sum(1 for group in by_question.values()
                                         if any(a["prediction"] and a["measured"] for a in group))),
                 duplicates={label: len(group) for label, group in by_question.items() if len(group) > 1},
                 unknown=sorted(unknown))
