"""UNION's annotation files written for a test: one story a line, ``id ||| text ||| votes``."""

from __future__ import annotations


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_annotations(directory, votes, codes=None):
    def lines(labels):
        return [
            f"{100 + i} ||| story number {i} . it ends . ||| {' '.join(map(str, row))}"
            for i, row in enumerate(labels)
        ]

    annotation = write_lines(directory / "ant_data.txt", lines(votes))
    error_file = write_lines(directory / "ant_data_all.txt", lines(codes)) if codes is not None else None
    return annotation, error_file
