"""`fedbound demo` runs the whole tour at a small scale (--quick), writes its files and one page
with a section per paper, the controller, PEP and the sweep; its numbers come from the run."""
import contextlib
import io
import json
from html.parser import HTMLParser

import numpy as np
import pytest

from fedbound.cli.main import main

SECTIONS = ("sdgt", "fednova", "afga", "fedada2", "controller", "pep", "sweep")
PAPERS = SECTIONS[:4]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """The sections of the page (id -> title, tables, images, text) and the links of its contents."""

    def __init__(self):
        super().__init__()
        self.sections, self.links, self.scripts, self.current, self.tag = {}, [], 0, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tag = tag
        if tag == "section":
            self.current = self.sections.setdefault(attrs["id"], {"title": "", "tables": 0,
                                                                  "images": [], "text": ""})
        elif tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        elif tag == "script":
            self.scripts += 1
        elif self.current is not None and tag == "table":
            self.current["tables"] += 1
        elif self.current is not None and tag == "img":
            self.current["images"].append(attrs["src"])

    def handle_endtag(self, tag):
        if tag == "section":
            self.current = None

    def handle_data(self, data):
        if self.current is not None:
            self.current["text"] += data
            if self.tag == "h2":
                self.current["title"] += data.strip()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["demo", "--out", str(out), "--rounds", "60", "--quick"])
    assert code == 0
    page = Page()
    page.feed((out / "index.html").read_text(encoding="utf-8"))
    return out, printed.getvalue(), json.loads((out / "summary.json").read_text()), page


def test_demo_writes_its_files_and_prints_where_the_page_is(demo):
    out, printed, _, _ = demo
    for name in ("index.html", "summary.json", "network.json", "metrics.csv", "convergence.png",
                 "audit.json", "sweep-spec.json"):
        assert (out / name).stat().st_size > 0
    assert json.loads((out / "fedbound-status.json").read_text())["status"] == "complete"
    assert printed.rstrip().splitlines()[-1] == f"open {out / 'index.html'}"
    assert set(json.loads((out / "audit.json").read_text())) == set(PAPERS)


def test_page_has_every_section_with_a_title_and_contents(demo):
    _, _, summary, page = demo
    assert tuple(page.sections) == SECTIONS and page.scripts == 0
    assert set(SECTIONS) <= set(page.links)
    for sid, section in page.sections.items():
        assert section["title"], sid
        assert section["tables"] >= 1, sid
    for paper in PAPERS:   # bound table, audit headline with its computed counts, a plot
        section, audit = page.sections[paper], summary[paper]["audit"]
        assert section["tables"] >= 2 and section["images"], paper
        headline = f"{audit['claims']} claims, {audit['holds']} hold, {audit['fails']} fail"
        assert headline in section["text"], paper
    for sid in ("controller", "sweep"):
        assert page.sections[sid]["images"], sid


def test_every_image_loads(demo):
    out, _, _, page = demo
    images = [src for section in page.sections.values() for src in section["images"]]
    assert len(images) >= 8
    for src in images:
        assert "://" not in src and not src.startswith("/"), src
        data = (out / src).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 1000, src


def test_sdgt_numbers_are_computed(demo):
    _, printed, summary, _ = demo
    sdgt = summary["sdgt"]
    assert 0 < sdgt["network"]["q"] <= 1 and sdgt["network"]["p"] == 1 - 0.6 ** 2
    # the audit finds the flags the notes predict (F18, F29) by computation
    assert "thm3.A_l1 [main]" in sdgt["audit"]["failures"]
    assert "thm5.contains_root [printed]" in sdgt["audit"]["failures"]
    for run in sdgt["runs"]["algorithms"].values():   # linear convergence: 60 rounds shrink it 10x
        assert run["dist2_final"] < 0.1 * run["dist2_initial"]
    fit = sdgt["runs"]["sdgt_contraction"]
    assert fit["low"] <= fit["factor"] <= fit["high"] < 1
    assert not sdgt["runs"]["thm3_applies"]   # the run's gamma is above Theorem 3's gamma_bar
    for row in sdgt["theory"]["thm3"].values():
        assert 0 < row["gamma_bar"] < sdgt["runs"]["gamma"]


