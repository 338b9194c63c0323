"""The catalogue of results (fedbound/theory/registry.py), an entry of the one registry keyed by
result id: every result module registers its results, found by being in fedbound.theory."""
import pytest

from fedbound.errors import InputTypeError, UnknownNameError, ValidationError
from fedbound.theory import RESULTS, get, register, results


def test_results_sorted_by_id_each_registered_by_its_papers_module():
    ids = [r.id for r in results()]
    assert ids == sorted(ids) == sorted(RESULTS.names()) and len(ids) >= 60
    for r in results():
        assert RESULTS.origin(r.id).startswith(f"fedbound.theory.{r.scope}."), r.id
        assert get(r.id) is r


def test_unknown_result_names_the_closest_ones():
    """The closest ids, and where to see every one (issue 33: ~100 ids were dumped, no did-you-mean)."""
    with pytest.raises(UnknownNameError, match=r"unknown result 'sdgt.thm33'; did you mean 'sdgt.thm3'\? "
                                               r"\(`fedbound list` lists every result\)$"):
        get("sdgt.thm33")
    with pytest.raises(UnknownNameError, match=r"unknown result 'SDGT.THM3'; did you mean 'sdgt.thm3'\?"):
        get("SDGT.THM3")
    with pytest.raises(InputTypeError, match=r"result_id must be a string, got \['sdgt.thm3'\]"):
        get(["sdgt.thm3"])


def test_a_result_registered_twice_is_an_error():
    with pytest.raises(ValidationError, match="result 'sdgt.thm3' is already registered"):
        register(get("sdgt.thm3"))
