"""qbook.stored_closures: the stored window hierarchy and star closures, and their tables."""
import pytest

from qbook import stored_closures as sc


def test_stored_benchmark_refuses_other_names():
    with pytest.raises(ValueError, match="name"):
        sc.stored_benchmark("star_closure.py")
    with pytest.raises(FileNotFoundError):
        sc.stored_benchmark("no_such_file.json")


def test_window_hierarchy_rows_are_keyed_by_load_and_length():
    hier = sc.window_hierarchy()
    assert all(row["lam"] == lam and row["L"] == L for (lam, L), row in hier.items())
    assert {0.5, 0.7, 0.9} <= {lam for lam, _ in hier}


def test_hierarchy_table_errors_and_dashes():
    text = sc.hierarchy_table({(0.5, 2): {"R": 0.9}, (0.7, 3): {"R": 2.2}}, {0.5: 1.0, 0.7: 2.0}, [0.5, 0.7], [2, 3])
    assert text.splitlines()[2:] == ["| 2 | -10.00% | — |", "| 3 | — | +10.00% |"]
    with pytest.raises(TypeError, match="simulated"):
        sc.hierarchy_table({}, [1.0], [0.5])


def test_star_closures_and_table():
    cells, fits = sc.star_closures()
    assert all(k == (r["graph"], r["lam"]) for k, r in cells.items())
    lines = sc.star_table(cells.values()).splitlines()
    assert len(lines) == 2 + len(cells) and lines[0].startswith("| graph |")
    assert fits and all("R_inf" in f for f in fits)
    with pytest.raises(TypeError, match="rows"):
        sc.star_table(cells)