def test_paper_sections_are_computed(demo):
    _, _, summary, _ = demo
    for paper in PAPERS:
        audit = summary[paper]["audit"]
        assert audit["holds"] + audit["fails"] == audit["claims"] == len(
            json.loads((demo[0] / "audit.json").read_text())[paper])
        assert sum(audit["by_severity"].values()) == audit["fails"] == len(audit["failures"])
    for paper in PAPERS[1:]:   # SD-GT's theory is its own table (test above)
        rows = [r for r in summary[paper]["bound"] if r["bound"] is not None]
        assert rows, paper
        for row in rows:   # a bound that holds lies above the whole interval at the last horizon
            assert row["T"] == summary["settings"]["scale"]["check_rounds"]
            assert row["low"] <= row["measured"] <= row["high"]
            if row["status"] == "holds":
                assert row["high"] <= row["bound"]
    fixed = summary["fednova"]["fixed_point"]
    for name in ("fedavg", "fednova"):   # runs follow the exact round map to its fixed point
        assert fixed[name]["spectral_radius"] < 1
        assert fixed[name]["max_relative_deviation_from_prediction"] < 1e-6
    # objective inconsistency: FedAvg's fixed point is farther from x* than FedNova's
    assert fixed["fedavg"]["distance_to_x_star"] > fixed["fednova"]["distance_to_x_star"]


def test_controller_pep_and_sweep_are_computed(demo):
    _, printed, summary, _ = demo
    plans = summary["controller"]["plans"]
    assert len(plans) == 3 and "E_d2d/E = 0.01" in printed
    K = [plans[r]["K"] for r in sorted(plans, key=float)]
    assert K == sorted(K, reverse=True)   # dearer D2D rounds: no more of them
    for p in plans.values():
        assert p["lower_bound"] <= p["objective"] * (1 + 1e-9)
    pep = summary["pep"]
    assert pep["lower_bound"] <= pep["worst_case"] * (1 + 1e-5) and pep["status"].startswith("optimal")
    sweep = summary["sweep"]
    assert sweep["cells"] == 4 * 3 and len(sweep["configurations"]) == 4
    for c in sweep["configurations"]:
        assert c["seeds"] == 3 and c["95% low"] <= c["mean"] <= c["95% high"]


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--rounds", "9"], ["--seed", "-1"]])
def test_demo_rejects_bad_options_with_one_line(argv, tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "out"), *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_fedada2_section_names_the_dominant_term_and_shows_the_corollarys_schedule(demo):
    """FedAda2 Theorem 20 is read against its trivial bound (vacuous, with its factor), taken apart
    (the dominant term Psi3/Psi6 named, the decades each constant accounts for) and shown under
    Corollary 24's schedule, where it falls with T while at fixed steps it rises."""
    _, _, summary, page = demo
    text = page.sections["fedada2"]["text"]
    anatomy, schedule = summary["fedada2"]["anatomy"], summary["fedada2"]["schedule"]
    assert anatomy["dominant"] == "Psi3/Psi6" and anatomy["dominant_share"] > 0.99
    assert "Its dominant term is Psi3/Psi6" in text and "vacuous: a factor of 10^" in text
    assert "Corollary 24's step-size schedule" in text and "eta_l = c_l T^-1/2" in text
    assert "fedada2-schedule.png" in page.sections["fedada2"]["images"]
    printed = np.asarray(schedule["schedule"]["printed"])
    fixed = np.asarray(schedule["fixed_steps"]["printed"])
    assert np.all(np.diff(printed) < 0) and np.all(np.diff(fixed) > 0)
    assert schedule["printed_slope"] == pytest.approx(-0.5, abs=0.01)
    assert schedule["reaches_trivial_at"]["printed"] > schedule["T"][-1]
    rows = summary["fedada2"]["bound"]
    assert all(r["vacuous"] and r["anatomy"] for r in rows if r["bound"] is not None)
    # the 16 variants fold to one table row per distinct bound
    distinct = {f"{r['bound']:.6g}" for r in rows if r["bound"] is not None}
    assert f"{len(rows)} variants in {len(distinct)} rows" in text


def test_intervals_plans_and_tables_read_as_they_should(demo):
    out, _, summary, page = demo
    for c in summary["sweep"]["configurations"]:            # a squared distance's interval
        assert c["95% low"] >= 0
    assert summary["sweep"]["interval"].endswith("clipped to [0, inf)") and summary["sweep"]["few_seeds"]
    assert "seeds: few" in page.sections["sweep"]["text"]
    plans = summary["controller"]["plans"]
    cheapest = plans[min(plans, key=float)]
    assert cheapest["K"] == cheapest["K_cap"]
    assert cheapest["active_constraints"][0]["name"] == "K <= K_cap"
    assert "K sits on its cap" in page.sections["controller"]["text"]
    assert "SD-GT's guarantee is the weaker one" in page.sections["sdgt"]["text"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.count('<div class="scroll"><table>') == html.count("<table>")
    sizes = [line for line in page.sections["fedada2"]["text"].splitlines() if "a factor of 10^" in line]
    assert sizes                                             # audit failures read as sizes
